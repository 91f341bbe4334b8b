// Package store is the registry's only user of database/sql: the database (releases,
// packages, tokens, pins, audit, search), SQLite or PostgreSQL, and the content-addressed
// blob folder beside it.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pluginyard/registry/migrations"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors callers map to outcomes.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// DBFile is the database file name inside the data directory.
const DBFile = "registry.db"

// Store is the database plus the blob folder of one data directory.
type Store struct {
	w       *sql.DB // the single writer connection (on PostgreSQL, the one pool)
	r       *sql.DB // a pool of readers (on PostgreSQL, the same pool as w)
	dialect Dialect
	// writing admits one write transaction of this process at a time on PostgreSQL, before
	// it takes a connection: writers queued on the write lock would otherwise hold every
	// connection of the pool and starve the reads.
	writing chan struct{}
	Blobs   *Blobs
	dir     string
	now     func() time.Time
	// logHook runs after a commit that appended to the transparency log (OnLogAppend).
	logHook atomic.Pointer[func()]
}

// Open opens (creating if needed) the database and blob folder under dir and applies any
// pending migrations.
func Open(ctx context.Context, dir string) (*Store, error) {
	return openSQLite(ctx, filepath.Join(dir, DBFile), dir, false)
}

// OpenURL opens the database of databaseURL, with dataDir as this process's local state
// (the blob folder, locks): "sqlite:PATH" is the SQLite database file PATH (what Open
// opens with PATH = dataDir/registry.db); "postgres://…" or "postgresql://…" a PostgreSQL
// database, which several replicas may share. Pending migrations are applied, once even
// when replicas start together. A database holding an unfinished copy (UnfinishedCopyError)
// is refused; only the copy itself opens it.
func OpenURL(ctx context.Context, databaseURL, dataDir string) (*Store, error) {
	return openURL(ctx, databaseURL, dataDir, false)
}

// openURL is OpenURL; unfinishedCopy admits a database that holds an unfinished copy, for
// the copy that is finishing it.
func openURL(ctx context.Context, databaseURL, dataDir string, unfinishedCopy bool) (*Store, error) {
	d, ok := dialectOf(databaseURL)
	if !ok {
		return nil, fmt.Errorf("store: database URL %q: want sqlite:PATH or postgres://user@host:port/database", hidePassword(databaseURL))
	}
	if d == Postgres {
		return openPostgresStore(ctx, databaseURL, dataDir, unfinishedCopy)
	}
	path := strings.TrimPrefix(databaseURL, "sqlite:")
	if path == "" {
		return nil, fmt.Errorf("store: database URL %q names no file; write sqlite:PATH, e.g. sqlite:%s", databaseURL, filepath.Join(dataDir, DBFile))
	}
	return openSQLite(ctx, path, dataDir, unfinishedCopy)
}

// hidePassword is databaseURL without a password, for an error message.
func hidePassword(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.User == nil {
		if err != nil {
			return "(unparsable URL)"
		}
		return databaseURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	return u.String()
}

// newStore makes the blob folder under dataDir and a Store without a database yet.
func newStore(dataDir string) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data directory %s: %w", dataDir, err)
	}
	blobs, err := OpenBlobs(filepath.Join(dataDir, "blobs"))
	if err != nil {
		return nil, err
	}
	return &Store{Blobs: blobs, dir: dataDir, now: func() time.Time { return time.Now().UTC() }}, nil
}

func openSQLite(ctx context.Context, path, dataDir string, unfinishedCopy bool) (*Store, error) {
	s, err := newStore(dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("store: database folder %s: %w", filepath.Dir(path), err)
	}
	if s.w, err = openDB(path, false); err != nil {
		return nil, sqliteAdvice(path, err)
	}
	s.w.SetMaxOpenConns(1)
	if err := s.start(ctx, unfinishedCopy); err != nil {
		_ = s.w.Close()
		return nil, sqliteAdvice(path, err)
	}
	if s.r, err = openDB(path, true); err != nil {
		_ = s.w.Close()
		return nil, sqliteAdvice(path, err)
	}
	s.r.SetMaxOpenConns(8)
	return s, nil
}

// sqliteAdvice adds to an error opening the SQLite database at path what is wrong with the
// file and the fix, when SQLite's own words ("unable to open database file", "database disk
// image is malformed") say neither.
func sqliteAdvice(path string, err error) error {
	code, _ := sqliteCode(err)
	switch {
	case isCorrupt(err):
		return fmt.Errorf("%w: %s is damaged or not a registry database; restore it from a backup with the registry stopped (registry restore --force SNAPSHOT)", err, path)
	case code == sqlite3.SQLITE_CANTOPEN, code == sqlite3.SQLITE_READONLY, code == sqlite3.SQLITE_PERM:
		return fmt.Errorf("%w: %s", err, accessAdvice(path))
	}
	return err
}

