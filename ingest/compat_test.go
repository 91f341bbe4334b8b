package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
)

// rel describes one release a compat test publishes.
type rel struct {
	id, version string
	kind        string   // plugin (managed unless ui), canvas
	ui          bool     // a web-app-only plugin: no executables
	api         int      // api_version
	min         string   // min_kandev_version; "" none
	platforms   []string // runtime.executables keys (managed plugins)
	yanked      bool
}

// compatReleases are the releases of the compat tests: a managed plugin whose releases
// move from api_version 1 to 2 and narrow their platforms, a UI-only plugin, a canvas, and
// a plugin with only an api_version 2 release.
var compatReleases = []rel{
	{id: "p-multi", version: "1.0.0", api: 1, platforms: []string{"darwin-arm64", "linux-amd64"}},
	{id: "p-multi", version: "1.1.0", api: 1, min: "0.85.0", platforms: []string{"linux-amd64"}},
	{id: "p-multi", version: "2.0.0", api: 2, min: "v0.92", platforms: []string{"darwin-arm64", "linux-amd64"}},
	{id: "p-multi", version: "2.1.0", api: 2, min: "0.95.0", platforms: []string{"linux-amd64"}, yanked: true},
	{id: "p-ui", version: "1.0.0", ui: true, api: 1},
	{id: "p-ui", version: "2.0.0", ui: true, api: 2},
	{id: "c-board", version: "1.0.0", kind: "canvas", api: 2, min: "0.91.1"},
	{id: "p-new", version: "1.0.0", api: 2, min: "0.92.0", platforms: []string{"linux-amd64"}},
}

func compatList() *index.List {
	l := &index.List{}
	for _, id := range []string{"c-board", "p-multi", "p-new", "p-ui"} {
		e := index.Entry{ID: id, Repo: "acme/" + id, Kind: index.KindPlugin, Owners: []string{"acme"}}
		if id == "c-board" {
			e.Kind = index.KindCanvas
			e.Previews = []index.Preview{{URL: "https://example.com/board.png", Alt: "The board"}}
		}
		l.Plugins = append(l.Plugins, e)
	}
	return l
}

