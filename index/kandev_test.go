package index_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/index")

const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// demoSnapshot holds one of each kind of entry: a plain plugin, a canvas, a signed plugin
// with publisher evidence, and an extension.
func demoSnapshot() index.Snapshot {
	stars := 42
	at := time.Date(2026, 9, 18, 8, 0, 12, 345, time.FixedZone("CEST", 2*3600))
	return index.Snapshot{
		Serial:      7,
		GeneratedAt: time.Date(2026, 9, 18, 6, 0, 12, 0, time.UTC),
		Source:      index.Source{Name: "Pluginyard Demo", URL: "https://registry.example/index.json"},
		Plugins: []index.Plugin{
			{ID: "agent-stats", Version: "1.2.0", Description: "Token and cost charts.", Author: "Acme",
				RepoURL:       "https://github.com/acme/agent-stats",
				PackageURL:    "https://registry.example/packages/agent-stats/agent-stats-1.2.0.tar.gz?dl=1&src=index",
				PackageSHA256: sha, UpdatedAt: at, Downloads: 3},
			{ID: "sprint-board", Kind: "canvas", Name: "Sprint Board", Version: "0.3.0", License: "MIT",
				Categories: []string{"productivity"}, IconURL: "https://registry.example/icons/" + sha + ".svg",
				RepoURL: "https://github.com/acme/sprint-board", MinKandevVersion: "0.40.0",
				PackageURL: "https://registry.example/packages/sprint-board/sprint-board-0.3.0.tar.gz", PackageSHA256: sha,
				Permissions: &index.Permissions{Reads: []string{"tasks"}, SharedState: true},
				Previews:    []index.Preview{{URL: "https://cdn.example.com/board.png", Alt: "Board with three columns"}},
				UpdatedAt:   at, Featured: true, VersionsURL: "https://registry.example/api/v1/plugins/sprint-board"},
			{ID: "signed-sync", Version: "2.0.0", Author: "Acme", Categories: []string{"integrations"},
				RepoURL:    "https://github.com/acme/signed-sync",
				PackageURL: "https://registry.example/packages/signed-sync/signed-sync-2.0.0.tar.gz", PackageSHA256: sha,
				Publisher: &index.Publisher{RepositoryID: "123456", OwnerID: "7890", Login: "acme", Repository: "acme/signed-sync", Official: true},
				Signature: &index.Signature{Type: "sigstore", Identity: "https://github.com/acme/signed-sync/.github/workflows/release.yml@refs/tags/v2.0.0",
					Issuer: index.DefaultIssuer, Repository: "acme/signed-sync", Workflow: ".github/workflows/release.yml",
					Ref: "refs/tags/v2.0.0", CommitSHA: "0123456789abcdef0123456789abcdef01234567", LogIndex: 0, IntegratedTime: at},
				Stars: &stars, UpdatedAt: at, Official: true,
				Deprecated: &index.Deprecation{Reason: "merged into sync-suite", Replacement: "sync-suite"}},
		},
		Extensions: []index.Extension{
			{Name: "@acme/curupira-github-trigger", Version: "1.0.0", Description: "Polls GitHub issues.",
				TriggerTypes: []string{"github.issue"}, Runtime: "node", ProtocolVersion: 2,
				Launch:     index.Launch{Type: "npx", Package: "@acme/curupira-github-trigger", Version: "1.0.0"},
				PackageURL: "https://registry.example/extensions/acme-curupira-github-trigger-1.0.0.tar.gz", PackageSHA256: sha,
				RepoURL: "https://github.com/acme/curupira-github-trigger", UpdatedAt: at,
				Signature: &index.Signature{Type: "ed25519", Identity: "SHA256:abc"}},
			{Name: "bare-trigger", Version: "0.1.0", Runtime: "go", ProtocolVersion: 2, Launch: index.Launch{Type: "binary", Command: "bare-trigger", Args: []string{"--quiet"}}},
		},
	}
}

