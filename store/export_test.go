package store

import "database/sql"

// RawDB is the store's write pool, for tests of package store_test that check what the
// schema itself refuses (SQL through it is rebound on PostgreSQL like the store's own).
func RawDB(s *Store) *sql.DB { return s.w }

// PGWriteKey is the advisory lock every PostgreSQL write transaction takes.
const PGWriteKey = pgWriteKey
