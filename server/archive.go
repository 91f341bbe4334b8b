package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/web"
)

// handleArchive is POST /api/v1/plugins/{id}/archive (an owner's publisher token, or
// admin; an extension's id escaped): the package expects no more releases. It stays installable and listed, after
// the active packages, and refuses publishes (publish.archived) until it is unarchived.
func (s *Server) handleArchive(c echo.Context) error { return s.archive(c, true) }

// handleUnarchive is POST /api/v1/plugins/{id}/unarchive (an owner, or admin).
func (s *Server) handleUnarchive(c echo.Context) error { return s.archive(c, false) }

// archive addresses an extension @scope/name by its escaped id (%40scope%2Fname), as the
// quarantine API does.
func (s *Server) archive(c echo.Context, archived bool) error {
	res, err := s.svc.Archive(c.Request().Context(), actorOf(c), pathParam(c, "id"), archived)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// archivedOf is the page's archived notice of it, nil while active.
func archivedOf(it *ingest.Item) *web.Archived {
	if !it.Archived() {
		return nil
	}
	return &web.Archived{Since: it.Package.ArchivedAt.UTC().Format(time.DateOnly)}
}
