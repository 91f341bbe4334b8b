package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// realPlan is the copy plan of the schema this binary migrates a SQLite database to.
func realPlan(t *testing.T) []*copyTable {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema, err := readSchema(ctx, db, SQLite)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := copyPlan(schema, schema)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestCopyPlanOrder holds the order a resumable copy depends on beyond the foreign keys:
// see orderTables.
func TestCopyPlanOrder(t *testing.T) {
	plan := realPlan(t)
	pos := map[string]int{}
	for i, tb := range plan {
		pos[tb.Name] = i
	}
	before := func(a, b, why string) {
		t.Helper()
		ia, oka := pos[a]
		ib, okb := pos[b]
		if !oka || !okb || ia > ib {
			t.Errorf("table %s must be copied before %s (%s); the plan: %v", a, b, why, names(plan))
		}
	}
	for _, log := range []string{"log_records", "log_hashes", "log_checkpoints"} {
		before(log, "releases", "a resumed copy's Open would append log records for copied releases")
	}
	for _, watched := range []string{"releases", "packages", "audit", "sync_state", "quarantines"} {
		before(watched, "webhook_endpoints", "the webhook triggers record events only once an endpoint exists")
	}
	for _, tb := range plan {
		for _, p := range tb.Parents {
			before(p, tb.Name, "its foreign key")
		}
	}
}

func names(plan []*copyTable) []string {
	var out []string
	for _, t := range plan {
		out = append(out, t.Name)
	}
	return out
}

func TestCopyPlanRefusesSchemaDifferences(t *testing.T) {
	table := func(name string, cols ...string) *copyTable {
		return &copyTable{Name: name, Columns: cols, Key: cols[:1]}
	}
	cases := []struct {
		name     string
		src, dst map[string]*copyTable
		want     string
	}{
		{"missing in destination",
			map[string]*copyTable{"a": table("a", "id"), "b": table("b", "id")},
			map[string]*copyTable{"a": table("a", "id")},
			"table b is in the source but not in the destination"},
		{"column",
			map[string]*copyTable{"a": table("a", "id", "x")},
			map[string]*copyTable{"a": table("a", "id", "y")},
			"table a has columns [id x] in the source and [id y] in the destination"},
		{"only in destination",
			map[string]*copyTable{"a": table("a", "id")},
			map[string]*copyTable{"a": table("a", "id"), "c": table("c", "id")},
			"table c is in the destination but not in the source"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := copyPlan(tc.src, tc.dst)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("copyPlan: %v, want %q", err, tc.want)
			}
		})
	}
	derived := map[string]*copyTable{"a": table("a", "id"), "search": table("search", "rowid")}
	plan, err := copyPlan(derived, map[string]*copyTable{"a": table("a", "id"), "search_keys": table("search_keys", "key")})
	if err != nil || !slices.Equal(names(plan), []string{"a"}) {
		t.Errorf("derived tables on either side: plan %v, %v; want only a", names(plan), err)
	}
}

// TestCopyKeyCheckpoint: a checkpoint gives back the key it was made of.
func TestCopyKeyCheckpoint(t *testing.T) {
	key := []any{int64(1) << 53, "acme/hello@1.0.0", int32(7)}
	s, err := encodeKey(key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeKey(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(1) << 53, "acme/hello@1.0.0", int64(7)}
	if !slices.Equal(got, want) {
		t.Errorf("decodeKey(encodeKey(%v)) = %v, want %v", key, got, want)
	}
	if _, err := encodeKey([]any{[]byte("x")}); err == nil {
		t.Error("a bytes key was checkpointed")
	}
}

// TestCopySameValue: the comparison a copy refuses conflicts by sees text and blobs by their
// bytes, whichever Go type a driver gave, and nothing else as equal.
func TestCopySameValue(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{"abc", []byte("abc"), true},
		{[]byte("abc"), []byte("abd"), false},
		{"abc", "abcd", false},
		{int64(7), int32(7), true},
		{int64(7), int64(8), false},
		{int64(1), "1", false},
		{nil, nil, true},
		{nil, "", false},
		{true, int64(1), true},
	}
	for _, tc := range cases {
		if got := sameValue(tc.a, tc.b); got != tc.want {
			t.Errorf("sameValue(%#v, %#v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestCopyUnboundedBatch: the largest batch a caller can ask for (registry migrate
// --batch 2147483647) on a table whose rows have many columns still copies it, in
// statements under SQLite's limit of 32766 bind parameters (copyMaxParams).
func TestCopyUnboundedBatch(t *testing.T) {
	ctx := context.Background()
	const cols, rows = 100, 400 // 400 rows × 101 parameters is over SQLite's limit
	var def, vals []string
	for i := range cols {
		def = append(def, fmt.Sprintf("c%d INTEGER NOT NULL", i))
		vals = append(vals, strconv.Itoa(i))
	}
	ends := make([]CopyEnd, 2)
	for i := range ends {
		dir := t.TempDir()
		st, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
		if err != nil {
			t.Fatal(err)
		}
		exec := func(q string) {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		exec("CREATE TABLE wide (id INTEGER PRIMARY KEY, " + strings.Join(def, ", ") + ")")
		for r := 1; i == 0 && r <= rows; r++ {
			exec(fmt.Sprintf("INSERT INTO wide VALUES (%d, %s)", r, strings.Join(vals, ", ")))
		}
		_ = db.Close()
		blobs, err := OpenFolder(filepath.Join(dir, "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		ends[i] = CopyEnd{Database: "sqlite:" + dir, DataDir: dir, Blobs: blobs}
	}
	rep, err := Copy(ctx, ends[0], ends[1], CopyOptions{BatchRows: math.MaxInt32})
	if err != nil {
		t.Fatalf("Copy with an unbounded batch: %v", err)
	}
	i := slices.IndexFunc(rep.Tables, func(tr TableReport) bool { return tr.Name == "wide" })
	if i < 0 {
		t.Fatalf("the copy did not report the table wide: %+v", rep.Tables)
	}
	if tr := rep.Tables[i]; tr.Rows != rows || tr.Inserted != rows {
		t.Errorf("wide: %d rows, %d inserted, want %d", tr.Rows, tr.Inserted, rows)
	}
}
