package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/web"
)

// handlePreview is GET and HEAD /previews/{sha256}.{ext}: the registry's copy of a preview
// image that a listed plugin or canvas shows, under its content address, as the type
// sniffed when it was fetched; the extension must be that type's. Any other blob is not
// here. Bytes are streamed from the blob file, checked against the recorded size.
func (s *Server) handlePreview(c echo.Context) error {
	sha, ext, _ := strings.Cut(c.Param("file"), ".")
	p := s.svc.ListedPreview(sha)
	if p == nil {
		return errf(http.StatusNotFound, "no such preview")
	}
	if want := ingest.PreviewExt(p.ContentType); ext != want {
		return errf(http.StatusNotFound, fmt.Sprintf("no such preview: %s is %s, served at /previews/%s.%s", sha, p.ContentType, sha, want))
	}
	f, err := s.svc.OpenBlob(c.Request().Context(), sha, p.Size)
	if err != nil {
		return s.blobUnusable(c, "preview", sha, p.URL, err)
	}
	defer f.Close()
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, p.ContentType)
	h.Set("ETag", `"`+sha+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	serveContent(c, p.FetchedAt, f, 0)
	return nil
}

// previewsOf is what a page shows of an entry's previews: the registry's copy where it
// has one, else no URL at all, which the page draws as a placeholder with the alternative
// text. The remote URL never reaches a page.
func (s *Server) previewsOf(it *ingest.Item) []web.Preview {
	if it.Entry == nil {
		return nil
	}
	out := make([]web.Preview, 0, len(it.Entry.Previews))
	for _, pv := range it.Entry.Previews {
		wp := web.Preview{Alt: pv.Alt}
		if p, ok := s.svc.Preview(pv.URL); ok && p.Fetched() {
			wp.URL = ingest.PreviewPath(p)
		}
		out = append(out, wp)
	}
	return out
}
