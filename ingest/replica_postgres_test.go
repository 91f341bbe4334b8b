package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// pgReplicas opens n replicas over one fresh PostgreSQL database (a store handle each,
// as n serve processes have), sharing the first one's blob folder; their indexes are
// built. It skips without PostgreSQL, except with CI=true, where it fails.
func pgReplicas(t *testing.T, n int, opt ReplicaOptions) ([]*Service, []*store.Store) {
	t.Helper()
	dsn := storetest.CreateDatabase(t, storetest.SharedPostgres(t))
	var stores []Store
	var raw []*store.Store
	for range n {
		st, err := store.OpenURL(context.Background(), dsn, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores, raw = append(stores, st), append(raw, st)
	}
	return startReplicas(t, stores, raw[0].Blobs.Folder(), opt), raw
}

// eventually waits for cond, failing t after a generous deadline (a wait, not a timing
// claim: the 2 s the replicas promise is measured in test/replicas and bench/replicas).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReplicasOnPostgres(t *testing.T) {
	t.Run("a publish on one is served by the other, the same bytes", func(t *testing.T) {
		rs, _ := pgReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute})
		a, b := rs[0], rs[1]
		sameDocuments(t, a, b)
		publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
		if !b.FollowOnce(context.Background()) {
			t.Fatal("b could not read the feed")
		}
		if got := indexed(b, "acme-hello"); got != "1.0.0" {
			t.Fatalf("b lists acme-hello at %q, want 1.0.0", got)
		}
		sameDocuments(t, a, b)
		if n := builds(a, b); n != 2 {
			t.Errorf("%d builds for 2 serials over both replicas, want one each", n)
		}
	})
	t.Run("a notification wakes a follower that would not poll for an hour", func(t *testing.T) {
		rs, _ := pgReplicas(t, 2, ReplicaOptions{BuildWait: time.Minute, Poll: time.Hour})
		a, b := rs[0], rs[1]
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan struct{})
		go func() { defer close(done); b.Follow(ctx) }()
		defer func() { cancel(); <-done }()
		time.Sleep(50 * time.Millisecond) // LISTEN first: a change before it is read at the next poll only
		publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
		eventually(t, "b lists a's publish", func() bool { return indexed(b, "acme-hello") == "1.0.0" })
		sameDocuments(t, a, b)
	})
	t.Run("of three racing for a serial one builds it", func(t *testing.T) {
		rs, _ := pgReplicas(t, 3, ReplicaOptions{BuildWait: time.Minute})
		before := builds(rs...)
		rs[0].replica.on.Store(false) // commit without building: the other two race
		publishOK(t, rs[0], "acme-hello", "1.0.0", "Says hello")
		rs[0].replica.on.Store(true)
		var wg sync.WaitGroup
		for _, s := range rs {
			wg.Go(func() { s.FollowOnce(context.Background()) })
		}
		wg.Wait()
		if n := builds(rs...) - before; n != 1 {
			t.Fatalf("the serial was built %d times over three replicas, want once", n)
		}
		sameDocuments(t, rs[0], rs[1])
		sameDocuments(t, rs[1], rs[2])
	})
	t.Run("revocation, replays and pins hold across replicas", func(t *testing.T) {
		_, sts := pgReplicas(t, 2, ReplicaOptions{})
		tokensAcrossReplicas(t, sts[0], sts[1])
	})
}