// compatPackage builds the package of r, with a CHANGELOG.md naming its version.
func compatPackage(t testing.TB, r rel) []byte {
	t.Helper()
	var m strings.Builder
	fmt.Fprintf(&m, "id: %s\napi_version: %d\nversion: %q\ndisplay_name: %s\ndescription: test\nauthor: Acme\ncategories: [tools]\nlicense: MIT\n", r.id, r.api, r.version, r.id)
	if r.min != "" {
		fmt.Fprintf(&m, "min_kandev_version: %q\n", r.min)
	}
	fsys := fstest.MapFS{"CHANGELOG.md": {Data: []byte("# Changelog\n\n## " + r.version + "\n\n- notes of " + r.version + "\n")}}
	switch {
	case r.kind == "canvas":
		m.WriteString("ui:\n  web_apps:\n    - key: board\n      title: Board\n      entry: ui/index.html\n      placements: [workspace-canvas]\n" +
			"distribution:\n  schema_version: 1\n  kind: canvas\n  license: MIT\n  source_mode: static\n")
		fsys["ui/index.html"] = &fstest.MapFile{Data: []byte("<!doctype html><title>b</title>")}
		fsys["README.md"] = &fstest.MapFile{Data: []byte("# Board\n")}
	case r.ui:
		m.WriteString("ui:\n  web_apps:\n    - key: app\n      title: App\n      entry: ui/index.html\n      placements: [task-canvas]\n")
		fsys["ui/index.html"] = &fstest.MapFile{Data: []byte("<!doctype html><title>a</title>")}
	default:
		m.WriteString("runtime:\n  type: binary\n  executables:\n")
		for _, p := range r.platforms {
			exe := "server/plugin-" + p
			if strings.HasPrefix(p, "windows-") {
				exe += ".exe"
			}
			fmt.Fprintf(&m, "    %s: %s\n", p, exe)
			fsys[exe] = &fstest.MapFile{Data: []byte("#!/bin/sh\n"), Mode: 0o755}
		}
	}
	fsys["manifest.yaml"] = &fstest.MapFile{Data: []byte(m.String())}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// newCompatService publishes rels into a fresh service listing compatList.
func newCompatService(t *testing.T, rels []rel) *Service {
	t.Helper()
	return newCompatServiceWith(t, rels, Config{})
}

func newCompatServiceWith(t *testing.T, rels []rel, cfg Config) *Service {
	t.Helper()
	s := newPublishService(t, compatList(), cfg)
	ctx := context.Background()
	for _, r := range rels {
		_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(compatPackage(t, r)), FileName: PackageFileName(r.id, r.version), Actor: anAdmin})
		if err != nil {
			t.Fatalf("publish %s@%s: %v", r.id, r.version, err)
		}
		if r.yanked {
			if err := s.Yank(ctx, anAdmin, r.id, r.version, true, "broken"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

func mustHost(t testing.TB, kandev, platform string) Host {
	t.Helper()
	h, err := ParseHost(kandev, platform)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// picks are the id@version entries of a host-aware document.
func picks(t testing.TB, body []byte) []string {
	t.Helper()
	var doc struct {
		Plugins []struct {
			ID         string   `json:"id"`
			Version    string   `json:"version"`
			APIVersion int      `json:"api_version"`
			Platforms  []string `json:"platforms"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, p := range doc.Plugins {
		out = append(out, p.ID+"@"+p.Version)
	}
	sort.Strings(out)
	return out
}

func TestHostIndexPicks(t *testing.T) {
	s := newCompatService(t, compatReleases)
	tests := []struct {
		kandev, platform string
		want             []string
	}{
		{"0.79.0", "linux-amd64", []string{}}, // no plugin system
		{"0.84.0", "linux-amd64", []string{"p-multi@1.0.0", "p-ui@1.0.0"}},
		{"0.85.0", "linux-amd64", []string{"p-multi@1.1.0", "p-ui@1.0.0"}}, // min_kandev_version equal: installable
		{"0.91.0", "linux-amd64", []string{"p-multi@1.1.0", "p-ui@1.0.0"}}, // api_version 1 only, no canvases
		{"0.91.0", "darwin-arm64", []string{"p-multi@1.0.0", "p-ui@1.0.0"}},
		{"0.91.0", "windows-amd64", []string{"p-ui@1.0.0"}},
		{"0.92.0-rc.1", "linux-amd64", []string{"p-multi@1.1.0", "p-ui@1.0.0"}}, // a prerelease precedes 0.92.0
		{"0.92.0", "linux-amd64", []string{"c-board@1.0.0", "p-multi@2.0.0", "p-new@1.0.0", "p-ui@2.0.0"}},
		{"0.92.0", "darwin-arm64", []string{"c-board@1.0.0", "p-multi@2.0.0", "p-ui@2.0.0"}},
		{"0.92.0", "windows-amd64", []string{"c-board@1.0.0", "p-ui@2.0.0"}},                               // canvases and UI need no executable
		{"0.96.0", "linux-amd64", []string{"c-board@1.0.0", "p-multi@2.0.0", "p-new@1.0.0", "p-ui@2.0.0"}}, // 2.1.0 is yanked
	}
	for _, tt := range tests {
		t.Run(tt.kandev+"/"+tt.platform, func(t *testing.T) {
			d, err := s.HostIndex(context.Background(), mustHost(t, tt.kandev, tt.platform))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, picks(t, d.Kandev.Body.Bytes())); diff != "" {
				t.Errorf("picks (-want +got):\n%s", diff)
			}
		})
	}
	if got := picks(t, s.Documents().Kandev.Body.Bytes()); !slices.Contains(got, "p-multi@2.0.0") || !slices.Contains(got, "c-board@1.0.0") {
		t.Errorf("/index.json lists %v: it is not host-aware and must keep the newest releases", got)
	}
}

func TestHostIndexEntriesCarryAPIVersionAndPlatforms(t *testing.T) {
	s := newCompatService(t, compatReleases)
	d, err := s.HostIndex(context.Background(), mustHost(t, "0.91.0", "darwin-arm64"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Source  index.Source `json:"source"`
		Plugins []struct {
			ID         string   `json:"id"`
			APIVersion int      `json:"api_version"`
			Platforms  []string `json:"platforms"`
			Version    string   `json:"version"`
			PackageURL string   `json:"package_url"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(d.Kandev.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range doc.Plugins {
		got[p.ID] = fmt.Sprintf("%s api=%d platforms=%v url=%s", p.Version, p.APIVersion, p.Platforms, p.PackageURL)
	}
	want := map[string]string{
		"p-multi": "1.0.0 api=1 platforms=[darwin-arm64 linux-amd64] url=http://r.example/packages/p-multi/p-multi-1.0.0.tar.gz",
		"p-ui":    "1.0.0 api=1 platforms=[] url=http://r.example/packages/p-ui/p-ui-1.0.0.tar.gz",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// 0.91.0 is between the thresholds 0.85.0 and 0.91.1: its class's lowest version is
	// the successor of 0.85.0, which every host of the class is given.
	if doc.Source.URL != "http://r.example/kandev/0.85.1-0/darwin-arm64/index.json" {
		t.Errorf("source.url = %q", doc.Source.URL)
	}
}

func TestCompatibilitySaysWhy(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	rep, err := s.Compatibility(ctx, "p-new", mustHost(t, "0.91.0", "windows-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Offered != nil {
		t.Fatalf("offered %s, want none", *rep.Offered)
	}
	var codes []string
	for _, r := range rep.Releases[0].Reasons {
		codes = append(codes, r.Code)
	}
	if diff := cmp.Diff([]string{ReasonAPIVersion, ReasonMinKandev, ReasonPlatform}, codes); diff != "" {
		t.Errorf("reasons of p-new@1.0.0 (-want +got):\n%s", diff)
	}
	d, err := s.HostIndex(ctx, mustHost(t, "0.91.0", "windows-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(picks(t, d.Kandev.Body.Bytes()), func(p string) bool { return strings.HasPrefix(p, "p-new@") }) {
		t.Error("p-new has no installable release but the host-aware index lists it")
	}

	rep, err = s.Compatibility(ctx, "p-multi", mustHost(t, "0.96.0", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Offered == nil || *rep.Offered != "2.0.0" || rep.Releases[0].Version != "2.1.0" || rep.Releases[0].Reasons[0].Code != ReasonYanked {
		t.Errorf("p-multi on 0.96.0: offered %v, newest %+v; want 2.0.0 offered and 2.1.0 refused as yanked", rep.Offered, rep.Releases[0])
	}
	rep, err = s.Compatibility(ctx, "c-board", mustHost(t, "0.91.0", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if codes := reasonCodes(rep.Releases[0]); !slices.Contains(codes, ReasonCanvas) || !slices.Contains(codes, ReasonAPIVersion) {
		t.Errorf("c-board on 0.91.0: reasons %v, want canvas and api_version", codes)
	}
	old, err := s.Compatibility(ctx, "p-ui", mustHost(t, "0.79.0", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if codes := reasonCodes(old.Releases[1]); len(codes) != 1 || codes[0] != ReasonNoPlugins {
		t.Errorf("p-ui@1.0.0 on 0.79.0: reasons %v, want only %s", codes, ReasonNoPlugins)
	}
	if !strings.Contains(rep.Summary, "leaves it out") {
		t.Errorf("summary %q does not say the plugin is left out", rep.Summary)
	}
}

func reasonCodes(v Verdict) []string {
	var out []string
	for _, r := range v.Reasons {
		out = append(out, r.Code)
	}
	return out
}

func TestUpgradeNeverBackwards(t *testing.T) {
	s := newCompatService(t, compatReleases)
	tests := []struct {
		from, kandev, platform string
		want                   string
		skipped, notes         []string
	}{
		{"1.0.0", "0.91.0", "linux-amd64", "1.1.0", []string{"2.1.0", "2.0.0"}, []string{"1.1.0"}},
		{"1.0.0", "0.92.0", "linux-amd64", "2.0.0", []string{"2.1.0"}, []string{"2.0.0", "1.1.0"}},
		{"1.1.0", "0.91.0", "linux-amd64", "none", []string{"2.1.0", "2.0.0"}, []string{}},
		{"1.0.0", "0.91.0", "darwin-arm64", "none", []string{"2.1.0", "2.0.0", "1.1.0"}, []string{}},
		{"2.0.0", "0.96.0", "linux-amd64", "none", []string{"2.1.0"}, []string{}}, // the newer one is yanked
		{"2.1.0", "0.96.0", "linux-amd64", "none", []string{}, []string{}},        // at the newest
		{"3.0.0", "0.96.0", "linux-amd64", "none", []string{}, []string{}},        // never down to 2.0.0
	}
	for _, tt := range tests {
		t.Run(tt.from+"/"+tt.kandev+"/"+tt.platform, func(t *testing.T) {
			rep, err := s.Upgrade(context.Background(), "p-multi", tt.from, mustHost(t, tt.kandev, tt.platform))
			if err != nil {
				t.Fatal(err)
			}
			var skipped, notes []string
			for _, v := range rep.Skipped {
				skipped = append(skipped, v.Version)
			}
			for _, c := range rep.Changelog {
				notes = append(notes, c.Version)
				if !strings.Contains(c.NotesHTML, "notes of "+c.Version) {
					t.Errorf("notes of %s: %q", c.Version, c.NotesHTML)
				}
			}
			got := struct{ Upgrade, Skipped, Notes string }{rep.Upgrade, fmt.Sprint(skipped), fmt.Sprint(notes)}
			want := struct{ Upgrade, Skipped, Notes string }{tt.want, fmt.Sprint(nonNilStrings(tt.skipped)), fmt.Sprint(nonNilStrings(tt.notes))}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("upgrade (-want +got):\n%s", diff)
			}
			if rep.Upgrade == "none" && rep.Why == "" {
				t.Error(`"none" without why`)
			}
		})
	}
	if _, err := s.Upgrade(context.Background(), "p-multi", "latest", mustHost(t, "0.91.0", "linux-amd64")); ruleOf(err) != "upgrade.from" {
		t.Errorf("from=latest: %v, want upgrade.from", err)
	}
}

// TestUpgradeFromBeyondThePublished: a from newer than every published version (never
// published, or newer only by SemVer's prerelease order) is not "the newest published
// version": it has its own reason code; a from equal to the newest keeps installed_newest.
func TestUpgradeFromBeyondThePublished(t *testing.T) {
	rels := append(slices.Clone(compatReleases), rel{id: "p-new", version: "1.1.0-rc.2", api: 2, min: "0.92.0", platforms: []string{"linux-amd64"}})
	s := newCompatService(t, rels)
	h := mustHost(t, "0.96.0", "linux-amd64")
	tests := []struct{ id, from, code, says string }{
		{"p-multi", "9.9.9", ReasonUnpublished, "9.9.9 is newer than every published version of p-multi (the newest is 2.1.0)"},
		{"p-multi", "2.1.1-alpha", ReasonUnpublished, "newer than every published version"},
		{"p-multi", "2.1.0", ReasonInstalledNewer, "2.1.0 is the newest published version"},
		{"p-new", "1.1.0", ReasonUnpublished, "1.1.0 is newer than every published version of p-new (the newest is 1.1.0-rc.2)"},
		{"p-new", "1.1.0-rc.10", ReasonUnpublished, "newer than every published version"},
		{"p-new", "1.1.0-rc.2", ReasonInstalledNewer, "is the newest published version"},
	}
	for _, tt := range tests {
		rep, err := s.Upgrade(context.Background(), tt.id, tt.from, h)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Upgrade != "none" || !strings.Contains(rep.Why, "("+tt.code+")") || !strings.Contains(rep.Why, tt.says) {
			t.Errorf("upgrade %s from %s = %s, why %q; want none, %q and (%s)", tt.id, tt.from, rep.Upgrade, rep.Why, tt.says, tt.code)
		}
	}
}

// TestHostIndexSkipsDamagedPackages: a release whose stored package is damaged is not
// offered (it cannot be downloaded); the next installable one is, and compatibility says so.
func TestHostIndexSkipsDamagedPackages(t *testing.T) {
	s := newCompatService(t, compatReleases)
	ctx := context.Background()
	h := mustHost(t, "0.92.0", "linux-amd64")
	r, err := s.store.Release(ctx, "p-multi", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	s.ReportBlob(r.SHA256, r.Size, []store.BlobUse{{PackageID: "p-multi", Version: "2.0.0", Role: "package"}}, errors.New("sha256 mismatch"))
	d, err := s.HostIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := picks(t, d.Kandev.Body.Bytes()); !slices.Contains(got, "p-multi@1.1.0") {
		t.Errorf("with 2.0.0 damaged: %v, want p-multi@1.1.0", got)
	}
	rep, err := s.Compatibility(ctx, "p-multi", h)
	if err != nil {
		t.Fatal(err)
	}
	if codes := reasonCodes(rep.Releases[1]); !slices.Contains(codes, ReasonDamaged) {
		t.Errorf("2.0.0: reasons %v, want damaged", codes)
	}
}

// TestHostIndexWithinTheLimit: a host-aware document is fitted by the index size policy;
// when the host's releases do not fit, it is partial and its shards (each within the
// limit) hold every installable entry.
func TestHostIndexWithinTheLimit(t *testing.T) {
	const limit = 1500
	s := newCompatServiceWith(t, compatReleases, Config{MaxIndexBytes: limit})
	ctx := context.Background()
	d, err := s.HostIndex(ctx, mustHost(t, "0.96.0", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Kandev.Body.Bytes()) > limit {
		t.Fatalf("host-aware index is %d bytes, over the %d-byte limit", len(d.Kandev.Body.Bytes()), limit)
	}
	names := d.ShardNames()
	if d.Listed == d.Total || len(names) == 0 || !bytes.Contains(d.Kandev.Body.Bytes(), []byte(`"partial"`)) {
		t.Fatalf("listed %d of %d with %d shards: want a partial document", d.Listed, d.Total, len(names))
	}
	seen := map[string]bool{}
	for _, name := range names {
		sh, ok, err := d.Shard(name)
		if err != nil || !ok {
			t.Fatalf("shard %s: %v, %v", name, ok, err)
		}
		if len(sh.Body.Bytes()) > limit {
			t.Errorf("shard %s is %d bytes", name, len(sh.Body.Bytes()))
		}
		if !strings.HasPrefix(name, "all.") {
			continue
		}
		for _, p := range picks(t, sh.Body.Bytes()) {
			seen[p] = true
		}
	}
	want := []string{"c-board@1.0.0", "p-multi@2.0.0", "p-new@1.0.0", "p-ui@2.0.0"}
	for _, p := range want {
		if !seen[p] {
			t.Errorf("%s is in no id shard (shards: %v)", p, seen)
		}
	}
	if !bytes.Contains(d.Kandev.Body.Bytes(), []byte("/kandev/")) {
		t.Errorf("the partial object does not name host-aware shard URLs:\n%s", d.Kandev.Body.Bytes())
	}
}
