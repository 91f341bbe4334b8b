package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// blockEntry is a plugin entry whose description is d (its chunk digests follow from it).
func blockEntry(t *testing.T, id, d string, downloads int64) *Encoded {
	t.Helper()
	e, err := EncodePlugin(Plugin{ID: id, Version: "1.0.0", Description: d, Downloads: downloads,
		PackageURL: "https://r.example/" + id + ".tar.gz", PackageSHA256: strings.Repeat("a", 64)}, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// groupEnder is an entry with id whose segments in both forms end a group, found by trying
// descriptions.
func groupEnder(t *testing.T, id string) *Encoded {
	t.Helper()
	for k := range 1 << 20 {
		e := blockEntry(t, id, fmt.Sprintf("ends a group %d", k), 1<<40) // ranked first
		if endsGroup(e, false) && endsGroup(e, true) {
			return e
		}
	}
	t.Fatal("no description found")
	return nil
}

// checkBlocks: every block but the last is closed, each closed block ends at its only entry
// that ends a group, and the blocks hold want, in order.
func checkBlocks(t *testing.T, what string, bs *blocks, want []*Encoded) {
	t.Helper()
	for i, b := range bs.list {
		if len(b.entries) == 0 {
			t.Fatalf("%s: block %d is empty", what, i)
		}
		if !endsGroup(b.entries[len(b.entries)-1], bs.compact) && i < len(bs.list)-1 {
			t.Fatalf("%s: block %d of %d is open", what, i, len(bs.list))
		}
		for k, e := range b.entries[:len(b.entries)-1] {
			if endsGroup(e, bs.compact) {
				t.Fatalf("%s: block %d goes on after its entry %d, which ends a group", what, i, k)
			}
		}
		var joined []byte
		for _, e := range b.entries {
			joined = append(joined, e.form(bs.compact).seg...)
		}
		if !bytes.Equal(joined, b.joined) {
			t.Fatalf("%s: block %d's bytes are not its entries'", what, i)
		}
	}
	if got := bs.entries(); !slices.Equal(got, want) || bs.n != len(want) {
		t.Fatalf("%s: the blocks hold %d entries (n %d), want %d:\n%s\nwant\n%s", what, len(got), bs.n, len(want), ids(got), ids(want))
	}
}

// TestKeptBlocksFollowChanges: through runs of changes (new versions, removals, new
// plugins, an entry put back as it was, one put and removed again before the next build,
// several at once), the document FitKandev builds from its kept blocks has the bytes and the
// Digest of one built anew, in every mode; its blocks hold the document's entries, cut where
// groups end; and a build after a few changes makes a few blocks anew, not all of them.
// The first entry ends a group alone (its chunk digest with the document's head does not),
// so the block after it is hashed entry by entry, not from its kept groups.
func TestKeptBlocksFollowChanges(t *testing.T) {
	h := Header{Serial: 1, GeneratedAt: time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)}
	r := rand.New(rand.NewPCG(5, 6))
	mk := func(id string) *Encoded {
		return blockEntry(t, id, strings.Repeat("d", r.IntN(300)), int64(r.IntN(3000)))
	}
	var entries []*Encoded
	entries = append(entries, groupEnder(t, "a-first"))
	for i := range 1200 {
		entries = append(entries, mk(fmt.Sprintf("p%05d", i*3)))
	}
	probe, _ := NewSet(OrderDownloads, entries)
	full, _ := FitKandev(Policy{Limit: 1 << 30}, h, probe, nil)
	compact, _ := FitKandev(Policy{Limit: full.Body.Len() - 1}, h, probe, nil)
	for _, tc := range []struct {
		mode  string
		limit int
	}{{ModeFull, 1 << 30}, {ModeCompact, (full.Body.Len() + compact.Body.Len()) / 2}, {ModeSelected, compact.Body.Len() / 2}} {
		set, _ := NewSet(OrderDownloads, entries)
		p := Policy{Limit: tc.limit}
		var last []*block
		for step := range 250 {
			changes := 1 + r.IntN(3)
			if step == 0 {
				changes = 0
			}
			for range changes {
				byID := set.ByID()
				pick := byID[1+r.IntN(len(byID)-1)] // never the first: it stays alone in its block
				switch k := r.IntN(12); {
				case k < 6:
					set.Put(mk(pick.ID))
				case k < 8:
					set.Remove(pick.ID)
				case k < 9:
					set.Put(mk(fmt.Sprintf("p%05d", r.IntN(4000))))
				case k < 10:
					set.Put(pick) // the same entry again
				default:
					e := mk(fmt.Sprintf("n%05d", step))
					set.Put(e)
					set.Remove(e.ID) // gone again before the build
				}
			}
			what := fmt.Sprintf("%s, step %d", tc.mode, step)
			got, err := FitKandev(p, h, set, nil)
			if err != nil || got.Mode != tc.mode {
				t.Fatalf("%s: mode %s (%v)", what, got.Mode, err)
			}
			fresh, _ := NewSet(OrderDownloads, set.ByID())
			want, _ := FitKandev(p, h, fresh, nil)
			if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Listed != want.Listed {
				t.Fatalf("%s: kept blocks list %d entries, a fresh set %d; the bytes differ", what, got.Listed, want.Listed)
			}
			if got.Digest != Digest(got.Body.Bytes()) || got.Digest != want.Digest {
				t.Fatalf("%s: the Digest is not the body's", what)
			}
			bs := set.kept.blocks
			listed := fresh.kept.blocks.entries()
			if tc.mode != ModeSelected {
				listed = set.ByID()
			}
			checkBlocks(t, what, bs, listed)
			if len(bs.list) < 8 || bs.list[0].entries[0].ID != "a-first" || len(bs.list[0].entries) != 1 {
				t.Fatalf("%s: %d blocks, the first of %d entries: the test needs many, the first alone", what, len(bs.list), len(bs.list[0].entries))
			}
			if step > 0 {
				made := 0
				for _, b := range bs.list {
					if !slices.Contains(last, b) {
						made++
					}
				}
				if limit := 3*changes + 4; tc.mode != ModeSelected && made > limit {
					t.Fatalf("%s: %d of %d blocks made anew after %d changes, want at most %d", what, made, len(bs.list), changes, limit)
				}
				if made == len(bs.list) && len(bs.list) > 2 {
					t.Fatalf("%s: every block was made anew after %d changes", what, changes)
				}
			}
			last = bs.list
		}
	}
}

// TestKeptBlocksAfterARefusedBuild: changes made before a build that fails (a limit that
// holds no entry), and more changes than the Set logs one by one, are in the next build's
// document, in every mode.
func TestKeptBlocksAfterARefusedBuild(t *testing.T) {
	h := Header{Serial: 1, GeneratedAt: time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)}
	var entries []*Encoded
	for i := range 300 {
		entries = append(entries, blockEntry(t, fmt.Sprintf("p%04d", i), strings.Repeat("d", i%200), int64(i)))
	}
	probe, _ := NewSet(OrderDownloads, entries)
	full, _ := FitKandev(Policy{Limit: 1 << 30}, h, probe, nil)
	compact, _ := FitKandev(Policy{Limit: full.Body.Len() - 1}, h, probe, nil)
	for _, limit := range []int{1 << 30, (full.Body.Len() + compact.Body.Len()) / 2, compact.Body.Len() / 2} {
		set, _ := NewSet(OrderDownloads, entries)
		p := Policy{Limit: limit}
		first, _ := FitKandev(p, h, set, nil)
		set.Put(blockEntry(t, "p0150", "changed", 1<<40))
		set.Remove("p0151")
		if _, err := FitKandev(Policy{Limit: 10}, h, set, nil); err == nil {
			t.Fatal("a 10-byte limit holds a document")
		}
		got, err := FitKandev(p, h, set, nil)
		fresh, _ := NewSet(OrderDownloads, set.ByID())
		want, _ := FitKandev(p, h, fresh, nil)
		if err != nil || got.Mode != first.Mode || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Digest != want.Digest {
			t.Fatalf("%s: after a refused build the document is not a fresh set's (%v)", first.Mode, err)
		}
		for i := range 80 { // past the log's 64 entries
			set.Put(blockEntry(t, fmt.Sprintf("p%04d", i*3), "many", int64(i)))
		}
		got, err = FitKandev(p, h, set, nil)
		fresh, _ = NewSet(OrderDownloads, set.ByID())
		want, _ = FitKandev(p, h, fresh, nil)
		if err != nil || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Digest != want.Digest {
			t.Fatalf("%s: after many changes the document is not a fresh set's (%v)", first.Mode, err)
		}
	}
}

