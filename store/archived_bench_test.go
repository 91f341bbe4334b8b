package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkArchivedIDs is the per-search read of the archived ids (searches order archived
// packages last) over packages tables of growing size, 1% of them archived, and one with 10: it reads
// through the packages_archived partial index, so its cost follows the archived ids, not
// the catalogue.
func BenchmarkArchivedIDs(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct{ n, every int }{{1000, 100}, {10000, 100}, {50000, 100}, {50000, 5000}} {
		n, every := c.n, c.every
		s, err := Open(ctx, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		_, err = s.w.ExecContext(ctx, `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?)
			INSERT INTO packages (id, kind, created_at, archived_at)
			SELECT printf('pkg-%06d', i), 'plugin', '2026-12-01T00:00:00Z', CASE WHEN i % ? = 0 THEN '2026-12-01T00:00:00Z' END FROM k`, n, every)
		if err != nil {
			b.Fatal(err)
		}
		want := n / every
		b.Run(fmt.Sprintf("packages=%d/archived=%d", n, want), func(b *testing.B) {
			for b.Loop() {
				ids, err := archivedIDs(ctx, s.r)
				if err != nil || len(ids) != want {
					b.Fatalf("%d ids, %v", len(ids), err)
				}
			}
		})
		_ = s.Close()
	}
}
