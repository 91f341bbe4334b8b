package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// The document routes are the registry's hottest: hosts and mirrors poll them, and at
// 30,000 requests a second the router and the middleware echo composes anew for every
// request (ten closures, a route lookup) cost as much CPU as the response's own Go code.
// serveFast answers them before echo's router: the same handlers wrapped once, at
// construction, in the same middleware functions, in the same order (routeDocument
// registers both), on a context from echo's pool with the route template echo would have
// set. So every header, the request line, the request metrics and the rate limits are
// those of the routed path (TestFastPathMatchesRouter compares the two).

// fastRoutes are the exact paths serveFast answers, each with its route template (the
// path itself) and its handler already wrapped in the middleware.
type fastRoutes map[string]echo.HandlerFunc

// routeDocument registers h for GET and HEAD of path with echo (getHead), which requests
// that are not a plain GET or HEAD of the exact path keep taking, and as a fast route,
// wrapped once in chain, outermost first: the middleware echo runs before routing (e.Pre)
// and then around the route (e.Use).
func (s *Server) routeDocument(e *echo.Echo, path string, h echo.HandlerFunc, chain []echo.MiddlewareFunc) {
	getHead(e, path, h)
	for i := len(chain) - 1; i >= 0; i-- {
		h = chain[i](h)
	}
	if s.fast == nil {
		s.fast = fastRoutes{}
	}
	s.fast[path] = h
}

// serveFast answers r when it is a GET or HEAD of a fast route's exact path (nothing
// escaped in it), as echo.ServeHTTP would, and reports whether it did.
func (s *Server) serveFast(w http.ResponseWriter, r *http.Request) bool {
	h := s.fastRoute(r)
	if h == nil {
		return false
	}
	c := s.e.AcquireContext()
	c.Reset(r, w)
	c.SetPath(r.URL.Path)
	if err := h(c); err != nil {
		s.e.HTTPErrorHandler(err, c)
	}
	s.e.ReleaseContext(c)
	return true
}

// fastRoute is the wrapped handler serveFast answers r with, nil when r takes echo's
// router.
func (s *Server) fastRoute(r *http.Request) echo.HandlerFunc {
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || r.URL.RawPath != "" {
		return nil
	}
	return s.fast[r.URL.Path]
}

// isFast reports whether path is a fast route's exact path (the lane's requests, lane.go).
func (s *Server) isFast(path []byte) bool { return s.fast[string(path)] != nil }
