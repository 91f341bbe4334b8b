package store_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/bench/catalog"
	"github.com/pluginyard/registry/store"
)

// benchWords are the rare words of the generated descriptions: word i%len appears in
// about 1/len of them; "plugin" appears in every one.
var benchWords = []string{"kanban", "slack", "github", "metrics", "deploy", "notes", "calendar", "review"}

// searchDocsN is n generated search rows, in 8 categories and 3 kinds.
func searchDocsN(n int) []store.SearchDoc {
	kinds := []string{"plugin", "plugin", "plugin", "canvas", "extension"}
	cats := []string{"tools", "automation", "connector", "analytics", "productivity", "devops", "chat", "themes"}
	now := time.Now()
	docs := make([]store.SearchDoc, n)
	for i := range docs {
		docs[i] = store.SearchDoc{ID: fmt.Sprintf("bench-%06d", i), Name: fmt.Sprintf("Bench %d %s", i, benchWords[i%len(benchWords)]),
			Description: fmt.Sprintf("A generated plugin number %d for %s work, with a short description", i, benchWords[(i/8)%len(benchWords)]),
			Author:      fmt.Sprintf("author%d", i%97), Categories: []string{cats[i%len(cats)], cats[(i/3)%len(cats)]},
			Kind: kinds[i%len(kinds)], UpdatedAt: now.Add(-time.Duration(i) * time.Minute), Downloads: int64(i * 7919 % 10007)}
	}
	return docs
}

// BenchmarkSearch runs text searches over search tables of growing size and reports the
// p50 and p99 of one query: a word in every row ("plugin"), a word in 1/8 of them, a word
// in none, with each sort.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		s := MustOpen(b)
		if err := s.ReplaceSearch(context.Background(), searchDocsN(n)); err != nil {
			b.Fatal(err)
		}
		for _, q := range []store.SearchQuery{{Q: "plugin"}, {Q: "plugin", Sort: "downloads"}, {Q: "plugin", Sort: "name"},
			{Q: "kanban"}, {Q: "bench-000042"}, {Q: "zzzz"}, {Q: "plugin", Offset: 240}, {Q: "plugin", Kind: "canvas"}, {Q: "plugin", Category: "themes"}} {
			q.Limit = 24
			b.Run(fmt.Sprintf("n=%d/q=%s/sort=%s/offset=%d/kind=%s/category=%s", n, q.Q, q.Sort, q.Offset, q.Kind, q.Category), func(b *testing.B) {
				var d []time.Duration
				for b.Loop() {
					start := time.Now()
					if _, _, err := s.Search(context.Background(), q); err != nil {
						b.Fatal(err)
					}
					d = append(d, time.Since(start))
				}
				reportPercentiles(b, d)
			})
		}
	}
}

// reportCPUPercentiles reports the p50 and p99 of the CPU times of the queries, in
// milliseconds (none when the system cannot tell a thread's CPU time).
func reportCPUPercentiles(b *testing.B, cpu []time.Duration) {
	b.Helper()
	if len(cpu) == 0 {
		return
	}
	slices.Sort(cpu)
	at := func(p float64) float64 { return float64(cpu[int(p*float64(len(cpu)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-cpu-ms")
	b.ReportMetric(at(0.99), "p99-cpu-ms")
}

// reportPercentiles reports the p50 and p99 of d in milliseconds.
func reportPercentiles(b *testing.B, d []time.Duration) {
	b.Helper()
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// catalogDocsN is n search rows shaped as bench/catalog generates plugins: ids
// gen-<topic>-<number> (ten topics round robin), the common word in every description, no
// downloads (the scale benchmark's registry has none), one category each.
func catalogDocsN(n int) []store.SearchDoc {
	now := time.Now()
	docs := make([]store.SearchDoc, n)
	for i := range docs {
		word := catalog.Words[i%len(catalog.Words)]
		id := catalog.ID(i)
		docs[i] = store.SearchDoc{ID: id, Name: strings.ToUpper(word[:1]) + word[1:] + " " + id[len(id)-6:],
			Description: "Generated " + word + " plugin for the " + catalog.CommonWord + " scale benchmark",
			Author:      "Bench " + catalog.Publisher(i), Categories: []string{catalog.Category(i)},
			Kind: "plugin", UpdatedAt: now.Add(-time.Duration(i) * time.Minute)}
	}
	return docs
}

// BenchmarkSearchCatalog runs the scale benchmark's searches in process, over search
// tables shaped as bench/catalog's catalogues: a topic (a tenth of the rows), the common
// word (every row), the id prefix every id shares, one id, and a topic with one number.
func BenchmarkSearchCatalog(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		s := MustOpen(b)
		if err := s.ReplaceSearch(context.Background(), catalogDocsN(n)); err != nil {
			b.Fatal(err)
		}
		for _, text := range []string{"metrics", catalog.CommonWord, "gen", "gen-metrics-000042", "metrics 000042"} {
			q := store.SearchQuery{Q: text, Limit: 24}
			b.Run(fmt.Sprintf("n=%d/q=%s", n, text), func(b *testing.B) {
				runtime.LockOSThread() // threadCPU measures this goroutine's queries (the driver runs on its caller)
				defer runtime.UnlockOSThread()
				var d, cpu []time.Duration
				for b.Loop() {
					start := time.Now()
					startCPU, ok := threadCPU()
					if _, err := s.SearchCounted(context.Background(), q); err != nil {
						b.Fatal(err)
					}
					d = append(d, time.Since(start))
					if end, endOK := threadCPU(); ok && endOK {
						cpu = append(cpu, end-startCPU)
					}
				}
				reportPercentiles(b, d)
				reportCPUPercentiles(b, cpu)
			})
		}
	}
}

// BenchmarkSearchWidestQuery is the widest text the API takes (widestQuery: 100
// one-letter prefix terms) against a common word, over search tables of growing size.
func BenchmarkSearchWidestQuery(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		s := MustOpen(b)
		if err := s.ReplaceSearch(context.Background(), searchDocsN(n)); err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{"plugin", widestQuery()} {
			b.Run(fmt.Sprintf("n=%d/words=%d", n, len(strings.Fields(q))), func(b *testing.B) {
				for b.Loop() {
					if _, err := s.SearchCounted(context.Background(), store.SearchQuery{Q: q, Limit: 24}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
