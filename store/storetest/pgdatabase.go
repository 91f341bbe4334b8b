package storetest

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// databases numbers the databases CreateDatabase makes in this process.
var databases atomic.Int64

// CreateDatabase creates an empty database on the server of dsn (one StartPostgres
// returned) and returns its DSN; it is dropped in tb.Cleanup, with any session still on
// it. One server can so give every subtest of the conformance suite a fresh database
// for the cost of a CREATE DATABASE rather than of an initdb.
func CreateDatabase(tb testing.TB, dsn string) string {
	tb.Helper()
	name := fmt.Sprintf("storetest_%d", databases.Add(1))
	if err := adminExec(dsn, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := adminExec(dsn, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Error(err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("storetest: DSN %q: %v", dsn, err)
	}
	u.Path = "/" + name
	return u.String()
}

// adminExec runs one statement on the server's postgres database, outside a transaction
// (as CREATE and DROP DATABASE must run).
func adminExec(dsn, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("storetest: connect to %s: %w", dsn, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("storetest: %s: %w", stmt, err)
	}
	return nil
}
