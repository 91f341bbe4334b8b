package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pluginyard/registry/migrations"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// openURL opens a store on url with a fresh data directory, closed in tb.Cleanup.
func openURL(tb testing.TB, databaseURL string) *store.Store {
	tb.Helper()
	s, err := store.OpenURL(context.Background(), databaseURL, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// TestOpenURLMigratesOnce: three replicas starting together on a new database all open
// it, and each migration is applied once.
func TestOpenURLMigratesOnce(t *testing.T) {
	dsn := storetest.CreateDatabase(t, storetest.SharedPostgres(t))
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			s, err := store.OpenURL(context.Background(), dsn, t.TempDir())
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("replicas starting together: %v", err)
	}
	names, err := fs.Glob(migrations.Postgres, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("postgres migrations: %v, %v", names, err)
	}
	var applied, distinct int
	queryRow(t, dsn, "SELECT count(*), count(DISTINCT version) FROM schema_migrations", &applied, &distinct)
	if applied != len(names) || distinct != len(names) {
		t.Errorf("schema_migrations has %d rows (%d versions); want one per migration, %d", applied, distinct, len(names))
	}
	if s := openURL(t, dsn); s.Dialect() != store.Postgres {
		t.Errorf("dialect %v, want postgres", s.Dialect())
	}
}

// TestPostgresReplicasOneWinner: two replicas (two stores, two pools) racing to publish
// one version with different bytes give one winner and conflicts, never an error: every
// write transaction holds the write lock, so the check-then-insert is not interleaved.
func TestPostgresReplicasOneWinner(t *testing.T) {
	dsn := storetest.CreateDatabase(t, storetest.SharedPostgres(t))
	replicas := []*store.Store{openURL(t, dsn), openURL(t, dsn)}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := replicas[i%2]
			data := fmt.Appendf(nil, "bytes %d", i)
			sha, err := s.Blobs.Put(data)
			if err != nil {
				errs[i] = err
				return
			}
			rel := &store.Release{PackageID: "acme", Version: "1.0.0", Kind: "plugin", SHA256: sha, Size: int64(len(data)),
				Manifest: []byte("id: acme"), PublishedBy: "test"}
			_, errs[i] = s.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "t", Action: "publish", Outcome: "ok"})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("publish %d: %v, want success or ErrConflict", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d publishes succeeded, want exactly 1", won)
	}
}

// TestPostgresUnavailable: with the server stopped, reads and writes fail with an error
// wrapping ErrUnavailable (a 503, not a 500); once it is back the same store works again,
// without a restart.
func TestPostgresUnavailable(t *testing.T) {
	srv := storetest.StartPostgresServer(t)
	s := openURL(t, storetest.CreateDatabase(t, srv.DSN()))
	ctx := context.Background()
	audit := store.AuditEntry{Actor: "t", Action: "reload", Outcome: "ok"}
	if err := s.Audit(ctx, audit); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, audit); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("write with the server stopped: %v, want ErrUnavailable", err)
	}
	if _, err := s.Serial(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("read with the server stopped: %v, want ErrUnavailable", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("ping with the server stopped: %v, want ErrUnavailable", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, audit); err != nil {
		t.Errorf("write once the server is back: %v", err)
	}
	entries, err := s.AuditLog(ctx, 10, 1<<62)
	if err != nil || len(entries) != 2 {
		t.Errorf("audit log once the server is back: %d entries, %v; want the 2 written while it was up", len(entries), err)
	}
}

// TestOpenURLUnreachable: a server that is not there is ErrUnavailable from the start, and
// the error names the database without its password.
func TestOpenURLUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := store.OpenURL(ctx, "postgres://postgres:hunter2@127.0.0.1:1/none?sslmode=disable&connect_timeout=5", t.TempDir())
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("open with nothing listening: %v, want ErrUnavailable", err)
	}
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1/none") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("open with nothing listening: %v, want the database named without its password", err)
	}
}

// TestOpenURLSQLite: sqlite:PATH puts the database at PATH, the blobs in the data directory.
func TestOpenURLSQLite(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "db", "meta.db")
	dataDir := t.TempDir()
	s2, err := store.OpenURL(context.Background(), "sqlite:"+dbPath, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := os.Stat(dbPath); err != nil {
		t.Errorf("database file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, store.DBFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a database file in the data directory too: %v", err)
	}
	if _, err := s2.Blobs.Put([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dataDir, "blobs")); err != nil || !st.IsDir() {
		t.Errorf("blob folder in the data directory: %v", err)
	}
	if s2.Dialect() != store.SQLite {
		t.Errorf("dialect %v, want sqlite", s2.Dialect())
	}
}

// TestOpenURLRefusals: a URL of no known scheme, or sqlite: without a path, is refused
// with the forms that work, and a password never shows in the message.
func TestOpenURLRefusals(t *testing.T) {
	for _, u := range []string{"mysql://root:hunter2@db/registry", "sqlite:", "registry.db"} {
		_, err := store.OpenURL(context.Background(), u, t.TempDir())
		if err == nil {
			t.Errorf("OpenURL(%q) opened", u)
			continue
		}
		if !strings.Contains(err.Error(), "sqlite:PATH") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("OpenURL(%q): %v; want the sqlite:PATH form named and no password", u, err)
		}
	}
}

