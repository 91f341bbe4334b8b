package ingest_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pluginyard/registry/ingest"
)

// BenchmarkViews computes a catalog's Views (every listing order, counts, featured and
// publishers) at 1k, 10k and 50k items: built anew (a start, a list reload), and derived
// from the previous catalog's after one package changed (a publish), the cost the first
// page view after a change pays.
func BenchmarkViews(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		items := viewsCatalog(n).Items()
		b.Run(fmt.Sprintf("built/items=%d", n), func(b *testing.B) {
			for b.Loop() {
				// a catalog whose items all differ from the last one's: no derivation
				fresh := make([]*ingest.Item, len(items))
				for j, it := range items {
					c := *it
					fresh[j] = &c
				}
				ingest.NewCatalog(fresh).Views()
			}
		})
		b.Run(fmt.Sprintf("one-changed/items=%d", n), func(b *testing.B) {
			ingest.NewCatalog(items).Views()
			cur := items
			for i := 0; b.Loop(); i++ {
				next := slices.Clone(cur)
				c := *next[i%n]
				c.Downloads += 7
				next[i%n] = &c
				ingest.NewCatalog(next).Views()
				cur = next
			}
		})
	}
}
