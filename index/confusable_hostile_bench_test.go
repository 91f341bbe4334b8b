package index_test

import (
	"fmt"
	"testing"

	"github.com/pluginyard/registry/index"
)

// hostileLists are the costliest lists for the look-alike check that this package's id
// grammar lets through. digits: short ids one digit apart ("ab23456", "ab23457"), which
// share deletion keys but are not look-alikes (a digit replaced is another number), so
// every entry weighs about 40 candidates and reports none. separators: one name with its
// separators moved (acme-hello, acme_hello, a.cme-hello...), so every entry shares one
// skeleton bucket and reports the most it may (three).
func hostileLists(n int) map[string]*index.List {
	digits, seps := &index.List{}, &index.List{}
	for i := range n {
		id := []byte([]string{"ab", "cd", "ef", "gh"}[i>>15%4]) // two letters apart: no look-alikes
		for v, k := i&(1<<15-1), 0; k < 5; k, v = k+1, v/8 {
			id = append(id, byte('2'+v%8))
		}
		digits.Plugins = append(digits.Plugins, index.Entry{ID: string(id)})
		var s []byte
		for k, c := range []byte("acmehello") {
			if s = append(s, c); i>>k&1 == 1 {
				s = append(s, "-_."[(i>>(k+9))%3])
			}
		}
		seps.Plugins = append(seps.Plugins, index.Entry{ID: fmt.Sprintf("%s%d", s, i>>13)})
	}
	return map[string]*index.List{"digits": digits, "separators": seps}
}

// BenchmarkCheckLookalikesHostile: the hostile lists cost more per entry than a catalogue
// (BenchmarkCheckLookalikes); the cost per entry follows the candidates an entry has, which
// the id grammar bounds (digits reach their 40 once the ids fill their space, past 30k
// entries), not the length of the list.
func BenchmarkCheckLookalikesHostile(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		for name, l := range hostileLists(n) {
			b.Run(fmt.Sprintf("%s/entries=%d", name, n), func(b *testing.B) {
				var found int
				for b.Loop() {
					found = len(index.CheckLookalikes(nil, l))
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
				b.ReportMetric(float64(found), "problems")
			})
		}
	}
}
