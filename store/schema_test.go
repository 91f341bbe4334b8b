package store_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// derivedTables are kept apart from the schema comparison: each dialect has its own
// full-text search tables and its own migration record.
func derivedTable(name string) bool {
	return strings.HasPrefix(name, "search") || name == "schema_migrations"
}

// TestPostgresSchemaMatchesSQLite: the PostgreSQL schema has the tables, columns and named
// indexes of the SQLite one (search apart), so a SQLite migration without its PostgreSQL
// counterpart fails here.
func TestPostgresSchemaMatchesSQLite(t *testing.T) {
	ctx := context.Background()
	lite, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg := openURL(t, storetest.CreateDatabase(t, storetest.SharedPostgres(t)))
	liteCols := schemaRows(t, store.RawDB(lite), `SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`)
	pgCols := schemaRows(t, store.RawDB(pg), `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = 'public'`)
	if len(liteCols) < 100 {
		t.Fatalf("the SQLite schema lists %d columns, want the registry's (over 100)", len(liteCols))
	}
	if diff := cmp.Diff(liteCols, pgCols); diff != "" {
		t.Errorf("columns (-sqlite +postgres):\n%s", diff)
	}
	liteIdx := schemaRows(t, store.RawDB(lite), `SELECT tbl_name || '.' || name FROM sqlite_master
		WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'`)
	pgIdx := schemaRows(t, store.RawDB(pg), `SELECT tablename || '.' || indexname FROM pg_indexes
		WHERE schemaname = 'public' AND indexname NOT LIKE '%\_pkey' AND indexname NOT LIKE '%\_key'`)
	if diff := cmp.Diff(liteIdx, pgIdx); diff != "" {
		t.Errorf("named indexes (-sqlite +postgres):\n%s", diff)
	}
}

// schemaRows is the sorted table.name rows of q, the derived tables left out.
func schemaRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		if table, _, _ := strings.Cut(v, "."); !derivedTable(table) {
			out = append(out, v)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
