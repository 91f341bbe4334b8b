package ingest

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// lockedStore is a store handle whose build lock is shared by the handles of one test,
// as PostgreSQL's advisory lock is shared by replicas: SQLite (one process) has none to
// contend for, so the lock logic is tested here and on PostgreSQL in
// replica_postgres_test.go.
type lockedStore struct {
	*store.Store
	locks *buildLocks
}

type buildLocks struct {
	mu   sync.Mutex
	held map[int64]bool
}

func (l *lockedStore) TryBuildLock(_ context.Context, serial int64) (func(), bool, error) {
	l.locks.mu.Lock()
	defer l.locks.mu.Unlock()
	if l.locks.held[serial] {
		return func() {}, false, nil
	}
	l.locks.held[serial] = true
	return func() {
		l.locks.mu.Lock()
		defer l.locks.mu.Unlock()
		delete(l.locks.held, serial)
	}, true, nil
}

// sqliteReplicas opens n replicas over one SQLite database file, sharing one build lock
// and one blob folder, each with a data directory of its own; their indexes are built.
func sqliteReplicas(t *testing.T, n int, opt ReplicaOptions) ([]*Service, *buildLocks) {
	t.Helper()
	db := "sqlite:" + filepath.Join(t.TempDir(), store.DBFile)
	locks := &buildLocks{held: map[int64]bool{}}
	var stores []Store
	for range n {
		st, err := store.OpenURL(context.Background(), db, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, &lockedStore{Store: st, locks: locks})
	}
	return startReplicas(t, stores, stores[0].(*lockedStore).Blobs.Folder(), opt), locks
}

