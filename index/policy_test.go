package index_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// syntheticSnapshot is n plugins with descriptions of desc runes, two categories each, and
// one canvas in every 50 (with its previews and permissions).
func syntheticSnapshot(n, desc int) index.Snapshot {
	at := time.Date(2026, 9, 18, 6, 0, 12, 0, time.UTC)
	s := index.Snapshot{Serial: 9, GeneratedAt: at, Source: index.Source{Name: "Synthetic", URL: "https://r.example/index.json"}}
	cats := []string{"tools", "connector", "automation", "analytics"}
	for i := range n {
		id := fmt.Sprintf("p%05d-%s", (i*7919)%100000, strings.Repeat("x", i%5))
		p := index.Plugin{ID: id, Version: "1.0.0", Description: strings.Repeat("é", desc), Author: "Acme",
			Categories: []string{cats[i%4], cats[(i+1)%4]}, RepoURL: "https://github.com/acme/" + id,
			PackageURL: "https://r.example/packages/" + id + "/" + id + "-1.0.0.tar.gz", PackageSHA256: sha,
			UpdatedAt: at.Add(-time.Duration(i) * time.Minute), Downloads: int64(i % 1000), Featured: i%97 == 0, Official: i%211 == 0,
			APIVersion: 2, Platforms: []string{"linux-amd64"}}
		if i%50 == 0 {
			p.Kind = index.KindCanvas
			p.Permissions = &index.Permissions{Reads: []string{"tasks"}}
			p.Previews = []index.Preview{{URL: "https://cdn.example.com/a.png", Alt: "A"}, {URL: "https://cdn.example.com/b.png", Alt: "B"}}
		}
		s.Plugins = append(s.Plugins, p)
	}
	return s
}

type docShape struct {
	Plugins []map[string]any `json:"plugins"`
	Partial *index.Partial   `json:"partial"`
}

func decodeDoc(t *testing.T, name string, body []byte) docShape {
	t.Helper()
	var d docShape
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	return d
}

// At any catalogue size every document is within the limit, every entry is in exactly one
// id shard (so the id shards together are the catalogue), the partial object appears only
// when the document does not hold every entry in full, and it names every shard built.
func TestFitAtScale(t *testing.T) {
	for _, tc := range []struct {
		n       int
		partial bool
	}{{100, false}, {10_000, true}, {50_000, true}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			s := syntheticSnapshot(tc.n, 120)
			p := index.Policy{Limit: 5 << 20, BaseURL: "https://r.example"}
			f, err := index.Fit(p, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Kandev) > p.Limit {
				t.Errorf("index.json is %d bytes, over the %d limit", len(f.Kandev), p.Limit)
			}
			main := decodeDoc(t, "index.json", f.Kandev)
			if (main.Partial != nil) != tc.partial || f.Partial != tc.partial {
				t.Fatalf("partial = %v (Fitted %v), want %v", main.Partial != nil, f.Partial, tc.partial)
			}
			seen := map[string]int{}
			var idURLs, catURLs []string
			for _, sh := range f.Shards {
				if len(sh.Body) > p.Limit {
					t.Errorf("%s is %d bytes, over the limit", sh.Name, len(sh.Body))
				}
				d := decodeDoc(t, sh.Name, sh.Body)
				if !strings.HasPrefix(sh.Name, "all.") {
					catURLs = append(catURLs, sh.URL)
					continue
				}
				idURLs = append(idURLs, sh.URL)
				if d.Partial != nil {
					t.Errorf("id shard %s is partial (%+v): id shards hold their entries in full", sh.Name, d.Partial)
				}
				for _, e := range d.Plugins {
					seen[e["id"].(string)]++
				}
			}
			for _, pl := range s.Plugins {
				if seen[pl.ID] != 1 {
					t.Errorf("%s is in %d id shards, want exactly 1", pl.ID, seen[pl.ID])
				}
			}
			if len(seen) != len(s.Plugins) {
				t.Errorf("id shards hold %d ids, the catalogue %d", len(seen), len(s.Plugins))
			}
			if main.Partial == nil {
				if len(main.Plugins) != tc.n {
					t.Errorf("full index.json lists %d of %d", len(main.Plugins), tc.n)
				}
				return
			}
			if diff := cmp.Diff(idURLs, main.Partial.Shards); diff != "" {
				t.Errorf("partial.shards are not the id shards built (-built +named):\n%s", diff)
			}
			if diff := cmp.Diff(catURLs, main.Partial.CategoryShards); diff != "" {
				t.Errorf("partial.category_shards are not the category shards built (-built +named):\n%s", diff)
			}
			if main.Partial.Total != tc.n || main.Partial.Listed != len(main.Plugins) {
				t.Errorf("partial says %d of %d, the document lists %d of %d", main.Partial.Listed, main.Partial.Total, len(main.Plugins), tc.n)
			}
		})
	}
}

