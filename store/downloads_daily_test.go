package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestRecordDownloads records two releases of one package and one of another over days and
// checks the per-release counters and the per-package days agree.
func TestRecordDownloads(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	var rels []*store.Release
	for _, r := range []*store.Release{mustRelease(t, s, "acme", "1.0.0", []byte("a")), mustRelease(t, s, "acme", "1.1.0", []byte("b")),
		mustRelease(t, s, "other", "1.0.0", []byte("c"))} {
		saved, err := s.InsertRelease(ctx, r, store.AuditEntry{Actor: "a", Action: "publish", Target: r.PackageID})
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, saved)
	}
	a, b, other := rels[0].ID, rels[1].ID, rels[2].ID
	batches := []map[store.DownloadDay]int64{
		{{a, "2026-11-01"}: 2, {b, "2026-11-01"}: 3, {other, "2026-11-01"}: 7},
		{{a, "2026-11-01"}: 1, {b, "2026-11-03"}: 4},
		{{999, "2026-11-03"}: 5}, // a release that does not exist adds nothing
		{},
	}
	for _, batch := range batches {
		if err := s.RecordDownloads(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	days, err := s.DailyDownloads(ctx, "acme", "2026-10-01")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.DayCount{{"2026-11-01", 6}, {"2026-11-03", 4}}, days); diff != "" {
		t.Errorf("acme days (-want +got):\n%s", diff)
	}
	if days, _ := s.DailyDownloads(ctx, "acme", "2026-11-02"); !cmp.Equal(days, []store.DayCount{{"2026-11-03", 4}}) {
		t.Errorf("from 2026-11-02: %v", days)
	}
	got := map[string]int64{}
	all, err := s.Releases(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		got[r.Version] = r.Downloads
	}
	if diff := cmp.Diff(map[string]int64{"1.0.0": 3, "1.1.0": 7}, got); diff != "" {
		t.Errorf("release counters (-want +got):\n%s", diff)
	}
}

func TestRecordDownloadsRefusesABadDay(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	r, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("a")), store.AuditEntry{Actor: "a", Action: "publish"})
	if err != nil {
		t.Fatal(err)
	}
	err = s.RecordDownloads(ctx, map[store.DownloadDay]int64{{r.ID, "2026-11-01"}: 1, {r.ID, "Nov 1"}: 1})
	if err == nil {
		t.Fatal("a day not in YYYY-MM-DD form was recorded")
	}
	rel, _ := s.Release(ctx, "acme", "1.0.0")
	if days, _ := s.DailyDownloads(ctx, "acme", ""); rel.Downloads != 0 || len(days) != 0 {
		t.Errorf("a refused batch left %d downloads and days %v: it must be all or nothing", rel.Downloads, days)
	}
}

func TestDayOf(t *testing.T) {
	late := time.Date(2026, 11, 30, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*3600))
	if got := store.DayOf(late); got != "2026-12-01" {
		t.Errorf("DayOf(%v) = %s, want the UTC day", late, got)
	}
}

func BenchmarkRecordDownloads(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(strconv.Itoa(n)+"_releases", func(b *testing.B) {
			s := MustOpen(b)
			batch := map[store.DownloadDay]int64{}
			for i := range n {
				r, err := s.InsertRelease(ctx, mustRelease(b, s, "acme", "1.0."+strconv.Itoa(i), []byte(strconv.Itoa(i))), store.AuditEntry{Actor: "a", Action: "publish"})
				if err != nil {
					b.Fatal(err)
				}
				batch[store.DownloadDay{ReleaseID: r.ID, Day: "2026-11-01"}] = 3
			}
			b.ResetTimer()
			for b.Loop() {
				if err := s.RecordDownloads(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
