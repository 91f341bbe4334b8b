package store

import (
	"database/sql"
	"os"
	"testing"
)

// RawDB is the store's write pool, for tests of package store_test that check what the
// schema itself refuses (SQL through it is rebound on PostgreSQL like the store's own).
func RawDB(s *Store) *sql.DB { return s.w }

// PGWriteKey is the advisory lock every PostgreSQL write transaction takes.
const PGWriteKey = pgWriteKey

// sqliteOnly skips a test of SQLite's own behaviour when the tests run on PostgreSQL
// (REGISTRY_TEST_DATABASE=postgres; package store cannot import storetest).
func sqliteOnly(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("REGISTRY_TEST_DATABASE") == "postgres" {
		tb.Skip("SQLite only: " + why)
	}
}