// Over the limit, compact entries come first: every entry stays, descriptions are cut to
// the rune budget with the marker, the cover preview only, registry-only fields dropped,
// and what the contract requires of a canvas (previews, package_sha256, permissions) kept.
func TestFitCompact(t *testing.T) {
	s := syntheticSnapshot(200, 400)
	full, err := index.Fit(index.Policy{}, s)
	if err != nil {
		t.Fatal(err)
	}
	p := index.Policy{Limit: len(full.Kandev) - 1, DescriptionMax: 50, BaseURL: "https://r.example"}
	f, err := index.Fit(p, s)
	if err != nil {
		t.Fatal(err)
	}
	if f.KandevMode != index.ModeCompact {
		t.Fatalf("mode %s, want compact", f.KandevMode)
	}
	d := decodeDoc(t, "index.json", f.Kandev)
	if len(d.Plugins) != 200 || d.Partial == nil || d.Partial.Policy != index.ModeCompact || d.Partial.Listed != 200 {
		t.Fatalf("compact document lists %d, partial %+v", len(d.Plugins), d.Partial)
	}
	for _, e := range d.Plugins {
		desc := e["description"].(string)
		if n := len([]rune(desc)); n != 50 || !strings.HasSuffix(desc, index.Ellipsis) {
			t.Errorf("%s: description of %d runes %q, want 50 ending in %q", e["id"], n, desc, index.Ellipsis)
		}
		for _, gone := range []string{"downloads", "signature", "featured", "official", "deprecated", "versions_url"} {
			if _, ok := e[gone]; ok {
				t.Errorf("%s: compact entry keeps %s", e["id"], gone)
			}
		}
		if e["details_url"] != "https://r.example/api/v1/index/"+e["id"].(string)+".json" {
			t.Errorf("%s: details_url %v", e["id"], e["details_url"])
		}
		if e["kind"] == index.KindCanvas {
			if pv := e["previews"].([]any); len(pv) != 1 {
				t.Errorf("%s: canvas keeps %d previews, want the cover only", e["id"], len(pv))
			}
			if e["package_sha256"] != sha || e["permissions"] == nil {
				t.Errorf("%s: canvas lost package_sha256 or permissions: %v", e["id"], e)
			}
		}
	}
	if probs := index.CheckKandev(f.Kandev); probs.HasErrors() {
		t.Errorf("a compact document fails the host checks: %v", probs)
	}
}

// When compact entries do not fit either, entries are chosen by rank: official, then
// featured, then the order (downloads or recent).
func TestFitSelectedByRank(t *testing.T) {
	s := syntheticSnapshot(2000, 100)
	for _, order := range []string{index.OrderDownloads, index.OrderRecent} {
		t.Run(order, func(t *testing.T) {
			p := index.Policy{Limit: 64 << 10, Order: order}
			f, err := index.Fit(p, s)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeDoc(t, "index.json", f.Kandev)
			if f.KandevMode != index.ModeSelected || d.Partial.Policy != index.ModeSelected || len(f.Kandev) > p.Limit {
				t.Fatalf("mode %s (%d bytes), partial %+v", f.KandevMode, len(f.Kandev), d.Partial)
			}
			listed := map[string]bool{}
			for _, e := range d.Plugins {
				listed[e["id"].(string)] = true
			}
			ranked := slices.Clone(s.Plugins)
			slices.SortStableFunc(ranked, func(a, b index.Plugin) int {
				key := func(p index.Plugin) []int64 {
					k := []int64{boolKey(p.Official), boolKey(p.Featured), -p.Downloads}
					if order == index.OrderRecent {
						k[2] = -p.UpdatedAt.Unix()
					}
					return k
				}
				if c := slices.Compare(key(a), key(b)); c != 0 {
					return c
				}
				return strings.Compare(a.ID, b.ID)
			})
			for i, pl := range ranked {
				if listed[pl.ID] != (i < len(d.Plugins)) {
					t.Fatalf("rank %d (%s, official %v, featured %v) listed = %v with %d listed", i, pl.ID, pl.Official, pl.Featured, listed[pl.ID], len(d.Plugins))
				}
			}
		})
	}
}

func boolKey(b bool) int64 {
	if b {
		return 0
	}
	return 1
}

// A document that fits is byte for byte what BuildKandev renders: no partial object, no
// change for catalogues that always fitted.
func TestFitFullIsBuildKandev(t *testing.T) {
	s := demoSnapshot()
	want, err := index.BuildKandev(s)
	if err != nil {
		t.Fatal(err)
	}
	f, err := index.Fit(index.Policy{}, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(f.Kandev)); diff != "" {
		t.Errorf("Fit (-BuildKandev +Fit):\n%s", diff)
	}
	wantC, _ := index.BuildCurupira(s)
	if diff := cmp.Diff(string(wantC), string(f.Curupira)); diff != "" {
		t.Errorf("Fit curupira (-BuildCurupira +Fit):\n%s", diff)
	}
}

