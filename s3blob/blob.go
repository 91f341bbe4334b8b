package s3blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/minio/minio-go/v7"

	"github.com/pluginyard/registry/store"
)

// Put uploads the local file src, which holds exactly the size bytes whose sha256 is sha,
// in one PUT with If-None-Match: * (S3 stores a PUT whole or not at all) and
// x-amz-checksum-sha256 (the server refuses bytes that do not hash to sha). A blob already
// present with the recorded size is kept and Put returns nil; one of another size holds
// other bytes and is overwritten.
func (s *Store) Put(ctx context.Context, sha string, size int64, src string) error {
	if !store.ValidSHA256(sha) {
		return fmt.Errorf("s3blob: put blob %q: not a sha256 digest (64 lowercase hex digits)", sha)
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("s3blob: put blob %s: %w", sha, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("s3blob: put blob %s: %w", sha, err)
	}
	if st.Size() != size {
		return fmt.Errorf("s3blob: put blob %s: spool file %s is %d bytes, told %d", sha, src, st.Size(), size)
	}
	return s.put(ctx, sha, size, f)
}

// PutBytes uploads data as a blob and returns its sha256.
func (s *Store) PutBytes(ctx context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	return sha, s.put(ctx, sha, int64(len(data)), bytes.NewReader(data))
}

// put creates the object unless it is already there (one HEAD spares re-sending the bytes
// of a re-publish), conditionally, and settles a lost race.
func (s *Store) put(ctx context.Context, sha string, size int64, r io.ReadSeeker) error {
	switch err := s.Stat(ctx, sha, size); {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrBlobCorrupt):
		// What is there is not these bytes (they hash to sha): replace it.
		return s.reupload(ctx, sha, size, r, false)
	case !errors.Is(err, store.ErrBlobMissing):
		return err
	}
	if s.beforeUpload != nil {
		s.beforeUpload(sha)
	}
	err := s.upload(ctx, sha, size, r, true)
	if err == nil {
		return nil
	}
	if !lostRace(err) {
		// A server refusing a conditional PUT of a large body answers 412 before reading it
		// and resets the connection: the client sees the reset, not the 412. The object
		// being there whole says which it was.
		if s.Stat(ctx, sha, size) == nil {
			return nil
		}
		return s.fail("put blob", sha, err)
	}
	switch err := s.Stat(ctx, sha, size); {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrBlobCorrupt):
		return s.reupload(ctx, sha, size, r, false)
	case errors.Is(err, store.ErrBlobMissing):
		// The object that made us lose was removed since: create it once more.
		return s.reupload(ctx, sha, size, r, true)
	default:
		return err
	}
}

func (s *Store) reupload(ctx context.Context, sha string, size int64, r io.ReadSeeker, conditional bool) error {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("s3blob: put blob %s: rewind: %w", sha, err)
	}
	err := s.upload(ctx, sha, size, r, conditional)
	if err != nil && !(conditional && lostRace(err)) {
		return s.fail("put blob", sha, err)
	}
	return s.Stat(ctx, sha, size)
}

// upload sends one PUT of the object, never a multipart upload: only a single PUT is
// atomic and honours If-None-Match.
func (s *Store) upload(ctx context.Context, sha string, size int64, r io.Reader, conditional bool) error {
	sum, err := hex.DecodeString(sha)
	if err != nil {
		return err
	}
	opts := minio.PutObjectOptions{
		ContentType:      "application/octet-stream",
		DisableMultipart: true,
		// The server hashes what it receives and refuses other bytes (BadDigest). That
		// header is signed, so it authenticates the body too: signing the payload again
		// (a second sha256 pass, chunk by chunk) would add nothing.
		UserMetadata:         map[string]string{"x-amz-checksum-sha256": base64.StdEncoding.EncodeToString(sum)},
		DisableContentSha256: true,
	}
	if conditional {
		opts.SetMatchETagExcept("*")
	}
	_, err = s.c.PutObject(ctx, s.cfg.Bucket, s.Key(sha), r, size, opts)
	return err
}

// Open opens the blob recorded with this size: ErrBlobMissing when there is no object,
// ErrBlobCorrupt when it has another size. The Blob serves ranges with ranged GETs and
// reads under ctx: it fails once ctx is done.
func (s *Store) Open(ctx context.Context, sha string, size int64) (store.Blob, error) {
	if !store.ValidSHA256(sha) {
		return nil, fmt.Errorf("s3blob: blob %q: not a sha256 digest: %w", sha, store.ErrBlobCorrupt)
	}
	obj, err := s.c.GetObject(ctx, s.cfg.Bucket, s.Key(sha), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.fail("open blob", sha, err)
	}
	info, err := obj.Stat()
	if err == nil {
		err = s.sizeIs(sha, info.Size, size)
	}
	if err != nil {
		_ = obj.Close()
		return nil, s.statError(sha, err)
	}
	return &object{o: obj, s: s, sha: sha}, nil
}

