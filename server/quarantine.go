package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/web"
)

// quarantineBody is the body of a quarantine: the public reason (rule quarantine.reason).
type quarantineBody struct {
	Reason string `json:"reason"`
}

// handleQuarantineList is GET /api/v1/admin/quarantine (admin): every quarantine in force.
func (s *Server) handleQuarantineList(c echo.Context) error {
	qs, err := s.svc.Quarantines(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"quarantines": qs})
}

// handleQuarantinePackage is POST /api/v1/admin/quarantine/{id} {"reason"} (admin): every
// version of the package.
func (s *Server) handleQuarantinePackage(c echo.Context) error {
	return s.quarantine(c, "")
}

// handleQuarantineRelease is POST /api/v1/admin/quarantine/{id}/versions/{version}
// {"reason"} (admin): one release.
func (s *Server) handleQuarantineRelease(c echo.Context) error {
	return s.quarantine(c, pathParam(c, "version"))
}

func (s *Server) quarantine(c echo.Context, version string) error {
	var b quarantineBody
	if err := bindJSON(c, 64<<10, &b, true, `{"reason": "a leaked token published a credential stealer"}`); err != nil {
		return err
	}
	q, err := s.svc.Quarantine(c.Request().Context(), actorOf(c), pathParam(c, "id"), version, b.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, q)
}

// handleUnquarantinePackage is POST /api/v1/admin/quarantine/{id}/release (admin): end the
// package's own quarantine.
func (s *Server) handleUnquarantinePackage(c echo.Context) error {
	return s.unquarantine(c, "")
}

// handleUnquarantineRelease is POST /api/v1/admin/quarantine/{id}/versions/{version}/release
// (admin): end one release's quarantine.
func (s *Server) handleUnquarantineRelease(c echo.Context) error {
	return s.unquarantine(c, pathParam(c, "version"))
}

func (s *Server) unquarantine(c echo.Context, version string) error {
	id := pathParam(c, "id")
	had, err := s.svc.ReleaseQuarantine(c.Request().Context(), actorOf(c), id, version)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": id, "version": version, "released": had})
}

// quarantinedPage is the item of a package quarantine keeps out of the catalog, for its
// page (which stays, with the reason); ok false when id is not such a package. It has no
// icon: /icons serves only the icons of listed releases, so its URL would be a 404.
func (s *Server) quarantinedPage(c echo.Context, id string) (*ingest.Item, bool, error) {
	it, err := s.svc.QuarantinedItem(c.Request().Context(), id)
	if errors.Is(err, ingest.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	it.IconURL = ""
	return it, true, nil
}

// quarantineNotices are the banners of id's quarantines in force, and marks its
// quarantined releases in rows.
func (s *Server) quarantineNotices(id string, rows []web.VersionRow) []web.QuarantineNotice {
	qs := s.svc.QuarantinesOf(id)
	if len(qs) == 0 {
		return nil
	}
	out := make([]web.QuarantineNotice, 0, len(qs))
	for _, q := range qs {
		out = append(out, web.QuarantineNotice{Version: q.Version, Reason: q.Reason, Since: q.SetAt.UTC().Format("2006-01-02")})
	}
	for i := range rows {
		_, rows[i].Quarantined = s.svc.QuarantineOf(id, rows[i].Version)
	}
	return out
}

// apiQuarantine is a quarantine as the JSON API shows it on a version.
type apiQuarantine struct {
	Package bool      `json:"package"` // the whole package is quarantined, not only this version
	Reason  string    `json:"reason"`
	Since   time.Time `json:"since"`
}

func (s *Server) apiQuarantineOf(id, version string) *apiQuarantine {
	q, ok := s.svc.QuarantineOf(id, version)
	if !ok {
		return nil
	}
	return &apiQuarantine{Package: q.Version == "", Reason: q.Reason, Since: q.SetAt}
}
