// Package plist is an immutable list kept in chunks, so that a changed copy shares every
// chunk but one: replacing, inserting or removing one element of a list of n copies one
// chunk (fewer than 512 elements) and the list of chunks (about n/256 slice headers)
// instead of n elements. The registry's catalogue is such a list: every publish makes a
// new version of it while readers keep the last one.
package plist

import "iter"

// Chunk sizes: a list is cut into chunks of chunkSize elements; a chunk that grows to
// chunkMax is split in two, one that shrinks to nothing is dropped.
const (
	chunkSize = 256
	chunkMax  = 2 * chunkSize
)

// List is an immutable sequence of T. The zero List is empty. Set, Insert and Delete
// return a new List sharing the unchanged chunks; the List they are called on is left as
// it was, so it can be read concurrently with them.
type List[T any] struct {
	chunks [][]T
	starts []int // starts[k] is the index of chunks[k]'s first element
	n      int
}

// Of is the List of items (copied).
func Of[T any](items []T) List[T] {
	l := List[T]{n: len(items)}
	for i := 0; i < len(items); i += chunkSize {
		c := make([]T, min(chunkSize, len(items)-i))
		copy(c, items[i:])
		l.chunks = append(l.chunks, c)
		l.starts = append(l.starts, i)
	}
	return l
}

// Len is the number of elements.
func (l List[T]) Len() int { return l.n }

// At is the element at index i (0 ≤ i < Len).
func (l List[T]) At(i int) T {
	k := l.chunkOf(i)
	return l.chunks[k][i-l.starts[k]]
}

// chunkOf is the chunk holding index i (0 ≤ i < Len), by binary search over starts.
func (l List[T]) chunkOf(i int) int {
	if i < 0 || i >= l.n {
		panic("plist: index out of range")
	}
	lo, hi := 0, len(l.starts)
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if l.starts[m] <= i {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// All yields the elements in order.
func (l List[T]) All() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		i := 0
		for _, c := range l.chunks {
			for _, v := range c {
				if !yield(i, v) {
					return
				}
				i++
			}
		}
	}
}

// Chunks are the list's chunks, in order (shared with other lists: never write them). Two
// lists share a chunk when it is the same slice: the same elements, unchanged between them.
func (l List[T]) Chunks() [][]T { return l.chunks }

// Slice is the elements as a new slice.
func (l List[T]) Slice() []T {
	out := make([]T, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// Search is the index of the first element for which cmp is ≥ 0, the elements being
// ordered by cmp (cmp(v) < 0 for elements before the target), and whether cmp is 0 there:
// slices.BinarySearchFunc over the list.
func (l List[T]) Search(cmp func(T) int) (int, bool) {
	lo, hi := 0, len(l.chunks) // the first chunk whose last element is ≥ the target
	for lo < hi {
		m := (lo + hi) / 2
		c := l.chunks[m]
		if cmp(c[len(c)-1]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(l.chunks) {
		return l.n, false
	}
	c := l.chunks[lo]
	a, b := 0, len(c)
	for a < b {
		m := (a + b) / 2
		if cmp(c[m]) < 0 {
			a = m + 1
		} else {
			b = m
		}
	}
	return l.starts[lo] + a, cmp(c[a]) == 0
}

// Set is l with the element at index i (0 ≤ i < Len) replaced by v.
func (l List[T]) Set(i int, v T) List[T] {
	k := l.chunkOf(i)
	c := append([]T(nil), l.chunks[k]...)
	c[i-l.starts[k]] = v
	return l.withChunk(k, c)
}

// Insert is l with v inserted at index i (0 ≤ i ≤ Len).
func (l List[T]) Insert(i int, v T) List[T] {
	if i < 0 || i > l.n {
		panic("plist: insert index out of range")
	}
	if l.n == 0 {
		return List[T]{chunks: [][]T{{v}}, starts: []int{0}, n: 1}
	}
	k := len(l.chunks) - 1 // at the end: into the last chunk
	if i < l.n {
		k = l.chunkOf(i)
	}
	at := i - l.starts[k]
	old := l.chunks[k]
	c := make([]T, 0, len(old)+1)
	c = append(append(append(c, old[:at]...), v), old[at:]...)
	if len(c) < chunkMax {
		out := l.withChunk(k, c)
		out.n++
		out.reindex(k + 1)
		return out
	}
	half := len(c) / 2
	first, second := c[:half:half], c[half:] // c is new and chunks are never written: no copy
	out := List[T]{n: l.n + 1, chunks: make([][]T, 0, len(l.chunks)+1)}
	out.chunks = append(append(append(out.chunks, l.chunks[:k]...), first, second), l.chunks[k+1:]...)
	out.starts = make([]int, len(out.chunks))
	copy(out.starts, l.starts[:k+1])
	out.reindex(k + 1)
	return out
}

// Delete is l without the element at index i (0 ≤ i < Len).
func (l List[T]) Delete(i int) List[T] {
	k := l.chunkOf(i)
	at := i - l.starts[k]
	old := l.chunks[k]
	if len(old) == 1 {
		out := List[T]{n: l.n - 1}
		out.chunks = append(append(make([][]T, 0, len(l.chunks)-1), l.chunks[:k]...), l.chunks[k+1:]...)
		out.starts = make([]int, len(out.chunks))
		copy(out.starts, l.starts[:k])
		out.reindex(k)
		return out
	}
	c := make([]T, 0, len(old)-1)
	c = append(append(c, old[:at]...), old[at+1:]...)
	out := l.withChunk(k, c)
	out.n--
	out.reindex(k + 1)
	return out
}

// withChunk is l with chunk k replaced by c (new chunk and start lists; the starts after k
// are for the caller to fix).
func (l List[T]) withChunk(k int, c []T) List[T] {
	out := List[T]{n: l.n, chunks: make([][]T, len(l.chunks)), starts: make([]int, len(l.starts))}
	copy(out.chunks, l.chunks)
	copy(out.starts, l.starts)
	out.chunks[k] = c
	return out
}

// reindex recomputes starts from chunk k on.
func (l *List[T]) reindex(k int) {
	for ; k < len(l.chunks); k++ {
		if k == 0 {
			l.starts[0] = 0
			continue
		}
		l.starts[k] = l.starts[k-1] + len(l.chunks[k-1])
	}
}
