package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// BlobSize returns the size recorded for a blob (ErrNotFound when the database has no such
// blob): what OpenVerified checks the file against. One primary-key lookup.
func (s *Store) BlobSize(ctx context.Context, sha string) (int64, error) {
	var size int64
	err := s.r.QueryRowContext(ctx, "SELECT size FROM blobs WHERE sha256 = ?", sha).Scan(&size)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("store: blob size %s: %w", sha, err)
	}
	return size, nil
}
