package index_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pluginyard/registry/index"
)

// lookalikeBenchList is n plugin ids like a large catalogue's: a third short single words
// (which the edit-distance index holds), the rest vendor-prefixed names of 15 to 22
// characters, and every 100th a planted look-alike of an earlier id (two neighbours
// swapped), so that the problems grow with the list, not with its square.
func lookalikeBenchList(n int) *index.List {
	l := &index.List{Plugins: make([]index.Entry, n)}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		w := letters(rnd.Uint64(), 6) // a random 6-letter word
		id := w
		switch {
		case i%100 == 99:
			prev := []byte(l.Plugins[i-3-i%3].ID) // a short word: its index is a multiple of 3
			prev[1], prev[2] = prev[2], prev[1]
			id = string(prev)
		case i%3 != 0:
			id = fmt.Sprintf("vendor%d-%s-%s", i%97, w, letters(uint64(i), 4))
		}
		l.Plugins[i] = index.Entry{ID: id}
	}
	return l
}

func letters(v uint64, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + v%26)
		v /= 26
	}
	return string(b)
}

// BenchmarkCheckLookalikes measures the look-alike check alone at catalogue sizes; the
// cost per entry should stay about flat (bucketed skeletons and a deletion-neighbourhood
// index, no pairwise comparison).
func BenchmarkCheckLookalikes(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		l := lookalikeBenchList(n)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var found int
			for b.Loop() {
				found = len(index.CheckLookalikes(nil, l))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
			b.ReportMetric(float64(found), "problems")
		})
	}
}
