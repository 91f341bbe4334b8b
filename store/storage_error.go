package store

import (
	"errors"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsStorageError reports whether err says that the storage failed (the disk is full,
// read-only or failing, the database is locked or cannot be reached) rather than that the
// data is at fault: SQLite's FULL, IOERR and BUSY results, PostgreSQL's insufficient
// resources (SQLSTATE class 53) and I/O error (58030), ErrUnavailable, or ENOSPC, EDQUOT,
// EIO or EROFS anywhere in its chain. The same operation may succeed once the storage
// recovers, so such an error is retried, never blamed on a release.
func IsStorageError(err error) bool {
	if err == nil {
		return false
	}
	if code, ok := sqliteCode(err); ok {
		switch code {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL: // locked past the timeout, a failed read or write, full
			return true
		}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (len(pgErr.Code) == 5 && pgErr.Code[:2] == "53" || pgErr.Code == "58030") {
		return true
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}
