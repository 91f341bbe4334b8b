package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// CollectGarbage removes interrupted temporary writes and blob files that no committed row
// references (a crash between a blob's rename and its row's commit leaves one). Run it at
// start, before anything publishes. It returns how many blob files it removed.
func (s *Store) CollectGarbage(ctx context.Context) (int, error) {
	if err := s.Blobs.CleanTemp(); err != nil {
		return 0, err
	}
	return s.sweep(ctx, s.Blobs.Folder(), time.Time{})
}

// Backup writes a consistent snapshot of the live database to path (VACUUM INTO), safe
// while the registry runs. Blobs are content-addressed and listed in it.
// On PostgreSQL it refuses: the database is backed up with pg_dump (docs/deploy.md).
//
// The snapshot is written to a temporary file beside path, synced, and only then linked
// to path, which must not exist: an interrupted or failed backup (a cancelled context, a
// full disk) leaves neither path, which would block the retry and which restore would
// take for a snapshot, nor the temporary file.
func (s *Store) Backup(ctx context.Context, path string) error {
	if s.dialect == Postgres {
		return fmt.Errorf("store: backup: %w: the database is PostgreSQL; back it up with pg_dump (and the blobs with bucket versioning), see docs/deploy.md", ErrUnsupported)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	if _, err := os.Stat(abs); err == nil {
		return fmt.Errorf("store: backup: %s already exists; choose a new file", abs)
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.backup")
	if err != nil {
		return fmt.Errorf("store: backup to %s: %w", abs, err)
	}
	_ = tmp.Close() // VACUUM INTO writes into an empty file
	defer func() {
		for _, suffix := range []string{"", "-journal"} {
			_ = os.Remove(tmp.Name() + suffix)
		}
	}()
	if _, err := s.w.ExecContext(ctx, "VACUUM INTO ?", tmp.Name()); err != nil {
		return fmt.Errorf("store: backup to %s: %w", abs, err)
	}
	if backupWritten != nil {
		backupWritten()
	}
	if err := syncFile(tmp.Name()); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: backup to %s: %w", abs, err)
	}
	if err := linkNew(tmp.Name(), abs); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	if err := syncDir(filepath.Dir(abs)); err != nil {
		_ = os.Remove(abs) // not known to be on disk: no snapshot rather than one in doubt
		return err
	}
	return nil
}

// backupWritten, when set (by tests), runs once VACUUM INTO has written Backup's temporary
// file: a test cancels the context there, as a SIGINT at the end of the write would.
var backupWritten func()

// linkNew puts the file tmp at path, which must not exist: a hard link fails rather than
// replace a file made since Backup looked; where the file system has no hard links, it
// looks again and renames.
func linkNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; choose a new file", path)
	}
	if err == nil {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s already exists; choose a new file", path)
	}
	return os.Rename(tmp, path)
}

// MissingBlobs lists blobs the database references whose files are absent (after a restore
// onto a data directory without them).
func (s *Store) MissingBlobs(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT sha256 FROM blobs")
	if err != nil {
		return nil, fmt.Errorf("store: missing blobs: %w", err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var sha string
		if err := rows.Scan(&sha); err != nil {
			return nil, fmt.Errorf("store: missing blobs: %w", err)
		}
		if _, err := os.Stat(s.Blobs.Path(sha)); err != nil {
			missing = append(missing, sha)
		}
	}
	return missing, rows.Err()
}

// CheckSnapshot refuses a file restore must not put in place of a database: one that is
// empty (SQLite would open it as a new, empty registry), not a SQLite database, or one
// without the migrations and releases tables of a registry's. It opens the file read-only.
func CheckSnapshot(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("store: snapshot: %w", err)
	}
	if fi.Size() == 0 {
		return errors.New("it is empty, not a registry database")
	}
	db, err := sql.Open("sqlite", SQLiteURI(path)+"?mode=ro")
	if err != nil {
		return fmt.Errorf("store: snapshot: %w", err)
	}
	defer db.Close()
	var tables int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'releases')").Scan(&tables)
	if err != nil {
		return fmt.Errorf("it is not a SQLite database: %w", err)
	}
	if tables != 2 {
		return errors.New("it is a SQLite database but not a registry's: it lacks the schema_migrations and releases tables")
	}
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return fmt.Errorf("it does not read as a SQLite database: %w", err)
	}
	if check != "ok" {
		return fmt.Errorf("it is damaged (quick_check: %s)", check)
	}
	return nil
}

// dbCheckMax is the most problems CheckDatabase reports; SQLite stops there too.
const dbCheckMax = 20

// CheckDatabase reads every page of the SQLite database (PRAGMA quick_check) and returns
// the problems it finds, none when the database is sound. A damaged page can go unnoticed
// for long: only the queries that read it fail. PostgreSQL checks its own pages (checksums,
// amcheck): there it returns none.
func (s *Store) CheckDatabase(ctx context.Context) ([]string, error) {
	if s.dialect == Postgres {
		return nil, nil
	}
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%d)", dbCheckMax))
	if err != nil {
		if isCorrupt(err) { // damaged where the check itself starts (a table's root page)
			return []string{err.Error()}, nil
		}
		return nil, fmt.Errorf("store: check the database: %w", err)
	}
	defer rows.Close()
	var probs []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("store: check the database: %w", err)
		}
		if p != "ok" {
			probs = append(probs, p)
		}
	}
	if err := rows.Err(); err != nil {
		if !isCorrupt(err) {
			return nil, fmt.Errorf("store: check the database: %w", err)
		}
		return append(probs, err.Error()), nil // a page too damaged to read is a finding too
	}
	return probs, nil
}

// isCorrupt reports whether err is SQLite's word that the database file is damaged
// (SQLITE_CORRUPT, SQLITE_NOTADB), rather than that a statement failed.
func isCorrupt(err error) bool {
	code, ok := sqliteCode(err)
	return ok && (code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB)
}

// sqliteCode is the primary result code of the SQLite error in err's chain (that of an
// extended code such as SQLITE_IOERR_WRITE), ok false when err holds none.
func sqliteCode(err error) (code int, ok bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return 0, false
	}
	return se.Code() & 0xff, true
}
