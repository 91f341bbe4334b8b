package e2e_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/ingest"
)

// axePath is where `npm ci --prefix e2e` installs axe-core, relative to this package.
var axePath = filepath.Join("node_modules", "axe-core", "axe.min.js")

// axeMissing is the message of a skipped (or, under CI=true, failed) accessibility test.
const axeMissing = "axe-core not installed: run `npm ci --prefix e2e` at the repository root"

// requireAxe finds axe-core's browser build. When it is missing the test skips, or fails
// under CI=true.
func requireAxe(t skipFataler, h host) string {
	t.Helper()
	if h.isFile(axePath) {
		return axePath
	}
	if h.getenv("CI") == "true" {
		t.Fatal(axeMissing + " (CI=true: the accessibility tests must run, not skip)")
		return ""
	}
	t.Skip(axeMissing)
	return ""
}

// failingImpacts are the axe impacts that fail a page; minor and moderate ones are logged.
var failingImpacts = map[string]bool{"serious": true, "critical": true}

// axeViolation is one rule a page breaks, with the first few elements that break it.
type axeViolation struct {
	ID      string    `json:"id"`
	Impact  string    `json:"impact"`
	Help    string    `json:"help"`
	HelpURL string    `json:"helpUrl"`
	Nodes   []axeNode `json:"nodes"`
	More    int       `json:"more"` // elements left out of Nodes
}

type axeNode struct {
	Target  string `json:"target"`
	Summary string `json:"summary"`
}

func (v axeViolation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s, %s", v.ID, v.Impact, v.Help, v.HelpURL)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n    %s: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " "))
	}
	if v.More > 0 {
		fmt.Fprintf(&b, "\n    and %d more", v.More)
	}
	return b.String()
}

