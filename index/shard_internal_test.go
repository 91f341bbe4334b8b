package index

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The sizes and running sums a Set keeps through Put and Remove are those of its entries:
// checked after every change against sums made from the entries themselves.
func TestSetKeepsSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	entry := func(id string) *Encoded {
		return &Encoded{ID: id, Full: []byte(strings.Repeat("f", 1+r.IntN(500))), Compact: []byte(strings.Repeat("c", 1+r.IntN(200)))}
	}
	var entries []*Encoded
	for i := range 50 {
		entries = append(entries, entry(fmt.Sprintf("p%03d", i*2)))
	}
	s, err := NewSet(OrderDownloads, entries)
	if err != nil {
		t.Fatal(err)
	}
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
	}
}
