package plist

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestListFollowsASlice: a List changed by thousands of random Sets, Inserts and Deletes
// holds what a slice changed the same way holds, at every step (At, All, Slice, Len, Search
// over sorted contents), and every List made on the way still holds what it held when made:
// a change never writes a shared chunk.
func TestListFollowsASlice(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var want []int
	var l List[int]
	type kept struct {
		l    List[int]
		want []int
	}
	var versions []kept
	for step := range 6000 {
		switch k := r.IntN(10); {
		case k < 5 || len(want) == 0:
			i := r.IntN(len(want) + 1)
			v := r.IntN(1 << 20)
			want, l = slices.Insert(want, i, v), l.Insert(i, v)
		case k < 8:
			i := r.IntN(len(want))
			want, l = slices.Delete(want, i, i+1), l.Delete(i)
		default:
			i, v := r.IntN(len(want)), r.IntN(1<<20)
			want = slices.Clone(want)
			want[i], l = v, l.Set(i, v)
		}
		if step%97 == 0 {
			versions = append(versions, kept{l, slices.Clone(want)})
		}
		if l.Len() != len(want) {
			t.Fatalf("step %d: Len %d, want %d", step, l.Len(), len(want))
		}
		if step%53 == 0 {
			same(t, step, l, want)
		}
	}
	same(t, -1, l, want)
	for i, v := range versions {
		same(t, i, v.l, v.want)
	}
}

func same(t *testing.T, step int, l List[int], want []int) {
	t.Helper()
	if got := l.Slice(); !slices.Equal(got, want) {
		t.Fatalf("step %d: Slice differs from the slice (%d and %d elements)", step, len(got), len(want))
	}
	for i, v := range l.All() {
		if v != want[i] || l.At(i) != v {
			t.Fatalf("step %d: element %d is %d (At %d), want %d", step, i, v, l.At(i), want[i])
		}
	}
	for _, c := range l.chunks {
		if len(c) == 0 || len(c) >= chunkMax {
			t.Fatalf("step %d: a chunk of %d elements (want 1 to %d)", step, len(c), chunkMax-1)
		}
	}
}

// TestListSearch: Search over a sorted List finds what slices.BinarySearch finds, for
// present and absent values, before the first and after the last.
func TestListSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 2, chunkSize - 1, chunkSize, chunkSize + 1, 3000} {
		want := make([]int, n)
		for i := range want {
			want[i] = 2 * r.IntN(5000)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		l := Of(want)
		for range 300 {
			v := r.IntN(10002) - 1
			wi, wok := slices.BinarySearch(want, v)
			gi, gok := l.Search(func(e int) int { return cmp.Compare(e, v) })
			if gi != wi || gok != wok {
				t.Fatalf("n %d: Search(%d) = %d, %v; want %d, %v", n, v, gi, gok, wi, wok)
			}
		}
	}
}

// BenchmarkListSet: replacing one element of a list of n, against cloning a slice of n (what
// a catalogue did per publish): the List copies a chunk and n/256 chunk headers, the slice
// n elements.
func BenchmarkListSet(b *testing.B) {
	for _, n := range []int{1000, 10_000, 50_000} {
		items := make([]*int, n)
		for i := range items {
			items[i] = new(int)
		}
		l := Of(items)
		b.Run("list/n="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				l = l.Set(i%n, items[0])
			}
		})
		b.Run("slice-clone/n="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				c := slices.Clone(items)
				c[i%n] = items[0]
				items = c
			}
		})
	}
}
