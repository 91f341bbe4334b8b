package store

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"strings"
)

// On SQLite every ExecContext or QueryContext with SQL text parses and compiles that text
// again (modernc's conn prepares a statement per call and finalizes it after): a fifth of
// a publish's CPU went to the parser. The connections of openDB therefore keep their
// recent statements compiled (stmtCacheConn) and run them again; pgx caches its own.

// stmtCacheSize bounds the statements one connection keeps: more than the store's
// distinct texts on one path, few enough that the compiled programs stay small.
const stmtCacheSize = 128

// stmtCacheMaxText is the longest text kept. Longer texts are the ones the store
// builds per call (IN lists of many placeholders, multi-row inserts, scripts): they
// seldom recur, and each would evict statements that do.
const stmtCacheMaxText = 4 << 10

// stmtCacheMaxParams is the most placeholders a kept text has (the store's recurring
// statements have at most 20). A text with more is an IN list or a multi-row insert built
// per call, one text per length (log hashes and blocklist digests in batches of up to
// 500): kept, each would hold a compiled program of some 200 bytes per placeholder, outside
// the Go heap (SQLITE_DBSTATUS_STMT_USED: 12 KB a statement at 1, 26 KB at 100, 100 KB at
// 500), and 128 such texts 12 MB on each of the store's 9 connections.
const stmtCacheMaxParams = 32

// liteConn is what database/sql uses of a modernc connection; stmtCacheConn offers each.
type liteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// liteStmt is a prepared statement that runs with a context, as modernc's do.
type liteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// stmtCacheConnector hands out inner's connections, each with a statement cache.
type stmtCacheConnector struct{ inner driver.Connector }

func (c stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	lc, ok := conn.(liteConn)
	if !ok {
		return conn, nil // a driver without these interfaces runs uncached
	}
	return newStmtCacheConn(lc), nil
}

func (c stmtCacheConnector) Driver() driver.Driver { return c.inner.Driver() }

// cachedStmt is one statement of the cache. While rows it returned are open (inUse) it
// is stepping and must not be bound or reset again; evicted, it is closed once they close.
type cachedStmt struct {
	query   string
	st      liteStmt
	inUse   bool
	evicted bool
}

// stmtCacheConn is a connection that keeps its last stmtCacheSize statements, keyed by
// their text, and runs ExecContext and QueryContext through them. database/sql uses a
// connection from one goroutine at a time (and closes rows under the same lock), so the
// cache needs no lock of its own.
type stmtCacheConn struct {
	inner liteConn
	lru   *list.List               // of *cachedStmt, most recently used first
	byKey map[string]*list.Element // query text → element of lru
}

var (
	_ driver.ConnPrepareContext = (*stmtCacheConn)(nil)
	_ driver.ExecerContext      = (*stmtCacheConn)(nil)
	_ driver.QueryerContext     = (*stmtCacheConn)(nil)
	_ driver.ConnBeginTx        = (*stmtCacheConn)(nil)
	_ driver.SessionResetter    = (*stmtCacheConn)(nil)
	_ driver.Validator          = (*stmtCacheConn)(nil)
	_ driver.Pinger             = (*stmtCacheConn)(nil)
)

func newStmtCacheConn(inner liteConn) *stmtCacheConn {
	return &stmtCacheConn{inner: inner, lru: list.New(), byKey: make(map[string]*list.Element)}
}

func (c *stmtCacheConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case cs == nil:
		return c.inner.ExecContext(ctx, query, args)
	}
	return cs.st.ExecContext(ctx, args)
}

func (c *stmtCacheConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case cs == nil:
		return c.inner.QueryContext(ctx, query, args)
	}
	rows, err := cs.st.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	return c.wrapRows(rows, cs), nil
}