// Stat is Open without reading: one HEAD, the same errors.
func (s *Store) Stat(ctx context.Context, sha string, size int64) error {
	if !store.ValidSHA256(sha) {
		return fmt.Errorf("s3blob: blob %q: not a sha256 digest: %w", sha, store.ErrBlobCorrupt)
	}
	info, err := s.c.StatObject(ctx, s.cfg.Bucket, s.Key(sha), minio.StatObjectOptions{})
	if err != nil {
		return s.statError(sha, err)
	}
	return s.sizeIs(sha, info.Size, size)
}

func (s *Store) sizeIs(sha string, got, want int64) error {
	if got != want {
		return fmt.Errorf("s3blob: blob %s is %d bytes, recorded as %d: %w", sha, got, want, store.ErrBlobCorrupt)
	}
	return nil
}

func (s *Store) statError(sha string, err error) error {
	if errors.Is(err, store.ErrBlobCorrupt) {
		return err
	}
	if isMissing(err) {
		return fmt.Errorf("s3blob: blob %s: no object %s in bucket %s: %w", sha, s.Key(sha), s.cfg.Bucket, store.ErrBlobMissing)
	}
	return s.fail("stat blob", sha, err)
}

// Info returns the object's size and when it was stored, whatever size is recorded for
// the blob: ErrBlobMissing when there is no object.
func (s *Store) Info(ctx context.Context, sha string) (store.BlobInfo, error) {
	if !store.ValidSHA256(sha) {
		return store.BlobInfo{}, fmt.Errorf("s3blob: blob %q: not a sha256 digest: %w", sha, store.ErrBlobMissing)
	}
	info, err := s.c.StatObject(ctx, s.cfg.Bucket, s.Key(sha), minio.StatObjectOptions{})
	if err != nil {
		return store.BlobInfo{}, s.statError(sha, err)
	}
	return store.BlobInfo{Size: info.Size, Modified: info.LastModified}, nil
}

// Check reads the whole object once and compares its size and sha256 with the recorded
// ones: nil when both match, else an error wrapping ErrBlobMissing or ErrBlobCorrupt.
func (s *Store) Check(ctx context.Context, sha string, size int64) error {
	b, err := s.Open(ctx, sha, size)
	if err != nil {
		return err
	}
	defer b.Close()
	return store.Rehash(ctx, sha, b)
}

// Remove deletes a blob, if present.
func (s *Store) Remove(ctx context.Context, sha string) error {
	if !store.ValidSHA256(sha) {
		return nil
	}
	if err := s.c.RemoveObject(ctx, s.cfg.Bucket, s.Key(sha), minio.RemoveObjectOptions{}); err != nil && !isMissing(err) {
		return s.fail("remove blob", sha, err)
	}
	return nil
}

// List returns the digests of every blob in the bucket's prefix, ordered by digest; objects
// that are not named as blobs are not listed.
func (s *Store) List(ctx context.Context) ([]string, error) {
	var out []string
	opts := minio.ListObjectsOptions{Prefix: s.keyPrefix() + "/", Recursive: true}
	for obj := range s.c.ListObjects(ctx, s.cfg.Bucket, opts) {
		if obj.Err != nil {
			return nil, s.fail("list blobs", "", obj.Err)
		}
		sha := path.Base(obj.Key)
		if store.ValidSHA256(sha) && obj.Key == s.Key(sha) {
			out = append(out, sha)
		}
	}
	return out, nil
}

// object is an open blob whose read errors say when the bucket became unreachable.
type object struct {
	o   *minio.Object
	s   *Store
	sha string
}

func (b *object) Read(p []byte) (int, error) {
	n, err := b.o.Read(p)
	return n, b.wrap(err)
}

func (b *object) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.o.ReadAt(p, off)
	return n, b.wrap(err)
}

func (b *object) Seek(offset int64, whence int) (int64, error) {
	n, err := b.o.Seek(offset, whence)
	return n, b.wrap(err)
}

func (b *object) Close() error { return b.o.Close() }

func (b *object) wrap(err error) error {
	if err == nil || err == io.EOF { //nolint:errorlint // readers return io.EOF itself

		return err
	}
	return b.s.fail("read blob", b.sha, err)
}
