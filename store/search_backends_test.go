package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver, for raw looks at a PostgreSQL store's tables

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// backend opens fresh, empty stores on one database: SQLite or PostgreSQL.
type backend struct {
	name string
	// openRaw opens a store, closed in tb.Cleanup, and a handle on its database for a
	// test's own SQL (portable SQL: the two dialects share the handle's queries).
	openRaw func(tb testing.TB) (*store.Store, *sql.DB)
}

func (b backend) open(tb testing.TB) *store.Store {
	tb.Helper()
	s, _ := b.openRaw(tb)
	return s
}

// eachBackend runs fn as one subtest per backend, named after it: SQLite, then
// PostgreSQL on a fresh database of the test binary's shared server. Without the server
// binaries the postgres subtest skips, except with CI=true, where it fails.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, backend{name: "sqlite", openRaw: func(tb testing.TB) (*store.Store, *sql.DB) {
			tb.Helper()
			dir := tb.TempDir()
			path := filepath.Join(dir, store.DBFile)
			return openWithRaw(tb, "sqlite:"+path, dir, "sqlite", "file:"+path)
		}})
	})
	t.Run("postgres", func(t *testing.T) {
		server := storetest.SharedPostgres(t)
		fn(t, backend{name: "postgres", openRaw: func(tb testing.TB) (*store.Store, *sql.DB) {
			tb.Helper()
			dsn := storetest.CreateDatabase(tb, server)
			return openWithRaw(tb, dsn, tb.TempDir(), "pgx", dsn)
		}})
	})
}

func openWithRaw(tb testing.TB, url, dir, driver, dsn string) (*store.Store, *sql.DB) {
	tb.Helper()
	s, err := store.OpenURL(context.Background(), url, dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return s, db
}