// accessAdvice says why this process may not open path and its folder for reading and
// writing (SQLite also writes path-wal and path-shm beside it), and how to fix it.
func accessAdvice(path string) string {
	who := fmt.Sprintf("this process runs as uid %d", os.Geteuid())
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("%s cannot be read: %v", p, err)
		}
		if p == path && fi.IsDir() {
			return path + " is a folder, not a database file: name the file (sqlite:PATH) or move the folder away"
		}
		if syscall.Access(p, 0o6) != nil { // R_OK|W_OK
			owner := ""
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				owner = fmt.Sprintf(", owned by uid %d gid %d", st.Uid, st.Gid)
			}
			return fmt.Sprintf("%s is not readable and writable here (mode %v%s; %s): give it to the registry's user (chown), or run the registry as its owner", p, fi.Mode().Perm(), owner, who)
		}
	}
	return "check that the file and its folder are readable and writable by " + who
}

func openPostgresStore(ctx context.Context, dsn, dataDir string, unfinishedCopy bool) (*Store, error) {
	s, err := newStore(dataDir)
	if err != nil {
		return nil, err
	}
	if s.w, err = openPostgres(ctx, dsn); err != nil {
		return nil, err
	}
	s.r, s.dialect, s.writing = s.w, Postgres, make(chan struct{}, 1)
	if err := s.start(ctx, unfinishedCopy); err != nil {
		_ = s.w.Close()
		return nil, err
	}
	return s, nil
}

// start brings the schema up to date and the transparency log level with the releases. A
// database holding an unfinished copy is refused before anything writes to it, unless
// unfinishedCopy admits it (the copy itself).
func (s *Store) start(ctx context.Context, unfinishedCopy bool) error {
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if !unfinishedCopy {
		if err := s.refuseUnfinishedCopy(ctx); err != nil {
			return err
		}
	}
	return s.backfillLog(ctx)
}

// UnfinishedCopyError is a database `registry migrate` is still copying into: its marker
// stays in the meta table until the copy is verified. Serving from it would serve a partial
// catalogue, and writing to it (the start-up sweep, a rebuilt log) would break the copy's
// resume (rule migrate.unfinished).
type UnfinishedCopyError struct {
	Source string // the copy's source, as its marker names it
}

// RuleUnfinishedCopy is the rule id of UnfinishedCopyError.
const RuleUnfinishedCopy = "migrate.unfinished"

func (e *UnfinishedCopyError) Error() string {
	return fmt.Sprintf("%s: this database is an unfinished copy of %s made by `registry migrate`; run the same migrate command again to finish it (nothing may serve from it before it is verified)",
		RuleUnfinishedCopy, e.Source)
}

// refuseUnfinishedCopy returns an UnfinishedCopyError when the database holds a copy's
// marker.
func (s *Store) refuseUnfinishedCopy(ctx context.Context) error {
	var raw string
	err := s.w.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = '"+copySourceKey+"'").Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: read the meta table for an unfinished copy: %w", err)
	}
	var m copyMark
	if json.Unmarshal([]byte(raw), &m) != nil || m.Source == "" {
		m.Source = "another database" // an unreadable marker still marks an unfinished copy
	}
	return &UnfinishedCopyError{Source: m.Source}
}

