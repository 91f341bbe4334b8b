package store_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// twinName is the display name hostileDocsN gives twins packages.
const twinName = "Twin Tools"

// twins is how many packages of hostileDocsN share twinName.
const twins = 1000

// hostileDocsN is searchDocsN(n) with twins of its rows (every n/twins-th: spread over
// the download order; every row when n is twins) renamed twinName.
func hostileDocsN(n int) []store.SearchDoc {
	docs := searchDocsN(n)
	step := max(1, n/twins)
	for i := 0; i < n && i/step < twins; i += step {
		docs[i].Name = twinName
	}
	return docs
}

// hostileQuery is one search of BenchmarkSearchHostile.
type hostileQuery struct {
	name string
	q    store.SearchQuery
}

// hostileQueries are the searches BenchmarkSearchHostile runs, each at most the 200
// characters the API takes: a common word (in every row), the name twins packages share
// (sorted by relevance and by name), the widest text (widestQuery), one word in every row
// repeated 100 times, the eight one-character prefixes that merge the most of
// searchDocsN's index (alone, and with a category: SearchCounted then reads the window
// with it and the one without it for the counts), the initial of every id (each id's number is too rare for
// PostgreSQL's statistics, so its planner takes the prefix for a rare one), ten words
// in every row, and a common word in the category of 32 repeats of a word of every row
// (63 bytes of the 64 the API takes for a category).
func hostileQueries() []hostileQuery {
	return []hostileQuery{
		{"common", store.SearchQuery{Q: "plugin"}},
		{"same-name", store.SearchQuery{Q: twinName}},
		{"same-name-by-name", store.SearchQuery{Q: twinName, Sort: "name"}},
		{"widest", store.SearchQuery{Q: widestQuery()}},
		{"repeated", store.SearchQuery{Q: strings.TrimSpace(strings.Repeat("a ", 100))}},
		{"initials", store.SearchQuery{Q: "w s p n g 0 d b"}},
		{"initials-category", store.SearchQuery{Q: "w s p n g 0 d b", Category: "tools"}},
		{"digit", store.SearchQuery{Q: "0"}},
		{"everywhere", store.SearchQuery{Q: "a generated plugin number for work with short description bench"}},
		{"category", store.SearchQuery{Q: "plugin", Category: strings.TrimSuffix(strings.Repeat("a-", 32), "-")}},
	}
}

// BenchmarkSearchHostile is the cost of what an anonymous user can make one search do,
// over search tables of growing size (hostileDocsN) on each backend: SearchCounted, the
// home page's call, of each of hostileQueries. On SQLite it also reports the CPU time of
// the calling thread per search (cpu-ns/op: the driver runs on its caller, threadCPU),
// which on a loaded machine says more than ns/op, also a measure of the scheduler.
func BenchmarkSearchHostile(b *testing.B) {
	for _, be := range []string{"sqlite", "postgres"} {
		b.Run(be, func(b *testing.B) {
			for _, n := range []int{1000, 10000, 50000} {
				s := hostileStore(b, be, n)
				for _, hq := range hostileQueries() {
					if len(hq.q.Q) > 200 {
						b.Fatalf("%s is %d characters, more than the API takes", hq.name, len(hq.q.Q))
					}
					b.Run(fmt.Sprintf("n=%d/q=%s", n, hq.name), func(b *testing.B) { runHostile(b, s, hq.q, be == "sqlite") })
				}
			}
		})
	}
}

// hostileStore is a store on backend be holding hostileDocsN(n).
func hostileStore(b *testing.B, be string, n int) *store.Store {
	b.Helper()
	s := MustOpenSQLite(b)
	if be == "postgres" {
		var err error
		if s, err = store.OpenURL(context.Background(), storetest.CreateDatabase(b, storetest.SharedPostgres(b)), b.TempDir()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
	}
	if err := s.ReplaceSearch(context.Background(), hostileDocsN(n)); err != nil {
		b.Fatal(err)
	}
	return s
}

// runHostile runs SearchCounted(q) a page of 24 at a time, with cpu the CPU time it
// took on this thread.
func runHostile(b *testing.B, s *store.Store, q store.SearchQuery, cpu bool) {
	q.Limit = 24
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var used time.Duration
	for b.Loop() {
		start, ok := threadCPU()
		if _, err := s.SearchCounted(context.Background(), q); err != nil {
			b.Fatal(err)
		}
		if end, endOK := threadCPU(); ok && endOK {
			used += end - start
		}
	}
	if cpu {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
