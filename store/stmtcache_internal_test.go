package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"modernc.org/sqlite"
)

// stmtSpy records what the cache asks of the driver: the statements it prepares and
// closes, per text, and the calls it runs uncached.
type stmtSpy struct {
	mu       sync.Mutex
	prepares map[string]int
	closes   map[string]int
	uncached int
}

func (s *stmtSpy) count(m map[string]int, query string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m[query]++
}

func (s *stmtSpy) get(m map[string]int, query string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m[query]
}

func (s *stmtSpy) uncachedRuns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uncached
}

type spyConnector struct {
	inner driver.Connector
	spy   *stmtSpy
}

func (c spyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return spyConn{conn.(liteConn), c.spy}, nil
}

func (c spyConnector) Driver() driver.Driver { return c.inner.Driver() }

type spyConn struct {
	liteConn
	spy *stmtSpy
}

func (c spyConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.spy.count(c.spy.prepares, query)
	st, err := c.liteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return spyStmt{st.(liteStmt), query, c.spy}, nil
}

func (c spyConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.spy.mu.Lock()
	c.spy.uncached++
	c.spy.mu.Unlock()
	return c.liteConn.ExecContext(ctx, query, args)
}

func (c spyConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.spy.mu.Lock()
	c.spy.uncached++
	c.spy.mu.Unlock()
	return c.liteConn.QueryContext(ctx, query, args)
}

type spyStmt struct {
	liteStmt
	query string
	spy   *stmtSpy
}

func (s spyStmt) Close() error {
	s.spy.count(s.spy.closes, s.query)
	return s.liteStmt.Close()
}

// openSpied is a one-connection pool on a fresh SQLite database whose connections cache
// statements over the spy, and that connection.
func openSpied(t *testing.T) (*sql.DB, *sql.Conn, *stmtSpy) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "cache.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	inner, err := sqlite.NewConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	spy := &stmtSpy{prepares: map[string]int{}, closes: map[string]int{}}
	db := sql.OpenDB(stmtCacheConnector{spyConnector{inner, spy}})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return db, conn, spy
}

