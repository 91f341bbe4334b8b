package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/store"
)

// SyncStatus reports pull sync's per-repository state (pull.Syncer implements it).
type SyncStatus interface {
	SyncStates(ctx context.Context) ([]store.SyncState, error)
}

// apiSyncStatus is the body of GET /api/v1/admin/sync.
type apiSyncStatus struct {
	// Enabled is true when this process polls GitHub; otherwise the states shown are those
	// `registry sync` recorded.
	Enabled bool `json:"enabled"`
	// RateLimitedUntil is set while GitHub's rate limit holds every round back.
	RateLimitedUntil *time.Time        `json:"rate_limited_until"`
	Repositories     []store.SyncState `json:"repositories"`
}

// handleSyncStatus is GET /api/v1/admin/sync (admin): for each listed repository, when it
// was last checked, the outcome, the error and its rule ids, and the rate-limit state.
func (s *Server) handleSyncStatus(c echo.Context) error {
	var src SyncStatus = s.md
	if s.cfg.Sync != nil {
		src = s.cfg.Sync
	}
	states, err := src.SyncStates(c.Request().Context())
	if err != nil {
		return err
	}
	out := apiSyncStatus{Enabled: s.cfg.Sync != nil, Repositories: states}
	now := s.now()
	for _, st := range states {
		if u := st.RateLimitedUntil; u != nil && u.After(now) && (out.RateLimitedUntil == nil || u.After(*out.RateLimitedUntil)) {
			out.RateLimitedUntil = u
		}
	}
	return c.JSON(http.StatusOK, out)
}
