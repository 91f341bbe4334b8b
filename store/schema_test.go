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
// indexes (with their columns, uniqueness and partiality) of the SQLite one (search
// apart), so a SQLite migration without its PostgreSQL counterpart fails here.
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
	// Each index as table.name(columns in order), unique and partial marked: an index of
	// the same name over other columns, or without its UNIQUE, is a different index.
	liteIdx := schemaRows(t, store.RawDB(lite), `SELECT m.tbl_name || '.' || m.name || '(' ||
			(SELECT group_concat(c.name, ',') FROM (SELECT name FROM pragma_index_info(m.name) ORDER BY seqno) c) || ')' ||
			CASE WHEN l."unique" THEN ' unique' ELSE '' END || CASE WHEN l.partial THEN ' partial' ELSE '' END
		FROM sqlite_master m JOIN pragma_index_list(m.tbl_name) l ON l.name = m.name
		WHERE m.type = 'index' AND m.name NOT LIKE 'sqlite_autoindex_%'`)
	pgIdx := schemaRows(t, store.RawDB(pg), `SELECT t.relname || '.' || i.relname || '(' ||
			string_agg(a.attname, ',' ORDER BY k.n) || ')' ||
			CASE WHEN x.indisunique THEN ' unique' ELSE '' END || CASE WHEN x.indpred IS NOT NULL THEN ' partial' ELSE '' END
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace s ON s.oid = t.relnamespace
		CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
		JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		WHERE s.nspname = 'public' AND i.relname NOT LIKE '%\_pkey' AND i.relname NOT LIKE '%\_key'
		GROUP BY t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL`)
	if len(liteIdx) < 5 || !strings.Contains(strings.Join(liteIdx, " "), "(") {
		t.Fatalf("the SQLite schema lists indexes %q, want the registry's, each with its columns", liteIdx)
	}
	if diff := cmp.Diff(liteIdx, pgIdx); diff != "" {
		t.Errorf("indexes, with their columns (-sqlite +postgres):\n%s", diff)
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
