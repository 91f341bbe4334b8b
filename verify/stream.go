package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
)

// rawReader hashes and counts the compressed bytes as they are read, stops at the
// compressed-size limit, and checks ctx on every read so that a cancelled publish stops
// promptly even in the middle of a large file.
type rawReader struct {
	ctx   context.Context
	r     io.Reader
	h     hash.Hash
	n     int64
	limit int64
	over  bool  // the input is larger than limit
	err   error // an I/O or context error from the input, never io.EOF
}

var (
	errCompressedLimit = errors.New("compressed size limit reached")
	errStreamLimit     = errors.New("decompressed size limit reached")
	errInput           = errors.New("input failed")
)

func newRawReader(ctx context.Context, r io.Reader, limit int64) *rawReader {
	return &rawReader{ctx: ctx, r: r, h: sha256.New(), limit: limit}
}

func (r *rawReader) Read(p []byte) (int, error) {
	if r.over {
		return 0, errCompressedLimit
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, fmt.Errorf("%w: %w", errInput, err)
	}
	// Read at most one byte past the limit: enough to know the input is too large.
	if room := r.limit + 1 - r.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if r.n > r.limit {
		r.over = true
		return n, errCompressedLimit
	}
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
		return n, fmt.Errorf("%w: %w", errInput, err)
	}
	return n, err
}

// sum returns the hex sha256 of everything read, or "" when the input was cut short.
func (r *rawReader) sum() string {
	if r.over {
		return ""
	}
	return hex.EncodeToString(r.h.Sum(nil))
}

// guardReader counts the decompressed tar stream (headers, padding and content) and stops
// it at a hard bound, so that a gzip bomb hidden where no file is (huge headers, data
// after the end-of-archive marker) cannot run on.
type guardReader struct {
	r     io.Reader
	n     int64
	limit int64
	over  bool
	// srcErr is the decompressor's last error other than io.EOF.
	srcErr error
}

func (g *guardReader) Read(p []byte) (int, error) {
	if g.over {
		return 0, errStreamLimit
	}
	if room := g.limit + 1 - g.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	if g.n > g.limit {
		g.over = true
		return n, errStreamLimit
	}
	if err != nil && !errors.Is(err, io.EOF) {
		g.srcErr = err
	}
	return n, err
}

// streamLimit is the guard's bound for lim: the content limit plus room for the tar
// headers and padding of every entry allowed (files and as many directories), each with a
// PAX record carrying a path of the longest length allowed.
func streamLimit(lim Limits) int64 {
	perEntry := int64(4*512 + 2*lim.MaxPathLen)
	return lim.MaxTotalSize + int64(lim.MaxFiles)*2*perEntry + 1<<20
}