// openDB opens one pool on the database file. The writer runs synchronous=FULL: in WAL
// mode NORMAL fsyncs the WAL only at checkpoints, so a commit the server has answered 201
// for can vanish on power loss (the process surviving a SIGKILL is not enough); FULL
// fsyncs the WAL on every commit, one fsync per write transaction, which publishes (one
// transaction each, already fsyncing their blob) can afford. Readers never commit, and
// checkpoints sync at NORMAL already, so they keep NORMAL. Every connection keeps its
// recent statements compiled (stmtCacheConn).
func openDB(path string, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	if readOnly {
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	}
	connector, err := sqlite.NewConnector(SQLiteURI(path) + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := sql.OpenDB(stmtCacheConnector{connector})
	if err := db.Ping(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return db, nil
}

// SQLiteURI is the file: URI of the database file at path. SQLite reads '?' as the start
// of the query, '#' as that of the fragment and '%' as an escape, so each is escaped:
// without it, a data directory named "/srv/reg#2" would open the file "/srv/reg", which
// the data directory "/srv/reg#1" opens too.
func SQLiteURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Close closes both connection pools.
func (s *Store) Close() error {
	if s.r == s.w {
		return s.w.Close()
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// Dialect is the SQL dialect of the store's database.
func (s *Store) Dialect() Dialect { return s.dialect }

// Dir returns the data directory.
func (s *Store) Dir() string { return s.dir }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// migrate applies, in order and each in its own transaction, every embedded migration not
// yet recorded in schema_migrations.
func (s *Store) migrate(ctx context.Context) error {
	if s.dialect == Postgres {
		return s.migratePostgres(ctx)
	}
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	return s.applyMigrations(ctx, migrations.FS, func(ctx context.Context, fn func(*sql.Tx) error) error {
		return s.tx(ctx, fn)
	})
}

// migratePostgres migrates under a session advisory lock, so that of replicas starting
// together one migrates and the others then find nothing left to do. Each migration also
// takes the write lock, so that it never interleaves with another replica's writes.
func (s *Store) migratePostgres(ctx context.Context) (err error) {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", unavailable(err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", pgMigrateKey); err != nil {
		return fmt.Errorf("store: migrate: lock: %w", unavailable(err))
	}
	defer func() {
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", pgMigrateKey); uerr != nil && err == nil {
			err = fmt.Errorf("store: migrate: unlock: %w", unavailable(uerr))
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrations table: %w", unavailable(err))
	}
	return s.applyMigrations(ctx, migrations.Postgres, func(ctx context.Context, fn func(*sql.Tx) error) error {
		return s.connTx(ctx, conn, fn)
	})
}

// applyMigrations applies every NNNN_name.sql of fsys in order, each with txFn.
func (s *Store) applyMigrations(ctx context.Context, fsys fs.FS, txFn func(context.Context, func(*sql.Tx) error) error) error {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return fmt.Errorf("store: list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := s.applyFrom(ctx, fsys, name, txFn); err != nil {
			return err
		}
	}
	return nil
}

// applyMigration applies one SQLite migration.
func (s *Store) applyMigration(ctx context.Context, name string) error {
	return s.applyFrom(ctx, migrations.FS, name, func(ctx context.Context, fn func(*sql.Tx) error) error { return s.tx(ctx, fn) })
}

// applyFrom applies migration name of fsys, in the transaction txFn gives, unless
// schema_migrations records it.
func (s *Store) applyFrom(ctx context.Context, fsys fs.FS, name string, txFn func(context.Context, func(*sql.Tx) error) error) error {
	num, _, ok := strings.Cut(name, "_")
	version, err := strconv.Atoi(num)
	if !ok || err != nil {
		return fmt.Errorf("store: migration %s: name must be NNNN_name.sql", name)
	}
	body, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("store: migration %s: %w", name, err)
	}
	return txFn(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("store: migration %s: %w", name, err)
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			version, name, s.stamp())
		return err
	})
}

// tx runs fn in a write transaction, committing when it returns nil. On PostgreSQL the
// transaction first takes the write lock: writes from every replica are serialised, so
// that a select-then-insert means what it means under SQLite's single writer.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.writing != nil {
		select {
		case s.writing <- struct{}{}:
			defer func() { <-s.writing }()
		case <-ctx.Done():
			return fmt.Errorf("store: begin: %w", ctx.Err())
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", s.unavailable(err))
	}
	return s.run(ctx, tx, fn)
}

// connTx is tx on one connection of the pool (the migrations').
func (s *Store) connTx(ctx context.Context, conn *sql.Conn, fn func(*sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", s.unavailable(err))
	}
	return s.run(ctx, tx, fn)
}

func (s *Store) run(ctx context.Context, tx *sql.Tx, fn func(*sql.Tx) error) error {
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", pgWriteKey); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("store: write lock: %w", unavailable(err))
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return s.unavailable(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", s.unavailable(err))
	}
	return nil
}

// stamp is the one time format the store writes: RFC 3339 UTC with seconds.
func (s *Store) stamp() string { return s.now().Format(time.RFC3339) }

func parseStamp(v string) time.Time {
	t, _ := time.Parse(time.RFC3339, v)
	return t
}

func nullString(v sql.NullString) string { return v.String }

func toNull(v string) sql.NullString { return sql.NullString{String: v, Valid: v != ""} }

// unavailable is the package's unavailable on PostgreSQL; SQLite, a file, is never out of
// reach.
func (s *Store) unavailable(err error) error {
	if s.dialect != Postgres {
		return err
	}
	return unavailable(err)
}