// axeRunJS runs every axe rule on the whole document and keeps the violations.
const axeRunJS = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
	id: v.id, impact: v.impact ?? "", help: v.help, helpUrl: v.helpUrl, more: Math.max(0, v.nodes.length - 5),
	nodes: v.nodes.slice(0, 5).map(n => ({target: n.target.join(" "), summary: n.failureSummary ?? ""}))})))`

// audit injects axe-core into the page the tab shows, runs it, and fails the test on any
// serious or critical violation; it logs the others.
func (tb *tab) audit(axeJS string) {
	tb.t.Helper()
	failing, other := tb.violations(axeJS)
	for _, v := range failing {
		tb.t.Errorf("axe: %s", v)
	}
	for _, v := range other {
		tb.t.Logf("axe, not failing: %s", v)
	}
}

// violations runs axe-core on the page the tab shows and splits what it finds into the
// failing (serious, critical) and the other violations.
func (tb *tab) violations(axeJS string) (failing, other []axeViolation) {
	tb.t.Helper()
	if !eval[bool](tb, `typeof axe === "object"`) {
		tb.do("inject axe-core", chromedp.Evaluate[chromedp.Void](axeJS))
	}
	for _, v := range eval[[]axeViolation](tb, axeRunJS, chromedp.EvalAwaitPromise) {
		if failingImpacts[v.Impact] {
			failing = append(failing, v)
		} else {
			other = append(other, v)
		}
	}
	return failing, other
}

// emulateScheme makes the tab's pages see prefers-color-scheme: scheme.
func (tb *tab) emulateScheme(scheme string) {
	tb.t.Helper()
	if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		tb.t.Fatalf("emulate prefers-color-scheme: %s: %v", scheme, err)
	}
}

// wantScheme fails the test unless the page sees prefers-color-scheme: scheme.
func (tb *tab) wantScheme(scheme string) {
	tb.t.Helper()
	if !eval[bool](tb, `matchMedia("(prefers-color-scheme: `+scheme+`)").matches`) {
		tb.t.Fatalf("the page does not see prefers-color-scheme: %s", scheme)
	}
}

// openStatus loads a page that answers with the status want (an error page) and waits
// for its body.
func (tb *tab) openStatus(path string, want int64) {
	tb.t.Helper()
	res, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(tb.reg.URL+path))
	if err != nil {
		tb.t.Fatalf("open %s: %v", path, err)
	}
	if res == nil || res.Status != want {
		tb.t.Fatalf("open %s: response %v, want status %d", path, res, want)
	}
	tb.do("wait for the page", chromedp.WaitReady(chromedp.CSS("body")))
}

// a11yPages is one page of every type the marketplace serves.
var a11yPages = []struct {
	name, path string
	status     int64
}{
	{"home", "/", 200},
	{"search-results", "/?q=slack", 200},
	{"no-results", "/?q=zebra-unicorn-nothing&kind=canvas", 200},
	{"kind-tab", "/?kind=plugin&category=connector", 200},
	{"category", "/categories/tools", 200},
	{"publisher", "/publishers/demo", 200},
	{"plugin", "/plugins/slack-relay", 200},
	{"plugin-deprecated", "/plugins/pr-insights", 200},
	{"canvas", "/plugins/task-board-canvas", 200},
	{"extension", "/extensions/curupira-github-issues", 200},
	{"docs", "/docs", 200},
	{"docs-authors", "/docs/authors", 200},
	{"docs-operators", "/docs/operators", 200},
	{"error-404", "/plugins/no-such-plugin", 404},
}

// TestAccessibility runs axe-core on every page type in the light and the dark colour
// scheme, on a registry where one package is deprecated (so its badge and notice are
// checked too), and fails on any serious or critical violation.
func TestAccessibility(t *testing.T) {
	bin := requireChromium(t, osHost())
	axeJS, err := os.ReadFile(requireAxe(t, osHost()))
	if err != nil {
		t.Fatal(err)
	}
	reg := startRegistry(t)
	admin := ingest.Actor{Name: "demo", Admin: true}
	if err := reg.Svc.Deprecate(context.Background(), admin, "pr-insights", "replaced", "slack-relay"); err != nil {
		t.Fatalf("deprecate pr-insights: %v", err)
	}
	browser := startBrowser(t, bin)
	t.Run("finds-violations", func(t *testing.T) { testAxeFinds(t, newTab(t, browser, reg), string(axeJS)) })
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			for _, pg := range a11yPages {
				t.Run(pg.name, func(t *testing.T) {
					tb := newTab(t, browser, reg)
					tb.emulateScheme(scheme)
					tb.openStatus(pg.path, pg.status)
					tb.wantScheme(scheme)
					tb.audit(string(axeJS))
				})
			}
		})
	}
}

// testAxeFinds runs the audit on a page built to break rules axe rates critical and
// serious (an image without alt text, a link without text, grey on white): a checker that
// finds nothing there proves nothing on the real pages.
func testAxeFinds(t *testing.T, tb *tab, axeJS string) {
	const bad = `<!DOCTYPE html><html lang="en"><head><title>bad</title></head><body><main>` +
		`<img src="data:,"><a href="/x"></a><p style="color:#ccc;background:#fff">faint</p></main></body></html>`
	tb.do("load the bad page", chromedp.Navigate("data:text/html,"+url.PathEscape(bad)))
	failing, _ := tb.violations(axeJS)
	var ids []string
	for _, v := range failing {
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"color-contrast", "image-alt", "link-name"}, ids); diff != "" {
		t.Errorf("failing violations on the bad page (-want +got):\n%s", diff)
	}
}

func TestRequireAxe(t *testing.T) {
	type want struct {
		Path            string
		Skipped, Failed bool
	}
	tests := []struct {
		name  string
		ci    string
		files []string
		want  want
	}{
		{"installed", "", []string{axePath}, want{Path: axePath}},
		{"installed under CI", "true", []string{axePath}, want{Path: axePath}},
		{"missing locally skips", "", nil, want{Skipped: true}},
		{"missing under CI fails", "true", nil, want{Failed: true}},
		{"CI other than true skips", "1", nil, want{Skipped: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := host{
				getenv:   func(k string) string { return map[string]string{"CI": tc.ci}[k] },
				lookPath: func(string) (string, error) { return "", os.ErrNotExist },
				isFile:   func(p string) bool { return slices.Contains(tc.files, p) },
			}
			var r recorder
			got := want{Path: requireAxe(&r, h), Skipped: r.skipped != "", Failed: r.failed != ""}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requireAxe (-want +got):\n%s", diff)
			}
			if msg := r.skipped + r.failed; msg != "" && !strings.Contains(msg, "npm ci --prefix e2e") {
				t.Errorf("message %q does not say how to install axe-core", msg)
			}
		})
	}
}
