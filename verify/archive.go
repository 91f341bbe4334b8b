package verify

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// Names of the files the reader treats specially.
const (
	manifestName     = "manifest.yaml"
	extensionName    = "curupira-extension.toml"
	checksumsName    = "checksums.txt"
	checksumsSigName = "checksums.txt.sig"
	readmeName       = "README.md"
	changelogName    = "CHANGELOG.md"
	npmPrefix        = "package/" // npm pack puts every file under package/
)

// Bounds on what the reader keeps in memory besides the manifest.
const (
	headSize      = 512
	maxReadmeSize = 1 << 20
	// maxChangelogSize bounds CHANGELOG.md as README.md is bounded: pages show both.
	maxChangelogSize = maxReadmeSize
	maxSigSize       = 1 << 20
	maxImageSize     = 1 << 20
	maxImagesTotal   = 8 << 20
	copyBufferSize   = 256 << 10
)

// archive is what one pass over a package yields.
type archive struct {
	lim      Limits
	files    manifest.Files
	digests  map[string][sha256Size]byte
	kept     map[string][]byte
	dirs     map[string]bool   // explicit directory entries
	parents  map[string]bool   // directories implied by file and directory paths
	folded   map[string]string // foldKey of every file and directory name -> the name
	trace    *headerTrace
	images   int64 // bytes kept for image-looking files
	total    int64 // decompressed bytes of regular files
	sha256   string
	size     int64
	problems *problem.Capped
	fatal    bool // reading stopped early; the file list is incomplete
	buf      []byte
	scan     scanner // the content scanner, reset for each file (scan_stream.go)
}

// readArchive streams r once under lim. It returns an error only for I/O or ctx failures.
func readArchive(ctx context.Context, r io.Reader, lim Limits) (*archive, error) {
	a := &archive{
		lim:      lim,
		files:    manifest.Files{},
		digests:  map[string][sha256Size]byte{},
		kept:     map[string][]byte{},
		dirs:     map[string]bool{},
		parents:  map[string]bool{},
		folded:   map[string]string{},
		problems: problem.NewCapped(problem.MaxListed),
	}
	buf := copyBuffers.Get().(*[]byte)
	br := bufReaders.Get().(*bufio.Reader)
	defer func() {
		br.Reset(nil)
		bufReaders.Put(br)
		copyBuffers.Put(buf)
	}()
	a.buf = *buf
	raw := newRawReader(ctx, r, lim.MaxCompressed)
	br.Reset(raw)
	a.read(br)
	a.buf = nil // back to the pool with this pass
	if raw.err != nil {
		return nil, fmt.Errorf("read package: %w", raw.err)
	}
	if raw.over {
		a.fatal = true
		a.problems.Errorf("archive.limit.compressed", "", "the package is larger than %s compressed; make it smaller", size(lim.MaxCompressed))
	} else if err := drain(raw); err != nil {
		return nil, fmt.Errorf("read package: %w", err)
	}
	a.sha256, a.size = raw.sum(), raw.n
	return a, nil
}

// drain reads what is left of the input so that the digest covers the whole file.
func drain(raw *rawReader) error {
	_, err := io.Copy(io.Discard, raw)
	if raw.err != nil {
		return raw.err
	}
	if raw.over {
		return nil
	}
	return err
}

// A pass's buffers are reused by the next: the copy buffer and the buffered reader's
// (256 KiB each) and the gzip reader's window and tables (about 40 KiB). A publish of a
// 3 KB package allocated over half a megabyte for them, most of what it allocated, and the
// collector's cycles follow what is allocated (a continuous publisher's collections are
// paid by the readers of the same process).
var (
	copyBuffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}
	bufReaders  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, copyBufferSize) }}
	gzReaders   sync.Pool // *gzip.Reader, Reset for each pass
)

// gzipReader is a gzip reader of br: one from the pool, Reset, or a new one.
func gzipReader(br *bufio.Reader) (*gzip.Reader, error) {
	if gz, ok := gzReaders.Get().(*gzip.Reader); ok {
		if err := gz.Reset(br); err != nil {
			gzReaders.Put(gz)
			return nil, err
		}
		return gz, nil
	}
	return gzip.NewReader(br)
}

