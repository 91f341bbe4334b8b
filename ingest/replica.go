package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/store"
)

// Replicas: several serve processes over one PostgreSQL database act as one registry
// (docs/architecture.md, "Replicas"). Each follows the store's change feed and re-reads
// the packages another replica changed, through the path a local change takes
// (applyLocked); the documents of each serial are built by one replica, which stores them
// (store.PutDocuments), and loaded by the others, so that every replica serves the same
// index.json bytes, ETag and serial.

// Replica defaults (ReplicaOptions).
const (
	DefaultReplicaPoll = 250 * time.Millisecond // the feed is read at least this often
	DefaultBuildWait   = time.Second            // how long a replica waits for another's build
)

// Variables so that a test can put a replica far behind with a few changes.
var (
	feedPageLimit = 1000 // changes read per page of the feed
	feedMaxPages  = 10   // a replica further behind rebuilds everything instead
)

// sharedPoll is how often a replica waiting for another's build looks for its documents.
const sharedPoll = 20 * time.Millisecond

// ReplicaOptions configure a Service that shares its database with other serve processes.
type ReplicaOptions struct {
	Name      string        // this replica in logs and in the documents it stores (default host:pid)
	Poll      time.Duration // how often the feed is read without a notification (DefaultReplicaPoll)
	BuildWait time.Duration // how long to wait for the replica building a serial (DefaultBuildWait)
}

// replicaStore is what following the feed and sharing documents take of the store;
// *store.Store has it on both dialects (on SQLite without notifications or a lock to
// contend for: one process owns the file).
type replicaStore interface {
	Changes(ctx context.Context, since int64, limit int) (*store.ChangePage, error)
	FeedSerials(ctx context.Context) (serial, completeSince int64, err error)
	Documents(ctx context.Context, serial int64) ([]store.StoredDocument, error)
	PutDocuments(ctx context.Context, docs []store.StoredDocument) (bool, error)
	TryBuildLock(ctx context.Context, serial int64) (release func(), ok bool, err error)
	ListenChanges(ctx context.Context, wake func()) error
}

// replicaState is the follower's state; zero (off) unless EnableReplica was called.
type replicaState struct {
	on      atomic.Bool
	opt     ReplicaOptions
	st      replicaStore
	applied atomic.Int64  // every change up to it is in the catalog and documents in force
	wake    chan struct{} // a notification: read the feed now

	built, loaded, fallbacks, local atomic.Int64
	feedErr                         atomic.Pointer[feedFailure]
}

type feedFailure struct {
	err   error
	since time.Time
}

// ReplicaStats counts how the documents of each serial came to be in force on this
// replica; the sum of Built over all replicas is the number of serials built, each once.
type ReplicaStats struct {
	Enabled bool   `json:"enabled"`
	Name    string `json:"name,omitempty"`
	// Applied is the serial up to which this replica shows every change of the feed.
	Applied int64 `json:"applied_serial"`
	// Built: serials whose documents this replica built holding the build lock; Fallbacks:
	// serials it built after waiting in vain for the replica holding it; Local: builds not
	// meant to be shared (a list reload's, or with no lock to be had: the database down);
	// Loaded: loads of documents another replica stored (a download flush loads its serial's
	// again). Built+Fallbacks summed over the replicas is the builds of shared serials:
	// one each when the lock works.
	Built     int64 `json:"documents_built"`
	Loaded    int64 `json:"documents_loaded"`
	Fallbacks int64 `json:"documents_fallback"`
	Local     int64 `json:"documents_local"`
	// FeedError is why the feed could not be read (the database unreachable), since
	// FeedErrorSince; empty while it is read.
	FeedError      string     `json:"feed_error,omitempty"`
	FeedErrorSince *time.Time `json:"feed_error_since,omitempty"`
}

