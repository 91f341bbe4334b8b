package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// handlePackage is GET and HEAD /packages/{id}/{id}-{version}.tar.gz: the exact bytes
// published, streamed from the blob store by http.ServeContent (ETag = sha256, conditional
// requests, ranges), or, with serve --blobs-redirect, a 302 to a short-lived pre-signed URL
// of the blob; yanked versions stay here. A blob that is missing or of another size than
// recorded is never served (nor redirected to) as the package.
func (s *Server) handlePackage(c echo.Context) error {
	fileID, file := pathParam(c, "id"), pathParam(c, "file")
	version, ok := strings.CutPrefix(file, fileID+"-")
	if !ok || !strings.HasSuffix(version, ".tar.gz") {
		return errf(http.StatusNotFound, "no such package file: expected /packages/<id>/<id>-<version>.tar.gz")
	}
	version = strings.TrimSuffix(version, ".tar.gz")
	id, ok := s.svc.Catalog().PackageIDForFile(fileID)
	if !ok {
		return errf(http.StatusNotFound, "no package "+truncateForMessage(fileID))
	}
	rel, err := s.md.Release(c.Request().Context(), id, version)
	if unavailable(err) {
		// The database is out of reach: the release each listing has in force is in memory,
		// so a host installing what index.json lists still gets it (other versions wait).
		if it, ok := s.svc.Catalog().Item(id); ok && it.Latest != nil && it.Latest.Version == version {
			rel, err = it.Latest, nil
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return errf(http.StatusNotFound, "no version "+truncateForMessage(version)+" of "+id)
	}
	if err != nil {
		return err
	}
	if err := s.svc.DownloadRefusal(id, version); err != nil { // 410 quarantine.download, with the reason
		return err
	}
	if s.svc.BlobDamaged(rel.SHA256) { // a scrub re-hashed it to another digest
		return s.blobUnusable(c, "package", rel.SHA256, id+"@"+version, fmt.Errorf("blob %s failed its last check: %w", rel.SHA256, store.ErrBlobCorrupt))
	}
	if s.svc.RedirectsDownloads() {
		return s.redirectPackage(c, rel, file)
	}
	f, err := s.svc.OpenBlob(c.Request().Context(), rel.SHA256, rel.Size)
	if err != nil {
		return s.blobUnusable(c, "package", rel.SHA256, id+"@"+version, err)
	}
	defer f.Close()
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/gzip")
	h.Set("ETag", `"`+rel.SHA256+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": file}))
	serveContent(c, rel.CreatedAt, f, 0) // at most maxRanges ranges
	// Only a whole body is a download: not a 304, a HEAD, a range or a refused request.
	if c.Request().Method == http.MethodGet && c.Response().Status == http.StatusOK {
		s.svc.CountDownload(rel.ID)
	}
	return nil
}

// redirectPackage answers a download with a 302 to a pre-signed URL of the release's blob,
// after checking that the blob is there at its recorded size. The answer is not cached (the
// URL expires); a GET without a Range header counts as a download, as a whole body does
// when streaming.
func (s *Server) redirectPackage(c echo.Context, rel *store.Release, file string) error {
	target := rel.PackageID + "@" + rel.Version
	u, err := s.svc.BlobRedirect(c.Request().Context(), rel.SHA256, rel.Size, file)
	if err != nil {
		return s.blobUnusable(c, "package", rel.SHA256, target, err)
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	req := c.Request()
	if req.Method == http.MethodGet && req.Header.Get("Range") == "" {
		s.svc.CountDownload(rel.ID)
	}
	return c.Redirect(http.StatusFound, u)
}

// pathParam returns a path parameter decoded once: echo hands out the raw segment when the
// request path holds escapes net/http would not have made (a %3B for a ';'), and the
// decoded one otherwise.
func pathParam(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// handleIcon is GET and HEAD /icons/{sha256}.{ext}: the icon of a listed package's
// release in force (the one index.json and the pages point at), under its content address,
// as the content type sniffed and allow-listed at publish; the extension must be that
// type's. Any other blob (a package, an unlisted or superseded icon) is not here. Bytes are
// streamed from the blob file; SVG is sandboxed so that it can never run script.
func (s *Server) handleIcon(c echo.Context) error {
	sha, ext, _ := strings.Cut(c.Param("file"), ".")
	rel := listedIcon(s.svc.Catalog(), sha)
	if rel == nil {
		return errf(http.StatusNotFound, "no such icon")
	}
	if !slices.Contains(iconExts[rel.IconType], ext) {
		return errf(http.StatusNotFound, fmt.Sprintf("no such icon: %s is %s, served at /icons/%s.%s", sha, rel.IconType, sha, iconExts[rel.IconType][0]))
	}
	size, err := s.md.BlobSize(c.Request().Context(), sha)
	if errors.Is(err, store.ErrNotFound) {
		return s.blobUnusable(c, "icon", sha, rel.PackageID+"@"+rel.Version, fmt.Errorf("no blob row for icon %s: %w", sha, store.ErrBlobMissing))
	}
	if err != nil {
		return err
	}
	f, err := s.svc.OpenBlob(c.Request().Context(), sha, size)
	if err != nil {
		return s.blobUnusable(c, "icon", sha, rel.PackageID+"@"+rel.Version, err)
	}
	defer f.Close()
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, rel.IconType)
	h.Set("ETag", `"`+sha+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	serveContent(c, time.Time{}, f, 0)
	return nil
}

// listedIcon returns the listed release in force whose icon is sha, with an allow-listed
// type, or nil. It looks in memory only: no request for an unknown sha reaches the database.
func listedIcon(cat *ingest.Catalog, sha string) *store.Release {
	if len(sha) != 64 {
		return nil
	}
	return cat.IconRelease(sha, func(r *store.Release) bool { return iconExts[r.IconType] != nil })
}

// iconExts maps each content type icons are served as (the publish allow-list) to the URL
// extensions that name it, the canonical one first.
var iconExts = map[string][]string{
	"image/png": {"png"}, "image/jpeg": {"jpg", "jpeg"}, "image/webp": {"webp"}, "image/svg+xml": {"svg"},
}

// blobUnusable answers a request whose blob is missing or corrupt with a 503 that says so
// and logs an ERROR naming the sha256, so the operator learns of it; other errors go to the
// error handler.
func (s *Server) blobUnusable(c echo.Context, what, sha, release string, err error) error {
	state := "corrupt"
	switch {
	case errors.Is(err, store.ErrBlobMissing):
		state = "missing"
	case !errors.Is(err, store.ErrBlobCorrupt):
		return err
	}
	s.log.Error("blob not served; run registry fsck", "sha256", sha, "blob", what, "release", release, "state", state,
		"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
	// A package's release leaves the index until repaired; an icon's release loses its icon.
	// A blob already known to be damaged is not reported again (the record stays whole).
	if (what == "package" || what == "icon") && !s.svc.BlobDamaged(sha) {
		id, version, _ := strings.Cut(release, "@")
		if i := strings.LastIndex(release, "@"); i > 0 {
			id, version = release[:i], release[i+1:]
		}
		s.svc.ReportBlob(sha, 0, []store.BlobUse{{PackageID: id, Version: version, Role: what}}, err)
	}
	msg := fmt.Sprintf("%s blob %s is %s; the operator has been told", what, sha, state)
	if c.Request().Method == http.MethodHead {
		return c.NoContent(http.StatusServiceUnavailable)
	}
	return c.JSON(http.StatusServiceUnavailable, apiError{Error: msg})
}
