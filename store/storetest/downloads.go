package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// releaseDownloads is each release's download counter of one package, by version.
func releaseDownloads(tb testing.TB, b Backend, id string) map[string]int64 {
	tb.Helper()
	rels, err := b.Releases(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range rels {
		got[r.Version] = r.Downloads
	}
	return got
}

// testDownloads: batches of counted downloads add up per release and per package and
// day; a release that does not exist adds nothing; the days read from a date on, oldest
// first, without days that had none.
func testDownloads(t *testing.T, b Backend) {
	ctx := context.Background()
	a := mustPublish(t, b, "acme", "1.0.0", []byte("a")).ID
	c := mustPublish(t, b, "acme", "1.1.0", []byte("b")).ID
	other := mustPublish(t, b, "other", "1.0.0", []byte("c")).ID
	for _, batch := range []map[store.DownloadDay]int64{
		{{ReleaseID: a, Day: "2026-11-01"}: 2, {ReleaseID: c, Day: "2026-11-01"}: 3, {ReleaseID: other, Day: "2026-11-01"}: 7},
		{{ReleaseID: a, Day: "2026-11-01"}: 1, {ReleaseID: c, Day: "2026-11-03"}: 4},
		{{ReleaseID: other + 1000, Day: "2026-11-03"}: 5}, // a release that does not exist
		{},
	} {
		if err := b.RecordDownloads(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		id, from string
		want     []store.DayCount
	}{
		{"acme", "2026-10-01", []store.DayCount{{Day: "2026-11-01", Downloads: 6}, {Day: "2026-11-03", Downloads: 4}}},
		{"acme", "2026-11-02", []store.DayCount{{Day: "2026-11-03", Downloads: 4}}},
		{"acme", "2026-11-04", nil},
		{"other", "2026-01-01", []store.DayCount{{Day: "2026-11-01", Downloads: 7}}},
		{"missing", "2026-01-01", nil},
	} {
		days, err := b.DailyDownloads(ctx, tt.id, tt.from)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, days); diff != "" {
			t.Errorf("DailyDownloads(%s, from %s) (-want +got):\n%s", tt.id, tt.from, diff)
		}
	}
	if diff := cmp.Diff(map[string]int64{"1.0.0": 3, "1.1.0": 7}, releaseDownloads(t, b, "acme")); diff != "" {
		t.Errorf("release counters (-want +got):\n%s", diff)
	}
}

// testDownloadsConcurrent: batches recorded at once (one per replica's flush) all count.
func testDownloadsConcurrent(t *testing.T, b Backend) {
	ctx := context.Background()
	id := mustPublish(t, b, "acme", "1.0.0", []byte("a")).ID
	errs := race(racers, func(int) error {
		return b.RecordDownloads(ctx, map[store.DownloadDay]int64{{ReleaseID: id, Day: "2026-11-01"}: 2})
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("flush %d: %v", i, err)
		}
	}
	if got := releaseDownloads(t, b, "acme")["1.0.0"]; got != 2*racers {
		t.Errorf("release counter after %d flushes of 2: %d, want %d", racers, got, 2*racers)
	}
	days, err := b.DailyDownloads(ctx, "acme", "2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.DayCount{{Day: "2026-11-01", Downloads: 2 * racers}}, days); diff != "" {
		t.Errorf("daily downloads after %d flushes (-want +got):\n%s", racers, diff)
	}
}
