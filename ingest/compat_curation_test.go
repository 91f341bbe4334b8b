package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// TestCurationNarrowsEverywhere: a curated max_kandev stops offering a release to newer
// hosts in the host-aware index (cached documents are rebuilt), the compatibility answer
// and the upgrade answer; it is audited; clearing it restores the manifest's range.
func TestCurationNarrowsEverywhere(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	h94 := mustHost(t, "0.94.0", "linux-amd64")
	d, err := s.HostIndex(ctx, h94)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(picks(t, d.Kandev.Body.Bytes()), "p-multi@2.0.0") {
		t.Fatalf("before curation: %v", picks(t, d.Kandev.Body.Bytes()))
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", "0.93.4", "crashes on the 0.94 task API"); err != nil {
		t.Fatal(err)
	}
	d, err = s.HostIndex(ctx, h94)
	if err != nil {
		t.Fatal(err)
	}
	if got := picks(t, d.Kandev.Body.Bytes()); slices.Contains(got, "p-multi@2.0.0") || !slices.Contains(got, "p-multi@1.1.0") {
		t.Errorf("after curation 0.94.0 is offered %v; want p-multi@1.1.0, the newest release left it can install", got)
	}
	d93, err := s.HostIndex(ctx, mustHost(t, "0.93.4", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(picks(t, d93.Kandev.Body.Bytes()), "p-multi@2.0.0") {
		t.Errorf("0.93.4 (the curated maximum, inclusive) is offered %v, want p-multi@2.0.0", picks(t, d93.Kandev.Body.Bytes()))
	}
	rep, err := s.Compatibility(ctx, "p-multi", h94)
	if err != nil {
		t.Fatal(err)
	}
	if codes := reasonCodes(rep.Releases[1]); rep.Releases[1].Version != "2.0.0" || !slices.Contains(codes, ReasonCuratedMax) || rep.Releases[1].Curated == nil {
		t.Errorf("2.0.0 on 0.94.0: %+v, want refused as curated", rep.Releases[1])
	}
	up, err := s.Upgrade(ctx, "p-multi", "1.1.0", h94)
	if err != nil {
		t.Fatal(err)
	}
	if up.Upgrade != "none" {
		t.Errorf("upgrade from 1.1.0 on 0.94.0 = %s, want none (2.0.0 is curated away)", up.Upgrade)
	}
	entries, err := s.db().AuditLog(ctx, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := entries[0]; e.Action != "compat_set" || e.Target != "p-multi@2.0.0" || e.Actor != "admin" || e.Detail["max_kandev"] != "0.93.4" {
		t.Errorf("audit %+v, want compat_set of p-multi@2.0.0 by admin with max_kandev", e)
	}
	if had, err := s.ClearCompat(ctx, anAdmin, "p-multi", "2.0.0"); err != nil || !had {
		t.Fatalf("ClearCompat = %v, %v", had, err)
	}
	if had, err := s.ClearCompat(ctx, anAdmin, "p-multi", "2.0.0"); err != nil || had {
		t.Fatalf("a second ClearCompat = %v, %v; want false: nothing to clear", had, err)
	}
	if entries, err = s.db().AuditLog(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	if entries[0].Action != "compat_clear" || entries[1].Action != "compat_set" {
		t.Errorf("audit %s, %s; want one compat_clear (the no-op clear is not audited) after compat_set", entries[0].Action, entries[1].Action)
	}
	d, err = s.HostIndex(ctx, h94)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(picks(t, d.Kandev.Body.Bytes()), "p-multi@2.0.0") {
		t.Errorf("after clearing: %v, want p-multi@2.0.0 back", picks(t, d.Kandev.Body.Bytes()))
	}
}

// TestCurationNeverWidens: a maximum below the manifest's floor is refused naming
// max_kandev; and since a curation holds only a maximum, no curation makes a host below
// min_kandev_version (or with an api_version, platform or kind it lacks) installable.
func TestCurationNeverWidens(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	_, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", "0.91.9", "too low")
	if ruleOf(err) != "compat.max_kandev.below_min" || !errors.Is(err, ErrInvalid) {
		t.Fatalf("max below min: %v (rule %q), want compat.max_kandev.below_min", err, ruleOf(err))
	}
	if r := err.(*Refusal); r.Problems[0].Path != "max_kandev" || !strings.Contains(r.Message, "0.92.0") {
		t.Errorf("refusal %q at %q: want it to name max_kandev and the floor 0.92.0", r.Message, r.Problems[0].Path)
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", "0.92.0", "only the floor"); err != nil {
		t.Fatalf("max equal to min: %v", err)
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-new", "1.0.0", "99.0.0", "as wide as it gets"); err != nil {
		t.Fatal(err)
	}
	for _, h := range []Host{mustHost(t, "0.91.0", "linux-amd64"), mustHost(t, "0.50.0", "linux-amd64"), mustHost(t, "0.95.0", "windows-amd64")} {
		rep, err := s.Compatibility(ctx, "p-new", h)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Offered != nil {
			t.Errorf("p-new curated up to 99.0.0 is offered to %s on %s, which its manifest refuses", h.Kandev, h.Platform)
		}
	}
	for _, tt := range []struct{ max, reason, rule string }{
		{"0.93", "x", "compat.max_kandev.format"},
		{"v0.93.0", "x", "compat.max_kandev.format"},
		{strings.Repeat("9", 100), "x", "compat.max_kandev.format"},
		{"0.93.0", "", "compat.reason"},
		{"0.93.0", "two\nlines", "compat.reason"},
		{"0.93.0", strings.Repeat("a", MaxCompatReason+1), "compat.reason"},
	} {
		if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", tt.max, tt.reason); ruleOf(err) != tt.rule {
			t.Errorf("SetCompat(max %.20q, reason %.20q): %v, want %s", tt.max, tt.reason, err, tt.rule)
		}
	}
	if _, err := s.SetCompat(ctx, Actor{Name: "publisher:acme", Publisher: "acme"}, "p-multi", "2.0.0", "0.93.0", "x"); !errors.Is(err, ErrForbidden) {
		t.Errorf("a publisher curating: %v, want ErrForbidden", err)
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "7.0.0", "0.93.0", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown release: %v, want ErrNotFound", err)
	}
}

// TestCurationLeavingNoHostIsRefused: a max_kandev below the first capability row that
// installs the release (its api_version, a canvas) leaves no host able to install it, a
// hidden yank: refused naming max_kandev and the first such host version.
func TestCurationLeavingNoHostIsRefused(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	tests := []struct{ id, ver, max, rule, names string }{
		{"p-ui", "1.0.0", "0.0.0", "compat.max_kandev.no_host", "0.80.0"},
		{"p-ui", "1.0.0", "0.79.9", "compat.max_kandev.no_host", "0.80.0"},
		{"p-ui", "1.0.0", "0.80.0-rc.1", "compat.max_kandev.no_host", "0.80.0"},
		{"p-ui", "2.0.0", "0.91.0", "compat.max_kandev.no_host", "0.92.0"},
		{"c-board", "1.0.0", "0.91.5", "compat.max_kandev.no_host", "0.92.0"},
		{"p-ui", "1.0.0", "0.80.0", "", ""},
		{"p-ui", "2.0.0", "0.92.0", "", ""},
	}
	for _, tt := range tests {
		_, err := s.SetCompat(ctx, anAdmin, tt.id, tt.ver, tt.max, "narrowed")
		if ruleOf(err) != tt.rule || (tt.rule == "") != (err == nil) {
			t.Errorf("SetCompat(%s@%s, max %s): %v (rule %q), want rule %q", tt.id, tt.ver, tt.max, err, ruleOf(err), tt.rule)
			continue
		}
		if err == nil {
			continue
		}
		if r := err.(*Refusal); r.Problems[0].Path != "max_kandev" || !strings.Contains(r.Message, tt.names) || !strings.Contains(r.Message, "yank") {
			t.Errorf("refusal %q at %q: want it to name max_kandev, %s and yank", r.Message, r.Problems[0].Path, tt.names)
		}
	}
}

// TestCurationOfAnExtensionIsRefused: Curupira extensions have no Kandev host range, and
// the compatibility API does not judge them.
func TestCurationOfAnExtensionIsRefused(t *testing.T) {
	l := compatList()
	l.Extensions = []index.ExtensionEntry{{Name: "curupira-github-issues", Repo: "acme/curupira-github-issues", Owners: []string{"acme"}}}
	s := newPublishService(t, l, Config{})
	ctx := context.Background()
	if _, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(extensionPkg(t)), FileName: PackageFileName("curupira-github-issues", "1.0.0"), Actor: anAdmin}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetCompat(ctx, anAdmin, "curupira-github-issues", "1.0.0", "0.93.0", "x"); ruleOf(err) != "compat.kind" {
		t.Errorf("curating an extension: %v, want compat.kind", err)
	}
	if _, err := s.Compatibility(ctx, "curupira-github-issues", mustHost(t, "0.93.0", "linux-amd64")); !errors.Is(err, ErrNotFound) {
		t.Errorf("compatibility of an extension: %v, want ErrNotFound", err)
	}
}

func TestParseHostRefusesHostileValues(t *testing.T) {
	tests := []struct{ kandev, platform, rule string }{
		{"0.91.0", "linux-amd64", ""},
		{"0.91.0-rc.1", "darwin-arm64", ""},
		{"v0.91.0", "linux-amd64", "host.version"},
		{"0.91", "linux-amd64", "host.version"},
		{"0.91.0+build", "linux-amd64", "host.version"},
		{"", "linux-amd64", "host.version"},
		{strings.Repeat("1", 10_000), "linux-amd64", "host.version"},
		{"0.91.0", "", "host.platform"},
		{"0.91.0", "linux_amd64", "host.platform"},
		{"0.91.0", "linux-amd64\x00", "host.platform"},
		{"0.91.0", "../../etc", "host.platform"},
		{"0.91.0", strings.Repeat("linux-", 10_000), "host.platform"},
	}
	for _, tt := range tests {
		_, err := ParseHost(tt.kandev, tt.platform)
		if got := ruleOf(err); got != tt.rule {
			t.Errorf("ParseHost(%.20q, %.20q) rule %q, want %q (%v)", tt.kandev, tt.platform, got, tt.rule, err)
		}
		if err != nil && (!errors.Is(err, ErrBadQuery) || len(err.Error()) > 400) {
			t.Errorf("ParseHost(%.20q, %.20q): %d-byte %v, want a short ErrBadQuery", tt.kandev, tt.platform, len(err.Error()), err)
		}
	}
	for in, want := range map[string]string{"00.92.0": `did you mean "0.92.0"?`, "v0.91.0": `did you mean "0.91.0"?`, "0.092.1": `did you mean "0.92.1"?`} {
		if _, err := ParseHost(in, "linux-amd64"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHost(%q): %v, want it to suggest %s", in, err, want)
		}
	}
}

// TestHostCacheIsBounded: hosts of one class share one built document, however many
// distinct versions ask; the bytes kept stay within the bound.
func TestHostCacheIsBounded(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	for i := range 300 {
		if _, err := s.HostIndex(ctx, mustHost(t, fmt.Sprintf("0.91.%d-x%d", 1000+i, i), "linux-amd64")); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.HostCacheStats(); n != 1 {
		t.Errorf("300 hosts between the same thresholds: %d documents built, want 1", n)
	}
	first, err := s.HostIndex(ctx, mustHost(t, "0.91.5", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.HostIndex(ctx, mustHost(t, "0.91.77", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("two hosts of one class got different documents")
	}

	_, size := s.HostCacheStats()
	s.cfg.HostCacheBytes = size + 1 // room for one document
	for _, p := range []string{"linux-amd64", "darwin-arm64", "windows-amd64", "linux-arm64", "freebsd-amd64"} {
		for _, v := range []string{"0.79.0", "0.84.0", "0.85.0", "0.92.0", "0.96.0"} {
			if _, err := s.HostIndex(ctx, mustHost(t, v, p)); err != nil {
				t.Fatal(err)
			}
			if n, b := s.HostCacheStats(); n > 1 && b > s.cfg.HostCacheBytes {
				t.Fatalf("%d documents, %d bytes kept, over the %d-byte bound", n, b, s.cfg.HostCacheBytes)
			}
		}
	}
}

func TestHostCapsTable(t *testing.T) {
	tests := []struct {
		name, yaml string
		rules      []string
	}{
		{"default", defaultHostCapsYAML, nil},
		{"json", `{"hosts": [{"from": "0.0.0", "api_versions": [1]}]}`, nil},
		{"no rows", "hosts: []", []string{"host.caps.from"}},
		{"first not 0.0.0", "hosts:\n  - from: \"0.80.0\"\n    api_versions: [1]", []string{"host.caps.from"}},
		{"bad from", "hosts:\n  - from: \"0.0.0\"\n  - from: \"v1\"", []string{"host.caps.from"}},
		{"unsorted", "hosts:\n  - from: \"0.0.0\"\n  - from: \"0.92.0\"\n  - from: \"0.80.0\"", []string{"host.caps.order"}},
		{"duplicate", "hosts:\n  - from: \"0.0.0\"\n  - from: \"0.0.0\"", []string{"host.caps.order"}},
		{"unknown api", "hosts:\n  - from: \"0.0.0\"\n    api_versions: [1, 3, 1]", []string{"host.caps.api_version", "host.caps.api_version"}},
		{"typo", "hosts:\n  - from: \"0.0.0\"\n    api_version: [1]", []string{"host.caps.parse"}},
		{"huge", strings.Repeat("#", MaxHostCapsBytes+1), []string{"host.caps.parse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, probs := ParseHostCaps([]byte(tt.yaml))
			var got []string
			for _, p := range probs {
				got = append(got, p.Rule)
			}
			if diff := cmp.Diff(tt.rules, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if (c == nil) != (len(tt.rules) > 0) {
				t.Errorf("table %v with problems %v", c, got)
			}
		})
	}
	c := DefaultHostCaps()
	for v, want := range map[string]int{"0.0.0-rc.1": 0, "0.0.0": 0, "0.79.9": 0, "0.80.0": 1, "0.91.9": 1, "0.92.0-rc.1": 1, "0.92.0": 2, "9.0.0": 2} {
		if got := c.Row(mustHost(t, v, "linux-amd64").Version); got != want {
			t.Errorf("Row(%s) = %d, want %d", v, got, want)
		}
	}
}

// TestHostCapsConfigured: an operator's table changes what hosts are offered.
func TestHostCapsConfigured(t *testing.T) {
	caps, probs := ParseHostCaps([]byte("hosts:\n  - from: \"0.0.0\"\n    api_versions: [1, 2]\n    canvases: true\n"))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	s := newCompatService(t, compatReleases)
	s.cfg.HostCaps = caps
	d, err := s.HostIndex(context.Background(), mustHost(t, "0.91.5", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	// 0.91.5: api_version 2 and canvases accepted; p-multi 2.0.0 needs 0.92, c-board 0.91.1.
	if diff := cmp.Diff([]string{"c-board@1.0.0", "p-multi@1.1.0", "p-ui@2.0.0"}, picks(t, d.Kandev.Body.Bytes())); diff != "" {
		t.Errorf("picks (-want +got):\n%s", diff)
	}
}

// TestHostIndexConcurrent: hosts asking at once, while a curation changes the catalogue,
// each get a document of their own class (run with -race).
func TestHostIndexConcurrent(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := []string{"0.84.0", "0.91.0", "0.92.0", "0.96.0"}[i%4]
			d, err := s.HostIndex(ctx, mustHost(t, v, "linux-amd64"))
			if err == nil && len(picks(t, d.Kandev.Body.Bytes())) == 0 {
				err = fmt.Errorf("%s got an empty document", v)
			}
			errs <- err
		}()
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", "0.93.4", "concurrent"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestHostIndexServesThePreviousDocumentDuringABuild: while a build holds the builder,
// a host whose class was built before the last change gets that document at once; once
// the builder is free, the next request gets the new generation's.
func TestHostIndexServesThePreviousDocumentDuringABuild(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	h := mustHost(t, "0.96.0", "linux-amd64")
	before, err := s.HostIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", "0.93.4", "breaks"); err != nil {
		t.Fatal(err)
	}
	s.host.build.Lock()
	during, err := s.HostIndex(ctx, h)
	s.host.build.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if during != before {
		t.Error("during a build the host did not get the previous document")
	}
	after, err := s.HostIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if after == before || slices.Contains(picks(t, after.Kandev.Body.Bytes()), "p-multi@2.0.0") {
		t.Errorf("after the build: %v, want the curation applied", picks(t, after.Kandev.Body.Bytes()))
	}
}

// TestHostClassesCycledBeyondTheWholeCache: a client cycling more classes than the cache
// holds whole costs one build per class and generation, never one per request: the
// classes past a quarter of the bound are kept compressed; gzip clients get those bytes
// as they are, and a client without gzip gets the same document decompressed.
func TestHostClassesCycledBeyondTheWholeCache(t *testing.T) {
	var hosts []Host
	for _, p := range []string{"linux-amd64", "darwin-arm64"} {
		for _, v := range []string{"0.79.0", "0.84.0", "0.85.0", "0.90.0", "0.91.1", "0.92.0", "0.94.0", "0.95.0", "0.96.0"} {
			hosts = append(hosts, mustHost(t, v, p))
		}
	}
	ctx := context.Background()
	probe := newCompatService(t, compatReleases)
	offered := map[string][]string{} // each host's picks, built with room for all
	for _, h := range hosts {
		d, err := probe.HostIndex(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		offered[h.Kandev+"/"+h.Platform] = picks(t, d.Kandev.Body.Bytes())
	}
	classes, bytesAll := probe.HostCacheStats()
	if classes < 10 {
		t.Fatalf("%d classes: the test needs more", classes)
	}
	limit := 10 * bytesAll / classes // about ten whole documents for twice as many classes
	s := newCompatServiceWith(t, compatReleases, Config{HostCacheBytes: limit})
	for round := range 3 {
		for _, h := range hosts {
			d, err := s.HostIndexGzip(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			if got := picks(t, gunzip(t, d.Kandev.Gzip())); !slices.Equal(got, offered[h.Kandev+"/"+h.Platform]) {
				t.Fatalf("round %d, %s on %s: the gzip bytes offer %v, want %v", round, h.Kandev, h.Platform, got, offered[h.Kandev+"/"+h.Platform])
			}
		}
		in := s.HostCacheInfo()
		if in.Builds != int64(classes) {
			t.Errorf("round %d: %d builds for %d classes, want one per class", round, in.Builds, classes)
		}
		if in.Compressed == 0 || in.Whole+in.Compressed != classes {
			t.Errorf("round %d: %d whole and %d compressed classes, want all %d kept, some compressed", round, in.Whole, in.Compressed, classes)
		}
		if in.Whole > 1 && in.WholeBytes > limit/4 {
			t.Errorf("round %d: %d whole classes take %d bytes, over a quarter of %d", round, in.Whole, in.WholeBytes, limit)
		}
	}
	gz, err := s.HostIndexGzip(ctx, hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	if gz.Kandev.Body.Bytes() != nil {
		t.Errorf("%s on %s (least recently used): kept whole, want compressed", hosts[0].Kandev, hosts[0].Platform)
	}
	plain, err := s.HostIndex(ctx, hosts[0]) // compressed: made whole, not rebuilt
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Kandev.Body.Bytes(), gunzip(t, gz.Kandev.Gzip())) || plain.Kandev.ETag != gz.Kandev.ETag || s.HostCacheInfo().Builds != int64(classes) {
		t.Errorf("a client without gzip: %d bytes after %d builds, want the document without a build", len(plain.Kandev.Body.Bytes()), s.HostCacheInfo().Builds)
	}
}

// TestHostBuildsEncodeEachEntryOnce: a class build encodes only the entries no build has
// encoded before (of any class, this generation or the last); the rest are reused.
func TestHostBuildsEncodeEachEntryOnce(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	steps := []struct {
		kandev, platform string
		encodes          int64 // total after this host's build
	}{
		{"0.91.0", "linux-amd64", 2},  // p-multi@1.1.0, p-ui@1.0.0
		{"0.92.0", "linux-amd64", 6},  // p-multi@2.0.0, p-ui@2.0.0, c-board@1.0.0, p-new@1.0.0
		{"0.92.0", "darwin-arm64", 6}, // the same releases (p-new left out): nothing new
		{"0.96.0", "linux-amd64", 6},  // 2.1.0 is yanked: the same as 0.92.0
		{"0.85.0", "darwin-arm64", 7}, // p-multi@1.0.0
	}
	for _, st := range steps {
		if _, err := s.HostIndex(ctx, mustHost(t, st.kandev, st.platform)); err != nil {
			t.Fatal(err)
		}
		if got := s.HostCacheInfo().Encodes; got != st.encodes {
			t.Errorf("after %s on %s: %d entries encoded, want %d", st.kandev, st.platform, got, st.encodes)
		}
	}
	if _, err := s.SetCompat(ctx, anAdmin, "p-multi", "2.0.0", "0.93.4", "a new generation"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HostIndex(ctx, mustHost(t, "0.92.0", "linux-amd64")); err != nil {
		t.Fatal(err)
	}
	if got := s.HostCacheInfo().Encodes; got != 7+1 {
		t.Errorf("after a curation of p-multi, 0.92.0: %d entries encoded, want 8 (p-multi's entries again, its rows reloaded; the others reused)", got)
	}
}
