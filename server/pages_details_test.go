package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
)

const detailsList = `plugins:
  - id: acme-hello
    repo: acme/kandev-plugin-hello
    owners: [acme]
  - id: acme-every
    repo: acme/every
    owners: [acme]
  - id: acme-board
    repo: acme/board
    kind: canvas
    owners: [acme]
    previews:
      - url: https://example.com/board.png
        alt: The board
extensions:
  - name: acme-ext
    repo: acme/curupira-ext
    owners: [acme]
`

func newDetailsEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(detailsList), 0o644); err != nil {
		t.Fatal(err)
	}
	return newEnv(t, dir)
}

// managed packs a managed plugin shipping one executable per platform key, with more
// manifest YAML (top-level fields) and more files.
func managed(t *testing.T, id, version string, platforms []string, moreYAML string, files map[string]string) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Says hello\n" +
		"author: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n"
	fsys := fstest.MapFS{}
	for _, p := range platforms {
		path := "server/plugin-" + p
		if strings.HasPrefix(p, "windows-") {
			path += ".exe"
		}
		manifest += "    " + p + ": " + path + "\n"
		fsys[path] = &fstest.MapFile{Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755}
	}
	fsys["manifest.yaml"] = &fstest.MapFile{Data: []byte(manifest + moreYAML)}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func texts(sel *goquery.Selection) []string {
	var out []string
	sel.Each(func(_ int, s *goquery.Selection) { out = append(out, strings.Join(strings.Fields(s.Text()), " ")) })
	return out
}