// startReplicas makes a replica Service over each store, all with the publish list and
// the blobs of the first, and builds their indexes one after the other.
func startReplicas(t *testing.T, stores []Store, blobs Blobs, opt ReplicaOptions) []*Service {
	t.Helper()
	var out []*Service
	for i, st := range stores {
		cfg := Config{PublicURL: "http://r.example", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(), Blobs: blobs}
		s := New(st, publishList(), cfg, discard())
		t.Cleanup(s.Close)
		o := opt
		o.Name = string(rune('A' + i))
		if err := s.EnableReplica(o); err != nil {
			t.Fatal(err)
		}
		if err := s.Rebuild(context.Background()); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// sameDocuments fails t unless b serves a's index documents byte for byte.
func sameDocuments(t *testing.T, a, b *Service) {
	t.Helper()
	da, db := a.Documents(), b.Documents()
	if da.Serial != db.Serial || da.Kandev.ETag != db.Kandev.ETag || !bytes.Equal(da.Kandev.Body.Bytes(), db.Kandev.Body.Bytes()) ||
		da.Curupira.ETag != db.Curupira.ETag || !bytes.Equal(da.Curupira.Body.Bytes(), db.Curupira.Body.Bytes()) {
		t.Fatalf("replicas serve different documents: serial %d ETag %s (%d bytes) vs serial %d ETag %s (%d bytes)",
			da.Serial, da.Kandev.ETag, len(da.Kandev.Body.Bytes()), db.Serial, db.Kandev.ETag, len(db.Kandev.Body.Bytes()))
	}
}

// builds is the serials built (and stored) over every replica, fallbacks included.
func builds(ss ...*Service) int64 {
	var n int64
	for _, s := range ss {
		st := s.ReplicaStats()
		n += st.Built + st.Fallbacks
	}
	return n
}

func TestReplicaFollowsAnotherReplicasPublish(t *testing.T) {
	rs, _ := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
	a, b := rs[0], rs[1]
	sameDocuments(t, a, b) // the start: b loaded what a built
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	if got := indexed(b, "acme-hello"); got != "" {
		t.Fatalf("b shows acme-hello@%s before it read the feed", got)
	}
	if !b.FollowOnce(context.Background()) {
		t.Fatal("b could not read the feed")
	}
	if got := indexed(b, "acme-hello"); got != "1.0.0" {
		t.Fatalf("after following, b's index lists acme-hello at %q, want 1.0.0", got)
	}
	sameDocuments(t, a, b)
	if st := b.ReplicaStats(); st.Built != 0 || st.Loaded != 2 || st.Applied != a.Documents().Serial {
		t.Errorf("b's stats = %+v, want 0 built, 2 loaded (the start and the publish), applied serial %d", st, a.Documents().Serial)
	}
	if n := builds(a, b); n != 2 {
		t.Errorf("%d builds over both replicas for 2 serials (the start and the publish), want one each", n)
	}
}

func TestReplicaCatchesUpBeforeItsOwnBuild(t *testing.T) {
	// b publishes without having followed a's publish: its build must take a's in first,
	// or the documents it stores for the new serial would lack it for every replica.
	rs, _ := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
	a, b := rs[0], rs[1]
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	publishOK(t, b, "acme-other", "2.0.0", "Another")
	if got := indexed(b, "acme-hello"); got != "1.0.0" {
		t.Fatalf("b's documents after its own publish list acme-hello at %q, want 1.0.0 (a's publish, an earlier serial)", got)
	}
	a.FollowOnce(context.Background())
	sameDocuments(t, a, b)
	if got := indexed(a, "acme-other"); got != "2.0.0" {
		t.Fatalf("a lists acme-other at %q, want 2.0.0", got)
	}
}

func TestReplicaOneBuildPerSerial(t *testing.T) {
	rs, _ := sqliteReplicas(t, 3, ReplicaOptions{BuildWait: time.Minute})
	writer := rs[0]
	before := builds(rs...)
	writer.replica.on.Store(false) // commit without building: the others race for the serial
	publishOK(t, writer, "acme-hello", "1.0.0", "Says hello")
	writer.replica.on.Store(true)
	var wg sync.WaitGroup
	for _, s := range rs[1:] {
		wg.Go(func() { s.FollowOnce(context.Background()) })
	}
	wg.Wait()
	if n := builds(rs...) - before; n != 1 {
		t.Fatalf("the publish's serial was built %d times over the replicas, want once", n)
	}
	sameDocuments(t, rs[1], rs[2])
	if got := indexed(rs[2], "acme-hello"); got != "1.0.0" {
		t.Fatalf("acme-hello listed at %q, want 1.0.0", got)
	}
}

func TestReplicaBuildsItselfWhenTheLockHolderStoresNothing(t *testing.T) {
	rs, locks := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: 50 * time.Millisecond})
	a, b := rs[0], rs[1]
	a.replica.on.Store(false)
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	serial := a.Documents().Serial
	locks.held[serial] = true // a builder that took the lock and died
	b.FollowOnce(context.Background())
	if got := indexed(b, "acme-hello"); got != "1.0.0" {
		t.Fatalf("b lists acme-hello at %q, want 1.0.0 (built itself)", got)
	}
	if st := b.ReplicaStats(); st.Fallbacks != 1 || st.Applied != serial {
		t.Fatalf("b's stats = %+v, want 1 fallback build at serial %d", st, serial)
	}
	stored, err := b.store.(replicaStore).Documents(context.Background(), serial)
	if err != nil || len(stored) != 2 {
		t.Fatalf("the fallback build was not stored for the others: %d rows, %v", len(stored), err)
	}
	for _, d := range stored {
		if d.Name == store.DocumentKandev && d.ETag != b.Documents().Kandev.ETag {
			t.Fatalf("stored index.json has ETag %s, b serves %s", d.ETag, b.Documents().Kandev.ETag)
		}
	}
}

func TestReplicaRefusesDamagedStoredDocuments(t *testing.T) {
	rs, _ := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
	a, b := rs[0], rs[1]
	a.replica.on.Store(false)
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	serial := a.Documents().Serial
	good := a.storedOf(a.Documents())
	for i := range good {
		good[i].Body = append([]byte(nil), good[i].Body...)
		good[i].Body[len(good[i].Body)-1] = ' ' // the ETag no longer matches
	}
	if ok, err := a.store.(replicaStore).PutDocuments(context.Background(), good); !ok || err != nil {
		t.Fatalf("store the damaged rows: %v %v", ok, err)
	}
	b.FollowOnce(context.Background())
	d := b.Documents()
	for _, bad := range good {
		if bytes.Equal(d.Kandev.Body.Bytes(), bad.Body) || bytes.Equal(d.Curupira.Body.Bytes(), bad.Body) {
			t.Fatalf("b serves the damaged stored %s (its body no longer has ETag %s)", bad.Name, bad.ETag)
		}
	}
	if d.Serial != serial || d.Kandev.ETag != newDocument(d.Kandev.Body.Bytes(), d.Kandev.LastModified).ETag {
		t.Fatalf("b serves serial %d with ETag %s; want serial %d, a body with that ETag", d.Serial, d.Kandev.ETag, serial)
	}
	if got := indexed(b, "acme-hello"); got != "1.0.0" {
		t.Fatalf("b lists acme-hello at %q, want 1.0.0 (its own build)", got)
	}
}