// A limit no entry fits is an error, never an empty or oversized document: one that does
// not hold the header, and one that holds the header and partial object but no entry.
func TestFitNoFit(t *testing.T) {
	snap := syntheticSnapshot(3, 10)
	for _, limit := range []int{100, 500} {
		_, err := index.Fit(index.Policy{Limit: limit}, snap)
		if !errors.Is(err, index.ErrNoFit) {
			t.Errorf("Fit under a %d-byte limit: %v, want ErrNoFit", limit, err)
		}
	}
}

func TestTruncateRunes(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "abcd": "abcd", "abcde": "abc…", "ééééé": "ééé…", "": ""} {
		if got := index.TruncateRunes(in, 4); got != want {
			t.Errorf("TruncateRunes(%q, 4) = %q, want %q", in, got, want)
		}
	}
}

// The Curupira document gets the same guarantee: compact, then chosen, within the limit.
func TestFitCurupiraWithinTheLimit(t *testing.T) {
	s := syntheticSnapshot(0, 0)
	for i := range 300 {
		s.Extensions = append(s.Extensions, index.Extension{Name: fmt.Sprintf("@acme/ext-%03d", i), Version: "1.0.0",
			Description: strings.Repeat("d", 300), Launch: index.Launch{Type: "npx", Package: "x", Version: "1.0.0"},
			UpdatedAt: s.GeneratedAt.Add(-time.Duration(i) * time.Hour)})
	}
	full, err := index.Fit(index.Policy{}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit int
		mode  string
	}{{len(full.Curupira), index.ModeFull}, {len(full.Curupira) - 1, index.ModeCompact}, {16 << 10, index.ModeSelected}} {
		f, err := index.Fit(index.Policy{Limit: tc.limit}, s)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Extensions []map[string]any `json:"extensions"`
			Partial    *index.Partial   `json:"partial"`
		}
		if err := json.Unmarshal(f.Curupira, &d); err != nil {
			t.Fatal(err)
		}
		if f.CurupiraMode != tc.mode || len(f.Curupira) > tc.limit || (d.Partial != nil) != (tc.mode != index.ModeFull) {
			t.Errorf("limit %d: mode %s, %d bytes, partial %+v; want %s within the limit", tc.limit, f.CurupiraMode, len(f.Curupira), d.Partial, tc.mode)
		}
	}
}

