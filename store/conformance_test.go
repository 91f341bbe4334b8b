package store_test

import (
	"context"
	"testing"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// TestConformance runs the metadata store's conformance suite on SQLite, each behaviour
// on a fresh data directory.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		s, err := store.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return planter{s}
	})
}

// TestConformancePostgres runs the same suite on PostgreSQL: one server, a fresh database
// per behaviour. Without the server binaries it skips, except with CI=true.
func TestConformancePostgres(t *testing.T) {
	server := storetest.StartPostgres(t)
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		s, err := store.OpenURL(context.Background(), storetest.CreateDatabase(t, server), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return planter{s}
	})
}

// planter is a store whose harness can plant a blob row nothing uses
// (storetest.UnusedBlobPlanter), written as earlier versions left one.
type planter struct{ *store.Store }

func (p planter) PlantUnusedBlob(ctx context.Context, sha string, size int64) error {
	q := "INSERT INTO blobs (sha256, size, created_at) VALUES (?, ?, '2026-01-01T00:00:00Z')"
	if p.Dialect() == store.Postgres {
		q = "INSERT INTO blobs (sha256, size, created_at) VALUES ($1, $2, '2026-01-01T00:00:00Z')"
	}
	_, err := store.RawDB(p.Store).ExecContext(ctx, q, sha, size)
	return err
}
