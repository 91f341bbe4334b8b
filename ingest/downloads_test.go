package ingest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestDownloadsCountOnTheirDay counts downloads on both sides of a UTC midnight before one
// flush and checks each lands on the day it was counted, not the day it was flushed; a
// failed flush keeps the batch for the next one.
func TestDownloadsCountOnTheirDay(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sha, err := st.Blobs.Put([]byte("pkg"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := st.InsertRelease(ctx, &store.Release{PackageID: "acme", Version: "1.0.0", Kind: "plugin", SHA256: sha, Size: 3,
		Manifest: []byte("id: acme"), PublishedBy: "t"}, store.AuditEntry{Actor: "t", Action: "publish"})
	if err != nil {
		t.Fatal(err)
	}
	d := newDownloadCounter(st, slog.New(slog.DiscardHandler))
	clock := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	d.now = func() time.Time { return clock }
	d.add(rel.ID)
	d.add(rel.ID)
	clock = clock.Add(2 * time.Minute)
	d.add(rel.ID)

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.flush(ctx); err == nil {
		t.Fatal("flush to a closed store succeeded")
	}
	st2, err := store.Open(ctx, st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st2.Close() })
	d.store = st2
	if _, _, err := d.flush(ctx); err != nil {
		t.Fatal(err)
	}
	days, err := st2.DailyDownloads(ctx, "acme", "2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.DayCount{{Day: "2026-11-30", Downloads: 2}, {Day: "2026-12-01", Downloads: 1}}, days); diff != "" {
		t.Errorf("days (-want +got):\n%s", diff)
	}
	if r, _ := st2.Release(ctx, "acme", "1.0.0"); r.Downloads != 3 {
		t.Errorf("release counter = %d, want 3", r.Downloads)
	}
}
