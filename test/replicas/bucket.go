package replicas

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Bucket is the blob store the replicas share.
type Bucket struct {
	dir string // a shared file: folder, until s3test lands
}

// errNoS3 is what the bucket faults answer while the blob store is a shared folder.
var errNoS3 = errors.New("MISSING: s3blob/s3test.StartS3 (issue #16, S3 blobs) has not landed: the replicas share a file: blob folder, which cannot be made unreachable")

// StartBucket is the shared blob store.
func StartBucket(tb testing.TB) *Bucket {
	tb.Helper()
	return &Bucket{dir: tb.TempDir()}
}

// URL is what --blobs takes.
func (b *Bucket) URL() string { return "file:" + b.dir }

// Env is the environment the replicas reach the bucket with.
func (b *Bucket) Env() []string { return nil }

// S3 says whether the bucket is a real S3 server (behind a proxy that can be cut).
func (b *Bucket) S3() bool { return false }

// Cut makes the bucket unreachable.
func (b *Bucket) Cut() error { return errNoS3 }

// CutAfter makes the bucket unreachable once n more bytes were sent to it.
func (b *Bucket) CutAfter(int64) error { return errNoS3 }

// Restore makes the bucket reachable again.
func (b *Bucket) Restore() {}

// Objects lists the names of the objects stored, and of unfinished uploads.
func (b *Bucket) Objects() (objects, incomplete []string, err error) {
	err = filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b.dir, path)
		objects = append(objects, rel)
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return objects, nil, err
}
