package index

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"io"
	"slices"
	"strings"
)

// A document's Digest hashes its chunk digests in groups (Digest): a group ends after a
// chunk whose digest groupEnds, about one chunk in 64, a fact of the chunk's bytes alone.
// So the digests of the groups between two entries' boundaries are the same in every
// document holding those entries in that order, and FitKandev keeps them: it cuts the
// document it builds into blocks of entries, each ending where a group ends, keeps each
// block's joined bytes and group digests, and after a change rebuilds only the blocks that
// hold a changed entry. A publish then copies and hashes one block (about 64 entries) and
// the two at the document's ends, whatever the catalogue's size, where it walked, joined
// and hashed every listed entry before.

// groupEnds reports whether the chunk whose SHA-256 is sum ends a group.
func groupEnds(sum []byte) bool { return sum[0] < 4 }

// grouper groups chunk digests (written to it, 32 bytes each, any number at a time) and
// writes each group's SHA-256 to out.
type grouper struct {
	out  io.Writer
	g    hash.Hash
	open bool // g holds a digest of a group not yet ended
}

func newGrouper(out io.Writer) *grouper { return &grouper{out: out, g: sha256.New()} }

// Write takes chunk digests; it never fails.
func (d *grouper) Write(sums []byte) (int, error) {
	for i := 0; i+sha256.Size <= len(sums); i += sha256.Size {
		s := sums[i : i+sha256.Size]
		d.g.Write(s)
		d.open = true
		if groupEnds(s) {
			d.end()
		}
	}
	return len(sums), nil
}

// end ends the open group, if any.
func (d *grouper) end() {
	if !d.open {
		return
	}
	var sum [sha256.Size]byte
	d.g.Sum(sum[:0])
	d.out.Write(sum[:])
	d.g.Reset()
	d.open = false
}

// block is a run of a document's entries (sorted by id, never written) in one form: their
// segments joined, and the digests of the groups they make alone, which are theirs in any
// document where a group ends just before the run. A block is closed when its last entry's
// last chunk ends a group (endsGroup): then so does the block.
type block struct {
	entries []*Encoded
	joined  []byte // each entry's segment ("," + its bytes), in order
	object  bool   // every entry's form is a JSON object (joinedDoc)
	groups  []byte // made on first use (closed blocks only)
}

func newBlock(entries []*Encoded, compact bool) *block {
	b := &block{entries: slices.Clip(entries), object: true}
	n := 0
	for _, e := range entries {
		n += len(e.form(compact).seg)
	}
	b.joined = make([]byte, 0, n)
	for _, e := range entries {
		f := e.form(compact)
		b.joined = append(b.joined, f.seg...)
		b.object = b.object && f.object
	}
	return b
}

// endsGroup reports whether e's segment ends with a chunk that ends a group.
func endsGroup(e *Encoded, compact bool) bool {
	s := e.form(compact).chunkSums()
	return groupEnds(s[len(s)-sha256.Size:])
}

// groupSums are the group digests of a closed block's entries.
func (b *block) groupSums(compact bool) []byte {
	if b.groups == nil {
		var buf bytes.Buffer
		g := newGrouper(&buf)
		for _, e := range b.entries {
			g.Write(e.form(compact).chunkSums())
		}
		b.groups = buf.Bytes()
	}
	return b.groups
}

// blocks are the entries of the last document FitKandev built from a Set, in blocks: every
// block but the last closed. They belong to the Set (not safe for concurrent use); the
// documents built share the blocks' bytes, which are never written.
type blocks struct {
	compact bool
	list    []*block
	n       int // entries
}

// newBlocks cuts entries (sorted by id; copied: a Set's lists change in place) into
// blocks, one ending after each entry that ends a group.
func newBlocks(entries []*Encoded, compact bool) *blocks {
	bs := &blocks{compact: compact, n: len(entries)}
	bs.list = bs.cut(nil, slices.Clone(entries))
	return bs
}

// cut appends to out the closed blocks of run and, when run's last entry does not end a
// group, the open block of the rest.
func (bs *blocks) cut(out []*block, run []*Encoded) []*block {
	start := 0
	for k, e := range run {
		if endsGroup(e, bs.compact) {
			out = append(out, newBlock(run[start:k+1], bs.compact))
			start = k + 1
		}
	}
	if start < len(run) {
		out = append(out, newBlock(run[start:], bs.compact))
	}
	return out
}

