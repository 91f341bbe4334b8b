package index_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/pluginyard/registry/index"
)

// TestBodyReaderReadsLikeBytes: a Body of many parts (empty ones among them) joins to its
// bytes, and its Reader answers every sequence of seeks and reads as a bytes.Reader over
// the joined bytes does: what http.ServeContent's ranges rely on.
func TestBodyReaderReadsLikeBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var parts [][]byte
		var joined []byte
		for range r.IntN(20) {
			p := make([]byte, r.IntN(40)) // empty parts too
			for i := range p {
				p[i] = byte('a' + r.IntN(26))
			}
			parts = append(parts, p)
			joined = append(joined, p...)
		}
		b := index.NewBody(parts)
		if b.Len() != len(joined) || !bytes.Equal(b.Bytes(), joined) && len(joined) > 0 {
			t.Fatalf("round %d: Body of %d bytes joins to %q, want %q", round, b.Len(), b.Bytes(), joined)
		}
		for _, p := range b.Parts() {
			if len(p) == 0 {
				t.Fatalf("round %d: an empty part was kept", round)
			}
		}
		var w bytes.Buffer
		if n, err := b.WriteTo(&w); n != int64(len(joined)) || err != nil || !bytes.Equal(w.Bytes(), joined) {
			t.Fatalf("round %d: WriteTo = %d, %v, %q", round, n, err, w.Bytes())
		}
		got, want := b.Reader(), bytes.NewReader(joined)
		for step := range 30 {
			if r.IntN(3) == 0 {
				off, whence := int64(r.IntN(len(joined)+5)), r.IntN(3)
				if whence != io.SeekStart {
					off -= int64(r.IntN(10))
				}
				g, gerr := got.Seek(off, whence)
				w, werr := want.Seek(off, whence)
				if g != w || (gerr == nil) != (werr == nil) {
					t.Fatalf("round %d step %d: Seek(%d, %d) = %d, %v; bytes.Reader %d, %v", round, step, off, whence, g, gerr, w, werr)
				}
				continue
			}
			n := r.IntN(50)
			gb, wb := make([]byte, n), make([]byte, n)
			read := io.ReadFull
			if step%2 == 1 { // one Read: the same count (short at the end) and error
				read = func(r io.Reader, p []byte) (int, error) { return r.Read(p) }
			}
			gn, gerr := read(got, gb)
			wn, werr := read(want, wb)
			if gn != wn || gerr != werr || !bytes.Equal(gb[:gn], wb[:wn]) {
				t.Fatalf("round %d step %d: read %d = %d %v %q; bytes.Reader %d %v %q", round, step, n, gn, gerr, gb[:gn], wn, werr, wb[:wn])
			}
		}
	}
}

// TestBodyReaderRefusesLikeBytes: a seek with an unknown whence or to a negative offset
// fails as it does on a bytes.Reader and leaves the offset where it was.
func TestBodyReaderRefusesLikeBytes(t *testing.T) {
	got, want := index.NewBody([][]byte{[]byte("ab"), []byte("cd")}).Reader(), bytes.NewReader([]byte("abcd"))
	for _, s := range []struct {
		off    int64
		whence int
	}{{1, io.SeekStart}, {0, 3}, {-2, io.SeekCurrent}, {-5, io.SeekEnd}, {-1, io.SeekStart}} {
		g, gerr := got.Seek(s.off, s.whence)
		w, werr := want.Seek(s.off, s.whence)
		if g != w || (gerr == nil) != (werr == nil) {
			t.Errorf("Seek(%d, %d) = %d, %v; bytes.Reader %d, %v", s.off, s.whence, g, gerr, w, werr)
		}
	}
	gb, _ := io.ReadAll(got)
	wb, _ := io.ReadAll(want)
	if string(gb) != string(wb) {
		t.Errorf("after refused seeks read %q, bytes.Reader %q", gb, wb)
	}
}

// TestBodyOfKeepsTheSlice: BodyOf shares its bytes (a document's gzip bytes are not
// copied per request) and an empty slice is an empty Body.
func TestBodyOfKeepsTheSlice(t *testing.T) {
	b := []byte("abc")
	if got := index.BodyOf(b).Bytes(); &got[0] != &b[0] {
		t.Error("BodyOf copied its bytes")
	}
	if e := index.BodyOf(nil); e.Len() != 0 || len(e.Parts()) != 0 || e.Bytes() != nil {
		t.Errorf("BodyOf(nil) = %d bytes, %d parts", e.Len(), len(e.Parts()))
	}
}
