package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

const actorKey = "actor"

// requireAuth resolves the bearer token to an actor, or answers 401.
func (s *Server) requireAuth(auth *ingest.Authenticator) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			secret, ok := strings.CutPrefix(h, "Bearer ")
			if !ok {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="registry"`)
				return errf(http.StatusUnauthorized, "missing token: send Authorization: Bearer <token> (a publisher token from `registry token create`, or an upload token from POST /api/v1/auth/oidc)")
			}
			a, err := auth.Authenticate(c.Request().Context(), strings.TrimSpace(secret))
			if errors.Is(err, ingest.ErrUnauthenticated) {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="registry", error="invalid_token"`)
				return errf(http.StatusUnauthorized, "invalid, expired or revoked token")
			}
			if err != nil {
				return err
			}
			c.Set(actorKey, a)
			return next(c)
		}
	}
}

// requireAdmin lets only admin actors through (after requireAuth).
func requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !actorOf(c).Admin {
			return errf(http.StatusForbidden, "this endpoint needs the admin token")
		}
		return next(c)
	}
}

func actorOf(c echo.Context) ingest.Actor {
	a, _ := c.Get(actorKey).(ingest.Actor)
	return a
}