// apply removes the entries removed (where the very entry is held) and inserts added (by
// id), rebuilding only the blocks they fall in, and an open block's successors until one
// closes.
func (bs *blocks) apply(removed, added []*Encoded) {
	if len(removed) == 0 && len(added) == 0 {
		return
	}
	work := map[int][]*Encoded{} // block → its new entries (a copy)
	entriesOf := func(i int) []*Encoded {
		if w, ok := work[i]; ok {
			return w
		}
		return slices.Clone(bs.list[i].entries)
	}
	for _, e := range removed {
		if len(bs.list) == 0 {
			break
		}
		i := bs.blockOf(e.ID)
		w := entriesOf(i)
		if j, ok := slices.BinarySearchFunc(w, e.ID, entryID); ok && w[j] == e {
			work[i] = slices.Delete(w, j, j+1)
			bs.n--
		}
	}
	for _, e := range added {
		if len(bs.list) == 0 {
			bs.list = []*block{{}}
			work[0] = nil
		}
		i := bs.blockOf(e.ID)
		w := entriesOf(i)
		j, _ := slices.BinarySearchFunc(w, e.ID, entryID)
		work[i] = slices.Insert(w, j, e)
		bs.n++
	}
	out := make([]*block, 0, len(bs.list)+len(work))
	var pending []*Encoded // an open run carried into the next block
	for i, b := range bs.list {
		w, changed := work[i]
		if !changed && pending == nil {
			out = append(out, b)
			continue
		}
		if !changed {
			w = b.entries
		}
		run := append(pending, w...)
		pending = nil
		if len(run) == 0 {
			continue
		}
		if !endsGroup(run[len(run)-1], bs.compact) && i < len(bs.list)-1 {
			k := len(run) - 1 // the open rest joins the next block
			for k > 0 && !endsGroup(run[k-1], bs.compact) {
				k--
			}
			out = bs.cut(out, run[:k])
			pending = slices.Clone(run[k:])
			continue
		}
		out = bs.cut(out, run)
	}
	bs.list = out
}

// blockOf is the block where id is or would go: the last whose first entry's id is at most
// id, or the first.
func (bs *blocks) blockOf(id string) int {
	i, _ := slices.BinarySearchFunc(bs.list, id, func(b *block, id string) int {
		if len(b.entries) == 0 || b.entries[0].ID <= id {
			return -1
		}
		return 1
	})
	return max(i-1, 0)
}

func entryID(e *Encoded, id string) int { return strings.Compare(e.ID, id) }

// doc is the document of head, the blocks' entries and closer (joinedDoc's, the same bytes
// and Digest), from the kept blocks: only the first and last block's chunk digests are
// hashed with head and closer, and a block whose group digests are kept is not hashed again.
func (bs *blocks) doc(head, closer []byte, mode string) Doc {
	parts := make([][]byte, 0, len(bs.list)+2)
	parts = append(parts, head)
	object := true
	for i, b := range bs.list {
		j := b.joined
		if i == 0 {
			j = j[1:]
		}
		parts = append(parts, j)
		object = object && b.object
	}
	parts = append(parts, closer)
	d := Doc{Body: NewBody(parts), Mode: mode, Listed: bs.n}
	if bs.n < 2 || !object {
		d.Digest = Digest(d.Body.Bytes())
		return d
	}
	h := sha256.New()
	g := newGrouper(h)
	last := len(bs.list) - 1
	for i, b := range bs.list {
		if i > 0 && i < last && !g.open { // a group ends just before it: its own groups
			h.Write(b.groupSums(bs.compact))
			continue
		}
		for k, e := range b.entries {
			f := e.form(bs.compact)
			switch {
			case i == 0 && k == 0:
				writeChunkSums(g, append(slices.Clip(head), f.seg[1:]...))
			case i == last && k == len(b.entries)-1:
				writeChunkSums(g, append(slices.Clip(f.seg), closer...))
			default:
				g.Write(f.chunkSums())
			}
		}
	}
	g.end()
	h.Sum(d.Digest[:0])
	return d
}

// entries are the blocks' entries, in order (a new slice).
func (bs *blocks) entries() []*Encoded {
	out := make([]*Encoded, 0, bs.n)
	for _, b := range bs.list {
		out = append(out, b.entries...)
	}
	return out
}
