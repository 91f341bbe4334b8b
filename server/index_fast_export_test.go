package server

import "net/http"

// ServeRouted answers r through echo's router and per-request middleware only, as every
// request was answered before the fast path (index_fast.go).
func (s *Server) ServeRouted(w http.ResponseWriter, r *http.Request) { s.e.ServeHTTP(w, r) }

// TakesFastPath reports whether ServeHTTP answers r on the fast path.
func (s *Server) TakesFastPath(r *http.Request) bool { return s.fastRoute(r) != nil }

// LaneServed is how many requests Serve's lane has answered (lane.go).
func (s *Server) LaneServed() int64 { return s.laneServed.Load() }

// SetLaneHook makes f run before each request Serve's lane answers (set before Serve).
func (s *Server) SetLaneHook(f func()) { s.laneHook = f }
