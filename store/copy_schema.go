package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// quoteIdent quotes a table or column name; both dialects take SQL's double quotes.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// CopyDerived are the tables a copy leaves out, with why: the migrations bookkeeping is each
// dialect's own (its numbering differs), and the search tables and the stored index
// documents are derived from the catalogue, rebuilt by the first `registry serve` on the
// destination (ingest's full build replaces the search rows when its search digest, a
// file in the local data directory, is absent, and builds the documents of a serial that
// has none; copied, they would keep the source's --public-url in every link). Every other
// table of the schema is copied: a table added by a migration is copied without a change
// here, and TestCopyEveryTable fails until the seed gives it a row.
var CopyDerived = map[string]string{
	"schema_migrations": "each dialect records its own migrations",
	"documents":         "index documents, built for the current serial by the first serve",
	"search":            "search index, rebuilt from the catalogue at the first serve",
	"search_prefixed":   "search index, rebuilt from the catalogue at the first serve",
	"search_keys":       "search index, rebuilt from the catalogue at the first serve",
}

// copyTable is one table of the schema, as a copy needs it.
type copyTable struct {
	Name     string
	Columns  []string
	Key      []string // primary key columns, in key order
	Parents  []string // tables its foreign keys reference
	Identity []string // PostgreSQL identity or serial columns, whose sequences follow the copy
	// Text are the columns holding text (TEXT, and PostgreSQL's json), in the destination:
	// a value read as bytes (PostgreSQL's json) is bound to them as a string, since a STRICT
	// SQLite TEXT column refuses a blob.
	Text map[string]bool
}

// schemaReader lists the tables of one database.
type schemaReader interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readSchema returns every base table of db (virtual and shadow tables excluded) by name.
func readSchema(ctx context.Context, db schemaReader, d Dialect) (map[string]*copyTable, error) {
	names, err := tableNames(ctx, db, d)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*copyTable, len(names))
	for _, n := range names {
		t, err := describeTable(ctx, db, d, n)
		if err != nil {
			return nil, err
		}
		out[n] = t
	}
	return out, nil
}

func tableNames(ctx context.Context, db schemaReader, d Dialect) ([]string, error) {
	q := `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if d == Postgres {
		q = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	return queryStrings(ctx, db, q)
}

func describeTable(ctx context.Context, db schemaReader, d Dialect, name string) (*copyTable, error) {
	t := &copyTable{Name: name}
	var err error
	if d == Postgres {
		err = describePostgres(ctx, db, t)
	} else {
		err = describeSQLite(ctx, db, t)
	}
	if err != nil {
		return nil, fmt.Errorf("store: copy: describe table %s: %w", name, err)
	}
	if len(t.Key) == 0 {
		return nil, fmt.Errorf("store: copy: table %s has no primary key: a copy pages and resumes by it; give it one in a migration", name)
	}
	return t, nil
}

func describeSQLite(ctx context.Context, db schemaReader, t *copyTable) error {
	rows, err := db.QueryContext(ctx, "SELECT name, upper(type), pk FROM pragma_table_info(?) ORDER BY cid", t.Name)
	if err != nil {
		return err
	}
	defer rows.Close()
	keys := map[int]string{}
	t.Text = map[string]bool{}
	for rows.Next() {
		var col, typ string
		var pk int
		if err := rows.Scan(&col, &typ, &pk); err != nil {
			return err
		}
		t.Columns = append(t.Columns, col)
		t.Text[col] = typ == "TEXT"
		if pk > 0 {
			keys[pk] = col
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := 1; i <= len(keys); i++ {
		t.Key = append(t.Key, keys[i])
	}
	t.Parents, err = queryStrings(ctx, db, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?) ORDER BY 1`, t.Name)
	return err
}

func describePostgres(ctx context.Context, db schemaReader, t *copyTable) error {
	var err error
	if t.Columns, err = queryStrings(ctx, db, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, t.Name); err != nil {
		return err
	}
	text, err := queryStrings(ctx, db, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1
		  AND data_type IN ('text', 'json', 'jsonb', 'character varying', 'character')`, t.Name)
	if err != nil {
		return err
	}
	t.Text = map[string]bool{}
	for _, c := range text {
		t.Text[c] = true
	}
	if t.Key, err = queryStrings(ctx, db, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = to_regclass(quote_ident($1)) AND i.indisprimary
		ORDER BY array_position(i.indkey::int2[], a.attnum)`, t.Name); err != nil {
		return err
	}
	if t.Parents, err = queryStrings(ctx, db, `SELECT DISTINCT c.confrelid::regclass::text FROM pg_constraint c
		WHERE c.contype = 'f' AND c.conrelid = to_regclass(quote_ident($1)) ORDER BY 1`, t.Name); err != nil {
		return err
	}
	for i, p := range t.Parents {
		t.Parents[i] = strings.Trim(p, `"`)
	}
	t.Identity, err = queryStrings(ctx, db, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1
		  AND (is_identity = 'YES' OR column_default LIKE 'nextval(%') ORDER BY ordinal_position`, t.Name)
	return err
}

func queryStrings(ctx context.Context, db schemaReader, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// copyPlan matches the source's tables with the destination's and orders them
// (orderTables). It refuses a table the source
// has and the destination lacks, a column either side lacks, and a table only the
// destination has that is not derived: a copy never leaves data behind silently.
func copyPlan(src, dst map[string]*copyTable) ([]*copyTable, error) {
	var problems []string
	for name, t := range src {
		if _, derived := CopyDerived[name]; derived {
			continue
		}
		d, ok := dst[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("table %s is in the source but not in the destination (is the destination's binary older?)", name))
			continue
		}
		if !slices.Equal(sorted(t.Columns), sorted(d.Columns)) {
			problems = append(problems, fmt.Sprintf("table %s has columns %v in the source and %v in the destination", name, sorted(t.Columns), sorted(d.Columns)))
		}
	}
	for name := range dst {
		if _, derived := CopyDerived[name]; !derived && src[name] == nil {
			problems = append(problems, fmt.Sprintf("table %s is in the destination but not in the source (is the source's schema older? open it once with this binary)", name))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("store: copy: the schemas differ: %s", strings.Join(problems, "; "))
	}
	return orderTables(src, dst)
}

// orderTables orders the tables parents first (foreign keys), ties by name. The order
// matters beyond the keys, and TestCopyPlanOrder holds it: Open appends a transparency-log
// record for every release without one (backfillLog) and a resumed copy opens the
// destination again, so the log tables come before releases; the webhook triggers record
// an event for an insert only while an endpoint exists, so webhook_endpoints comes after
// every table they watch.
func orderTables(src, dst map[string]*copyTable) ([]*copyTable, error) {
	var plan []*copyTable
	done := map[string]bool{}
	var rest []string
	for n := range src {
		if _, derived := CopyDerived[n]; !derived {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for len(rest) > 0 {
		i := slices.IndexFunc(rest, func(n string) bool {
			return !slices.ContainsFunc(src[n].Parents, func(p string) bool { return p != n && !done[p] && src[p] != nil })
		})
		if i < 0 {
			return nil, fmt.Errorf("store: copy: the foreign keys of tables %v form a cycle", rest)
		}
		t := *src[rest[i]]
		t.Identity, t.Text = dst[t.Name].Identity, dst[t.Name].Text
		plan = append(plan, &t)
		done[t.Name] = true
		rest = slices.Delete(rest, i, i+1)
	}
	return plan, nil
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}
