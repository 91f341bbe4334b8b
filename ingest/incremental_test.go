package ingest

import (
	"bytes"
	"context"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

var generatedAt = regexp.MustCompile(`"generated_at":"[^"]+"`)

// After a run of changes, each applied incrementally, the documents, every shard and the
// catalog are those a full rebuild from the store makes: the incremental path drops,
// moves and adds what a full build would.
func TestIncrementalMatchesFullRebuild(t *testing.T) {
	ctx := context.Background()
	cfg := Config{MaxIndexBytes: 1700} // partial: shards in play
	s := newPublishService(t, publishList(), cfg)
	publishOK(t, s, "acme-hello", "1.0.0", "first")
	publishOK(t, s, "acme-other", "1.0.0", strings.Repeat("long text ", 50))
	publishOK(t, s, "filler-a", "1.0.0", "a")
	publishOK(t, s, "acme-hello", "1.1.0", "second")
	for _, step := range []func() error{
		func() error { return s.Yank(ctx, anAdmin, "acme-hello", "1.1.0", true, "bad") },
		func() error { return s.Yank(ctx, anAdmin, "filler-a", "1.0.0", true, "gone") }, // its only version: it leaves
		func() error { return s.Deprecate(ctx, anAdmin, "acme-other", "use acme-hello", "acme-hello") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if v := indexed(s, "filler-a"); v != "" {
		t.Errorf("filler-a, whose only version is yanked, is still listed at %q", v)
	}
	fresh := New(s.db(), s.List(), s.cfg, discard())
	t.Cleanup(fresh.Close)
	if err := fresh.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	norm := func(b []byte) string { return generatedAt.ReplaceAllString(string(b), `"generated_at":"X"`) }
	got, want := s.Documents(), fresh.Documents()
	if !got.Partial() {
		t.Fatalf("index.json is not partial under %d bytes: the shards are not exercised", cfg.MaxIndexBytes)
	}
	if diff := cmp.Diff(norm(want.Kandev.Body.Bytes()), norm(got.Kandev.Body.Bytes())); diff != "" {
		t.Errorf("index.json (-full +incremental):\n%s", diff)
	}
	if diff := cmp.Diff(norm(want.Curupira.Body.Bytes()), norm(got.Curupira.Body.Bytes())); diff != "" {
		t.Errorf("curupira/index.json (-full +incremental):\n%s", diff)
	}
	wi, wc := want.ShardURLs()
	gi, gc := got.ShardURLs()
	if diff := cmp.Diff(append(wi, wc...), append(gi, gc...)); diff != "" {
		t.Fatalf("shards (-full +incremental):\n%s", diff)
	}
	serial := regexp.MustCompile(`"serial":\d+`)
	for _, u := range append(wi, wc...) {
		name := u[strings.LastIndex(u, "/")+1:]
		wd, _, err1 := want.Shard(name)
		gd, _, err2 := got.Shard(name)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		// A kept shard names the serial of its last change; the content must agree.
		w, g := serial.ReplaceAllString(norm(wd.Body.Bytes()), "S"), serial.ReplaceAllString(norm(gd.Body.Bytes()), "S")
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s (-full +incremental):\n%s", name, diff)
		}
	}
	var ids, wantIDs []string
	for _, it := range s.Catalog().Items() {
		ids = append(ids, it.ID+"@"+it.Latest.Version)
	}
	for _, it := range fresh.Catalog().Items() {
		wantIDs = append(wantIDs, it.ID+"@"+it.Latest.Version)
	}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("catalog (-full +incremental):\n%s", diff)
	}
}

// TestParallelEncodeBuildsTheSameIndex: a start whose items are made and entries encoded
// over several goroutines (itemsOf, one per encodeParallelMin packages) builds the
// documents and the catalogue one worker in order builds, packages with releases and no
// item (not in the list) left out in place; run with -race, it also shows the workers
// share nothing they write.
func TestParallelEncodeBuildsTheSameIndex(t *testing.T) {
	st := mustStore(t)
	l := seedCatalogue(t, st, 3000)
	unlisted := func(id string) bool {
		n, err := strconv.Atoi(strings.TrimPrefix(id, "plugin-"))
		return err == nil && n%7 == 3
	}
	l.Plugins = slices.DeleteFunc(l.Plugins, func(e index.Entry) bool { return unlisted(e.ID) })
	want := len(l.Plugins) - 1 // acme-hello has no release
	build := func(min int) (*Service, []string) {
		t.Helper()
		old := encodeParallelMin
		encodeParallelMin = min
		defer func() { encodeParallelMin = old }()
		s := rebuiltService(t, st, l, Config{PublicURL: "http://r.example"})
		var ids []string
		for it := range s.Catalog().All() {
			ids = append(ids, it.ID)
		}
		return s, ids
	}
	one, oneIDs := build(1 << 30)
	many, manyIDs := build(500) // 6 workers' worth, capped at GOMAXPROCS
	norm := func(b []byte) []byte { return generatedAt.ReplaceAll(b, []byte(`"generated_at":"X"`)) }
	od, md := one.Documents(), many.Documents()
	if !bytes.Equal(norm(od.Kandev.Body.Bytes()), norm(md.Kandev.Body.Bytes())) || od.Listed != md.Listed {
		t.Error("index.json differs between an encoding in order and one over several goroutines")
	}
	if !slices.Equal(oneIDs, manyIDs) || len(oneIDs) != want || slices.ContainsFunc(oneIDs, unlisted) {
		t.Errorf("catalogues of %d and %d items, want %d each (the unlisted and acme-hello left out) in the same order", len(oneIDs), len(manyIDs), want)
	}
	parallelFrom(t, 500)
	ids := slices.Sorted(maps.Keys(many.built.rels))
	items, encs, err := many.itemsOf(context.Background(), many.built, ids)
	if err != nil || len(encs) != len(items) || len(items) != want {
		t.Fatalf("itemsOf: %d entries for %d items, %v; want %d", len(encs), len(items), err, want)
	}
	for i, e := range encs {
		if e.ID != items[i].ID || items[i].ID != manyIDs[i] {
			t.Fatalf("entry %d is %s's and item %s, want %s's: each item's entry is in its place", i, e.ID, items[i].ID, manyIDs[i])
		}
	}
}
