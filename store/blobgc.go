package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// BlobSweeper is a blob store CollectGarbageIn can sweep: the local folder (Folder) or a
// bucket (s3blob.Store).
type BlobSweeper interface {
	List(ctx context.Context) ([]string, error)
	Info(ctx context.Context, sha string) (BlobInfo, error)
	Remove(ctx context.Context, sha string) error
}

// CollectGarbageIn removes from b the blobs that no committed row records and that were
// stored more than minAge ago, and returns how many it removed. A publish stores its blob
// before it commits the row: on a store shared by replicas, a younger unrecorded blob may
// be another replica's publish in flight, so minAge must exceed the longest publish (an
// hour is plenty; minAge <= 0 is refused). The database is read after b is listed, so a
// row committed meanwhile protects its blob.
func (s *Store) CollectGarbageIn(ctx context.Context, b BlobSweeper, minAge time.Duration) (int, error) {
	if minAge <= 0 {
		return 0, fmt.Errorf("store: gc: minimum age %s: want more than the longest publish, e.g. 1h", minAge)
	}
	return s.sweep(ctx, b, time.Now().Add(-minAge))
}

// sweep removes from b the blobs no committed row records; with a non-zero cutoff, only
// those stored before it (the zero cutoff removes them all without asking b their age).
// The database is read after b is listed, so a row committed meanwhile protects its blob.
func (s *Store) sweep(ctx context.Context, b BlobSweeper, cutoff time.Time) (int, error) {
	listed, err := b.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: gc: %w", err)
	}
	known, err := s.recordedBlobs(ctx)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, sha := range listed {
		if known[sha] {
			continue
		}
		if !cutoff.IsZero() {
			young, err := storedAfter(ctx, b, sha, cutoff)
			if err != nil {
				return removed, err
			}
			if young {
				continue
			}
		}
		if err := b.Remove(ctx, sha); err != nil {
			return removed, fmt.Errorf("store: gc: %w", err)
		}
		removed++
	}
	return removed, nil
}

// storedAfter reports whether the blob was stored after cutoff, or is gone already: either
// way not one to remove.
func storedAfter(ctx context.Context, b BlobSweeper, sha string, cutoff time.Time) (bool, error) {
	info, err := b.Info(ctx, sha)
	if errors.Is(err, ErrBlobMissing) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: gc: %w", err)
	}
	return info.Modified.After(cutoff), nil
}

// recordedBlobs returns the digests of every blob the database records.
func (s *Store) recordedBlobs(ctx context.Context) (map[string]bool, error) {
	recs, err := s.RecordedBlobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: gc: %w", err)
	}
	known := make(map[string]bool, len(recs))
	for _, r := range recs {
		known[r.SHA256] = true
	}
	return known, nil
}