func TestReplicaFollowsYankAndQuarantine(t *testing.T) {
	ctx := context.Background()
	rs, _ := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
	a, b := rs[0], rs[1]
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	publishOK(t, a, "acme-other", "1.0.0", "Another")
	b.FollowOnce(ctx)
	if err := a.Yank(ctx, anAdmin, "acme-hello", "1.0.0", true, "broken"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Quarantine(ctx, anAdmin, "acme-other", "", "malware"); err != nil {
		t.Fatal(err)
	}
	b.FollowOnce(ctx)
	if got := indexed(b, "acme-hello"); got != "" {
		t.Fatalf("b still lists acme-hello@%s after a yanked it", got)
	}
	if got := indexed(b, "acme-other"); got != "" {
		t.Fatalf("b still lists acme-other@%s after a quarantined it", got)
	}
	if _, ok := b.QuarantineOf("acme-other", "1.0.0"); !ok {
		t.Fatal("b does not hold a's quarantine of acme-other: its downloads would stay open")
	}
	sameDocuments(t, a, b)
}

func TestReplicaListReloadsConvergeOnOneBuild(t *testing.T) {
	// A reload is numbered before its serial exists (SetList bumps after building), so its
	// own build is never shared; the replicas' next build of the list serial is, once
	// every replica has the new list.
	ctx := context.Background()
	rs, _ := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
	a, b := rs[0], rs[1]
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	b.FollowOnce(ctx)
	grown := publishList()
	grown.Plugins = grown.Plugins[:len(grown.Plugins)-1] // filler-c leaves: nothing indexed drops
	for _, s := range rs {
		if err := s.SetList(ctx, grown, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	if la, lb := a.ReplicaStats().Local, b.ReplicaStats().Local; la != 1 || lb != 1 {
		t.Fatalf("reload builds not shared: a %d, b %d; want 1 each (a reload's build is its own)", la, lb)
	}
	before := builds(a, b)
	a.FollowOnce(ctx)
	b.FollowOnce(ctx)
	if n := builds(a, b) - before; n != 1 {
		t.Fatalf("the list serial was built %d times after both reloaded, want once", n)
	}
	sameDocuments(t, a, b)
}

func TestReplicaTokensAndReplaysHoldAcrossReplicas(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), store.DBFile)
	var sts []*store.Store
	for range 2 {
		st, err := store.OpenURL(context.Background(), db, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		sts = append(sts, st)
	}
	tokensAcrossReplicas(t, sts[0], sts[1])
}

// tokensAcrossReplicas checks, over two store handles on one database, that a token
// revoked through one is refused through the other at once (the Authenticator reads
// through), that an OIDC token exchanged through one is a replay through the other, and
// that a TOFU pin made through one binds the other.
func tokensAcrossReplicas(t *testing.T, a, b *store.Store) {
	t.Helper()
	ctx := context.Background()
	secret, _, err := CreateToken(ctx, a, TokenSpec{Kind: "publisher", Publisher: "acme"}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	authA, authB := NewAuthenticator(a, ""), NewAuthenticator(b, "")
	if _, err := authB.Authenticate(ctx, secret); err != nil {
		t.Fatalf("the token made through a is refused through b: %v", err)
	}
	if got, err := authA.RevokeLeaked(ctx, secret); err != nil || got != LeakedRevoked {
		t.Fatalf("revoke through a: %v %v", got, err)
	}
	if _, err := authB.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("the token revoked through a authenticates through b: %v", err)
	}
	exp := time.Now().Add(time.Hour)
	if err := a.UseJTI(ctx, "https://token.actions.githubusercontent.com", "jti-1", exp, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := b.UseJTI(ctx, "https://token.actions.githubusercontent.com", "jti-1", exp, time.Now()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the jti exchanged through a is accepted again through b: %v", err)
	}
	if _, err := a.PinOnFirstUse(ctx, store.Pin{Subject: "acme", Repository: "acme/hello", RepositoryID: "1", OwnerID: "2", Source: "oidc"}); err != nil {
		t.Fatal(err)
	}
	p, err := b.PinOnFirstUse(ctx, store.Pin{Subject: "acme", Repository: "evil/hello", RepositoryID: "9", OwnerID: "9", Source: "oidc"})
	if err != nil || p.RepositoryID != "1" {
		t.Fatalf("b pinned acme to %+v (%v); the pin a made first must hold", p, err)
	}
}

func TestNotAReplicaFollowsNothing(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	if s.FollowOnce(context.Background()) {
		t.Fatal("FollowOnce on a Service that is no replica reported a feed read")
	}
	s.Follow(context.Background()) // returns at once
	if st := s.ReplicaStats(); st.Enabled || st.Built+st.Loaded+st.Local+st.Fallbacks != 0 {
		t.Fatalf("ReplicaStats of a Service that is no replica = %+v", st)
	}
}

// A replica is notified of its own publish too: the catch-up its follower queues behind the
// publish's build finds that serial in force and builds or loads nothing again.
func TestReplicaCatchUpAfterItsOwnBuildIsFree(t *testing.T) {
	rs, _ := sqliteReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
	a := rs[0]
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	docs, before := a.Documents(), a.ReplicaStats()
	a.refreshPackages("the changes up to serial", []string{}, false) // what FollowOnce queued
	if got := a.ReplicaStats(); got != before {
		t.Errorf("stats after a catch-up with nothing new = %+v, want %+v (nothing built or loaded)", got, before)
	}
	if a.Documents() != docs {
		t.Error("a catch-up with nothing new swapped the documents in force")
	}
}

// countingFeed counts the pages of the feed read through it.
type countingFeed struct {
	*lockedStore
	pages *atomic.Int64
}

func (c countingFeed) Changes(ctx context.Context, since int64, limit int) (*store.ChangePage, error) {
	c.pages.Add(1)
	return c.lockedStore.Changes(ctx, since, limit)
}

// The costliest catch-up: a replica further behind than feedMaxPages pages of the feed
// stops reading it and rebuilds everything, rather than reading it all page by page.
func TestReplicaFarBehindRebuildsInsteadOfReadingTheWholeFeed(t *testing.T) {
	defer func(limit, pages int) { feedPageLimit, feedMaxPages = limit, pages }(feedPageLimit, feedMaxPages)
	feedPageLimit, feedMaxPages = 1, 2
	db := "sqlite:" + filepath.Join(t.TempDir(), store.DBFile)
	locks := &buildLocks{held: map[int64]bool{}}
	var pages atomic.Int64
	var stores []Store
	for i := range 2 {
		st, err := store.OpenURL(context.Background(), db, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		var s Store = &lockedStore{Store: st, locks: locks}
		if i == 1 {
			s = countingFeed{lockedStore: s.(*lockedStore), pages: &pages}
		}
		stores = append(stores, s)
	}
	rs := startReplicas(t, stores, stores[0].(*lockedStore).Blobs.Folder(), ReplicaOptions{BuildWait: time.Minute})
	a, b := rs[0], rs[1]
	versions := []string{"1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5"}
	for _, v := range versions {
		publishOK(t, a, "acme-hello", v, "Says hello")
	}
	pages.Store(0)
	if !b.FollowOnce(context.Background()) {
		t.Fatal("b could not read the feed")
	}
	if n := pages.Load(); n > int64(feedMaxPages)+1 {
		t.Errorf("b read %d pages of the feed to catch up %d changes, want at most %d (then a whole rebuild)", n, len(versions), feedMaxPages+1)
	}
	if got := indexed(b, "acme-hello"); got != "1.0.5" {
		t.Fatalf("after catching up, b lists acme-hello at %q, want 1.0.5", got)
	}
	sameDocuments(t, a, b)
}