// golden compares doc, indented, with testdata/index/name, or rewrites it under -update.
// The document itself must be compact, so the comparison is exact up to indentation.
func golden(t *testing.T, name string, doc []byte) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if !bytes.Equal(compact.Bytes(), doc) {
		t.Error("the document is not compact JSON")
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("..", "testdata", "index", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(string(mustRead(t, path)), pretty.String()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestBuildKandevGolden(t *testing.T) {
	doc, err := index.BuildKandev(demoSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "kandev.golden.json", doc)
	if probs := index.CheckKandev(doc); len(probs) != 0 {
		t.Errorf("CheckKandev on our own document: %v", probs)
	}
}

func TestBuildCurupiraGolden(t *testing.T) {
	doc, err := index.BuildCurupira(demoSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "curupira.golden.json", doc)
	// The second demo extension is deliberately bare: no trigger types, no package yet.
	var got []string
	for _, p := range index.CheckCurupira(doc) {
		got = append(got, p.Rule+" "+p.Path)
	}
	want := []string{"index.extension.trigger_types extensions[1].trigger_types", "index.extension.package_url extensions[1].package_url"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckCurupira (-want +got):\n%s", diff)
	}
}

func TestBuildIsStable(t *testing.T) {
	a, b := demoSnapshot(), demoSnapshot()
	for i, j := 0, len(b.Plugins)-1; i < j; i, j = i+1, j-1 {
		b.Plugins[i], b.Plugins[j] = b.Plugins[j], b.Plugins[i]
	}
	b.Extensions[0], b.Extensions[1] = b.Extensions[1], b.Extensions[0]
	for name, build := range map[string]func(index.Snapshot) ([]byte, error){"kandev": index.BuildKandev, "curupira": index.BuildCurupira} {
		da, err := build(a)
		if err != nil {
			t.Fatal(err)
		}
		db, err := build(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) {
			t.Errorf("%s: input order changed the bytes", name)
		}
	}
}

func TestBuildEmpty(t *testing.T) {
	s := index.Snapshot{GeneratedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	tests := map[string]struct {
		build func(index.Snapshot) ([]byte, error)
		want  string
	}{
		"kandev":   {index.BuildKandev, `{"schema_version":1,"generated_at":"2026-01-02T03:04:05Z","source":{"name":"","url":""},"serial":0,"plugins":[]}`},
		"curupira": {index.BuildCurupira, `{"schema_version":1,"generated_at":"2026-01-02T03:04:05Z","serial":0,"extensions":[]}`},
	}
	for name, tt := range tests {
		got, err := tt.build(s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	big := strings.Repeat("x", 4096)
	var many []index.Plugin
	for i := range 1400 {
		many = append(many, index.Plugin{ID: fmt.Sprintf("p%04d", i), Description: big})
	}
	tests := map[string]struct {
		snap    index.Snapshot
		build   func(index.Snapshot) ([]byte, error)
		tooBig  bool
		message string
	}{
		"zero time":         {index.Snapshot{}, index.BuildKandev, false, "GeneratedAt is zero"},
		"empty id":          {index.Snapshot{GeneratedAt: at, Plugins: []index.Plugin{{}}}, index.BuildKandev, false, "empty id"},
		"duplicate id":      {index.Snapshot{GeneratedAt: at, Plugins: []index.Plugin{{ID: "a"}, {ID: "a"}}}, index.BuildKandev, false, `"a" appears twice`},
		"unknown kind":      {index.Snapshot{GeneratedAt: at, Plugins: []index.Plugin{{ID: "a", Kind: "theme"}}}, index.BuildKandev, false, `unknown kind "theme"`},
		"over 5 MiB":        {index.Snapshot{GeneratedAt: at, Plugins: many}, index.BuildKandev, true, "5 MiB"},
		"extension no name": {index.Snapshot{GeneratedAt: at, Extensions: []index.Extension{{}}}, index.BuildCurupira, false, "empty name"},
		"extension twice":   {index.Snapshot{GeneratedAt: at, Extensions: []index.Extension{{Name: "x"}, {Name: "x"}}}, index.BuildCurupira, false, `"x" appears twice`},
		"curupira no time":  {index.Snapshot{}, index.BuildCurupira, false, "GeneratedAt is zero"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			doc, err := tt.build(tt.snap)
			if err == nil {
				t.Fatalf("want an error, got %d bytes", len(doc))
			}
			if errors.Is(err, index.ErrTooLarge) != tt.tooBig || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q: want %q (too large: %v)", err, tt.message, tt.tooBig)
			}
		})
	}
}

func TestHumanize(t *testing.T) {
	tests := map[string]string{
		"agent-stats":        "Agent Stats",
		"kandev-plugin-tags": "Kandev Plugin Tags",
		"snake_case-id":      "Snake Case Id",
		"x":                  "X",
		"dotted.id":          "Dotted.id",
		"double--dash":       "Double Dash",
	}
	for id, want := range tests {
		if got := index.Humanize(id); got != want {
			t.Errorf("Humanize(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestCheckKandevOnBuiltDocument(t *testing.T) {
	s := index.Snapshot{GeneratedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Plugins: []index.Plugin{
		{ID: "bare-canvas", Kind: "canvas", Version: "1.0.0", PackageURL: "https://registry.example/c.tar.gz"},
		{ID: "fine", Version: "1.0.0", PackageURL: "https://registry.example/f.tar.gz"},
	}}
	doc, err := index.BuildKandev(s)
	if err != nil {
		t.Fatal(err)
	}
	got := index.CheckKandev(doc).Rules()
	want := []string{"index.plugin.package_sha256", "index.plugin.previews"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}
