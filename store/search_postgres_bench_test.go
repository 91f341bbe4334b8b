package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// BenchmarkSearchPostgres runs the same text searches on SQLite and on PostgreSQL over
// search tables of 10k and 50k generated rows (searchDocsN), so that one run reports the
// two backends side by side: a common word (in every row: the window of SearchCap), a
// word in 1/8 of the rows, a rare one (a number in about ten rows, as a whole word and as
// a prefix) and a word in none.
func BenchmarkSearchPostgres(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10000, 50000} {
		docs := searchDocsN(n)
		for _, be := range []string{"sqlite", "postgres"} {
			s := MustOpenSQLite(b)
			if be == "postgres" {
				var err error
				if s, err = store.OpenURL(ctx, storetest.CreateDatabase(b, storetest.SharedPostgres(b)), b.TempDir()); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Close() })
			}
			if err := s.ReplaceSearch(ctx, docs); err != nil {
				b.Fatal(err)
			}
			for _, q := range []store.SearchQuery{{Q: "plugin"}, {Q: "plugin", Sort: "downloads"}, {Q: "kanban"}, {Q: "4242"}, {Q: "zzzz"}} {
				q.Limit = 24
				b.Run(fmt.Sprintf("n=%d/q=%s/sort=%s/%s", n, q.Q, q.Sort, be), func(b *testing.B) {
					for b.Loop() {
						if _, err := s.SearchCounted(ctx, q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
