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

// BenchmarkUpsertSearchSharedKey upserts a package whose id is the display name of
// shared other packages, in a table of 10k rows: the lookup of the id's rows reads every
// row with that key (the names) before it compares ids, so its cost grows with the
// packages named after the id, not with the catalogue.
func BenchmarkUpsertSearchSharedKey(b *testing.B) {
	for _, shared := range []int{0, 100, 1000} {
		docs := searchDocsN(10000)
		for i := range shared {
			docs[i].Name = "bench-target"
		}
		target := store.SearchDoc{ID: "bench-target", Name: "Target", Kind: "plugin", UpdatedAt: docs[0].UpdatedAt}
		docs = append(docs, target)
		b.Run(fmt.Sprintf("shared=%d", shared), func(b *testing.B) {
			s := MustOpen(b)
			ctx := context.Background()
			if err := s.ReplaceSearch(ctx, docs); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				target.Description = fmt.Sprintf("The target, take %d", i)
				if err := s.UpsertSearch(ctx, []store.SearchDoc{target}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