// TestPluginPageRunsOn reads the "Runs on" row and the missing-platform warnings of
// published plugins, a canvas and an extension.
func TestPluginPageRunsOn(t *testing.T) {
	e := newDetailsEnv(t)
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))
	e.mustPublish("acme-every-1.0.0.tar.gz", managed(t, "acme-every", "1.0.0",
		[]string{"windows-amd64", "darwin-arm64", "linux-arm64", "darwin-amd64", "linux-amd64"}, "", nil))
	e.mustPublish("acme-board-1.0.0.tar.gz", canvasPkg(t))
	e.mustPublish("acme-ext-1.2.0.tar.gz", tarGz(t, map[string]string{
		"curupira-extension.toml": "manifest_version = 1\nname = \"acme-ext\"\nversion = \"1.2.0\"\nprotocol_version = 2\nruntime = \"node\"\n" +
			"kind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n[launch]\ntype = \"npx\"\npackage = \"acme-ext\"\nversion = \"1.2.0\"\n",
		"index.js": "console.log('hi')\n",
	}))
	tests := []struct {
		path      string
		mode      string
		runsOn    []string // platform labels, or the summary sentence
		keys      []string
		warnings  []string
		noWarning bool
	}{
		{path: "/plugins/acme-hello", mode: "native", runsOn: []string{"Linux x86-64"}, keys: []string{"linux-amd64"},
			warnings: []string{
				"No macOS build: this plugin will not run on macOS.",
				"No Windows build: this plugin will not run on Windows.",
				"No Linux Arm64 build: it will not run on Arm64 Linux (such as Raspberry Pi 4 and later, or Arm cloud servers).",
			}},
		{path: "/plugins/acme-every", mode: "native",
			runsOn:    []string{"Linux x86-64", "Linux Arm64", "macOS Intel", "macOS Apple silicon", "Windows x86-64"},
			keys:      []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"},
			noWarning: true},
		{path: "/plugins/acme-board", mode: "browser", noWarning: true,
			runsOn: []string{"In the browser, inside Kandev's sandboxed canvas frame: it ships no executable, so it runs wherever Kandev runs."}},
		{path: "/extensions/acme-ext", mode: "launch", noWarning: true,
			runsOn: []string{"Node.js, through npx: any system with Node.js and npm installed."}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			doc := e.page(tt.path)
			panel := doc.Find(`[data-testid="runs-on-panel"]`)
			if mode, _ := panel.Attr("data-mode"); mode != tt.mode {
				t.Errorf("mode = %q, want %q", mode, tt.mode)
			}
			got := texts(panel.Find(`[data-testid="runs-on"] li`))
			if tt.mode != "native" {
				got = texts(panel.Find(`[data-testid="runs-on"]`))
			}
			if diff := cmp.Diff(tt.runsOn, got); diff != "" {
				t.Errorf("runs on (-want +got):\n%s", diff)
			}
			var keys []string
			panel.Find(`[data-platform]`).Each(func(_ int, s *goquery.Selection) { k, _ := s.Attr("data-platform"); keys = append(keys, k) })
			if diff := cmp.Diff(tt.keys, keys); diff != "" {
				t.Errorf("platform keys (-want +got):\n%s", diff)
			}
			warn := panel.Find(`[data-testid="platform-warnings"]`)
			if tt.noWarning && warn.Length() != 0 {
				t.Errorf("warnings shown for a package that misses no common platform: %q", texts(warn.Find("li")))
			}
			if !tt.noWarning {
				if role, _ := warn.Attr("role"); role != "note" {
					t.Errorf("warnings role = %q, want note", role)
				}
				if diff := cmp.Diff(tt.warnings, texts(warn.Find("li"))); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func canvasPkg(t *testing.T) []byte {
	t.Helper()
	manifest := "id: acme-board\napi_version: 2\nversion: \"1.0.0\"\ndisplay_name: Board\ndescription: A board\nauthor: Acme\n" +
		"categories: [tools]\nmin_kandev_version: \"0.91.1\"\nui:\n  web_apps:\n    - key: board\n      title: Board\n      entry: ui/index.html\n      placements: [workspace-canvas]\n" +
		"distribution:\n  schema_version: 1\n  kind: canvas\n  license: MIT\n  source_mode: static\n"
	var buf bytes.Buffer
	err := pack.FS(fstest.MapFS{
		"manifest.yaml": {Data: []byte(manifest)},
		"ui/index.html": {Data: []byte("<!doctype html><title>Board</title>\n")},
		"README.md":     {Data: []byte("# Board\n")},
	}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const settingsYAML = `config_schema:
  type: object
  properties:
    bot_token: { type: string, secret: true, title: "Bot Token", description: "Slack bot OAuth token" }
    default_channel: { type: string, default: "#general", description: "Default channel for notifications" }
    notify: { type: boolean, default: true }
    level: { type: string, enum: [info, warn], default: info }
  required: [bot_token]
`

// TestPluginPageSettings reads the settings table built from a published config_schema,
// and the sentence shown for a plugin without one.
func TestPluginPageSettings(t *testing.T) {
	e := newDetailsEnv(t)
	e.mustPublish("acme-every-1.0.0.tar.gz", managed(t, "acme-every", "1.0.0", []string{"linux-amd64"}, settingsYAML, nil))
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))

	type row struct{ Name, Type, Default, Secret, Description string }
	var got []row
	e.page("/plugins/acme-every").Find(`[data-testid="settings"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("data-setting")
		col := func(c string) string { return strings.Join(strings.Fields(s.Find(`td[data-col="`+c+`"]`).Text()), " ") }
		got = append(got, row{name, col("type"), col("default"), col("secret"), col("description")})
	})
	want := []row{
		{"bot_token", "string", "none", "Yes: stored in the host’s vault, shown masked", "Slack bot OAuth token"},
		{"default_channel", "string", `"#general"`, "No", "Default channel for notifications"},
		{"level", `string one of "info", "warn"`, `"info"`, "No", ""},
		{"notify", "boolean", "true", "No", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	doc := e.page("/plugins/acme-every")
	if req := texts(doc.Find(`[data-testid="settings"] tr[data-setting="bot_token"] [data-testid="setting-required"]`)); len(req) != 1 {
		t.Errorf("bot_token required label: %q", req)
	}
	if n := doc.Find(`[data-testid="setting-required"]`).Length(); n != 1 {
		t.Errorf("%d required labels, want 1 (only bot_token is required)", n)
	}

	bare := e.page("/plugins/acme-hello").Find(`[data-testid="settings"]`)
	if bare.Find("table").Length() != 0 || !strings.Contains(bare.Find(`[data-testid="no-settings"]`).Text(), "no settings") {
		t.Errorf("plugin without config_schema: %q", bare.Text())
	}
}

// TestPluginPageChangelog publishes two releases with CHANGELOG.md and checks the page
// shows the latest one's changelog, sanitized, and each version's own notes as extracted
// at its publish; a plugin without CHANGELOG.md says so and has no notes rows.
func TestPluginPageChangelog(t *testing.T) {
	e := newDetailsEnv(t)
	first := "# Changelog\n\n## [1.0.0] - 2026-11-01\n\n- First release.\n"
	second := "# Changelog\n\n## Unreleased\n\n- Waves.\n\n## [1.0.1] - 2026-11-20\n\n### Fixed\n\n- Says hello twice <script>alert(1)</script>\n\n" +
		"## [1.0.0] - 2026-11-01\n\n- First release, edited later.\n"
	e.mustPublish("acme-every-1.0.0.tar.gz", managed(t, "acme-every", "1.0.0", []string{"linux-amd64"}, "", map[string]string{"CHANGELOG.md": first}))
	e.mustPublish("acme-every-1.0.1.tar.gz", managed(t, "acme-every", "1.0.1", []string{"linux-amd64"}, "", map[string]string{"CHANGELOG.md": second}))
	e.mustPublish("acme-every-1.1.0.tar.gz", managed(t, "acme-every", "1.1.0", []string{"linux-amd64"}, "", map[string]string{"CHANGELOG.md": second}))
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))

	doc := e.page("/plugins/acme-every")
	cl := doc.Find(`[data-testid="changelog"]`)
	if got := texts(cl.Find("details h5")); !cmp.Equal(got, []string{"Fixed"}) {
		t.Errorf("changelog h5 = %q, want the latest release's CHANGELOG.md rendered", got)
	}
	if !strings.Contains(cl.Text(), "Waves.") || cl.Find("script").Length() != 0 {
		t.Errorf("changelog not the latest or not sanitized: %q", cl.Text())
	}
	if h, _ := cl.Html(); strings.Contains(h, "alert(1)") && strings.Contains(h, "<script") {
		t.Error("script survived in the changelog")
	}
	notes := map[string]string{}
	doc.Find(`[data-testid="versions-table"] tr[data-notes-for]`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("data-notes-for")
		notes[v] = strings.Join(strings.Fields(s.Find(".readme-notes").Text()), " ")
	})
	want := map[string]string{"1.0.1": "Fixed Says hello twice", "1.0.0": "First release."}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("release notes per version (-want +got), 1.1.0 has no section and 1.0.0 keeps its own:\n%s", diff)
	}
	if s := doc.Find(`tr[data-notes-for="1.0.1"]`).Prev(); s.AttrOr("data-version", "") != "1.0.1" {
		t.Errorf("notes of 1.0.1 follow the row of %q", s.AttrOr("data-version", ""))
	}

	bare := e.page("/plugins/acme-hello")
	if got := bare.Find(`[data-testid="no-changelog"]`).Text(); !strings.Contains(got, "no CHANGELOG.md") {
		t.Errorf("no-changelog = %q", got)
	}
	if n := bare.Find(`tr[data-notes-for]`).Length(); n != 0 {
		t.Errorf("%d notes rows for a plugin without CHANGELOG.md", n)
	}
}

// TestPluginPageDownloadsChart downloads a package through the server, flushes the batch,
// adds older days through the same store call, and reads the chart and its summary for 30
// and 90 days; a package nobody downloaded has a sentence and no chart.
func TestPluginPageDownloadsChart(t *testing.T) {
	e := newDetailsEnv(t)
	ctx := context.Background()
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))
	e.mustPublish("acme-every-1.0.0.tar.gz", managed(t, "acme-every", "1.0.0", []string{"linux-amd64"}, "", nil))
	for range 3 {
		if r := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz"); r.Status != http.StatusOK {
			t.Fatalf("download: %d", r.Status)
		}
	}
	if err := e.svc.FlushDownloads(ctx); err != nil {
		t.Fatal(err)
	}
	rel, err := e.st.Release(ctx, "acme-hello", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	day := func(ago int) string { return store.DayOf(now.AddDate(0, 0, -ago)) }
	err = e.st.RecordDownloads(ctx, map[store.DownloadDay]int64{{ReleaseID: rel.ID, Day: day(10)}: 2, {ReleaseID: rel.ID, Day: day(40)}: 5})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query   string
		summary string
		bars    map[string]string // day → bar title
	}{
		{"", "5 downloads in the last 30 days (" + day(29) + " to " + day(0) + "); the busiest day was " + day(0) + ", with 3 downloads.",
			map[string]string{day(0): day(0) + ": 3 downloads", day(10): day(10) + ": 2 downloads"}},
		{"?downloads=90", "10 downloads in the last 90 days (" + day(89) + " to " + day(0) + "); the busiest day was " + day(40) + ", with 5 downloads.",
			map[string]string{day(0): day(0) + ": 3 downloads", day(10): day(10) + ": 2 downloads", day(40): day(40) + ": 5 downloads"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			panel := e.page("/plugins/acme-hello" + tt.query).Find(`[data-testid="downloads-panel"]`)
			if got := panel.Find(`[data-testid="downloads-summary"]`).Text(); got != tt.summary {
				t.Errorf("summary = %q\nwant      %q", got, tt.summary)
			}
			svg := panel.Find(`svg[data-testid="downloads-chart"]`)
			if role, _ := svg.Attr("role"); role != "img" {
				t.Errorf("svg role = %q", role)
			}
			for _, id := range strings.Fields(svg.AttrOr("aria-labelledby", "")) {
				if svg.Find("#"+id).Length() != 1 {
					t.Errorf("aria-labelledby names %q, not in the chart", id)
				}
			}
			if got := svg.Find("desc").Text(); got != tt.summary {
				t.Errorf("desc = %q, want the summary", got)
			}
			bars := map[string]string{}
			svg.Find("rect").Each(func(_ int, s *goquery.Selection) { bars[s.AttrOr("data-day", "")] = s.Find("title").Text() })
			if diff := cmp.Diff(tt.bars, bars); diff != "" {
				t.Errorf("bars (-want +got):\n%s", diff)
			}
		})
	}
	if r := e.get("/plugins/acme-hello?downloads=7"); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "30 or 90") {
		t.Errorf("?downloads=7: %d %s", r.Status, r.Body)
	}
	none := e.page("/plugins/acme-every").Find(`[data-testid="downloads-panel"]`)
	if none.Find("svg").Length() != 0 || !strings.HasPrefix(none.Find(`[data-testid="downloads-summary"]`).Text(), "No downloads in the last 30 days") {
		t.Errorf("undownloaded package: %q", none.Text())
	}
}

// TestPluginPageRepoStats checks stars and the last push appear once sync recorded them,
// a known 0 stars is shown, and statistics not known are left out rather than shown as 0.
func TestPluginPageRepoStats(t *testing.T) {
	e := newDetailsEnv(t)
	ctx := context.Background()
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))
	e.mustPublish("acme-every-1.0.0.tar.gz", managed(t, "acme-every", "1.0.0", []string{"linux-amd64"}, "", nil))
	about := func(path string) *goquery.Selection { return e.page(path).Find(`[data-testid="about-panel"]`) }
	if a := about("/plugins/acme-hello"); a.Find(`[data-testid="repo-stars"], [data-testid="repo-pushed"]`).Length() != 0 ||
		strings.Contains(a.Text(), "Stars") {
		t.Errorf("stats shown before any sync: %q", a.Text())
	}
	stars, zero := 1234, 0
	pushed := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	if err := e.st.SetRepoStats(ctx, "acme-hello", &stars, &pushed); err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetRepoStats(ctx, "acme-every", &zero, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	a := about("/plugins/acme-hello")
	if got := a.Find(`[data-testid="repo-stars"]`).Text(); got != "1,234 stars on GitHub" {
		t.Errorf("stars = %q", got)
	}
	if got := a.Find(`[data-testid="repo-pushed"]`).Text(); got != "2026-11-28" {
		t.Errorf("last push = %q", got)
	}
	b := about("/plugins/acme-every")
	if got := b.Find(`[data-testid="repo-stars"]`).Text(); got != "0 stars on GitHub" {
		t.Errorf("known zero stars = %q, want shown", got)
	}
	if b.Find(`[data-testid="repo-pushed"]`).Length() != 0 {
		t.Error("last push shown though sync did not see one")
	}
}

// TestExtensionPageDetails publishes an npm-style extension with a CHANGELOG.md and reads
// its changelog, its version's notes, the downloads panel and the absent repository
// statistics on its page.
func TestExtensionPageDetails(t *testing.T) {
	e := newDetailsEnv(t)
	toml := "manifest_version = 1\nname = \"acme-ext\"\nversion = \"1.2.0\"\nprotocol_version = 2\nruntime = \"node\"\n" +
		"kind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n[launch]\ntype = \"node\"\ncommand = \"index.js\"\n"
	e.mustPublish("acme-ext-1.2.0.tar.gz", tarGz(t, map[string]string{
		"package/curupira-extension.toml": toml,
		"package/index.js":                "console.log('hi')\n",
		"package/CHANGELOG.md":            "## 1.2.0\n\n- Triggers on issues.\n",
	}))
	doc := e.page("/extensions/acme-ext")
	if got := texts(doc.Find(`[data-testid="runs-on"]`)); !cmp.Equal(got, []string{"Node.js: any system with Node.js installed."}) {
		t.Errorf("runs on %q", got)
	}
	if got := texts(doc.Find(`[data-testid="changelog"] details h4`)); !cmp.Equal(got, []string{"1.2.0"}) {
		t.Errorf("changelog headings %q", got)
	}
	if got := texts(doc.Find(`tr[data-notes-for="1.2.0"] .readme-notes`)); !cmp.Equal(got, []string{"Triggers on issues."}) {
		t.Errorf("notes %q", got)
	}
	if got := doc.Find(`[data-testid="downloads-summary"]`).Text(); !strings.HasPrefix(got, "No downloads in the last 30 days") {
		t.Errorf("downloads %q", got)
	}
	if doc.Find(`[data-testid="repo-stars"], [data-testid="repo-pushed"]`).Length() != 0 {
		t.Error("repository statistics shown before any sync")
	}
}

// TestReleaseNotesShownForNewestVersions publishes 22 releases, each with notes, and checks
// the versions table shows notes for the newest 20 only, so the page stays small.
func TestReleaseNotesShownForNewestVersions(t *testing.T) {
	e := newDetailsEnv(t)
	var changelog string
	for i := range 22 {
		v := fmt.Sprintf("1.%d.0", i)
		changelog = "## " + v + "\n\n- Release " + v + ".\n\n" + changelog
		e.mustPublish("acme-every-"+v+".tar.gz", managed(t, "acme-every", v, []string{"linux-amd64"}, "", map[string]string{"CHANGELOG.md": changelog}))
	}
	var got []string
	e.page("/plugins/acme-every").Find(`tr[data-notes-for]`).Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("data-notes-for", "")) })
	var want []string
	for i := 21; i >= 2; i-- {
		want = append(want, fmt.Sprintf("1.%d.0", i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("versions with notes shown (-want +got):\n%s", diff)
	}
}
