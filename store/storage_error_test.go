package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pluginyard/registry/store"
)

// TestIsStorageError: a full SQLite database (the error the driver really returns, made
// with max_page_count rather than a full disk) and the errnos of a full, read-only or
// failing disk are the storage's; a refused row or a bad manifest is not.
func TestIsStorageError(t *testing.T) {
	db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(t.TempDir(), "full.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var full error
	for _, q := range []string{"PRAGMA max_page_count = 4", "CREATE TABLE t (v BLOB)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 64 && full == nil; i++ {
		_, full = db.Exec("INSERT INTO t (v) VALUES (randomblob(4096))")
	}
	if full == nil || !strings.Contains(full.Error(), "full") {
		t.Fatalf("a 4-page database took 64 pages of rows: %v", full)
	}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"sqlite full":          {fmt.Errorf("store: commit: %w", full), true},
		"ENOSPC":               {fmt.Errorf("ingest: %w", &fs.PathError{Op: "write", Path: "registry.db-wal", Err: syscall.ENOSPC}), true},
		"EIO":                  {&fs.PathError{Op: "read", Path: "registry.db", Err: syscall.EIO}, true},
		"EROFS":                {&fs.PathError{Op: "open", Path: "registry.db", Err: syscall.EROFS}, true},
		"database unavailable": {fmt.Errorf("%w: connection refused", store.ErrUnavailable), true},
		"conflict":             {&store.ConflictError{Table: "releases", Key: "id=1", Column: "sha256"}, false},
		"content":              {errors.New("ingest: acme-hello@1.0.0: manifest: yaml: line 1: did not find expected node content"), false},
		"nil":                  {nil, false},
	} {
		if got := store.IsStorageError(tc.err); got != tc.want {
			t.Errorf("%s: IsStorageError(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}
