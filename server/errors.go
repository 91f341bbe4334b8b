package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/rules"
)

// apiError is the one error shape of the JSON API.
type apiError struct {
	Error    string            `json:"error"`
	Problems []problem.Problem `json:"problems,omitempty"`
}

// statusOf maps an error to its HTTP status.
func statusOf(err error) int {
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		return he.Code
	case unavailable(err): // the database or bucket out of reach (unavailable.go)
		return http.StatusServiceUnavailable
	case errors.Is(err, ingest.ErrBadQuery):
		return http.StatusBadRequest
	case errors.Is(err, ingest.ErrInvalid):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ingest.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ingest.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ingest.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ingest.ErrQuarantined):
		return http.StatusGone
	case errors.Is(err, ingest.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ingest.ErrStorageFull):
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// handleError is echo's error handler: it maps errors to statuses, logs only 5xx, and
// never shows internals to the client. Pages get an HTML error page, everything else JSON.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code := statusOf(err)
	body := apiError{Error: http.StatusText(code)}
	var (
		he *echo.HTTPError
		rf *ingest.Refusal
		se *ingest.StorageError
	)
	switch {
	case code == http.StatusServiceUnavailable && unavailable(err):
		body.Error = answerUnavailable(c)
	case errors.As(err, &se):
		body.Error = "the registry's storage is full: nothing was stored; retry later (the operator has been told)"
	case errors.As(err, &rf):
		body.Error, body.Problems = rf.Message, rf.Problems.WithDocs(rules.Linker(s.cfg.PublicURL))
	case errors.As(err, &he) && code < 500:
		if msg, ok := he.Message.(string); ok {
			body.Error = msg
		}
	}
	if code >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "status", code,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
	}
	if wantsHTML(c) {
		if perr := s.renderErrorPage(c, code, body.Error); perr == nil {
			return
		}
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(code)
		return
	}
	_ = c.JSON(code, body)
}

// wantsHTML reports whether the request is for a page rather than the API or a file (a
// document, a package, an image, the transparency log): those answer errors as JSON, and
// carry no page CSP (images set their own sandbox).
func wantsHTML(c echo.Context) bool {
	p := c.Request().URL.Path
	for _, prefix := range []string{"/api/", "/packages/", "/icons/", "/previews/", "/index.json", "/index/", "/kandev/", "/curupira/", "/log/",
		"/static/", "/metrics", "/healthz", "/readyz"} {
		if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
			return false
		}
	}
	return true
}

// errf is a client error with a message for people.
func errf(code int, msg string) error { return echo.NewHTTPError(code, msg) }
