package ingest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// seedCatalogue stores n listed plugins directly (no verification: the store as a
// registry of that size has it, cards included) and returns the list naming them and
// acme-hello, which benchmarks publish.
func seedCatalogue(b testing.TB, st *store.Store, n int) *index.List {
	b.Helper()
	ctx := context.Background()
	l := &index.List{Plugins: []index.Entry{{ID: "acme-hello", Repo: "acme/kandev-plugin-hello", Kind: index.KindPlugin, Owners: []string{"acme"}}}}
	desc := strings.Repeat("d", 120)
	var rels []*store.Release
	for i := range n {
		id := fmt.Sprintf("plugin-%06d", i)
		l.Plugins = append(l.Plugins, index.Entry{ID: id, Repo: "acme/" + id, Kind: index.KindPlugin})
		rel := &store.Release{PackageID: id, Version: "1.0.0", Kind: "plugin", SHA256: fmt.Sprintf("%064x", i), Size: 1,
			Manifest: []byte("id: " + id + "\napi_version: 2\nversion: 1.0.0\ndisplay_name: P\ndescription: " + desc + "\nauthor: A\n"),
			Card: &store.Card{Kind: "plugin", Name: "P", Description: desc, Author: "A", Categories: []string{"tools"}, APIVersion: 2,
				Platforms: []string{"linux-amd64"}}, PublishedBy: "bench"}
		rels = append(rels, rel)
	}
	if err := st.InsertReleases(ctx, rels, func(*store.Release) store.AuditEntry { return store.AuditEntry{Actor: "bench", Action: "publish"} }); err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkPublishAtScale publishes one release at a time into catalogues of 1k, 10k and
// 50k plugins (seeded in the store, built once), a new version of a plugin spread over the
// catalogue each time (as bench/scale does: no package gathers releases over the run), and
// reports the p50 and p90 of one publish, commit and incremental build included: its cost
// must not grow with the catalogue.
func BenchmarkPublishAtScale(b *testing.B) {
	for _, n := range []int{1000, 10_000, 50_000} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			st := mustStoreB(b)
			l := seedCatalogue(b, st, n)
			s := New(st, l, Config{PublicURL: "http://r.example"}, discard())
			b.Cleanup(s.Close)
			ctx := context.Background()
			if err := s.Rebuild(ctx); err != nil {
				b.Fatal(err)
			}
			var pkgs [][]byte
			var ids []string
			for i := range b.N {
				id := fmt.Sprintf("plugin-%06d", (i*7919)%n)
				ids = append(ids, id)
				pkgs = append(pkgs, idPackage(b, id, fmt.Sprintf("1.1.%d", i), "Says hello"))
			}
			times := make([]time.Duration, 0, b.N)
			cpu0 := processCPU()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(pkgs[i]), FileName: fmt.Sprintf("%s-1.1.%d.tar.gz", ids[i], i), Actor: anAdmin})
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds()), "p90-µs")
			// The catalogue, not index.json: past 1k plugins the entry may be in a shard.
			if it, ok := s.Catalog().Item(ids[b.N-1]); !ok || it.Latest.Version != fmt.Sprintf("1.1.%d", b.N-1) {
				b.Fatalf("the catalogue does not list %s at 1.1.%d after %d publishes", ids[b.N-1], b.N-1, b.N)
			}
		})
	}
}

// BenchmarkColdStart measures a start (the first Rebuild of a new Service) over a store
// of 1k, 10k and 50k plugins whose cards are written and whose search table is current:
// no manifest is parsed and no search row rewritten.
func BenchmarkColdStart(b *testing.B) {
	for _, n := range []int{1000, 10_000, 50_000} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			st := mustStoreB(b)
			l := seedCatalogue(b, st, n)
			first := New(st, l, Config{PublicURL: "http://r.example"}, discard())
			if err := first.Rebuild(context.Background()); err != nil {
				b.Fatal(err)
			}
			first.Close()
			b.ResetTimer()
			for b.Loop() {
				s := New(st, l, Config{PublicURL: "http://r.example"}, discard())
				if err := s.Rebuild(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkApplyChange measures the incremental build after a change to one package (its
// rows re-read, its entry re-encoded, the documents that hold it rebuilt, its search row
// written) by catalogue size: the part of a publish that could grow with the catalogue.
func BenchmarkApplyChange(b *testing.B) {
	for _, n := range []int{1000, 10_000, 50_000} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			st := mustStoreB(b)
			l := seedCatalogue(b, st, n)
			s := New(st, l, Config{PublicURL: "http://r.example"}, discard())
			b.Cleanup(s.Close)
			ctx := context.Background()
			if err := s.Rebuild(ctx); err != nil {
				b.Fatal(err)
			}
			id := fmt.Sprintf("plugin-%06d", n/2)
			var times []time.Duration
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				s.rebuildMu.Lock()
				err := s.applyLocked(ctx, []string{id})
				s.rebuildMu.Unlock()
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(len(times)), "cpu-µs/op")
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
		})
	}
}

// processCPU is the CPU time (user and system) the process used so far, background work
// (GC, the last good writer) included: a measure that other load on the machine does not
// inflate, unlike wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
