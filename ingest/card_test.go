package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// A publish stores the release's card, computed from the manifest verify parsed.
func TestPublishStoresCard(t *testing.T) {
	ctx := context.Background()
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "Says hello")
	rel, err := s.db().Release(ctx, "acme-hello", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.Card{Kind: "plugin", Name: "Hello", Description: "Says hello", Author: "Acme", Categories: []string{"tools"},
		APIVersion: 2, Platforms: []string{"linux-amd64"}}
	if diff := cmp.Diff(want, rel.Card); diff != "" {
		t.Errorf("stored card (-want +got):\n%s", diff)
	}
}

// Releases stored before cards existed get theirs at the first start, computed once from
// the manifest; a manifest that no longer parses is skipped, not retried forever, and does
// not keep the others from theirs.
func TestBackfillCardsOnce(t *testing.T) {
	ctx := context.Background()
	st := MustStore(t, t.TempDir())
	insertBroken(t, st) // the lowest id: the backfill must get past it
	insertStored(t, st, "acme-hello", "id: acme-hello\napi_version: 1\nversion: 1.0.0\ndescription: Hi\nauthor: Acme\n")
	svc := MustService(t, st, Config{})
	t.Cleanup(svc.Close)
	_ = svc.Rebuild(ctx) // refused: acme-broken is listed and cannot be read
	rel, err := st.Release(ctx, "acme-hello", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.Card{Kind: "plugin", Name: "Acme Hello", Description: "Hi", Author: "Acme", APIVersion: 1}
	if diff := cmp.Diff(want, rel.Card); diff != "" {
		t.Errorf("backfilled card (-want +got):\n%s", diff)
	}
	if broken, _ := st.Release(ctx, "acme-broken", "1.0.0"); broken.Card != nil {
		t.Errorf("acme-broken got a card from a manifest that does not parse: %+v", broken.Card)
	}
	if n, err := svc.BackfillCards(ctx); err != nil || n != 0 {
		t.Errorf("second backfill wrote %d cards (err %v), want 0: cards are computed once", n, err)
	}
}

// Batches move past the releases they could not give a card: a batch of one broken
// manifest does not make the backfill read it again and again.
func TestBackfillCardsPastBrokenBatches(t *testing.T) {
	ctx := context.Background()
	st := MustStore(t, t.TempDir())
	insertBroken(t, st)
	insertStored(t, st, "acme-hello", "id: acme-hello\napi_version: 1\nversion: 1.0.0\n")
	svc := MustService(t, st, Config{})
	defer func(n int) { cardBatch = n }(cardBatch)
	cardBatch = 1
	done := make(chan int, 1)
	go func() {
		n, _ := svc.BackfillCards(ctx)
		done <- n
	}()
	select {
	case n := <-done:
		if n != 1 {
			t.Errorf("backfill wrote %d cards, want 1 (acme-hello)", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backfill reads the broken release again and again")
	}
}