// cacheOf runs fn on the cache of conn.
func cacheOf(t *testing.T, conn *sql.Conn, fn func(*stmtCacheConn)) {
	t.Helper()
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stmtCacheConn)
		if !ok {
			return fmt.Errorf("the connection is %T, not *stmtCacheConn", dc)
		}
		fn(c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func cacheLen(t *testing.T, conn *sql.Conn) (n int) {
	t.Helper()
	cacheOf(t, conn, func(c *stmtCacheConn) {
		if len(c.byKey) != c.lru.Len() {
			t.Fatalf("cache index holds %d texts, its list %d", len(c.byKey), c.lru.Len())
		}
		n = c.lru.Len()
	})
	return n
}

func mustExec(t *testing.T, conn *sql.Conn, query string, args ...any) {
	t.Helper()
	if _, err := conn.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func queryInts(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) []int {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestStmtCacheReuses: a text run again on one connection is prepared once, by Exec and
// by Query alike, and never runs uncached.
func TestStmtCacheReuses(t *testing.T) {
	_, conn, spy := openSpied(t)
	mustExec(t, conn, "CREATE TABLE t (v INTEGER)")
	const ins, sel = "INSERT INTO t (v) VALUES (?)", "SELECT count(*) FROM t WHERE v <= ?"
	for i := range 100 {
		mustExec(t, conn, ins, i)
		var n int
		if err := conn.QueryRowContext(context.Background(), sel, i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("count after %d inserts: %d, %v", i+1, n, err)
		}
	}
	for _, q := range []string{ins, sel} {
		if got := spy.get(spy.prepares, q); got != 1 {
			t.Errorf("%q prepared %d times in 100 runs, want 1", q, got)
		}
	}
	if got := spy.uncachedRuns(); got != 0 {
		t.Errorf("%d runs went uncached, want 0", got)
	}
}

// TestStmtCacheNestedSameText: the text of open rows, run again inside the loop over them
// (by Query and by Exec), gets a statement of its own: the cached one, still stepping, is
// neither bound again nor reset under the outer rows.
func TestStmtCacheNestedSameText(t *testing.T) {
	db, conn, spy := openSpied(t)
	mustExec(t, conn, "CREATE TABLE t (g INTEGER, v INTEGER)")
	mustExec(t, conn, "INSERT INTO t VALUES (1, 10), (1, 11), (1, 12), (2, 20), (2, 21)")
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT v FROM t WHERE g = ? ORDER BY v"
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	if diff := cmp.Diff([]int{20, 21}, queryInts(t, tx, q, 2)); diff != "" {
		t.Fatalf("first run (-want +got):\n%s", diff)
	}
	rows, err := tx.QueryContext(context.Background(), q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var outer [][]int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(context.Background(), q, 2); err != nil {
			t.Fatalf("exec of the open rows' text: %v", err)
		}
		outer = append(outer, append([]int{v}, queryInts(t, tx, q, 2)...))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	want := [][]int{{10, 20, 21}, {11, 20, 21}, {12, 20, 21}}
	if diff := cmp.Diff(want, outer); diff != "" {
		t.Errorf("outer value, then the nested query's (-want +got):\n%s", diff)
	}
	if got := spy.uncachedRuns(); got != 6 {
		t.Errorf("%d runs uncached, want the 6 nested ones", got)
	}
	if diff := cmp.Diff([]int{10, 11, 12}, queryInts(t, tx, q, 1)); diff != "" {
		t.Errorf("after the loop (-want +got):\n%s", diff)
	}
	if got := spy.get(spy.prepares, q); got != 1 {
		t.Errorf("%q prepared %d times, want 1 (the nested runs prepare their own, uncached)", q, got)
	}
}

// TestStmtCacheBound: more distinct texts than the bound leave the cache at the bound,
// closing the least recently used; a hit makes a text recent again.
func TestStmtCacheBound(t *testing.T) {
	_, conn, spy := openSpied(t)
	text := func(i int) string { return fmt.Sprintf("SELECT %d", i) }
	const extra = 50
	mustExec(t, conn, text(0))
	for i := 1; i < stmtCacheSize+extra; i++ {
		if i == stmtCacheSize-1 {
			mustExec(t, conn, text(0)) // a hit: text 0 is now the most recent
		}
		mustExec(t, conn, text(i))
		if n := cacheLen(t, conn); n > stmtCacheSize {
			t.Fatalf("after %d texts the cache holds %d statements, bound %d", i+1, n, stmtCacheSize)
		}
	}
	if n := cacheLen(t, conn); n != stmtCacheSize {
		t.Errorf("cache holds %d statements, want %d", n, stmtCacheSize)
	}
	var closed []int
	for i := range stmtCacheSize + extra {
		if spy.get(spy.prepares, text(i)) != 1 {
			t.Errorf("%q prepared %d times, want 1", text(i), spy.get(spy.prepares, text(i)))
		}
		if spy.get(spy.closes, text(i)) == 1 {
			closed = append(closed, i)
		}
	}
	var want []int
	for i := 1; i <= extra; i++ {
		want = append(want, i)
	}
	if diff := cmp.Diff(want, closed); diff != "" {
		t.Errorf("evicted and closed texts (-want +got):\n%s", diff)
	}
}

// TestStmtCacheEvictedUnderRows: a statement evicted while its rows are open is closed
// only once they close, and they read on meanwhile.
func TestStmtCacheEvictedUnderRows(t *testing.T) {
	_, conn, spy := openSpied(t)
	const q = "SELECT value FROM json_each('[1,2,3]')"
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	for i := range stmtCacheSize {
		mustExec(t, conn, fmt.Sprintf("SELECT %d", i))
	}
	cacheOf(t, conn, func(c *stmtCacheConn) {
		if _, ok := c.byKey[q]; ok {
			t.Fatalf("%d newer texts left %q in the cache", stmtCacheSize, q)
		}
	})
	if n := spy.get(spy.closes, q); n != 0 {
		t.Fatalf("the evicted statement was closed under its open rows (%d closes)", n)
	}
	got := []int{1}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, got); diff != "" {
		t.Errorf("rows read across the eviction (-want +got):\n%s", diff)
	}
	if n := spy.get(spy.closes, q); n != 1 {
		t.Errorf("the evicted statement was closed %d times once its rows closed, want 1", n)
	}
}

// TestStmtCacheSkipsLongText: a text longer than stmtCacheMaxText runs uncached.
func TestStmtCacheSkipsLongText(t *testing.T) {
	_, conn, spy := openSpied(t)
	long := "SELECT 1 WHERE 1 IN (" + strings.Repeat("1, ", stmtCacheMaxText/3) + "1)"
	for range 3 {
		mustExec(t, conn, long)
	}
	if n := cacheLen(t, conn); n != 0 {
		t.Errorf("a %d-byte text left %d statements in the cache, want 0 (limit %d bytes)", len(long), n, stmtCacheMaxText)
	}
	if got := spy.uncachedRuns(); got != 3 {
		t.Errorf("%d of 3 runs uncached, want 3", got)
	}
}

// TestStmtCacheSkipsManyParams: a text of more than stmtCacheMaxParams placeholders (an
// IN list built per call) runs uncached, however many lengths come, and leaves the
// statements kept before it in place; one of stmtCacheMaxParams is kept.
func TestStmtCacheSkipsManyParams(t *testing.T) {
	_, conn, spy := openSpied(t)
	inList := func(n int) (string, []any) {
		args := make([]any, n)
		for i := range args {
			args[i] = i
		}
		return "SELECT 1 WHERE 1 IN (?" + strings.Repeat(", ?", n-1) + ")", args
	}
	kept, keptArgs := inList(stmtCacheMaxParams)
	mustExec(t, conn, kept, keptArgs...)
	for n := stmtCacheMaxParams + 1; n <= stmtCacheMaxParams+2*stmtCacheSize; n++ {
		q, args := inList(n)
		if got := queryInts(t, conn, q, args...); !cmp.Equal(got, []int{1}) {
			t.Fatalf("IN list of %d: got %v, want [1]", n, got)
		}
	}
	if n := cacheLen(t, conn); n != 1 {
		t.Errorf("%d statements cached, want 1 (the list of %d)", n, stmtCacheMaxParams)
	}
	if got, want := spy.uncachedRuns(), 2*stmtCacheSize; got != want {
		t.Errorf("%d runs uncached, want %d", got, want)
	}
	mustExec(t, conn, kept, keptArgs...)
	if got := spy.get(spy.prepares, kept); got != 1 {
		t.Errorf("the list of %d prepared %d times, want 1", stmtCacheMaxParams, got)
	}
}

// TestStmtCacheScript: a text of several statements runs every one of them on every run
// through the cache (modernc's statement of a script prepares its statements in turn).
func TestStmtCacheScript(t *testing.T) {
	_, conn, spy := openSpied(t)
	mustExec(t, conn, "CREATE TABLE t (v INTEGER)")
	const script = "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); UPDATE t SET v = v * 10 WHERE v < 3"
	mustExec(t, conn, script)
	mustExec(t, conn, script)
	if diff := cmp.Diff([]int{10, 20, 10, 20}, queryInts(t, conn, "SELECT v FROM t ORDER BY rowid")); diff != "" {
		t.Errorf("after the script twice (-want +got):\n%s", diff)
	}
	if got := spy.get(spy.prepares, script); got != 1 {
		t.Errorf("script prepared %d times, want 1 (cached)", got)
	}
}

// TestStmtCacheErrors: a failed prepare is not kept, and the next run prepares again; a
// statement whose run fails stays cached and runs again.
func TestStmtCacheErrors(t *testing.T) {
	_, conn, spy := openSpied(t)
	ctx := context.Background()
	const later = "SELECT v FROM later"
	if _, err := conn.QueryContext(ctx, later); err == nil {
		t.Fatal("query of a missing table succeeded")
	}
	if n := cacheLen(t, conn); n != 0 {
		t.Fatalf("a failed prepare left %d statements in the cache", n)
	}
	mustExec(t, conn, "CREATE TABLE later (v INTEGER UNIQUE)")
	mustExec(t, conn, "INSERT INTO later VALUES (7)")
	if diff := cmp.Diff([]int{7}, queryInts(t, conn, later)); diff != "" {
		t.Errorf("after the table exists (-want +got):\n%s", diff)
	}
	if got := spy.get(spy.prepares, later); got != 2 {
		t.Errorf("%q prepared %d times, want 2 (the failed one and the good one)", later, got)
	}

	const ins = "INSERT INTO later (v) VALUES (?)"
	mustExec(t, conn, ins, 1)
	if _, err := conn.ExecContext(ctx, ins, 1); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	mustExec(t, conn, ins, 2)
	const abs = "SELECT abs(?)"
	if _, err := queryRowsErr(conn, abs, int64(-1<<63)); err == nil {
		t.Fatal("abs(-2^63) succeeded, want integer overflow")
	}
	if diff := cmp.Diff([]int{5}, queryInts(t, conn, abs, -5)); diff != "" {
		t.Errorf("abs after the failed run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 7}, queryInts(t, conn, "SELECT v FROM later ORDER BY v")); diff != "" {
		t.Errorf("rows after the failed insert (-want +got):\n%s", diff)
	}
	for _, q := range []string{ins, abs} {
		if got := spy.get(spy.prepares, q); got != 1 {
			t.Errorf("%q prepared %d times, want 1: a failed run keeps its statement", q, got)
		}
	}
}

// queryRowsErr runs query and reads its rows, returning the first error.
func queryRowsErr(conn *sql.Conn, query string, args ...any) (int, error) {
	var v int
	err := conn.QueryRowContext(context.Background(), query, args...).Scan(&v)
	return v, err
}

// TestStmtCacheSchemaChange: a cached statement runs against the schema of the moment
// after ALTER TABLE, and after its table is dropped and made again.
func TestStmtCacheSchemaChange(t *testing.T) {
	_, conn, spy := openSpied(t)
	ctx := context.Background()
	mustExec(t, conn, "CREATE TABLE s (a INTEGER)")
	mustExec(t, conn, "INSERT INTO s VALUES (1)")
	const q = "SELECT * FROM s"
	columns := func() []string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		return cols
	}
	if diff := cmp.Diff([]string{"a"}, columns()); diff != "" {
		t.Fatalf("columns (-want +got):\n%s", diff)
	}
	mustExec(t, conn, "ALTER TABLE s ADD COLUMN b TEXT DEFAULT 'x'")
	if diff := cmp.Diff([]string{"a", "b"}, columns()); diff != "" {
		t.Errorf("columns after ALTER TABLE (-want +got):\n%s", diff)
	}
	mustExec(t, conn, "DROP TABLE s")
	mustExec(t, conn, "CREATE TABLE s (x TEXT, y TEXT, z TEXT)")
	mustExec(t, conn, "INSERT INTO s VALUES ('1', '2', '3')")
	if diff := cmp.Diff([]string{"x", "y", "z"}, columns()); diff != "" {
		t.Errorf("columns after DROP and CREATE (-want +got):\n%s", diff)
	}
	if got := spy.get(spy.prepares, q); got != 1 {
		t.Errorf("%q prepared %d times, want 1 (SQLite recompiles it itself)", q, got)
	}
}

// cancelAt, when set, is called by stmtcache_cancel(i) with each i.
var cancelAt atomic.Pointer[func(int64)]

func init() {
	sqlite.MustRegisterScalarFunction("stmtcache_cancel", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		if fn := cancelAt.Load(); fn != nil {
			(*fn)(args[0].(int64))
		}
		return args[0], nil
	})
}

// TestStmtCacheCancel: cancelling the context of a running cached statement interrupts
// it, by Exec and by Query, and the statement then runs again.
func TestStmtCacheCancel(t *testing.T) {
	const q = `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
		SELECT count(*) FROM c WHERE stmtcache_cancel(i) > 0`
	runs := []struct {
		name string
		run  func(context.Context, *sql.Conn, int) (int, error)
	}{
		{"exec", func(ctx context.Context, conn *sql.Conn, n int) (int, error) {
			_, err := conn.ExecContext(ctx, q, n)
			return n, err
		}},
		{"query", func(ctx context.Context, conn *sql.Conn, n int) (int, error) {
			var got int
			err := conn.QueryRowContext(ctx, q, n).Scan(&got)
			return got, err
		}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			_, conn, spy := openSpied(t)
			if got, err := r.run(context.Background(), conn, 10); err != nil || got != 10 {
				t.Fatalf("first run: %d, %v", got, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := func(i int64) {
				if i == 1000 {
					cancel()
				}
			}
			cancelAt.Store(&stop)
			_, err := r.run(ctx, conn, 200_000_000) // minutes, were it not interrupted
			cancelAt.Store(nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled run: %v, want context.Canceled", err)
			}
			if got, err := r.run(context.Background(), conn, 10); err != nil || got != 10 {
				t.Fatalf("run after the cancelled one: %d, %v", got, err)
			}
			if got, u := spy.get(spy.prepares, q), spy.uncachedRuns(); got != 1 || u != 0 {
				t.Errorf("prepared %d times, %d runs uncached; want 1 and 0", got, u)
			}
		})
	}
}

// TestStmtCacheClose: closing a connection closes its cached statements.
func TestStmtCacheClose(t *testing.T) {
	db, conn, spy := openSpied(t)
	texts := []string{"SELECT 1", "SELECT 2", "SELECT 3"}
	for _, q := range texts {
		mustExec(t, conn, q)
	}
	if err := errors.Join(conn.Close(), db.Close()); err != nil {
		t.Fatal(err)
	}
	for _, q := range texts {
		if got := spy.get(spy.closes, q); got != 1 {
			t.Errorf("%q closed %d times with its connection, want 1", q, got)
		}
	}
}

// TestStoreCachesStatements: the store's SQLite pools, writer and readers, hand out
// caching connections.
func TestStoreCachesStatements(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, db := range map[string]*sql.DB{"writer": s.w, "reader": s.r} {
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var one int
		for range 2 {
			if err := conn.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
				t.Fatal(err)
			}
		}
		cacheOf(t, conn, func(c *stmtCacheConn) {
			if _, ok := c.byKey["SELECT 1"]; !ok {
				t.Errorf("%s: the statement run is not cached", name)
			}
		})
		_ = conn.Close()
	}
}

// TestUpsertSearchCachesInserts: the search row and keys inserts of UpsertSearch, one
// doc per call, run through the writer's statement cache (a tx.Prepare would compile
// them again on every call).
func TestUpsertSearchCachesInserts(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 2 {
		d := SearchDoc{ID: fmt.Sprintf("plugin-%d", i), Name: "Plugin", Kind: "plugin", UpdatedAt: time.Unix(0, 0)}
		if err := s.UpsertSearch(ctx, []SearchDoc{d}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cacheOf(t, conn, func(c *stmtCacheConn) {
		for _, q := range []string{ftsInsertRow, ftsInsertKeys} {
			if _, ok := c.byKey[q]; !ok {
				t.Errorf("%q is not cached on the writer", q)
			}
		}
	})
}

// TestBackupTwiceCached: a second Backup runs the writer's cached VACUUM INTO statement
// again, with the new file bound, and snapshots what was written since the first.
func TestBackupTwiceCached(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var snaps []string
	for i := range 2 {
		d := SearchDoc{ID: fmt.Sprintf("plugin-%d", i), Name: "Plugin", Kind: "plugin", UpdatedAt: time.Unix(0, 0)}
		if err := s.UpsertSearch(ctx, []SearchDoc{d}); err != nil {
			t.Fatal(err)
		}
		snap := filepath.Join(dir, fmt.Sprintf("snap%d.db", i))
		if err := s.Backup(ctx, snap); err != nil {
			t.Fatalf("backup %d: %v", i+1, err)
		}
		snaps = append(snaps, snap)
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cacheOf(t, conn, func(c *stmtCacheConn) {
		if _, ok := c.byKey["VACUUM INTO ?"]; !ok {
			t.Error("VACUUM INTO is not cached on the writer: the second backup did not run it again")
		}
	})
	_ = conn.Close()
	for i, snap := range snaps {
		db, err := sql.Open("sqlite", "file:"+snap+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		if got := queryInts(t, db, "SELECT count(*) FROM search"); !cmp.Equal(got, []int{i + 1}) {
			t.Errorf("snapshot %d holds %v search rows, want %d", i+1, got, i+1)
		}
		_ = db.Close()
	}
}

// BenchmarkStmtCache runs one indexed point query of a 1,000-row table, the shape of
// most store reads, on a connection without and with the statement cache.
func BenchmarkStmtCache(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cached=%t", cached), func(b *testing.B) {
			inner, err := sqlite.NewConnector("file:" + filepath.Join(b.TempDir(), "bench.db") + "?_pragma=journal_mode(WAL)")
			if err != nil {
				b.Fatal(err)
			}
			var connector driver.Connector = inner
			if cached {
				connector = stmtCacheConnector{inner}
			}
			db := sql.OpenDB(connector)
			defer db.Close()
			db.SetMaxOpenConns(1)
			ctx := context.Background()
			if _, err := db.ExecContext(ctx, `CREATE TABLE r (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
				version TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (name, version));
				INSERT INTO r (name, version, created_at)
					WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
					SELECT 'plugin-' || i, '1.0.' || (i % 7), '2026-12-01' FROM n`); err != nil {
				b.Fatal(err)
			}
			const q = "SELECT id, created_at FROM r WHERE name = ? AND version = ?"
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				n := i%1000 + 1
				var id int64
				var at string
				if err := db.QueryRowContext(ctx, q, fmt.Sprintf("plugin-%d", n), fmt.Sprintf("1.0.%d", n%7)).Scan(&id, &at); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
