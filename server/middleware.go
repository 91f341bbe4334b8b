package server

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// securityHeaders sets the headers every response carries; pages get a strict CSP with no
// inline script.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		setHeader(h, "X-Content-Type-Options", nosniff)
		setHeader(h, "Referrer-Policy", referrerPolicy)
		setHeader(h, "X-Frame-Options", frameDeny)
		if wantsHTML(c) {
			setHeader(h, "Content-Security-Policy", pageCSP)
		}
		return next(c)
	}
}

// Header values set on every response, made once: each is a one-element slice with no
// room to grow, so that an Add to the same field (append) copies it instead of writing
// into the shared array.
var (
	nosniff        = headerValue("nosniff")
	referrerPolicy = headerValue("strict-origin-when-cross-origin")
	frameDeny      = headerValue("DENY")
	pageCSP        = headerValue("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; " +
		"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
)

func headerValue(v string) []string { return []string{v}[:1:1] }

// setHeader is h.Set(key, v[0]) for a key already in canonical form and a value made by
// headerValue: no canonicalisation and no slice per response.
func setHeader(h http.Header, key string, v []string) { h[key] = v }

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
		s.logRequest(c, start)
		return nil
	}
}

// logRequest makes the request's line as s.log.Info would, with typed attributes (no
// boxing each value in an any) and without the caller's pc, which slog captures on every
// call for handlers that add the source (none of the registry's does, and the source
// would always be this function), and hands it to the request log (requestlog.go).
func (s *Server) logRequest(c echo.Context, start time.Time) {
	if !s.reqlog.h.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	req, res := c.Request(), c.Response()
	now := time.Now()
	r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", req.Method), slog.String("path", req.URL.Path), slog.String("route", c.Path()),
		slog.Int("status", res.Status), slog.Int64("bytes", res.Size), slog.Int64("duration_ms", now.Sub(start).Milliseconds()),
		slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)), slog.String("remote", c.RealIP()))
	s.reqlog.add(r)
}

// requestID sets the response's X-Request-ID: the client's (dropUnsafeRequestID has
// discarded an unsafe one) or a fresh newRequestID, as echo's middleware.RequestID does,
// without its pooled reader and two buffers per fresh id.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if id == "" {
			id = newRequestID()
		}
		c.Response().Header()[echo.HeaderXRequestID] = []string{id}
		return next(c)
	}
}

// requestIDChars are the characters of a fresh request id (echo's alphabet).
const requestIDChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newRequestID is 32 characters drawn uniformly from requestIDChars with crypto/rand,
// as echo makes them: a random byte of 248 or more is skipped, so that each character
// is equally likely (248 is 4 × 62).
func newRequestID() string {
	var id [32]byte
	var r [40]byte
	n := 0
	for n < len(id) {
		_, _ = rand.Read(r[:]) // crypto/rand does not fail (it ends the program instead)
		for _, x := range r {
			if int(x) >= 4*len(requestIDChars) {
				continue
			}
			id[n] = requestIDChars[int(x)%len(requestIDChars)]
			if n++; n == len(id) {
				break
			}
		}
	}
	return string(id[:])
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
