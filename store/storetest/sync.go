package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// testSyncState: a repository's state reads back as it was put (times to the second), a
// second put replaces it whole, every state is listed sorted by repository, and a
// repository never checked is ErrNotFound.
func testSyncState(t *testing.T, b Backend) {
	ctx := context.Background()
	if _, err := b.SyncState(ctx, "acme/acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SyncState before any check = %v, want ErrNotFound", err)
	}
	stars := 42
	checked := time.Date(2026, 11, 2, 9, 30, 15, 0, time.UTC)
	pushed, limited := checked.Add(-48*time.Hour), checked.Add(time.Hour)
	full := store.SyncState{Repo: "acme/acme", ReleaseETag: `W/"r1"`, RepoETag: `"p1"`, Tag: "v1.2.0", IDs: []string{"acme", "acme-extras"},
		RepositoryID: "101", OwnerID: "201", FullName: "Acme/acme", Stars: &stars, PushedAt: &pushed, CheckedAt: checked,
		Outcome: store.SyncPublished, Published: []string{"acme@1.2.0"}, Rules: []string{}}
	failed := store.SyncState{Repo: "zeta/tool", CheckedAt: checked, Outcome: store.SyncRateLimited, Error: "secondary rate limit",
		Rules: []string{"sync.rate_limited"}, RateLimitedUntil: &limited}
	for _, st := range []store.SyncState{failed, full} {
		if err := b.PutSyncState(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.SyncState(ctx, "acme/acme")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, *got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("SyncState (-put +read):\n%s", diff)
	}
	replaced := store.SyncState{Repo: "acme/acme", CheckedAt: checked.Add(time.Hour), Outcome: store.SyncUnchanged, ReleaseETag: `W/"r2"`}
	if err := b.PutSyncState(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	all, err := b.SyncStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.SyncState{replaced, failed}, all, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("SyncStates after a replace (-want +got):\n%s", diff)
	}
}