// EnableReplica makes the Service one of several sharing its database: builds catch up
// with the feed first and share their documents. Call it before Rebuild, then run Follow.
func (s *Service) EnableReplica(opt ReplicaOptions) error {
	rs, ok := s.store.(replicaStore)
	if !ok {
		return fmt.Errorf("ingest: replicas: the store (%T) has no change feed or shared documents", s.store)
	}
	if opt.Poll <= 0 {
		opt.Poll = DefaultReplicaPoll
	}
	if opt.BuildWait <= 0 {
		opt.BuildWait = DefaultBuildWait
	}
	if opt.Name == "" {
		host, _ := os.Hostname()
		opt.Name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	r := &s.replica
	r.opt, r.st, r.wake = opt, rs, make(chan struct{}, 1)
	r.on.Store(true)
	return nil
}

// ReplicaStats returns the replica's counters (Enabled false when not a replica).
func (s *Service) ReplicaStats() ReplicaStats {
	r := &s.replica
	st := ReplicaStats{Enabled: r.on.Load(), Name: r.opt.Name, Applied: r.applied.Load(),
		Built: r.built.Load(), Loaded: r.loaded.Load(), Fallbacks: r.fallbacks.Load(), Local: r.local.Load()}
	if f := r.feedErr.Load(); f != nil {
		since := f.since
		st.FeedError, st.FeedErrorSince = f.err.Error(), &since
	}
	return st
}

// Follow reads the change feed until ctx ends: every Poll, and at once when the database
// notifies a change (PostgreSQL LISTEN), it brings the catalog and documents up to the
// feed's serial. A feed it cannot read (the database down) is retried at the next poll,
// the documents in force served meanwhile. It returns at once when not a replica.
func (s *Service) Follow(ctx context.Context) {
	r := &s.replica
	if !r.on.Load() {
		return
	}
	go s.listen(ctx)
	t := time.NewTicker(r.opt.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
		s.FollowOnce(ctx)
	}
}

// FollowOnce reads the feed once and, when another replica changed something, brings the
// catalog and documents up to it; it reports whether the feed could be read (false when
// not a replica). It does not wait for a failed rebuild's retry, which backs off up to
// 30 s: a replica catches up at the first poll after the database is back.
func (s *Service) FollowOnce(ctx context.Context) bool {
	r := &s.replica
	if !r.on.Load() {
		return false
	}
	// Only the serial is needed here: one read of it, not a page of the feed in a
	// transaction; feedCatchUp reads the changes when there are some.
	serial, _, err := r.st.FeedSerials(ctx)
	if err != nil {
		if r.feedErr.Load() == nil {
			s.log.Warn("replica: the change feed cannot be read; serving the documents in force", "serial", r.applied.Load(), "err", err)
			r.feedErr.Store(&feedFailure{err: err, since: s.now()})
		}
		return false
	}
	if f := r.feedErr.Swap(nil); f != nil {
		s.log.Info("replica: the change feed is read again", "down_for", s.now().Sub(f.since).String())
	}
	if serial > r.applied.Load() {
		s.refreshPackages(fmt.Sprintf("the changes up to serial %d", serial), []string{}, false)
	}
	return true
}

// WakeFollower makes Follow read the feed now.
func (s *Service) WakeFollower() {
	select {
	case s.replica.wake <- struct{}{}:
	default:
	}
}

// listen wakes the follower on every notification, listening again after a failure.
func (s *Service) listen(ctx context.Context) {
	delay := DefaultReplicaPoll
	for {
		err := s.replica.st.ListenChanges(ctx, s.WakeFollower)
		if errors.Is(err, store.ErrNoNotify) || ctx.Err() != nil {
			return
		}
		s.log.Debug("replica: change notifications stopped; the feed is polled meanwhile", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// feedCatchUp adds to ids the packages the feed changed since the serial applied and
// returns the feed's serial, which the documents about to be built then carry: every
// change up to it is in them. full asks for a whole rebuild instead: the feed is
// incomplete there, or too far ahead. A list reload names no package (each replica has
// its own list: plugins.yaml is reloaded on each). Quarantines are read again when one
// changed. Not a replica: serial 0, nothing added. rebuildMu is held.
func (s *Service) feedCatchUp(ctx context.Context, ids *[]string) (serial int64, full bool, err error) {
	r := &s.replica
	if !r.on.Load() {
		return 0, false, nil
	}
	since := r.applied.Load()
	var changed []string
	quarantine := false
	for pages := 0; ; pages++ {
		page, err := r.st.Changes(ctx, since, feedPageLimit)
		if err != nil {
			return 0, false, err
		}
		if page.CompleteSince > since || pages == feedMaxPages {
			return 0, true, nil
		}
		for _, c := range page.Changes {
			if c.Kind == store.ChangeQuarantine || c.Kind == store.ChangeUnquarantine {
				quarantine = true
			}
			if c.PackageID != "" { // a list reload names none: the curated list is each replica's own
				changed = append(changed, c.PackageID)
			}
			since = c.Serial
		}
		if !page.More {
			serial = page.Serial
			break
		}
	}
	if quarantine {
		if err := s.loadQuarantines(ctx); err != nil {
			return 0, false, err
		}
	}
	*ids = append(*ids, changed...)
	return serial, false, nil
}

// serialFor is the serial an incremental build's documents carry: the feed's, on a
// replica (feedCatchUp), else the store's now (this process made every change).
func (s *Service) serialFor(ctx context.Context, feed int64) (int64, error) {
	if s.replica.on.Load() {
		return feed, nil
	}
	return s.store.Serial(ctx)
}

// ErrStoreUnavailable is store.ErrUnavailable for the server, which names no store
// internals: a call failed because the database or the blob storage could not be
// reached; nothing was written and the request may be retried (503 with Retry-After).
var ErrStoreUnavailable = store.ErrUnavailable