// Shards kept across changes (PlanShards with the previous plans) hold what shards planned
// from scratch hold: every change reaches the shards that hold the entry, old or new.
func TestPlanShardsIncrementalMatchesFresh(t *testing.T) {
	s := syntheticSnapshot(3000, 100)
	p := index.Policy{Limit: 256 << 10, BaseURL: "https://r.example"}
	h := index.Header{Serial: 1, GeneratedAt: s.GeneratedAt}
	var entries []*index.Encoded
	for _, pl := range s.Plugins {
		e, err := index.EncodePlugin(pl, p)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	set, _ := index.NewSet(index.OrderDownloads, entries)
	prev, err := index.PlanShards(p, h, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 60 {
		pl := s.Plugins[(step*37)%len(s.Plugins)]
		switch step % 3 {
		case 0: // moves to another category and gains downloads
			pl.Categories, pl.Downloads = []string{"analytics"}, pl.Downloads+5000
			e, _ := index.EncodePlugin(pl, p)
			set.Put(e)
		case 1:
			set.Remove(pl.ID)
		default: // a new plugin
			pl.ID = fmt.Sprintf("new-%03d", step)
			e, _ := index.EncodePlugin(pl, p)
			set.Put(e)
		}
		if prev, err = index.PlanShards(p, h, set, prev); err != nil {
			t.Fatal(err)
		}
		fitsLikeFresh(t, step, p, h, set, prev)
	}
	fresh, err := index.NewSet(index.OrderDownloads, set.ByID())
	if err != nil {
		t.Fatal(err)
	}
	want, err := index.PlanShards(p, h, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Plans) != len(prev.Plans) {
		t.Fatalf("%d shards kept, %d planned fresh", len(prev.Plans), len(want.Plans))
	}
	for i, w := range want.Plans {
		got := prev.Plans[i]
		wd, err1 := w.Doc()
		gd, err2 := got.Doc()
		if err1 != nil || err2 != nil || w.Name != got.Name || string(wd.Body.Bytes()) != string(gd.Body.Bytes()) {
			t.Errorf("shard %s (kept %s) differs from a fresh plan (errors %v %v)", w.Name, got.Name, err1, err2)
		}
	}
}

// fitsLikeFresh fails unless set, changed by Put and Remove, fits and shards as a Set made
// anew from its entries does, at the limits where the mode turns: the sizes and running
// sums a Set keeps are those of its entries.
func fitsLikeFresh(t *testing.T, step int, p index.Policy, h index.Header, set *index.Set, plans *index.Shards) {
	t.Helper()
	fresh, err := index.NewSet(index.OrderDownloads, set.ByID())
	if err != nil {
		t.Fatal(err)
	}
	want, err := index.PlanShards(p, h, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Plans) != len(plans.Plans) {
		t.Fatalf("step %d: %d shards kept, %d planned fresh", step, len(plans.Plans), len(want.Plans))
	}
	for i, w := range want.Plans {
		if g := plans.Plans[i]; g.Name != w.Name || g.Entries != w.Entries {
			t.Fatalf("step %d: shard %s of %d entries, fresh %s of %d", step, g.Name, g.Entries, w.Name, w.Entries)
		}
	}
	q := p
	q.Limit = 1 << 30
	full, _ := index.FitKandev(q, h, fresh, want)
	q.Limit = len(full.Body.Bytes()) - 1
	compact, _ := index.FitKandev(q, h, fresh, want)
	for _, limit := range []int{len(full.Body.Bytes()), len(full.Body.Bytes()) - 1, len(compact.Body.Bytes()), len(compact.Body.Bytes()) - 1} {
		q.Limit = limit
		kept, err1 := index.FitKandev(q, h, set, plans)
		anew, err2 := index.FitKandev(q, h, fresh, want)
		if err1 != nil || err2 != nil || kept.Mode != anew.Mode || string(kept.Body.Bytes()) != string(anew.Body.Bytes()) {
			t.Fatalf("step %d, limit %d: index.json is %s, a fresh set's %s (errors %v %v)", step, limit, kept.Mode, anew.Mode, err1, err2)
		}
	}
}

// A selected index.json built again after a change holds the change: the bytes of the
// last selection are reused only for the very same entries.
func TestFitKandevSelectionFollowsChanges(t *testing.T) {
	s := syntheticSnapshot(2000, 100)
	p := index.Policy{Limit: 64 << 10}
	h := index.Header{Serial: 1, GeneratedAt: s.GeneratedAt}
	set := encodedSet(s, p)
	shards, _ := index.PlanShards(p, h, set, nil)
	first, err := index.FitKandev(p, h, set, shards)
	if err != nil || first.Mode != index.ModeSelected {
		t.Fatalf("mode %s, %v", first.Mode, err)
	}
	again, _ := index.FitKandev(p, h, set, shards)
	if string(again.Body.Bytes()) != string(first.Body.Bytes()) {
		t.Fatal("the same entries gave other bytes")
	}
	for _, d := range []index.Doc{first, again} {
		if d.Digest != index.Digest(d.Body.Bytes()) {
			t.Error("a selected document's Digest is not the digest of its body")
		}
		if probs := index.CheckKandev(d.Body.Bytes()); probs.HasErrors() {
			t.Errorf("a selected document fails the host checks: %v", probs)
		}
	}
	pl := s.Plugins[0]                        // official: always chosen
	pl.Description = strings.Repeat("ü", 100) // the same size: the same number of entries fit
	e, _ := index.EncodePlugin(pl, p)
	set.Put(e)
	changed, _ := index.FitKandev(p, h, set, shards)
	if !strings.Contains(string(changed.Body.Bytes()), `"description":"`+strings.Repeat("ü", 100)+`"`) {
		t.Error("a change to a chosen entry did not reach index.json")
	}
	for i, pl := range []int{1, len(s.Plugins) / 2, len(s.Plugins) - 1} { // first, middle, last chosen or not
		c := s.Plugins[pl]
		c.Description = fmt.Sprintf(`a "},{" inside %d`, i) // a chunk boundary inside a string
		e, _ := index.EncodePlugin(c, p)
		set.Put(e)
		d, err := index.FitKandev(p, h, set, shards)
		if err != nil || d.Digest != index.Digest(d.Body.Bytes()) {
			t.Errorf("after changing entry %d: Digest is not the digest of the body (%v)", pl, err)
		}
	}
}

// At the smallest limit and a long public URL, a large catalogue still gives documents
// within the limit that list entries: id shards are packed near the limit (their number
// follows the catalogue's bytes, not the id alphabet), and a shard list too long for the
// partial object is named by URL instead of inlined.
func TestShardsPackedAndListBounded(t *testing.T) {
	s := syntheticSnapshot(12_500, 120)
	p := index.Policy{Limit: 64 << 10, BaseURL: "https://" + strings.Repeat("r", 160) + ".example"}
	f, err := index.Fit(p, s)
	if err != nil {
		t.Fatal(err)
	}
	main := decodeDoc(t, "index.json", f.Kandev)
	if len(f.Kandev) > p.Limit || main.Partial == nil || len(main.Plugins) == 0 {
		t.Fatalf("index.json: %d bytes (limit %d), partial %v, %d entries: want a partial document within the limit that lists entries", len(f.Kandev), p.Limit, main.Partial != nil, len(main.Plugins))
	}
	full, ids := 0, 0
	for _, pl := range s.Plugins {
		e, err := index.EncodePlugin(pl, p)
		if err != nil {
			t.Fatal(err)
		}
		full += len(e.Full) + 1
	}
	for _, sh := range f.Shards {
		if len(sh.Body) > p.Limit {
			t.Errorf("%s is %d bytes, over the limit", sh.Name, len(sh.Body))
		}
		if strings.HasPrefix(sh.Name, "all.") {
			ids++
		}
	}
	if most := 2*(full/p.Limit+1) + 8; ids > most {
		t.Errorf("%d id shards for %d bytes of entries at a %d-byte limit; packed, at most %d", ids, full, p.Limit, most)
	}
	if len(main.Partial.Shards) != 0 || main.Partial.ShardList != p.ShardURL(index.ShardListName) {
		t.Errorf("partial names %d shards inline and shard_list %q: %d URLs take more than an eighth of the limit, want none inline and the list's URL", len(main.Partial.Shards), main.Partial.ShardList, ids)
	}
}

// Digest hashes the digests of a body's chunks, a chunk ending at each "}" before ",{"
// outside a JSON string.
func TestDigest(t *testing.T) {
	sum := func(chunks ...string) [32]byte { // groups end after a chunk whose digest starts below 4
		var groups, group []byte
		for i, c := range chunks {
			h := sha256.Sum256([]byte(c))
			group = append(group, h[:]...)
			if h[0] < 4 || i == len(chunks)-1 {
				g := sha256.Sum256(group)
				groups, group = append(groups, g[:]...), nil
			}
		}
		return sha256.Sum256(groups)
	}
	ends := "" // a chunk that ends a group
	for k := 0; ends == ""; k++ {
		if c := fmt.Sprintf(`,{"n":%d}`, k); sha256.Sum256([]byte(c))[0] < 4 {
			ends = c
		}
	}
	tests := []struct {
		body string
		want [32]byte
	}{
		{"", sum("")},
		{`{"a":1}`, sum(`{"a":1}`)},
		{`},{`, sum(`}`, `,{`)},
		{`[{"a":1},{"b":2},{}]`, sum(`[{"a":1}`, `,{"b":2}`, `,{}]`)},
		{`[1,{"a":2}]`, sum(`[1,{"a":2}]`)},                         // a "," not after "}"
		{`{"a":"},{"}`, sum(`{"a":"},{"}`)},                         // inside a string: no end
		{`[{"a":"\"},{"},{}]`, sum(`[{"a":"\"},{"}`, `,{}]`)},       // an escaped quote does not close it
		{`[{"a":"x\\"},{"b":1}]`, sum(`[{"a":"x\\"}`, `,{"b":1}]`)}, // an escaped backslash does not escape the quote
		{`[{"a":"},{`, sum(`[{"a":"},{`)},                           // a string that never closes
		{`[{},[{}]]`, sum(`[{},[{}]]`)},
		{`[{"a":1}` + ends + `,{"b":2}]`, sum(`[{"a":1}`, ends, `,{"b":2}]`)},            // two groups
		{`[{"a":1}` + ends + ends + `]`, sum(`[{"a":1}`, ends, ends+`]`)},                // three
		{`[{"a":1}` + ends[:len(ends)-1] + `]`, sum(`[{"a":1}`, ends[:len(ends)-1]+`]`)}, // the chunk changed: one group
	}
	for _, tt := range tests {
		if got := index.Digest([]byte(tt.body)); got != tt.want {
			t.Errorf("Digest(%q) = %x, want %x", tt.body, got, tt.want)
		}
	}
}

// Full and compact documents carry the digest of their bodies, computed from the entries'
// kept segment digests, before and after changes to the first, a middle and the last entry
// (one with a chunk boundary inside a string), and with one entry only.
func TestJoinedDocumentDigest(t *testing.T) {
	s := syntheticSnapshot(400, 20)
	h := index.Header{Serial: 1, GeneratedAt: s.GeneratedAt}
	for _, tc := range []struct {
		limit int
		mode  string
	}{{0, index.ModeFull}, {240 << 10, index.ModeCompact}} {
		p := index.Policy{Limit: tc.limit}
		set := encodedSet(s, p)
		check := func(what string) {
			t.Helper()
			shards, _ := index.PlanShards(p, h, set, nil)
			d, err := index.FitKandev(p, h, set, shards)
			if err != nil || d.Mode != tc.mode {
				t.Fatalf("%s: mode %s (%v), want %s", what, d.Mode, err, tc.mode)
			}
			if d.Digest != index.Digest(d.Body.Bytes()) {
				t.Errorf("%s, %s: Digest is not the digest of the body", tc.mode, what)
			}
		}
		check("first build")
		check("the same entries again")
		for i, at := range []int{0, len(s.Plugins) / 2, len(s.Plugins) - 1} {
			c := s.Plugins[at]
			c.Description = fmt.Sprintf(`changed "},{" %d`, i)
			e, _ := index.EncodePlugin(c, p)
			set.Put(e)
			check(fmt.Sprintf("entry %d changed", at))
		}
		var odd []*index.Encoded // entries that are not objects: no chunk ends between them
		for i := range 4 {
			b := []byte(fmt.Sprintf("%d", i))
			odd = append(odd, &index.Encoded{ID: fmt.Sprintf("odd-%d", i), Full: b, Compact: b})
		}
		oddSet, _ := index.NewSet(index.OrderDownloads, odd)
		if d, err := index.FitKandev(p, h, oddSet, nil); err != nil || d.Digest != index.Digest(d.Body.Bytes()) {
			t.Errorf("%s, entries that are not objects: Digest is not the digest of the body (%v)", tc.mode, err)
		}
		one, _ := index.NewSet(index.OrderDownloads, set.ByID()[:1])
		d, err := index.FitKandev(p, h, one, nil)
		if err != nil || d.Digest != index.Digest(d.Body.Bytes()) {
			t.Errorf("%s, one entry: Digest is not the digest of the body (%v)", tc.mode, err)
		}
	}
}

// TestSelectionFollowsChangesLikeAFreshSet: a selected index.json built after each of a run
// of changes (new versions that move an entry's rank, removals, new plugins, a description
// that changes how many entries fit) has the bytes a Set made anew from the same entries
// gives: the selection kept between builds, updated by its rank walk instead of a sort,
// never keeps an entry no longer chosen nor misses one newly chosen.
func TestSelectionFollowsChangesLikeAFreshSet(t *testing.T) {
	s := syntheticSnapshot(1500, 60)
	p := index.Policy{Limit: 96 << 10}
	h := index.Header{Serial: 1, GeneratedAt: s.GeneratedAt}
	set := encodedSet(s, p)
	r := rand.New(rand.NewPCG(3, 4))
	for step := range 300 {
		pl := s.Plugins[r.IntN(len(s.Plugins))]
		switch k := r.IntN(10); {
		case k < 6: // a new release: its downloads move it up or down the ranks
			pl.Downloads = int64(r.IntN(2000))
			pl.Version = fmt.Sprintf("1.%d.0", step)
		case k < 7:
			set.Remove(pl.ID)
			continue
		case k < 8:
			pl.ID = fmt.Sprintf("new-%04d", step)
			pl.Downloads = int64(r.IntN(2000))
		default: // a longer or shorter description: fewer or more entries fit
			pl.Description = strings.Repeat("d", r.IntN(400))
		}
		e, _ := index.EncodePlugin(pl, p)
		set.Put(e)
		got, err := index.FitKandev(p, h, set, nil)
		if err != nil || got.Mode != index.ModeSelected {
			t.Fatalf("step %d: mode %s, %v", step, got.Mode, err)
		}
		fresh, _ := index.NewSet(index.OrderDownloads, set.ByID())
		want, _ := index.FitKandev(p, h, fresh, nil)
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Digest != want.Digest || got.Listed != want.Listed {
			t.Fatalf("step %d: the kept selection lists %d entries, a fresh set %d; the bytes differ", step, got.Listed, want.Listed)
		}
	}
}

// TestJoinedDigestOfOddEntries: a document's Digest, made from its entries' kept chunk
// digests, is the digest of its bytes whatever the entries hold: two entries only (no
// middle one), entries whose strings hold "},{" at their very start and end, empty objects,
// entries that are not objects among objects (first, middle, last), entries kept behind a
// comma (EncodePlugin) or not (an Encoded made by hand), in full and compact documents.
func TestJoinedDigestOfOddEntries(t *testing.T) {
	h := index.Header{Serial: 1, GeneratedAt: time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)}
	pad := strings.Repeat("f", 600) // a full form longer than a compact one and the partial object
	obj := func(id, s string) *index.Encoded {
		full := []byte(`{"id":"` + id + `","d":"` + s + `","more":"},{` + pad + `"}`)
		return &index.Encoded{ID: id, Full: full, Compact: []byte(`{"id":"` + id + `","d":"` + s + `"}`)}
	}
	raw := func(id, b string) *index.Encoded { // its full form as long as an obj's
		return &index.Encoded{ID: id, Full: []byte(b + strings.Repeat(" ", len(pad))), Compact: []byte(b)}
	}
	pl := index.Plugin{ID: "enc", Version: "1.0.0", Description: strings.Repeat("},{", 300), Author: "},{", APIVersion: 2,
		RepoURL: "https://e.example/},{", PackageURL: "https://e.example/p.tar.gz", PackageSHA256: strings.Repeat("ab", 32)}
	enc, err := index.EncodePlugin(pl, index.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		entries []*index.Encoded
	}{
		{"two objects", []*index.Encoded{obj("a", "x"), obj("b", "y")}},
		{"two with },{ at their ends", []*index.Encoded{obj("a", "},{"), obj("b", "},{},{")}},
		{"three with },{ everywhere", []*index.Encoded{obj("a", "},{},{"), obj("b", "},{"), obj("c", "{},{}")}},
		{"empty objects", []*index.Encoded{raw("a", "{}"), raw("b", "{}"), obj("c", "")}},
		{"a non-object first", []*index.Encoded{raw("a", "[{}]"), obj("b", "x"), obj("c", "y")}},
		{"a non-object in the middle", []*index.Encoded{obj("a", "x"), raw("b", "7"), obj("c", "y")}},
		{"one opening like an object", []*index.Encoded{obj("a", "x"), raw("b", "{7"), obj("c", "y")}},
		{"a non-object last", []*index.Encoded{obj("a", "x"), obj("b", "y"), raw("c", `"},{"`)}},
		{"encoded and made by hand", []*index.Encoded{obj("a", "},{"), enc, obj("f", "},{")}},
		{"one encoded", []*index.Encoded{enc}},
	}
	for _, tt := range tests {
		set, err := index.NewSet(index.OrderDownloads, tt.entries)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := index.FitKandev(index.Policy{Limit: 1 << 30}, h, set, nil)
		compact, _ := index.FitKandev(index.Policy{Limit: full.Body.Len() - 1}, h, set, nil)
		for _, d := range []index.Doc{full, compact} {
			if d.Digest != index.Digest(d.Body.Bytes()) || d.Listed != len(tt.entries) {
				t.Errorf("%s, %s: Digest is not the digest of the body (%d entries listed)", tt.name, d.Mode, d.Listed)
			}
		}
		if full.Mode != index.ModeFull || compact.Mode != index.ModeCompact {
			t.Errorf("%s: modes %s and %s", tt.name, full.Mode, compact.Mode)
		}
	}
}

// TestSelectionEdgeChanges: the kept selection gives a fresh set's bytes after changes a
// rank walk could get wrong: an entry replaced by one with the same id and rank keys (only
// its bytes differ), entries tied in downloads (ranked by id), two chosen entries trading
// places, the first entry sinking out of the choice, an entry that shrinks so that more fit
// and one that grows so that fewer do, and every entry replaced at once.
func TestSelectionEdgeChanges(t *testing.T) {
	h := index.Header{Serial: 1, GeneratedAt: time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)}
	mk := func(i int, downloads int64, desc int) *index.Encoded {
		id := fmt.Sprintf("p%03d", i)
		c := []byte(`{"id":"` + id + `","d":"` + strings.Repeat("c", desc) + `"}`)
		return &index.Encoded{ID: id, Downloads: downloads, Full: bytes.Repeat([]byte("f"), 500), Compact: c}
	}
	var entries []*index.Encoded
	for i := range 80 {
		entries = append(entries, mk(i, int64(i%5), 40)) // 16 entries tied at each count
	}
	set, _ := index.NewSet(index.OrderDownloads, entries)
	full, _ := index.FitKandev(index.Policy{Limit: 1 << 30}, h, set, nil)
	compact, _ := index.FitKandev(index.Policy{Limit: full.Body.Len() - 1}, h, set, nil)
	p := index.Policy{Limit: compact.Body.Len() * 2 / 3}
	steps := []struct {
		name string
		put  []*index.Encoded
	}{
		{"first build", nil},
		{"same id and rank keys, other bytes", []*index.Encoded{mk(74, 4, 41)}},
		{"a tie broken by a download", []*index.Encoded{mk(4, 5, 40)}},
		{"two trade places", []*index.Encoded{mk(9, 0, 40), mk(3, 9, 40)}},
		{"the first sinks out", []*index.Encoded{mk(3, -1, 40)}},
		{"a chosen entry shrinks: more fit", []*index.Encoded{mk(14, 4, 0)}},
		{"a chosen entry grows: fewer fit", []*index.Encoded{mk(19, 4, 600)}},
		{"an unchosen entry rises to the top", []*index.Encoded{mk(0, 100, 40)}},
	}
	var all []*index.Encoded
	for i := range 80 {
		all = append(all, mk(i, int64(80-i), 30))
	}
	steps = append(steps, struct {
		name string
		put  []*index.Encoded
	}{"every entry replaced, the order reversed", all})
	for _, st := range steps {
		for _, e := range st.put {
			set.Put(e)
		}
		got, err := index.FitKandev(p, h, set, nil)
		fresh, _ := index.NewSet(index.OrderDownloads, set.ByID())
		want, _ := index.FitKandev(p, h, fresh, nil)
		if err != nil || got.Mode != index.ModeSelected {
			t.Fatalf("%s: mode %s, %v", st.name, got.Mode, err)
		}
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Digest != want.Digest {
			t.Fatalf("%s: the kept selection lists %d entries, a fresh set %d; the bytes differ", st.name, got.Listed, want.Listed)
		}
	}
}

