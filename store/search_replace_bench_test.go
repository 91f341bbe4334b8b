package store_test

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkReplaceSearch measures a full rebuild of the search table (rows, prefix
// indexes and exact-match keys) at growing catalogue sizes.
func BenchmarkReplaceSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		docs := catalogDocsN(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := MustOpen(b)
			for b.Loop() {
				if err := s.ReplaceSearch(context.Background(), docs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
