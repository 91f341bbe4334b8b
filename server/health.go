package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleHealth is GET /healthz: the process is up.
func (s *Server) handleHealth(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// handleReady is GET /readyz: the database answers, the index is built and plugins.yaml is
// loaded; 503 with the failing checks otherwise.
func (s *Server) handleReady(c echo.Context) error {
	checks := map[string]string{"database": "ok", "index": "ok", "plugins_yaml": "ok"}
	ok := true
	if err := s.svc.Store().Ping(c.Request().Context()); err != nil {
		checks["database"], ok = "unreachable", false
	}
	if s.svc.Documents() == nil {
		checks["index"], ok = "not built", false
	}
	if s.svc.List() == nil {
		checks["plugins_yaml"], ok = "not loaded", false
	}
	if s.cfg.ReadyDetail != nil {
		for k, v := range s.cfg.ReadyDetail() {
			checks[k] = v
		}
	}
	if r := s.svc.LastRefusal(); r != nil {
		checks["index_refusal"] = r.Reason
	}
	status := http.StatusOK
	if !ok {
		status = http.StatusServiceUnavailable
	}
	return c.JSON(status, map[string]any{"ready": ok, "checks": checks})
}
