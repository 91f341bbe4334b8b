package index

import (
	"errors"
	"io"
)

// Body is a document's bytes as the parts they are joined from, in order: the document's
// head, each entry's kept bytes (Encoded), its closing bytes. A build that changes one entry
// makes a new list of parts, not a new copy of every entry: a 5 MiB index.json rebuilt
// after one publish costs a slice header per entry instead of 5 MiB allocated and copied.
// The parts are shared with the entries and with other documents and never written; a
// Body is a value, safe for concurrent use.
type Body struct {
	parts [][]byte
	n     int
}

// BodyOf is the Body of b, one part (b is kept, not copied).
func BodyOf(b []byte) Body {
	if len(b) == 0 {
		return Body{}
	}
	return Body{parts: [][]byte{b}, n: len(b)}
}

// NewBody is the Body joined from parts, empty parts left out. It keeps parts and their
// bytes (its list is compacted in place): neither may be written afterwards.
func NewBody(parts [][]byte) Body {
	n, out := 0, parts[:0]
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, p)
			n += len(p)
		}
	}
	return Body{parts: out, n: n}
}

// Len is the body's length in bytes.
func (b Body) Len() int { return b.n }

// Parts are the body's parts, in order, none empty (shared: never write them).
func (b Body) Parts() [][]byte { return b.parts }

// Bytes is the body as one slice: its only part, else a new slice joining the parts.
func (b Body) Bytes() []byte {
	switch len(b.parts) {
	case 0:
		return nil
	case 1:
		return b.parts[0]
	}
	out := make([]byte, 0, b.n)
	for _, p := range b.parts {
		out = append(out, p...)
	}
	return out
}

// WriteTo writes the parts to w in order, one Write each (wrap a file in a bufio.Writer).
func (b Body) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range b.parts {
		k, err := w.Write(p)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Reader is an io.ReadSeeker over the body (http.ServeContent's ranges and preconditions).
func (b Body) Reader() *BodyReader { return &BodyReader{b: b} }

// BodyReader reads a Body; made by Body.Reader.
type BodyReader struct {
	b    Body
	off  int64 // the offset of the next byte read
	part int   // the part holding off, found again after a Seek
	in   int   // off's position in that part
	seek bool  // part and in are to be found from off
}

var errNegativeOffset = errors.New("index: body reader: seek to a negative offset")

func (r *BodyReader) Read(p []byte) (int, error) {
	if r.off >= int64(r.b.n) {
		return 0, io.EOF
	}
	if r.seek {
		r.locate()
	}
	n := 0
	for n < len(p) && r.part < len(r.b.parts) {
		k := copy(p[n:], r.b.parts[r.part][r.in:])
		n, r.in = n+k, r.in+k
		if r.in == len(r.b.parts[r.part]) {
			r.part, r.in = r.part+1, 0
		}
	}
	r.off += int64(n)
	return n, nil
}

// locate finds the part and the position in it of off.
func (r *BodyReader) locate() {
	r.seek = false
	rest := r.off
	for r.part = 0; r.part < len(r.b.parts); r.part++ {
		l := int64(len(r.b.parts[r.part]))
		if rest < l {
			r.in = int(rest)
			return
		}
		rest -= l
	}
	r.in = 0
}

func (r *BodyReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += int64(r.b.n)
	default:
		return 0, errors.New("index: body reader: invalid whence")
	}
	if offset < 0 {
		return 0, errNegativeOffset
	}
	r.off, r.seek = offset, true
	return offset, nil
}