// TestDocumentsFromSharedEntriesConcurrently: documents of every mode built at once from
// the same entries (each build with its own Set, as the hosts' documents are), some encoded,
// some made by hand so that their forms are made on first use, all have the bytes and the
// Digest a build alone gives. Under -race, it checks that the entries' forms and their
// chunk digests, made on first use, are made safely.
func TestDocumentsFromSharedEntriesConcurrently(t *testing.T) {
	s := syntheticSnapshot(300, 20)
	h := index.Header{Serial: 1, GeneratedAt: s.GeneratedAt}
	newEntries := func() []*index.Encoded {
		var entries []*index.Encoded
		for i, pl := range s.Plugins {
			e, _ := index.EncodePlugin(pl, index.Policy{})
			if i%2 == 1 {
				e = &index.Encoded{ID: e.ID, Downloads: e.Downloads, Full: e.Full, Compact: e.Compact}
			}
			entries = append(entries, e)
		}
		return entries
	}
	fit := func(entries []*index.Encoded, limit int) index.Doc {
		set, _ := index.NewSet(index.OrderDownloads, entries)
		d, err := index.FitKandev(index.Policy{Limit: limit}, h, set, nil)
		if err != nil {
			t.Error(err)
		}
		return d
	}
	sizing := newEntries() // the shared entries' forms are first made by the builds at once
	full := fit(sizing, 1<<30).Body.Len()
	limits := []int{full, full - 1, fit(sizing, full-1).Body.Len() / 2} // full, compact, selected
	entries := newEntries()
	build := func(limit int) index.Doc { return fit(entries, limit) }
	docs := make([]index.Doc, 8*len(limits))
	var wg sync.WaitGroup
	for i := range docs {
		wg.Go(func() { docs[i] = build(limits[i%len(limits)]) })
	}
	wg.Wait()
	for i, d := range docs {
		alone := build(limits[i%len(limits)])
		if !bytes.Equal(d.Body.Bytes(), alone.Body.Bytes()) || d.Digest != alone.Digest || d.Digest != index.Digest(alone.Body.Bytes()) {
			t.Errorf("build %d (%s): the bytes or Digest differ from a build alone's", i, d.Mode)
		}
	}
	if docs[0].Mode != index.ModeFull || docs[1].Mode != index.ModeCompact || docs[2].Mode != index.ModeSelected {
		t.Errorf("modes %s, %s, %s; want full, compact, selected", docs[0].Mode, docs[1].Mode, docs[2].Mode)
	}
}

