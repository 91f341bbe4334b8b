// Package store is the registry's only user of database/sql: the SQLite database (releases,
// packages, tokens, pins, audit, search) and the content-addressed blob folder beside it.
package store

import (
	"context"
	"database/sql"
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
	"time"

	"github.com/pluginyard/registry/migrations"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
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
	w     *sql.DB // the single writer connection
	r     *sql.DB // a pool of readers
	Blobs *Blobs
	dir   string
	now   func() time.Time
	// logHook runs after a commit that appended to the transparency log (OnLogAppend).
	logHook atomic.Pointer[func()]
}

// Open opens (creating if needed) the database and blob folder under dir and applies any
// pending migrations.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data directory %s: %w", dir, err)
	}
	blobs, err := OpenBlobs(filepath.Join(dir, "blobs"))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, DBFile)
	w, err := openDB(path, false)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	s := &Store{w: w, Blobs: blobs, dir: dir, now: func() time.Time { return time.Now().UTC() }}
	if err := s.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := s.backfillLog(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}
	if s.r, err = openDB(path, true); err != nil {
		_ = w.Close()
		return nil, err
	}
	s.r.SetMaxOpenConns(8)
	return s, nil
}

// openDB opens one pool on the database file. The writer runs synchronous=FULL: in WAL
// mode NORMAL fsyncs the WAL only at checkpoints, so a commit the server has answered 201
// for can vanish on power loss (the process surviving a SIGKILL is not enough); FULL
// fsyncs the WAL on every commit, one fsync per write transaction, which publishes (one
// transaction each, already fsyncing their blob) can afford. Readers never commit, and
// checkpoints sync at NORMAL already, so they keep NORMAL.
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
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return db, nil
}

// Close closes both connection pools.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

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
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return fmt.Errorf("store: list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := s.applyMigration(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, name string) error {
	num, _, ok := strings.Cut(name, "_")
	version, err := strconv.Atoi(num)
	if !ok || err != nil {
		return fmt.Errorf("store: migration %s: name must be NNNN_name.sql", name)
	}
	body, err := fs.ReadFile(migrations.FS, name)
	if err != nil {
		return fmt.Errorf("store: migration %s: %w", name, err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
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

// tx runs fn in a write transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
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