// take is the cached statement for query, prepared on a miss, or nil when query is to
// run uncached: too long to keep or of too many placeholders, or its statement is still stepping under open rows (a
// query run again inside the loop over its own rows), which gets a statement of its own.
// A failed prepare is returned and nothing is kept.
func (c *stmtCacheConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	if len(query) > stmtCacheMaxText {
		return nil, nil
	}
	if el, ok := c.byKey[query]; ok {
		cs := el.Value.(*cachedStmt)
		if cs.inUse {
			return nil, nil
		}
		c.lru.MoveToFront(el)
		return cs, nil
	}
	if strings.Count(query, "?") > stmtCacheMaxParams {
		return nil, nil
	}
	ds, err := c.inner.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(liteStmt)
	if !ok {
		_ = ds.Close() // it cannot run with a context: run query uncached
		return nil, nil
	}
	cs := &cachedStmt{query: query, st: st}
	c.byKey[query] = c.lru.PushFront(cs)
	c.evict()
	return cs, nil
}

// evict drops the least recently used statements past stmtCacheSize, closing each now,
// or once its open rows close.
func (c *stmtCacheConn) evict() {
	for c.lru.Len() > stmtCacheSize {
		cs := c.lru.Remove(c.lru.Back()).(*cachedStmt)
		delete(c.byKey, cs.query)
		cs.evicted = true
		if !cs.inUse {
			_ = cs.st.Close() // a finalize reports the last step's error, already returned
		}
	}
}

// release is called when the rows of cs close: the statement, reset by them, is free
// again, or closed if it was evicted meanwhile.
func (c *stmtCacheConn) release(cs *cachedStmt) {
	cs.inUse = false
	if cs.evicted {
		_ = cs.st.Close()
	}
}

// Close closes every cached statement, then the connection. (database/sql closes a
// connection only once its rows are closed; a statement under open rows would be closed
// by their Close, as an evicted one is.)
func (c *stmtCacheConn) Close() error {
	var errs []error
	for el := c.lru.Front(); el != nil; el = el.Next() {
		cs := el.Value.(*cachedStmt)
		cs.evicted = true
		if !cs.inUse {
			errs = append(errs, cs.st.Close())
		}
	}
	c.lru.Init()
	clear(c.byKey)
	return errors.Join(append(errs, c.inner.Close())...)
}

func (c *stmtCacheConn) Prepare(query string) (driver.Stmt, error) { return c.inner.Prepare(query) }

func (c *stmtCacheConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner.PrepareContext(ctx, query)
}

//nolint:staticcheck // driver.Conn requires Begin; database/sql calls BeginTx
func (c *stmtCacheConn) Begin() (driver.Tx, error) { return c.inner.Begin() }

func (c *stmtCacheConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner.BeginTx(ctx, opts)
}

func (c *stmtCacheConn) Ping(ctx context.Context) error { return c.inner.Ping(ctx) }

func (c *stmtCacheConn) ResetSession(ctx context.Context) error { return c.inner.ResetSession(ctx) }

func (c *stmtCacheConn) IsValid() bool { return c.inner.IsValid() }

// liteRows is what database/sql uses of modernc's rows.
type liteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// cachedRows are the rows of a cached statement: Close resets the statement (modernc's
// rows of a prepared statement reset it rather than finalize it) and then hands it back.
type cachedRows struct {
	liteRows
	held
}

func (r *cachedRows) Close() error { return r.release(r.liteRows.Close()) }

// plainCachedRows are cachedRows of a driver whose rows describe no column types.
type plainCachedRows struct {
	driver.Rows
	held
}

func (r *plainCachedRows) Close() error { return r.release(r.Rows.Close()) }

// held is a cached statement that open rows hold.
type held struct {
	c  *stmtCacheConn
	cs *cachedStmt
}

// release hands the statement back after the rows' Close (which database/sql calls
// once), whose error it returns.
func (h *held) release(err error) error {
	h.c.release(h.cs)
	return err
}

func (c *stmtCacheConn) wrapRows(rows driver.Rows, cs *cachedStmt) driver.Rows {
	cs.inUse = true
	if lr, ok := rows.(liteRows); ok {
		return &cachedRows{lr, held{c, cs}}
	}
	return &plainCachedRows{rows, held{c, cs}}
}
