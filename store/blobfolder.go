package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Blob is one stored blob opened for reading: sequential reads, seeks and ranges (ReadAt),
// whichever backend holds it. The caller closes it.
type Blob interface {
	io.ReadSeekCloser
	io.ReaderAt
}

// Folder is the local blob folder behind the context-first blob contract that every blob
// backend implements (the folder here, S3 in package s3blob): the same files as Blobs, so
// both views can be used on one folder while callers move to this one.
type Folder struct {
	b *Blobs
}

// OpenFolder opens (creating if needed) a blob folder.
func OpenFolder(dir string) (*Folder, error) {
	b, err := OpenBlobs(dir)
	if err != nil {
		return nil, err
	}
	return b.Folder(), nil
}

// Folder returns the context-first view of this blob folder.
func (b *Blobs) Folder() *Folder { return &Folder{b: b} }

// Path returns where the blob with this digest lives (whether or not it exists).
func (f *Folder) Path(sha string) string { return f.b.Path(sha) }

// Put stores the local file src, which holds exactly the size bytes whose sha256 is sha, as
// that blob: renamed into place when src is on the folder's file system, copied otherwise.
// A blob already present with that size is kept (src is left for the caller to remove);
// one of another size is replaced, since src holds the right bytes.
func (f *Folder) Put(ctx context.Context, sha string, size int64, src string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: put blob %s: %w", sha, err)
	}
	if !validSHA(sha) {
		return fmt.Errorf("store: put blob %q: not a sha256 digest (64 lowercase hex digits)", sha)
	}
	if f.b.StatVerified(sha, size) == nil {
		return nil
	}
	if err := checkSpoolSize(src, sha, size); err != nil {
		return err
	}
	err := f.b.Adopt(src, sha)
	if errors.Is(err, syscall.EXDEV) {
		return f.copyIn(ctx, sha, src)
	}
	return err
}

// checkSpoolSize refuses a spool file whose size is not the one the caller hashed.
func checkSpoolSize(src, sha string, size int64) error {
	st, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("store: put blob %s: %w", sha, err)
	}
	if st.Size() != size {
		return fmt.Errorf("store: put blob %s: spool file %s is %d bytes, told %d", sha, src, st.Size(), size)
	}
	return nil
}

// copyIn copies src into the folder's temporary area, then adopts the copy: the spool
// folder is on another file system, where rename(2) cannot reach.
func (f *Folder) copyIn(ctx context.Context, sha, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("store: put blob %s: %w", sha, err)
	}
	defer in.Close()
	tmp, err := f.b.TempFile("copy-*")
	if err != nil {
		return err
	}
	_, werr := io.Copy(tmp, ctxReader{ctx, in})
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("store: put blob %s: copy from %s: %w", sha, src, err)
	}
	if err := f.b.Adopt(tmp.Name(), sha); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// PutBytes stores data as a blob and returns its sha256.
func (f *Folder) PutBytes(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("store: put blob: %w", err)
	}
	return f.b.Put(data)
}

// Open opens the blob recorded with this size: ErrBlobMissing when it is absent,
// ErrBlobCorrupt when it has another size. Same-size damage is Check's to find.
func (f *Folder) Open(ctx context.Context, sha string, size int64) (Blob, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: open blob %s: %w", sha, err)
	}
	file, err := f.b.OpenVerified(sha, size)
	if err != nil {
		return nil, err
	}
	return file, nil
}

// Stat is Open without opening: the same errors, one stat(2).
func (f *Folder) Stat(ctx context.Context, sha string, size int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: stat blob %s: %w", sha, err)
	}
	return f.b.StatVerified(sha, size)
}

// Check re-reads the whole blob and compares its size and sha256 with the recorded ones:
// nil when both match, else an error wrapping ErrBlobMissing or ErrBlobCorrupt (or an I/O
// error, or ctx's). One pass, constant memory.
func (f *Folder) Check(ctx context.Context, sha string, size int64) error {
	file, err := f.Open(ctx, sha, size)
	if err != nil {
		return err
	}
	defer file.Close()
	return Rehash(ctx, sha, file)
}

// Rehash reads r to its end and returns nil when its bytes hash to sha, else an error
// wrapping ErrBlobCorrupt (or the read's error, or ctx's): every backend's Check.
func Rehash(ctx context.Context, sha string, r io.Reader) error {
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, r})
	if err != nil {
		return fmt.Errorf("store: read blob %s: %w", sha, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("store: blob %s: its %d bytes hash to %s: %w", sha, n, got, ErrBlobCorrupt)
	}
	return nil
}

// BlobInfo is what a blob store knows of a stored blob without reading it.
type BlobInfo struct {
	Size     int64
	Modified time.Time // when it was stored
}

// Info returns the blob's size and when it was stored, whatever size is recorded for it:
// ErrBlobMissing when it is absent.
func (f *Folder) Info(ctx context.Context, sha string) (BlobInfo, error) {
	if err := ctx.Err(); err != nil {
		return BlobInfo{}, fmt.Errorf("store: blob %s: %w", sha, err)
	}
	if !validSHA(sha) {
		return BlobInfo{}, fmt.Errorf("store: blob %q: not a sha256 digest: %w", sha, ErrBlobMissing)
	}
	st, err := os.Stat(f.Path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return BlobInfo{}, fmt.Errorf("store: blob %s: no file at %s: %w", sha, f.Path(sha), ErrBlobMissing)
	}
	if err != nil {
		return BlobInfo{}, fmt.Errorf("store: stat blob %s: %w", sha, err)
	}
	return BlobInfo{Size: st.Size(), Modified: st.ModTime()}, nil
}

// Remove deletes a blob, if present.
func (f *Folder) Remove(ctx context.Context, sha string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: remove blob %s: %w", sha, err)
	}
	return f.b.Remove(sha)
}

// List returns the digests of every blob present, in no particular order.
func (f *Folder) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: list blobs: %w", err)
	}
	return f.b.List()
}

// ValidSHA256 reports whether s is a sha256 digest as blobs are named: 64 lowercase hex
// digits.
func ValidSHA256(s string) bool { return validSHA(s) }

// ctxReader stops a long copy once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
