package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgMaxConns bounds one replica's connections to PostgreSQL: writes are serialised by
// the write lock anyway, so the pool is sized for concurrent reads.
const pgMaxConns = 16

// openPostgres opens a pool on the PostgreSQL database of dsn through pgx's database/sql
// driver, wrapped so that the store's SQL runs unchanged (see pgConn), and checks that the
// server answers.
func openPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: database URL: %w", err)
	}
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(pgMaxConns)
	db.SetMaxIdleConns(pgMaxConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", hidePassword(dsn), unavailable(err))
	}
	return db, nil
}

// pgConnector hands out pgConns.
type pgConnector struct{ inner driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("store: pgx connector returned %T, not *stdlib.Conn", conn)
	}
	return &pgConn{sc}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgConn is a pgx connection that speaks the store's SQL: ? placeholders become $n
// (rebind), arguments are normalised (normalizeArg), and errors that say the server is
// out of reach wrap ErrUnavailable.
type pgConn struct{ *stdlib.Conn }

// Interfaces database/sql looks for on a connection; the rest are promoted from stdlib.Conn.
var (
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
)

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	q, _ := rebind(query)
	st, err := c.Conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, unavailable(err)
	}
	if ps, ok := st.(*stdlib.Stmt); ok {
		return pgStmt{ps}, nil
	}
	return st, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	q, _ := rebind(query)
	res, err := c.Conn.ExecContext(ctx, q, args)
	return res, unavailable(err)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, _ := rebind(query)
	return wrapRows(c.Conn.QueryContext(ctx, q, args))
}

// wrapRows marks a failure to read rows, as well as to query them, that the server's
// going away caused.
func wrapRows(rows driver.Rows, err error) (driver.Rows, error) {
	if err != nil {
		return nil, unavailable(err)
	}
	if r, ok := rows.(*stdlib.Rows); ok {
		return pgRows{r}, nil
	}
	return rows, nil
}

// BeginTx begins a transaction; a read-only one of the default isolation runs REPEATABLE
// READ, so that, as a SQLite read transaction does, it reads one snapshot (READ COMMITTED,
// PostgreSQL's default, takes a new one at every statement: a change page could then list
// changes past the serial read just before).
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly && sql.IsolationLevel(opts.Isolation) == sql.LevelDefault {
		opts.Isolation = driver.IsolationLevel(sql.LevelRepeatableRead)
	}
	tx, err := c.Conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, unavailable(err)
	}
	return pgTx{tx}, nil
}

func (c *pgConn) Ping(ctx context.Context) error { return unavailable(c.Conn.Ping(ctx)) }

// CheckNamedValue normalises every argument (normalizeArg).
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	nv.Value = normalizeArg(nv.Value)
	return nil
}

// pgTx marks a commit that failed for want of the server.
type pgTx struct{ inner driver.Tx }

func (t pgTx) Commit() error   { return unavailable(t.inner.Commit()) }
func (t pgTx) Rollback() error { return unavailable(t.inner.Rollback()) }

// pgStmt is a prepared statement whose failures for want of the server are marked.
type pgStmt struct{ *stdlib.Stmt }

func (s pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	res, err := s.Stmt.ExecContext(ctx, args)
	return res, unavailable(err)
}

func (s pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return wrapRows(s.Stmt.QueryContext(ctx, args))
}

// pgRows are rows whose read failures for want of the server are marked; io.EOF, the
// end of the rows, is passed as it is.
type pgRows struct{ *stdlib.Rows }

func (r pgRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == nil || err == io.EOF { //nolint:errorlint // database/sql compares io.EOF itself
		return err
	}
	return unavailable(err)
}