func queryRow(t *testing.T, dsn, q string, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, q).Scan(dest...); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresReadsNotStarvedByQueuedWrites: while another replica holds the write lock,
// this replica's queued writes wait on one connection, not on the whole pool, so its
// reads keep being answered; once the lock is released every write goes through.
func TestPostgresReadsNotStarvedByQueuedWrites(t *testing.T) {
	dsn := storetest.CreateDatabase(t, storetest.SharedPostgres(t))
	s := openURL(t, dsn)
	ctx := context.Background()
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	lock, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", store.PGWriteKey); err != nil {
		t.Fatal(err)
	}
	const writers = 24 // more than the pool's connections
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			errs <- s.Audit(ctx, store.AuditEntry{Actor: "t", Action: "reload", Target: fmt.Sprint(i), Outcome: "ok"})
		}()
	}
	waitForLockWaiter(t, other)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.Serial(rctx); err != nil {
		t.Errorf("read while %d writes queue on the write lock: %v", writers, err)
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("queued write: %v", err)
		}
	}
}

// waitForLockWaiter waits until a session waits on an advisory lock.
func waitForLockWaiter(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	for range 200 {
		var n int
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no write came to wait on the write lock")
}

// BenchmarkPostgresWriteCommit measures one committed write transaction (an audit row)
// on PostgreSQL, write lock included, from 1 and from 8 goroutines of one replica and
// from 2 replicas (the lock serialises them all).
func BenchmarkPostgresWriteCommit(b *testing.B) {
	dsn := storetest.CreateDatabase(b, storetest.SharedPostgres(b))
	replicas := []*store.Store{openURL(b, dsn), openURL(b, dsn)}
	for _, c := range []struct {
		name          string
		replicas, par int
	}{{"replicas=1/goroutines=1", 1, 1}, {"replicas=1/goroutines=8", 1, 8}, {"replicas=2/goroutines=8", 2, 8}} {
		b.Run(c.name, func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(c.par)
			b.RunParallel(func(pb *testing.PB) {
				s := replicas[int(next.Add(1))%c.replicas]
				for pb.Next() {
					if err := s.Audit(context.Background(), store.AuditEntry{Actor: "bench", Action: "bench", Outcome: "ok"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestPostgresByteOrderWhateverTheLocale: on a database whose default collation is a
// natural-language one (ICU, as a production cluster may have), text still sorts and
// compares byte by byte, as SQLite's does: the schema's text columns are COLLATE "C".
func TestPostgresByteOrderWhateverTheLocale(t *testing.T) {
	server := storetest.SharedPostgres(t)
	dsn := storetest.CreateDatabase(t, server)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()
	admin, err := pgx.Connect(context.Background(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "DROP DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C'"); err != nil {
		t.Skipf("this server cannot make an ICU database: %v", err)
	}
	s := openURL(t, dsn)
	repos := []string{"alpha/x", "Zeta/x", "_under/x", "beta/x"}
	for _, r := range repos {
		if err := s.PutSyncState(ctx, store.SyncState{Repo: r, CheckedAt: time.Now(), Outcome: store.SyncUnchanged}); err != nil {
			t.Fatal(err)
		}
	}
	states, err := s.SyncStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range states {
		got = append(got, st.Repo)
	}
	if want := []string{"Zeta/x", "_under/x", "alpha/x", "beta/x"}; !slices.Equal(got, want) {
		t.Errorf("sync states in order %v, want byte order %v", got, want)
	}
}

// TestPostgresBackupRefused: the SQLite file backup is refused on PostgreSQL with the
// tool that backs it up instead.
func TestPostgresBackupRefused(t *testing.T) {
	s := openURL(t, storetest.CreateDatabase(t, storetest.SharedPostgres(t)))
	err := s.Backup(context.Background(), filepath.Join(t.TempDir(), "snap.db"))
	if !errors.Is(err, store.ErrUnsupported) || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("Backup on PostgreSQL: %v, want ErrUnsupported naming pg_dump", err)
	}
}

// TestPostgresReadTxOneSnapshot: a read-only transaction (a change page, a search) reads
// one snapshot on PostgreSQL as on SQLite: it runs REPEATABLE READ, not PostgreSQL's
// per-statement READ COMMITTED.
func TestPostgresReadTxOneSnapshot(t *testing.T) {
	s := openURL(t, storetest.CreateDatabase(t, storetest.SharedPostgres(t)))
	ctx := context.Background()
	for _, c := range []struct {
		opts *sql.TxOptions
		want string
	}{
		{&sql.TxOptions{ReadOnly: true}, "repeatable read"},
		{nil, "read committed"}, // writes are serialised by the write lock and must see every commit before it
	} {
		tx, err := store.RawDB(s).BeginTx(ctx, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		var level string
		err = tx.QueryRowContext(ctx, "SELECT current_setting('transaction_isolation')").Scan(&level)
		_ = tx.Rollback()
		if err != nil || level != c.want {
			t.Errorf("transaction %+v runs %q (%v), want %q", c.opts, level, err, c.want)
		}
	}
}

// TestPostgresUnavailableOnPreparedStatement: a prepared statement (as the download flush
// uses) whose connection the server ended fails with ErrUnavailable too.
func TestPostgresUnavailableOnPreparedStatement(t *testing.T) {
	server := storetest.SharedPostgres(t)
	dsn := storetest.CreateDatabase(t, server)
	s := openURL(t, dsn)
	ctx := context.Background()
	conn, err := store.RawDB(s).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.PrepareContext(ctx, "SELECT CAST(? AS BIGINT) + 1")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int64
	if err := st.QueryRowContext(ctx, 1).Scan(&n); err != nil || n != 2 {
		t.Fatalf("prepared statement: %d, %v", n, err)
	}
	var pid int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1, 10000)", pid); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExecContext(ctx, 1); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("prepared statement on a connection the server ended: %v, want ErrUnavailable", err)
	}
}
