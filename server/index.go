package server

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

// handleKandevIndex is GET /index.json: the Kandev document, from memory.
func (s *Server) handleKandevIndex(c echo.Context) error {
	return s.serveDocument(c, func(d *ingest.Documents) *ingest.Document { return &d.Kandev })
}

// handleCurupiraIndex is GET /curupira/index.json: the Curupira document, from memory.
func (s *Server) handleCurupiraIndex(c echo.Context) error {
	return s.serveDocument(c, func(d *ingest.Documents) *ingest.Document { return &d.Curupira })
}

// serveDocument answers with a prebuilt document: no database work, strong ETag,
// If-None-Match / If-Modified-Since → 304, gzip bytes when accepted.
func (s *Server) serveDocument(c echo.Context, pick func(*ingest.Documents) *ingest.Document) error {
	docs := s.svc.Documents()
	if docs == nil {
		return errf(http.StatusServiceUnavailable, "the index is being built; retry shortly")
	}
	d := pick(docs)
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/json")
	h.Set("ETag", d.ETag)
	h.Set(echo.HeaderLastModified, d.LastModified.UTC().Format(http.TimeFormat))
	h.Set("Cache-Control", "public, max-age=60")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	if notModified(c.Request(), d.ETag, d.LastModified) {
		return c.NoContent(http.StatusNotModified)
	}
	body := d.Body
	if acceptsGzip(c.Request()) {
		h.Set(echo.HeaderContentEncoding, "gzip")
		body = d.Gzip
	}
	// A known length lets net/http send the body in one piece instead of chunks.
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	if c.Request().Method == http.MethodHead {
		return c.NoContent(http.StatusOK)
	}
	if h.Get(echo.HeaderContentEncoding) == "" && d.File != "" && sendFile(c, d.File, len(body)) {
		return nil
	}
	return c.Blob(http.StatusOK, "application/json", body)
}

func notModified(r *http.Request, etag string, lastMod time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			if t == etag || t == "*" || strings.TrimPrefix(t, "W/") == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && lastMod.Unix() <= t.Unix() {
			return true
		}
	}
	return false
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get(echo.HeaderAcceptEncoding), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") {
			return true
		}
	}
	return false
}

// sendFile writes the document from its file, which lets net/http use sendfile(2) and
// spare a copy of the body through user space; it reports false (nothing written) when the
// file cannot be opened, so the caller serves the bytes from memory instead.
func sendFile(c echo.Context, path string, size int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	res := c.Response()
	res.WriteHeader(http.StatusOK)
	n, _ := io.Copy(res.Writer, io.LimitReader(f, int64(size)))
	res.Size = n
	return true
}
