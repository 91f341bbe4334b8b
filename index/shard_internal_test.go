package index

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The sizes, running sums, rank order and category lists a Set keeps through Put and
// Remove are those of its entries: checked after every change against ones made from the
// entries themselves.
func TestSetKeepsSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cats := [][]string{{"tools"}, {"tools", "ai"}, {"ai"}}
	entry := func(id string) *Encoded {
		return &Encoded{ID: id, Full: []byte(strings.Repeat("f", 1+r.IntN(500))), Compact: []byte(strings.Repeat("c", 1+r.IntN(200))),
			Categories: cats[r.IntN(len(cats))], Downloads: int64(r.IntN(20)), Featured: r.IntN(8) == 0}
	}
	var entries []*Encoded
	for i := range 50 {
		entries = append(entries, entry(fmt.Sprintf("p%03d", i*2)))
	}
	s, err := NewSet(OrderDownloads, entries)
	if err != nil {
		t.Fatal(err)
	}
	s.ByRank()
	s.categories()
	for step := range 400 {
		id := fmt.Sprintf("p%03d", r.IntN(120))
		if r.IntN(3) == 0 {
			s.Remove(id)
		} else {
			s.Put(entry(id))
		}
		if step%4 == 0 { // sums brought up to date after one change or several
			continue
		}
		got := s.runningSums()
		want, full, compact := make([]int, s.Len()+1), 0, 0
		for i, e := range s.ByID() {
			want[i+1] = want[i] + len(e.Full) + 1
			full, compact = full+len(e.Full), compact+len(e.Compact)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: running sums %v, want %v", step, got, want)
		}
		if z := sizesOf(s.ByID()); s.sizes() != z || s.full != full || s.compact != compact {
			t.Fatalf("step %d: sizes %+v, want %+v", step, s.sizes(), z)
		}
		fresh, _ := NewSet(OrderDownloads, s.ByID())
		if got, want := ids(s.ByRank()), ids(fresh.ByRank()); got != want {
			t.Fatalf("step %d: by rank %s, want %s", step, got, want)
		}
		fc := fresh.categories()
		if len(fc) != len(s.cats) {
			t.Fatalf("step %d: %d categories, want %d", step, len(s.cats), len(fc))
		}
		for c, w := range fc {
			g := s.cats[c]
			if g == nil || ids(g.byID.Slice()) != ids(w.byID.Slice()) || ids(g.byRank.Slice()) != ids(w.byRank.Slice()) {
				t.Fatalf("step %d: category %s differs from a fresh set's", step, c)
			}
		}
	}
}

// ids joins entries' ids (and their pointers, so that a stale entry under a kept id shows).
func ids(es []*Encoded) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s@%p ", e.ID, e)
	}
	return b.String()
}

// TestDenseTextKeepsOneChunk: an entry whose description is "},{" over and over (JSON
// leaves braces and commas unescaped) keeps the chunk digests of one chunk per form, not one
// per 3 bytes of text (which made each entry keep about ten times its size in digests, and
// Digest of a 5 MiB document of them take half a second).
func TestDenseTextKeepsOneChunk(t *testing.T) {
	e, err := EncodePlugin(Plugin{ID: "dense", Version: "1.0.0", Description: strings.Repeat("},{", 300),
		PackageURL: "https://r.example/p.tar.gz", PackageSHA256: strings.Repeat("a", 64)}, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	for _, compact := range []bool{false, true} {
		if n := len(e.form(compact).chunkSums()) / sha256.Size; n != 1 {
			t.Errorf("compact %v: %d chunks kept for one entry, want 1", compact, n)
		}
	}
}
