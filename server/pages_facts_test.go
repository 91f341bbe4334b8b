package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
)

func (e *env) page(path string) *goquery.Document {
	e.t.Helper()
	res := e.get(path)
	if res.Status != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.Body))
	if err != nil {
		e.t.Fatal(err)
	}
	return doc
}

func (e *env) mustPublish(fileName string, data []byte) {
	e.t.Helper()
	if res := e.publish(adminToken, fileName, data); res.Status != http.StatusCreated {
		e.t.Fatalf("publish %s: %d %s", fileName, res.Status, res.Body)
	}
}

// TestPluginPageShowsRecordedChecksums publishes a plugin (pack writes checksums.txt over
// its 3 other files) and reads the verification panel the page renders from the facts
// recorded at publish.
func TestPluginPageShowsRecordedChecksums(t *testing.T) {
	e := newEnv(t, "")
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))
	doc := e.page("/plugins/acme-hello")
	cs := doc.Find(`[data-testid="verification-panel"] [data-testid="checksums"]`)
	if state, _ := cs.Attr("data-checksums"); state != "verified" || !strings.Contains(cs.Text(), "lists all 3 files, and each matches") {
		t.Errorf("checksums %s: %q, want verified over 3 files", state, cs.Text())
	}
	if got := doc.Find(`[data-testid="readme"] h3`).Text(); got != "Hello" {
		t.Errorf("README h3 = %q, want the README rendered at publish", got)
	}
	if hint := doc.Find(`[data-testid="unsigned-hint"]`).Text(); !strings.Contains(hint, "checked its files against checksums.txt") {
		t.Errorf("unsigned hint = %q", hint)
	}
}

const extList = testList + `extensions:
  - name: acme-ext
    repo: acme/curupira-ext
    owners: [acme]
`

// TestExtensionPageWithoutChecksums publishes an extension that ships no checksums.txt (an
// extension may) and checks the page does not claim its files were checked.
func TestExtensionPageWithoutChecksums(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(extList), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)
	e.mustPublish("acme-ext-1.2.0.tar.gz", tarGz(t, map[string]string{
		"curupira-extension.toml": "manifest_version = 1\nname = \"acme-ext\"\nversion = \"1.2.0\"\nprotocol_version = 2\nruntime = \"node\"\n" +
			"kind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n[launch]\ntype = \"npx\"\npackage = \"acme-ext\"\nversion = \"1.2.0\"\n",
		"index.js": "console.log('hi')\n",
	}))
	doc := e.page("/extensions/acme-ext")
	cs := doc.Find(`[data-testid="verification-panel"] [data-testid="checksums"]`)
	if state, _ := cs.Attr("data-checksums"); state != "absent" || !strings.Contains(cs.Text(), "No checksums.txt") {
		t.Errorf("checksums %s: %q, want absent", state, cs.Text())
	}
	if body := doc.Text(); strings.Contains(body, "matches checksums.txt") || strings.Contains(body, "against checksums.txt, but") {
		t.Error("the page claims a check against a checksums.txt the package does not have")
	}
}

// tarGz packs files (path → content) with the given names, in order of path.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestVersionsTableFollowsTheIndex publishes versions out of order and checks the table is
// in version order with the Latest badge on the version index.json offers, also once the
// newest version is yanked.
func TestVersionsTableFollowsTheIndex(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"0.2.0", "0.1.5", "0.3.0-rc.1", "0.10.0", "0.1.10"} {
		e.mustPublish("acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "Says hello"))
	}
	check := func() {
		t.Helper()
		doc := e.page("/plugins/acme-hello")
		var order, latest []string
		doc.Find(`[data-testid="versions-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
			v, _ := s.Attr("data-version")
			order = append(order, v)
			if s.Find(`[data-testid="latest-label"]`).Length() > 0 {
				latest = append(latest, v)
			}
		})
		if diff := cmp.Diff([]string{"0.10.0", "0.3.0-rc.1", "0.2.0", "0.1.10", "0.1.5"}, order); diff != "" {
			t.Errorf("versions table order (-want +got):\n%s", diff)
		}
		var idx struct {
			Plugins []struct{ ID, Version string } `json:"plugins"`
		}
		e.get("/index.json").json(t, &idx)
		var indexed string
		for _, p := range idx.Plugins {
			if p.ID == "acme-hello" {
				indexed = p.Version
			}
		}
		if indexed == "" || !slices.Equal(latest, []string{indexed}) {
			t.Errorf("Latest badge on %q, index.json offers %q", latest, indexed)
		}
	}
	check()
	if res := e.post("/api/v1/plugins/acme-hello/versions/0.10.0/yank", adminToken, map[string]string{"reason": "broken"}); res.Status != http.StatusOK {
		t.Fatalf("yank: %d %s", res.Status, res.Body)
	}
	check()
}

// TestPluginPageTruncatedREADME publishes a README over readme.MaxMarkdown: the page shows
// its start with a note and the release carries the readme.truncated warning.
func TestPluginPageTruncatedREADME(t *testing.T) {
	e := newEnv(t, "")
	long := strings.Repeat("A line of the README.\n", (600<<10)/22)
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkgWithREADME(t, "acme-hello", "1.0.0", long))
	doc := e.page("/plugins/acme-hello")
	if n := doc.Find(`[data-testid="readme"] p.readme-truncated`).Length(); n != 1 {
		t.Errorf("%d truncation notes in the README section, want 1", n)
	}
	if w := doc.Find(`[data-testid="warnings"]`).Text(); !strings.Contains(w, "readme.truncated") {
		t.Errorf("warnings %q do not include readme.truncated", w)
	}
}

// pkgWithREADME is pkg with the given README.md.
func pkgWithREADME(t *testing.T, id, version, readme string) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Says hello" +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	var buf bytes.Buffer
	if err := pack.FS(fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
		"README.md":                 {Data: []byte(readme)},
	}, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
