package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

// RetryAfterUnavailable is the Retry-After (seconds) of a 503 answered because the
// database or the blob storage could not be reached: about how long a PostgreSQL restart
// or failover takes; a client that retries sooner only meets the same 503.
const RetryAfterUnavailable = 5

// unavailable reports whether err failed for want of the database or the blob storage
// (store.ErrUnavailable, as ingest.ErrStoreUnavailable): nothing was written, and the
// same request can succeed later.
func unavailable(err error) bool { return errors.Is(err, ingest.ErrStoreUnavailable) }

// answerUnavailable sets Retry-After on a 503 for an unreachable database or bucket and
// returns the message of its body.
func answerUnavailable(c echo.Context) string {
	c.Response().Header().Set("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	return fmt.Sprintf("the registry's database or blob storage cannot be reached: nothing was stored; retry in %d s (Retry-After)", RetryAfterUnavailable)
}

// databaseReadiness reports an unreachable database in /readyz. A replica that has index
// documents in force stays ready, degraded: it keeps serving index.json, the Curupira
// document, the home page and listings from its catalog, and downloads of the releases
// those list (their rows are in memory; the blobs are not in the database), while writes
// and what needs a row per request (plugin pages, older versions) answer 503 with
// Retry-After; taking every replica out of rotation during a
// database outage would turn all of that into errors. Without documents it is not ready
// (indexReadiness says so).
func (s *Server) databaseReadiness(r *readiness, err error) {
	docs := s.svc.Documents()
	if docs == nil {
		r.Checks["database"], r.Ready = "unreachable", false
		return
	}
	r.Checks["database"] = fmt.Sprintf("unreachable (%v): serving the index documents in force (serial %d); writes answer %d with Retry-After until it is back",
		err, docs.Serial, http.StatusServiceUnavailable)
	r.Status = readyDegraded
}

// replicaReadiness adds, on a replica, how its documents came to be (ingest.ReplicaStats):
// the serial it follows the feed to and how many serials it built and loaded.
func (s *Server) replicaReadiness(r *readiness) {
	st := s.svc.ReplicaStats()
	if !st.Enabled {
		return
	}
	r.Replica = &st
	if st.FeedError != "" {
		r.Checks["change_feed"] = "unreadable: " + st.FeedError
		if r.Status == readyOK {
			r.Status = readyDegraded
		}
		return
	}
	r.Checks["change_feed"] = "ok"
}
