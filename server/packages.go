package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/store"
)

// handlePackage is GET /packages/{id}/{id}-{version}.tar.gz: the exact bytes published,
// with Content-Length, ETag (the sha256) and Range support; yanked versions stay here.
func (s *Server) handlePackage(c echo.Context) error {
	fileID, file := c.Param("id"), c.Param("file")
	version, ok := strings.CutPrefix(file, fileID+"-")
	if !ok || !strings.HasSuffix(version, ".tar.gz") {
		return errf(http.StatusNotFound, "no such package file: expected /packages/<id>/<id>-<version>.tar.gz")
	}
	version = strings.TrimSuffix(version, ".tar.gz")
	id, ok := s.svc.Catalog().PackageIDForFile(fileID)
	if !ok {
		return errf(http.StatusNotFound, "no package "+fileID)
	}
	rel, err := s.svc.Store().Release(c.Request().Context(), id, version)
	if errors.Is(err, store.ErrNotFound) {
		return errf(http.StatusNotFound, "no version "+version+" of "+id)
	}
	if err != nil {
		return err
	}
	f, err := s.svc.Store().Blobs.Open(rel.SHA256)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/gzip")
	h.Set("ETag", `"`+rel.SHA256+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+file+`"`)
	if c.Request().Method == http.MethodGet && c.Request().Header.Get("Range") == "" {
		s.svc.CountDownload(rel.ID)
	}
	http.ServeContent(c.Response(), c.Request(), "", st.ModTime(), f)
	return nil
}

// handleIcon is GET /icons/{sha256}.{ext}: an icon from inside a verified package, under
// its content address. SVG is sandboxed so that it can never run script.
func (s *Server) handleIcon(c echo.Context) error {
	sha, ext, ok := strings.Cut(c.Param("file"), ".")
	ctype, known := iconTypes[ext]
	if !ok || !known {
		return errf(http.StatusNotFound, "no such icon")
	}
	data, err := s.svc.Store().Blobs.ReadAll(sha)
	if errors.Is(err, store.ErrNotFound) {
		return errf(http.StatusNotFound, "no such icon")
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("ETag", `"`+sha+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	if c.Request().Header.Get("If-None-Match") == `"`+sha+`"` {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, ctype, data)
}

var iconTypes = map[string]string{
	"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif", "svg": "image/svg+xml",
}
