package server

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

// handleKandevIndexSig is GET and HEAD /index.json.sig: the signed note over the exact
// bytes of the /index.json in force (registry log key, note format).
func (s *Server) handleKandevIndexSig(c echo.Context) error {
	return s.serveIndexSig(c, ingest.KandevDocument)
}

// handleCurupiraIndexSig is GET and HEAD /curupira/index.json.sig: the signed note over the
// /curupira/index.json in force.
func (s *Server) handleCurupiraIndexSig(c echo.Context) error {
	return s.serveIndexSig(c, ingest.CurupiraDocument)
}

// serveIndexSig answers with the document's signature. It is re-signed with a later expiry
// from time to time while the document stays the same, so it is cached briefly, like the
// document; a client must fetch both close together (a signature names the sha256 of one
// document).
func (s *Server) serveIndexSig(c echo.Context, doc string) error {
	msg, err := s.svc.IndexSignature(doc)
	if errors.Is(err, ingest.ErrIndexUnsigned) {
		return errf(http.StatusServiceUnavailable, "the index in force is not signed (no log key is configured, or the last good documents are served after a failed rebuild); retry after the next rebuild")
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/plain; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=60")
	h.Set(echo.HeaderAccessControlAllowOrigin, "*")
	serveContent(c, time.Time{}, bytes.NewReader(msg), 0)
	return nil
}
