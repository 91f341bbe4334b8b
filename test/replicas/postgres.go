package replicas

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pluginyard/registry/store/storetest"
)

// Postgres is the throwaway server of storetest.StartPostgresServer, which a fault test can
// stop and start again on the same port and data directory.
type Postgres struct {
	DSN     string // the server's postgres database
	srv     *storetest.Server
	stopped atomic.Bool
}

// StartPostgres starts a server (skipping tb without PostgreSQL, failing it with CI=true);
// storetest stops and removes it when the test ends, stopped or not.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	srv := storetest.StartPostgresServer(tb)
	return &Postgres{DSN: srv.DSN(), srv: srv}
}

// CreateDatabase is a fresh, empty database on the server; its URL is what --database takes.
// If the test ends while the server is stopped, the server is started again first, so that
// storetest can drop the database.
func (pg *Postgres) CreateDatabase(tb testing.TB) string {
	tb.Helper()
	url := storetest.CreateDatabase(tb, pg.DSN)
	tb.Cleanup(func() {
		if pg.stopped.Load() {
			if err := pg.Start(); err != nil {
				tb.Error(err)
			}
		}
	})
	return url
}

// Stop shuts the server down (fast: every session is ended) and waits until it is gone:
// connections are refused until Start.
func (pg *Postgres) Stop() error {
	if err := pg.srv.Stop(); err != nil {
		return fmt.Errorf("replicas: stop postgres: %w", err)
	}
	pg.stopped.Store(true)
	return nil
}

// Start starts the stopped server again on its port and waits until it accepts
// connections.
func (pg *Postgres) Start() error {
	if err := pg.srv.Start(); err != nil {
		return fmt.Errorf("replicas: start postgres: %w", err)
	}
	pg.stopped.Store(false)
	return nil
}

// Query runs one query on database url and returns its rows as strings, for checks of
// what the replicas stored (the schema_migrations table).
func Query(url, query string, args ...any) ([][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("replicas: connect: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("replicas: %s: %w", query, err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, fmt.Errorf("replicas: %s: %w", query, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("replicas: %s: %w", query, err)
	}
	return out, nil
}