// TestKeptBlocksWithoutAGroupEnd: a catalogue none of whose entries ends a group (what a
// publisher grinding descriptions could make) is one block, rebuilt whole at each change,
// and its documents still have a fresh set's bytes and Digest.
func TestKeptBlocksWithoutAGroupEnd(t *testing.T) {
	h := Header{Serial: 1, GeneratedAt: time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)}
	n := 0
	mk := func(id string) *Encoded {
		for {
			n++
			e := blockEntry(t, id, fmt.Sprintf("no end %d", n), int64(n%97))
			if !endsGroup(e, false) {
				return e
			}
		}
	}
	var entries []*Encoded
	for i := range 300 {
		entries = append(entries, mk(fmt.Sprintf("p%04d", i)))
	}
	set, _ := NewSet(OrderDownloads, entries)
	r := rand.New(rand.NewPCG(7, 8))
	for step := range 40 {
		if step > 0 {
			set.Put(mk(fmt.Sprintf("p%04d", r.IntN(400))))
		}
		got, err := FitKandev(Policy{Limit: 1 << 30}, h, set, nil)
		fresh, _ := NewSet(OrderDownloads, set.ByID())
		want, _ := FitKandev(Policy{Limit: 1 << 30}, h, fresh, nil)
		if err != nil || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Digest != want.Digest || got.Digest != Digest(got.Body.Bytes()) {
			t.Fatalf("step %d: the document is not a fresh set's (%v)", step, err)
		}
		if len(set.kept.blocks.list) != 1 {
			t.Fatalf("step %d: %d blocks, want one", step, len(set.kept.blocks.list))
		}
		checkBlocks(t, fmt.Sprintf("step %d", step), set.kept.blocks, set.ByID())
	}
}
