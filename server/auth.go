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
			secret, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
			if !ok {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="registry"`)
				return errf(http.StatusUnauthorized, "missing token: send Authorization: Bearer <token> (a publisher token from `registry token create`, or an upload token from POST /api/v1/auth/oidc)")
			}
			a, err := auth.Authenticate(c.Request().Context(), secret)
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

// bearerToken is the token of an Authorization header in the Bearer scheme, without the
// whitespace around it. The scheme is case-insensitive (RFC 9110 §11.1), so "bearer" and
// "BEARER" count; ok is false when the header is absent, in another scheme or holds no
// token. The authentication and the rate limiter both read the token through it, so that
// they key one token the same way.
func bearerToken(h string) (token string, ok bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
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
