package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

type oidcRequest struct {
	Token string `json:"token"`
}

type oidcResponse struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Scope     []string  `json:"scope"`
}

// handleOIDC is POST /api/v1/auth/oidc {"token": JWT}: GitHub Actions trusted publishing.
// A valid identity token from a listed repository is exchanged for a 15-minute upload
// token scoped to that repository's package ids.
func (s *Server) handleOIDC(c echo.Context) error {
	if s.cfg.OIDC == nil {
		return errf(http.StatusNotFound, "trusted publishing is disabled on this registry (--oidc-issuer off)")
	}
	var req oidcRequest
	const example = `{"token": "<GitHub Actions OIDC token>"}`
	if err := bindJSON(c, 64<<10, &req, false, example); err != nil {
		return err
	}
	if req.Token == "" {
		return errf(http.StatusBadRequest, "expected a JSON body like "+example+`: field "token" is missing or empty`)
	}
	secret, exp, scope, err := s.cfg.OIDC.Exchange(c.Request().Context(), req.Token)
	if errors.Is(err, ingest.ErrUnauthenticated) {
		return unauthenticated(err)
	}
	if errors.Is(err, ingest.ErrUnavailable) {
		s.log.Warn("oidc: issuer unavailable", "err", err)
		return errf(http.StatusServiceUnavailable, "trusted publishing is unavailable: the OIDC issuer could not be reached (discovery failed); retry later")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, oidcResponse{Token: secret, ExpiresAt: exp, Scope: scope})
}

// unauthenticated is a refused identity token as a 401 that keeps the refusal's rules
// (oidc.jti.replayed, ...) when it has some.
func unauthenticated(err error) error {
	var rf *ingest.Refusal
	if !errors.As(err, &rf) {
		return errf(http.StatusUnauthorized, err.Error())
	}
	return &ingest.Refusal{Kind: echo.NewHTTPError(http.StatusUnauthorized, rf.Message), Message: rf.Message, Problems: rf.Problems}
}
