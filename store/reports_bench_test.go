package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// BenchmarkActionedReports is the package page's read of its resolved reports while n
// open reports of that package wait in the queue: the partial index reports_actioned
// keeps it from reading them.
func BenchmarkActionedReports(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("open=%d", n), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			s, err := store.Open(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			mustReportable(b, s, "acme")
			r := &store.Report{PackageID: "acme", Kind: "malicious", Reason: "x", ReporterHash: hashOf('f')}
			if err := s.AddReport(ctx, r, store.AuditEntry{}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.ResolveReport(ctx, r.ID, store.Resolution{By: "a", Text: "t", Action: "yanked"}, store.AuditEntry{}); err != nil {
				b.Fatal(err)
			}
			floodReports(b, filepath.Join(dir, store.DBFile), n)
			b.ResetTimer()
			for b.Loop() {
				rs, err := s.Reports(ctx, store.ReportQuery{PackageID: "acme", Actioned: true, Limit: 5})
				if err != nil || len(rs) != 1 {
					b.Fatalf("%d reports, %v", len(rs), err)
				}
			}
		})
	}
}

// floodReports inserts n open reports of acme in one transaction, beside the store.
func floodReports(b *testing.B, path string, n int) {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		hash := fmt.Sprintf("%064x", i+1)
		if _, err := tx.Exec(`INSERT INTO reports (package_id, kind, reason, reporter_hash, created_at) VALUES ('acme', 'broken', ?, ?, '2026-12-01T00:00:00Z')`,
			strings.Repeat("r", 100), hash); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
