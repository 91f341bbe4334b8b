package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pluginyard/registry/store"
)

// BenchmarkUpsertSearch measures the upsert of one package's search row (its rows found
// by id, deleted with their keys, the new row inserted) in tables of growing size: what
// each publish costs the search table, which should not grow with the catalogue.
func BenchmarkUpsertSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		docs := searchDocsN(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := MustOpen(b)
			ctx := context.Background()
			if err := s.ReplaceSearch(ctx, docs); err != nil {
				b.Fatal(err)
			}
			d := docs[n/2]
			i := 0
			for b.Loop() {
				i++
				d.Description = fmt.Sprintf("A generated plugin, take %d", i)
				if err := s.UpsertSearch(ctx, []store.SearchDoc{d}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