// read runs the gzip and tar layers; problems go to a.problems.
func (a *archive) read(br *bufio.Reader) {
	gz, err := gzipReader(br)
	if reportedElsewhere(err) {
		a.fatal = true
		return
	}
	if err != nil {
		a.stop("archive.gzip", "", "the package is not a gzip file (%v); build it with `tar -czf` or the pack tool", err)
		return
	}
	defer func() {
		gz.Close()
		gzReaders.Put(gz)
	}()
	guard := &guardReader{r: gz, limit: streamLimit(a.lim)}
	a.trace = &headerTrace{r: guard}
	tr := tar.NewReader(a.trace)
	if !a.entries(tr, guard) {
		return
	}
	a.trailer(guard)
}

// trailer reads the decompressed stream after the tar end-of-archive marker to its end:
// it verifies the gzip checksum, counts against the decompressed bound, and must be zero
// padding only. Extractors stop at the marker (GNU tar with -i, --ignore-zeros, reads on),
// so bytes after it are never checked by them, yet the registry would store and serve them.
//
// gzip members: the reader is multistream, as `gzip -d`, Python's tarfile and libarchive
// are, so a second gzip member is part of the same tar stream: a member that continues
// the archive is read as such, and one that adds content after the marker is refused here.
func (a *archive) trailer(guard *guardReader) {
	start := guard.n
	for {
		n, err := guard.Read(a.buf)
		if i := firstNonZero(a.buf[:n]); i >= 0 {
			at := guard.n - int64(n) + int64(i)
			a.stop("archive.trailing_data", "", "the archive has data after the tar end-of-archive marker (a non-zero byte at offset %d of the decompressed stream, %d bytes past the marker); extractors ignore it, but the registry would serve it. Rebuild the package with the pack tool or `tar -czf`, and append nothing to it", at, at-start)
			return
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			a.streamError(guard, err, "the gzip stream after the end of the tar archive is corrupt")
			return
		}
	}
}

// entries walks the tar entries; it reports whether the whole archive was read.
func (a *archive) entries(tr *tar.Reader, guard *guardReader) bool {
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if n == 0 {
				a.stop("archive.empty", "", "the archive has no entries; a package needs at least manifest.yaml")
				return false
			}
			return true
		}
		if err != nil {
			what := "the gzip stream is not a tar archive"
			if n > 0 {
				what = fmt.Sprintf("the tar archive is corrupt after %d entries", n)
			}
			a.streamError(guard, err, what)
			return false
		}
		if !a.entry(tr, hdr) {
			return false
		}
	}
}

// streamError turns a failure of the decompressed stream into the right problem: the
// guard tells whether the gzip layer failed (corrupt or truncated) or the tar layer did.
func (a *archive) streamError(guard *guardReader, err error, what string) {
	switch {
	case guard.over:
		a.stop("archive.limit.total", "", "the decompressed archive is larger than %s (tar headers included); it may be a compression bomb", size(guard.limit))
	case reportedElsewhere(err), reportedElsewhere(guard.srcErr):
		a.fatal = true
	case guard.srcErr != nil && errors.Is(guard.srcErr, io.ErrUnexpectedEOF):
		a.stop("archive.gzip", "", "the gzip stream ends early: the file is truncated; upload the complete package")
	case guard.srcErr != nil:
		a.stop("archive.gzip", "", "the gzip stream is corrupt: %v; rebuild the package", guard.srcErr)
	default:
		a.stop("archive.tar", "", "%s: %v; build the package with `tar -czf` or the pack tool", what, err)
	}
}

// zeros is compared against to find padding fast; firstNonZero only loops on a mismatch.
var zeros = make([]byte, copyBufferSize)

func firstNonZero(b []byte) int {
	if len(b) <= len(zeros) && bytes.Equal(b, zeros[:len(b)]) {
		return -1
	}
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}

// stop records a problem that ends reading.
func (a *archive) stop(rule, file, format string, args ...any) {
	a.fatal = true
	a.problems.Errorf(rule, file, format, args...)
}

func (a *archive) errorf(rule, file, format string, args ...any) {
	a.problems.Errorf(rule, file, format, args...)
}

// keptBytes returns a kept file's bytes, nil when absent.
func (a *archive) keptBytes(name string) []byte { return a.kept[name] }

// size renders a byte count for messages, in the one style of FormatSize.
func size(n int64) string { return FormatSize(n) }

// under reports whether name is inside folder dir ("" is the root).
func under(name, dir string) bool { return dir == "" || strings.HasPrefix(name, dir) }

// reportedElsewhere reports errors that readArchive turns into a problem (the compressed
// limit) or returns (I/O and context errors from the input).
func reportedElsewhere(err error) bool {
	return err != nil && (errors.Is(err, errCompressedLimit) || errors.Is(err, errInput))
}
