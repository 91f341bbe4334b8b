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
	"path/filepath"
	"strings"
)

// Blobs is a content-addressed file store: each blob lives at <dir>/<aa>/<sha256>, written
// to a temporary file, fsynced and renamed, so a reader never sees a partial blob.
type Blobs struct {
	dir string
}

// OpenBlobs opens (creating if needed) a blob folder.
func OpenBlobs(dir string) (*Blobs, error) {
	for _, d := range []string{dir, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("store: blob folder %s: %w", d, err)
		}
	}
	return &Blobs{dir: dir}, nil
}

// Path returns where the blob with this digest lives (whether or not it exists).
func (b *Blobs) Path(sha string) string {
	return filepath.Join(b.dir, sha[:2], sha)
}

// TempFile creates a file in the blob folder's temporary area, on the same file system as
// the blobs so that Adopt can rename it into place.
func (b *Blobs) TempFile(pattern string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Join(b.dir, "tmp"), pattern)
	if err != nil {
		return nil, fmt.Errorf("store: temp file: %w", err)
	}
	return f, nil
}

// Adopt moves the finished temporary file at path into place as the blob sha, after
// fsyncing it; the caller has computed sha over its bytes. If the blob already exists the
// temporary file is removed.
func (b *Blobs) Adopt(path, sha string) error {
	if !validSHA(sha) {
		return fmt.Errorf("store: adopt: bad digest %q", sha)
	}
	if err := syncFile(path); err != nil {
		return err
	}
	dst := b.Path(sha)
	shard := filepath.Dir(dst)
	_, statErr := os.Stat(shard)
	if err := os.MkdirAll(shard, 0o750); err != nil {
		return fmt.Errorf("store: adopt %s: %w", sha, err)
	}
	if os.IsNotExist(statErr) {
		// A new shard folder is durable only once its parent's entry for it is.
		if err := syncDir(b.dir); err != nil {
			return err
		}
	}
	if err := os.Rename(path, dst); err != nil {
		return fmt.Errorf("store: adopt %s: %w", sha, err)
	}
	return syncDir(shard)
}

// Put writes data as a blob and returns its sha256.
func (b *Blobs) Put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	if _, err := os.Stat(b.Path(sha)); err == nil {
		return sha, nil
	}
	f, err := b.TempFile("put-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("store: put blob: %w", err)
	}
	if err := b.Adopt(f.Name(), sha); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return sha, nil
}

// Open opens a blob for reading, whatever its size; callers that know the recorded size
// use OpenVerified.
func (b *Blobs) Open(sha string) (*os.File, error) {
	if !validSHA(sha) {
		return nil, ErrNotFound
	}
	f, err := os.Open(b.Path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: open blob %s: %w", sha, err)
	}
	return f, nil
}

// Errors of OpenVerified and Check: the database records a blob whose file is absent, or
// whose bytes are not the ones recorded. Neither is a client's mistake.
var (
	ErrBlobMissing = errors.New("blob missing")
	ErrBlobCorrupt = errors.New("blob corrupt")
)

// OpenVerified opens a blob the database records with the given size, and refuses it when
// the file is absent (ErrBlobMissing) or of another size (ErrBlobCorrupt): a truncated or
// lost blob is never handed out as the package. Same-size damage costs a re-hash to find;
// Check (and registry fsck) does that.
func (b *Blobs) OpenVerified(sha string, size int64) (*os.File, error) {
	if !validSHA(sha) {
		return nil, fmt.Errorf("store: blob %q: not a sha256 digest: %w", sha, ErrBlobCorrupt)
	}
	f, err := os.Open(b.Path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: blob %s: no file at %s: %w", sha, b.Path(sha), ErrBlobMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open blob %s: %w", sha, err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store: stat blob %s: %w", sha, err)
	}
	if st.Size() != size {
		_ = f.Close()
		return nil, fmt.Errorf("store: blob %s is %d bytes, recorded as %d: %w", sha, st.Size(), size, ErrBlobCorrupt)
	}
	return f, nil
}

// StatVerified is OpenVerified without opening: one stat(2) of the blob's file, for a check
// of every blob at start (a third of the system calls). The same errors.
func (b *Blobs) StatVerified(sha string, size int64) error {
	if !validSHA(sha) {
		return fmt.Errorf("store: blob %q: not a sha256 digest: %w", sha, ErrBlobCorrupt)
	}
	st, err := os.Stat(b.Path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: blob %s: no file at %s: %w", sha, b.Path(sha), ErrBlobMissing)
	}
	if err != nil {
		return fmt.Errorf("store: stat blob %s: %w", sha, err)
	}
	if !st.Mode().IsRegular() || st.Size() != size {
		return fmt.Errorf("store: blob %s is %d bytes, recorded as %d: %w", sha, st.Size(), size, ErrBlobCorrupt)
	}
	return nil
}

// Check re-reads a whole blob and compares its size and sha256 with the recorded ones: nil
// when both match, else an error wrapping ErrBlobMissing or ErrBlobCorrupt (or an I/O
// error). It reads the file once, in constant memory.
func (b *Blobs) Check(sha string, size int64) error {
	f, err := b.OpenVerified(sha, size)
	if err != nil {
		return err
	}
	defer f.Close()
	return Rehash(context.Background(), sha, f)
}

// ReadAll returns a whole blob; meant for small ones in tests and tools (the server streams).
func (b *Blobs) ReadAll(sha string) ([]byte, error) {
	f, err := b.Open(sha)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Remove deletes a blob file, if present.
func (b *Blobs) Remove(sha string) error {
	if !validSHA(sha) {
		return nil
	}
	err := os.Remove(b.Path(sha))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: remove blob %s: %w", sha, err)
	}
	return nil
}

// List returns the digests of every blob file present.
func (b *Blobs) List() ([]string, error) {
	var out []string
	err := filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "tmp" {
				return filepath.SkipDir
			}
			return nil
		}
		if validSHA(d.Name()) {
			out = append(out, d.Name())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list blobs: %w", err)
	}
	return out, nil
}

// CleanTemp removes leftovers of writes interrupted by a crash.
func (b *Blobs) CleanTemp() error {
	dir := filepath.Join(b.dir, "tmp")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("store: clean temp: %w", err)
	}
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	return nil
}

func validSHA(s string) bool {
	if len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("store: sync %s: %w", path, err)
	}
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("store: sync %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store: sync dir %s: %w", dir, err)
	}
	return nil
}
