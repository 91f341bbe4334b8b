package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// copyBlob is one row of the source's blobs table.
type copyBlob struct {
	sha  string
	size int64
}

// sourceBlobs lists the blobs the source's blobs table records, in digest order: the
// releases', icons' and previews' bytes. A file in the source's blob store that no row
// records is an orphan (registry fsck lists them) and is not copied.
func (c *copier) sourceBlobs(ctx context.Context) ([]copyBlob, error) {
	rows, err := c.read.QueryContext(ctx, "SELECT sha256, size FROM blobs ORDER BY sha256")
	if err != nil {
		return nil, fmt.Errorf("store: copy: list the source's blobs: %w", err)
	}
	defer rows.Close()
	var out []copyBlob
	for rows.Next() {
		var b copyBlob
		if err := rows.Scan(&b.sha, &b.size); err != nil {
			return nil, fmt.Errorf("store: copy: list the source's blobs: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// eachBlob runs fn for every blob on BlobWorkers goroutines; the first error stops the rest.
func (c *copier) eachBlob(ctx context.Context, blobs []copyBlob, fn func(ctx context.Context, b copyBlob) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan copyBlob)
	var wg sync.WaitGroup
	for range c.opt.BlobWorkers {
		wg.Go(func() {
			for b := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := fn(ctx, b); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, b := range blobs {
		select {
		case work <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// copyBlobs copies every recorded blob the destination lacks (or holds at another size),
// before any row: a destination row never names a blob its store lacks. It returns the
// blobs it went through, for verifyBlobs.
func (c *copier) copyBlobs(ctx context.Context) ([]copyBlob, error) {
	blobs, err := c.sourceBlobs(ctx)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, b := range blobs {
		total += b.size
	}
	c.report.Blobs, c.report.Bytes = int64(len(blobs)), total
	c.emit(func(p *CopyProgress) { p.Phase, p.BlobsTotal, p.BytesTotal = "blobs", int64(len(blobs)), total })
	var copied, skipped, bytes atomic.Int64
	err = c.eachBlob(ctx, blobs, func(ctx context.Context, b copyBlob) error {
		if c.to.Blobs.Stat(ctx, b.sha, b.size) == nil {
			skipped.Add(1)
		} else {
			if err := c.copyOneBlob(ctx, b); err != nil {
				return err
			}
			copied.Add(1)
			bytes.Add(b.size)
		}
		c.emit(func(p *CopyProgress) { p.Blobs++; p.Bytes += b.size })
		return nil
	})
	c.report.BlobsCopied, c.report.BlobsSkipped, c.report.BytesCopied = copied.Load(), skipped.Load(), bytes.Load()
	return blobs, err
}

// SpoolPattern names Copy's spool files (os.CreateTemp, filepath.Glob): the caller that
// holds the destination removes those a killed copy left.
const SpoolPattern = "migrate-*"

// copyOneBlob reads b from the source into a spool file, checking its sha256 on the way,
// and puts that file into the destination.
func (c *copier) copyOneBlob(ctx context.Context, b copyBlob) error {
	r, err := c.from.Blobs.Open(ctx, b.sha, b.size)
	if err != nil {
		return fmt.Errorf("store: copy: source blob %s (%d bytes): %w (run registry fsck on the source)", b.sha, b.size, err)
	}
	defer r.Close()
	f, err := os.CreateTemp(c.opt.SpoolDir, SpoolPattern)
	if err != nil {
		return fmt.Errorf("store: copy: spool blob %s: %w", b.sha, err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if err := Rehash(ctx, b.sha, io.TeeReader(r, f)); err != nil {
		_ = f.Close()
		return fmt.Errorf("store: copy: the source's blob: %w (run registry fsck on the source)", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store: copy: spool blob %s: %w", b.sha, err)
	}
	if err := c.to.Blobs.Put(ctx, b.sha, b.size, f.Name()); err != nil {
		return fmt.Errorf("store: copy: put blob %s: %w", b.sha, err)
	}
	return nil
}

// verifyBlobs re-reads every recorded blob (copyBlobs' list, read in the source's snapshot)
// from the destination and checks its sha256.
func (c *copier) verifyBlobs(ctx context.Context, blobs []copyBlob) error {
	c.emit(func(p *CopyProgress) { p.Phase, p.Blobs, p.Bytes = "verify blobs", 0, 0 })
	return c.eachBlob(ctx, blobs, func(ctx context.Context, b copyBlob) error {
		if err := c.verifyBlob(ctx, b); err != nil {
			return err
		}
		c.emit(func(p *CopyProgress) { p.Blobs++; p.Bytes += b.size })
		return nil
	})
}

func (c *copier) verifyBlob(ctx context.Context, b copyBlob) error {
	r, err := c.to.Blobs.Open(ctx, b.sha, b.size)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return &VerifyError{Blob: b.sha, Problem: err.Error()}
	}
	defer r.Close()
	if err := Rehash(ctx, b.sha, r); err != nil {
		if !errors.Is(err, ErrBlobCorrupt) {
			return fmt.Errorf("store: copy: verify %w", err)
		}
		return &VerifyError{Blob: b.sha, Problem: err.Error()}
	}
	return nil
}
