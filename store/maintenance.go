package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
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
	if _, err := s.w.ExecContext(ctx, "VACUUM INTO ?", abs); err != nil {
		return fmt.Errorf("store: backup to %s: %w", abs, err)
	}
	return nil
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
