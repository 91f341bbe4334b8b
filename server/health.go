package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

// Readiness states, the "status" field of /readyz.
const (
	readyOK          = "ok"          // 200: everything in force was built from the store as it is
	readyDegraded    = "degraded"    // 200: valid but stale index documents; the reason is in "index"
	readyUnavailable = "unavailable" // 503: take this replica out of rotation
)

// readiness is the body of /readyz.
type readiness struct {
	Ready  bool              `json:"ready"`
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
	Index  indexReadiness    `json:"index"`
	// Replica is this replica's feed and document counters (unavailable.go); absent when not a replica.
	Replica *ingest.ReplicaStats `json:"replica,omitempty"`
}

// indexReadiness says where the index documents in force come from, and why.
type indexReadiness struct {
	Source      string     `json:"source"` // built | last-good | empty | none
	Serial      int64      `json:"serial"`
	Entries     int        `json:"entries"`
	GeneratedAt *time.Time `json:"generated_at,omitempty"`
	Reason      string     `json:"reason,omitempty"` // why the documents are not built from the store as it is
}

// handleHealth is GET /healthz: the process is up.
func (s *Server) handleHealth(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// handleReady is GET /readyz: the database answers, the index is in force and plugins.yaml
// is loaded.
//
// It answers a load balancer's question, "should this replica get traffic?". A replica
// serving stale index documents (the last good ones from disk after a refused rebuild at
// start, or the previous ones after a refused rebuild since) still gives hosts a valid index
// they already accepted, and its pages, downloads and API work: taking it out of rotation
// would turn stale-but-valid into errors and, with a single replica, shut the admin out of
// the API that repairs it. So it stays ready: 200, "status": "degraded", and the reason in
// "index". An unreachable database with documents in force is degraded too (reads answer
// from them, writes 503 with Retry-After: databaseReadiness). It answers 503
// ("unavailable") when it has no documents, or it serves the empty index of a data
// directory that never had a good one:
// hosts would read that as "every plugin is gone", which is worse than an error that keeps
// their cached copy, and a replica with real documents should answer instead.
func (s *Server) handleReady(c echo.Context) error {
	r := readiness{Ready: true, Status: readyOK, Checks: map[string]string{"database": "ok", "index": "ok", "plugins_yaml": "ok"}}
	if err := s.md.Ping(c.Request().Context()); err != nil {
		s.databaseReadiness(&r, err) // degraded but serving while documents are in force (unavailable.go)
	}
	if s.svc.List() == nil {
		r.Checks["plugins_yaml"], r.Ready = "not loaded", false
	}
	s.indexReadiness(&r)
	s.blobReadiness(&r)
	s.replicaReadiness(&r)
	if s.cfg.ReadyDetail != nil {
		for k, v := range s.cfg.ReadyDetail() {
			r.Checks[k] = v
		}
	}
	status := http.StatusOK
	if !r.Ready {
		r.Status, status = readyUnavailable, http.StatusServiceUnavailable
	}
	return c.JSON(status, r)
}

// blobReadiness reports damaged blobs: their releases are out of the index documents, so
// the replica serves a valid but incomplete catalogue (degraded, still ready); the full
// list is at GET /api/v1/admin/blobs.
func (s *Server) blobReadiness(r *readiness) {
	bad := s.svc.Damaged()
	if len(bad) == 0 {
		r.Checks["blobs"] = "ok"
		return
	}
	var releases []string
	for _, p := range bad {
		for _, u := range p.Uses {
			releases = append(releases, u.String())
		}
	}
	r.Checks["blobs"] = fmt.Sprintf("%d damaged blob(s), left out of the index until repaired (registry fsck; re-publish the identical bytes): %s",
		len(bad), strings.Join(releases, ", "))
	if r.Status == readyOK {
		r.Status = readyDegraded
	}
}

// indexReadiness fills in where the documents in force come from.
func (s *Server) indexReadiness(r *readiness) {
	docs := s.svc.Documents()
	if docs == nil {
		r.Checks["index"], r.Ready, r.Index.Source = "not built", false, "none"
		return
	}
	r.Index = indexReadiness{Source: "built", Serial: docs.Serial, Entries: docs.Plugins}
	if ref := s.svc.LastRefusal(); ref != nil {
		r.Checks["index_refusal"], r.Index.Reason, r.Status = ref.Reason, ref.Reason, readyDegraded
	}
	fb := s.svc.Fallback()
	if fb == nil {
		return
	}
	at := fb.GeneratedAt
	r.Index.Source, r.Index.GeneratedAt, r.Index.Reason = fb.Source, &at, fb.Reason()
	r.Checks["index"], r.Status = fb.Describe(), readyDegraded
	if fb.Source == ingest.SourceEmpty {
		r.Ready = false
	}
}
