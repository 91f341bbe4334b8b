package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// securityHeaders sets the headers every response carries; pages get a strict CSP with no
// inline script.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		h.Set("X-Frame-Options", "DENY")
		if wantsHTML(c) {
			h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "+
				"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		}
		return next(c)
	}
}

// recoverPanics turns a handler panic into a logged 500 instead of a dropped connection.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// logRequests writes one structured line per request, with its request id.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		res := c.Response()
		s.log.Info("request", "method", c.Request().Method, "path", c.Request().URL.Path, "route", c.Path(),
			"status", res.Status, "bytes", res.Size, "duration_ms", time.Since(start).Milliseconds(),
			"request_id", res.Header().Get(echo.HeaderXRequestID), "remote", c.RealIP())
		return nil
	}
}

// dropUnsafeRequestID discards a client-sent X-Request-ID that is long or holds anything
// but letters, digits, '-', '_' and '.', so that logs and echoed headers carry only ids
// that are safe to show; the request-id middleware then generates a fresh one.
func dropUnsafeRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if id := c.Request().Header.Get(echo.HeaderXRequestID); id != "" && !safeRequestID(id) {
			c.Request().Header.Del(echo.HeaderXRequestID)
		}
		return next(c)
	}
}

func safeRequestID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