// BenchmarkDigestChunkDense: what a document's Digest costs when its entries' strings are
// "},{" over and over (a chunk, so a SHA-256 and 32 bytes of sums, every 3 bytes), against
// entries of plain text, at three document sizes: the costliest bytes an author can put in
// a document for its ETag (the sums kept per entry grow the same way).
func BenchmarkDigestChunkDense(b *testing.B) {
	for _, text := range []struct{ name, s string }{{"plain", "abc"}, {"dense", "},{"}} {
		entry := `{"id":"p","description":"` + strings.Repeat(text.s, 340) + `"}`
		for _, size := range []int{64 << 10, 1 << 20, 5 << 20} {
			body := []byte(`{"plugins":[` + entry)
			for len(body) < size {
				body = append(append(body, ','), entry...)
			}
			body = append(body, "]}"...)
			b.Run(fmt.Sprintf("%s/%dKiB", text.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					index.Digest(body)
				}
			})
		}
	}
}

// encodedSet is the Set (downloads order) of s's plugins encoded under p.
func encodedSet(s index.Snapshot, p index.Policy) *index.Set {
	var entries []*index.Encoded
	for _, pl := range s.Plugins {
		e, _ := index.EncodePlugin(pl, p)
		entries = append(entries, e)
	}
	set, _ := index.NewSet(index.OrderDownloads, entries)
	return set
}
