package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// blockBody is the body of POST /api/v1/admin/blocklist.
type blockBody struct {
	SHA256 string `json:"sha256"`
	Reason string `json:"reason"`
}

// handleBlocklist is GET /api/v1/admin/blocklist (admin): every blocked digest, newest
// first.
func (s *Server) handleBlocklist(c echo.Context) error {
	list, err := s.svc.Blocklist(c.Request().Context(), actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"entries": list})
}

// handleBlocklistAdd is POST /api/v1/admin/blocklist (admin): publish refuses packages
// with this sha256, or holding a file with it, from now on (audited blocklist.add).
func (s *Server) handleBlocklistAdd(c echo.Context) error {
	var b blockBody
	if err := decodeBlockBody(c, &b); err != nil {
		return err
	}
	entry, added, err := s.svc.BlockAdd(c.Request().Context(), actorOf(c), b.SHA256, b.Reason)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if added {
		status = http.StatusCreated
	}
	return c.JSON(status, entry)
}

// handleBlocklistRemove is POST /api/v1/admin/blocklist/{digest}/remove (admin), audited
// blocklist.remove; 404 when the digest is not on the list.
func (s *Server) handleBlocklistRemove(c echo.Context) error {
	if err := s.svc.BlockRemove(c.Request().Context(), actorOf(c), c.Param("digest")); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"sha256": c.Param("digest"), "removed": true})
}

// decodeBlockBody reads {"sha256": ..., "reason": ...} (at most 64 KiB, no other fields).
func decodeBlockBody(c echo.Context, b *blockBody) error {
	return decodeJSONBody(c, b, `{"sha256": "<64 hex digits>", "reason": "..."}`)
}
