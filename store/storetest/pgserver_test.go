package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pluginyard/registry/store/storetest"
)

// TestStartPostgres: the harness starts a server that a client logs in to as postgres
// over TCP on loopback and that keeps what it is given; once the test is over, the
// server is stopped and its folder removed.
func TestStartPostgres(t *testing.T) {
	var dsn, dataDir string
	t.Run("server", func(t *testing.T) {
		dsn = storetest.StartPostgres(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect to %s: %v", dsn, err)
		}
		defer conn.Close(ctx)
		var (
			user, listen string
			version      int
		)
		err = conn.QueryRow(ctx, `SELECT current_user, current_setting('listen_addresses'),
			current_setting('server_version_num')::int, current_setting('data_directory')`).Scan(&user, &listen, &version, &dataDir)
		if err != nil {
			t.Fatal(err)
		}
		if user != "postgres" || listen != "127.0.0.1" || version < 130000 {
			t.Errorf("logged in as %q to a server listening on %q, version %d; want postgres, 127.0.0.1, 13 or later", user, listen, version)
		}
		roundTrip(ctx, t, conn)
	})
	if dsn == "" {
		t.Skip("the server did not start (the subtest says why)")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", u.Host, 5*time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s still accepts connections after its test ended", u.Host)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data directory %s after its test ended: %v, want it removed", dataDir, err)
	}
}

// roundTrip writes a row and reads it back.
func roundTrip(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t.Helper()
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO kv VALUES ($1, $2)", "acme", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kv WHERE k = $1", "acme").Scan(&v); err != nil || v != "1.0.0" {
		t.Errorf("read back %q, %v; want 1.0.0", v, err)
	}
}

// TestStartPostgresTwice: two servers at once, each with its own port and data.
func TestStartPostgresTwice(t *testing.T) {
	a, b := storetest.StartPostgres(t), storetest.StartPostgres(t)
	if a == b {
		t.Fatalf("two servers share the DSN %s", a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, dsn := range []string{a, b} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect to %s: %v", dsn, err)
		}
		roundTrip(ctx, t, conn) // each creates kv: the second would fail on a shared cluster
		_ = conn.Close(ctx)
	}
}

// TestCreateDatabase: databases made on one server are apart from each other, and each
// is dropped when its test ends.
func TestCreateDatabase(t *testing.T) {
	server := storetest.StartPostgres(t)
	var names []string
	for i := range 2 {
		t.Run(fmt.Sprint("db", i), func(t *testing.T) {
			dsn := storetest.CreateDatabase(t, server)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatalf("connect to %s: %v", dsn, err)
			}
			defer conn.Close(ctx)
			var name string
			if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
			roundTrip(ctx, t, conn) // creates kv: the second subtest would fail in the first's database
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || names[0] == names[1] || left != 0 {
		t.Errorf("databases %v, %d of them left after their tests; want two distinct ones, none left", names, left)
	}
}
