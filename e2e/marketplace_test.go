package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// suite is what every browser test shares: one registry and one browser.
type suite struct {
	browser context.Context
	reg     *registry
}

// tab opens a fresh tab for the test t.
func (s *suite) tab(t *testing.T) *tab {
	t.Helper()
	return newTab(t, s.browser, s.reg)
}

// TestMarketplace starts one registry with the bundled examples and one chromium, then
// walks the pages the way people do. Every subtest saves a full-page screenshot.
func TestMarketplace(t *testing.T) {
	bin := requireChromium(t, osHost())
	s := &suite{reg: startRegistry(t)}
	s.browser = startBrowser(t, bin)
	tests := []struct {
		name string
		run  func(t *testing.T, s *suite)
	}{
		{"search", testSearch},
		{"filter-by-category", testCategoryFilter},
		{"open-plugin", testOpenPlugin},
		{"permissions", testPermissions},
		{"copy-install-url", testCopyInstallURL},
		{"phone", testPhone},
		{"keyboard-search", testKeyboardSearch},
		{"keyboard-plugin", testKeyboardPlugin},
		{"canvas-previews", testCanvasPreviews},
		{"extension-triggers", testExtensionTriggers},
		{"contrast", testContrast},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, s) })
	}
}

const (
	resultCards = `[data-testid="results"] [data-testid="card"]`
	searchBox   = `[data-testid="search-box"]`
)

func testSearch(t *testing.T, s *suite) {
	tests := []struct {
		name, query string
		want        []string // ids of the result cards, in order
	}{
		{"slack", "slack", []string{"slack-relay"}},
		{"insights", "insights", []string{"pr-insights"}},
		{"no-match", "zebra-unicorn-nothing", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := s.tab(t)
			tb.open("/")
			tb.do("wait for the search box", chromedp.WaitVisible(chromedp.CSS(searchBox)))
			tb.follow("type and submit the search", chromedp.SendKeys(chromedp.CSS(searchBox), tc.query+kb.Enter))
			if got := eval[string](tb, `new URLSearchParams(location.search).get("q") ?? ""`); got != tc.query {
				t.Errorf("query parameter = %q, want %q", got, tc.query)
			}
			if got := eval[string](tb, `document.querySelector(`+jsString(searchBox)+`).value`); got != tc.query {
				t.Errorf("search box keeps %q, want %q", got, tc.query)
			}
			if diff := cmp.Diff(tc.want, tb.attrs(resultCards, "data-id"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("result cards (-want +got):\n%s", diff)
			}
			if len(tc.want) > 0 {
				return
			}
			help := strings.Join(tb.texts(`[data-testid="no-results"]`), " ")
			if !strings.Contains(help, tc.query) || !strings.Contains(help, "Browse everything listed") {
				t.Errorf("no-results help = %q, want it to name %q and offer to browse everything", help, tc.query)
			}
		})
	}
}

// wantInCategory lists the ids the catalog files under category: the server's own view,
// which the filtered page must show exactly.
func wantInCategory(t *testing.T, reg *registry, category string) []string {
	t.Helper()
	var ids []string
	items := reg.Svc.Catalog().Items()
	for _, it := range items {
		if slices.Contains(it.Categories(), category) {
			ids = append(ids, it.ID)
		}
	}
	if len(ids) == 0 || len(ids) == len(items) {
		t.Fatalf("category %q holds %d of %d packages: pick one that filters something", category, len(ids), len(items))
	}
	return ids
}

func testCategoryFilter(t *testing.T, s *suite) {
	for _, category := range []string{"analytics", "tools", "connector"} {
		t.Run(category, func(t *testing.T) {
			want := wantInCategory(t, s.reg, category)
			tb := s.tab(t)
			tb.open("/")
			link := `[data-testid="category-filter"] [data-testid="category-link"][data-category="` + category + `"]`
			tb.follow("click the category", chromedp.Click(chromedp.CSS(link)))
			if got := eval[string](tb, `new URLSearchParams(location.search).get("category") ?? ""`); got != category {
				t.Errorf("category parameter = %q, want %q", got, category)
			}
			got := tb.attrs(resultCards, "data-id")
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("cards after filtering by %s (-want +got):\n%s", category, diff)
			}
			if diff := cmp.Diff([]string{"page"}, tb.attrs(link, "aria-current")); diff != "" {
				t.Errorf("the chosen category link is not marked current (-want +got):\n%s", diff)
			}
		})
	}
}

func testOpenPlugin(t *testing.T, s *suite) {
	tests := []struct {
		id, name, version string
		readme            string // a sentence of the README's first paragraph
	}{
		{"slack-relay", "Slack Relay", "1.2.0", "Keeps a Kandev task and a Slack thread in step"},
		{"pr-insights", "PR Insights", "1.0.1", "PR Insights follows the GitHub pull requests linked to your Kandev tasks"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			tb := s.tab(t)
			tb.open("/")
			card := resultCards + `[data-id="` + tc.id + `"] .card-title a`
			tb.follow("click the card", chromedp.Click(chromedp.CSS(card)))
			if got := eval[string](tb, `location.pathname`); got != "/plugins/"+tc.id {
				t.Errorf("path = %q, want /plugins/%s", got, tc.id)
			}
			if diff := cmp.Diff([]string{tc.name}, tb.texts(`[data-testid="package-name"]`)); diff != "" {
				t.Errorf("package name (-want +got):\n%s", diff)
			}
			header := strings.Join(tb.texts(`[data-testid="package-header"]`), " ")
			if !strings.Contains(header, "v"+tc.version) {
				t.Errorf("header %q does not show v%s", header, tc.version)
			}
			if got := tb.attrs(`[data-testid="versions-table"] tbody tr`, "data-version"); !slices.Contains(got, tc.version) {
				t.Errorf("versions table rows %v, want one for %s", got, tc.version)
			}
			checkREADME(t, tb, tc.readme)
		})
	}
}

// checkREADME wants the README rendered as HTML: its text present, a list or paragraphs
// as elements, and no Markdown syntax left in the visible text.
func checkREADME(t *testing.T, tb *tab, sentence string) {
	t.Helper()
	type rendered struct {
		Text       string `json:"text"`
		Paragraphs int    `json:"paragraphs"`
		Headings   int    `json:"headings"`
		Scripts    int    `json:"scripts"`
	}
	got := eval[rendered](tb, `(() => {
		const r = document.querySelector('[data-testid="readme"]');
		return {text: r.innerText, paragraphs: r.querySelectorAll("p").length,
			headings: r.querySelectorAll("h3, h4, h5, h6").length, scripts: r.querySelectorAll("script").length};
	})()`)
	if !strings.Contains(strings.Join(strings.Fields(got.Text), " "), sentence) {
		t.Errorf("README text lacks %q:\n%s", sentence, got.Text)
	}
	if got.Paragraphs == 0 || got.Headings == 0 || got.Scripts != 0 {
		t.Errorf("README rendered with %d paragraphs, %d headings, %d scripts; want paragraphs and headings, no script", got.Paragraphs, got.Headings, got.Scripts)
	}
	for _, line := range strings.Split(got.Text, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "```") {
			t.Errorf("README shows raw Markdown: %q", l)
		}
	}
}

func testPermissions(t *testing.T, s *suite) {
	type perm struct {
		Key   string
		Words []string // plain words the item must say
	}
	tests := []struct {
		id    string
		risky []perm
	}{
		{"slack-relay", []perm{
			{"secrets", []string{"secrets", "Risky"}},
			{"api_write", []string{"Changes your Kandev data", "Risky"}},
			{"webhooks.public", []string{"anyone on the internet", "slack-events", "Risky"}},
		}},
		{"hello-managed", nil},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			tb := s.tab(t)
			tb.open("/plugins/" + tc.id)
			panel := `[data-testid="permissions-panel"]`
			tb.do("scroll to the permissions", chromedp.ScrollIntoView(chromedp.CSS(panel)), chromedp.WaitVisible(chromedp.CSS(panel)))
			var wantKeys []string
			for _, p := range tc.risky {
				wantKeys = append(wantKeys, p.Key)
			}
			gotKeys := tb.attrs(panel+` li[data-risky="true"]`, "data-permission")
			if diff := cmp.Diff(wantKeys, gotKeys, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("risky permissions (-want +got):\n%s", diff)
			}
			for _, p := range tc.risky {
				text := strings.Join(tb.visibleTexts(panel+` li[data-permission="`+p.Key+`"]`), " ")
				for _, w := range p.Words {
					if !strings.Contains(text, w) {
						t.Errorf("permission %s reads %q, want it to say %q", p.Key, text, w)
					}
				}
			}
			summary := strings.Join(tb.visibleTexts(panel), " ")
			if len(tc.risky) > 0 && !strings.Contains(summary, "need care before you install") {
				t.Errorf("panel does not warn about the risky permissions: %q", summary)
			}
		})
	}
}

// visibleTexts returns the rendered text (innerText) of every element the selector matches.
func (tb *tab) visibleTexts(selector string) []string {
	tb.t.Helper()
	return eval[[]string](tb, `Array.from(document.querySelectorAll(`+jsString(selector)+`), e => e.innerText.replace(/\s+/g, " ").trim())`)
}

func testCopyInstallURL(t *testing.T, s *suite) {
	tb := s.tab(t)
	tb.grantClipboard()
	tb.open("/plugins/slack-relay")
	button := `[data-testid="install-panel"] button[data-copy-target="package-url"]`
	tb.do("wait for the copy button (shown by the script)", chromedp.ScrollIntoView(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS(button)))
	shown := strings.TrimSpace(strings.Join(tb.texts(`[data-testid="package-url"]`), ""))
	if !strings.HasPrefix(shown, s.reg.URL+"/packages/slack-relay/") || !strings.HasSuffix(shown, ".tar.gz") {
		t.Fatalf("package URL shown = %q, want %s/packages/slack-relay/….tar.gz", shown, s.reg.URL)
	}
	tb.do("click copy", chromedp.Click(chromedp.CSS(button)))
	outcome, err := chromedp.Run(tb.ctx, chromedp.Poll[string](`(() => {
		const b = document.querySelector(`+jsString(button)+`);
		return b.dataset.copied === "true" ? "copied" : (b.textContent === "Select and copy" ? "failed" : "");
	})()`))
	if err != nil {
		t.Fatalf("wait for the copy feedback: %v", err)
	}
	if outcome != "copied" {
		t.Fatalf("copy button says the copy %s", outcome)
	}
	if got := strings.Join(tb.texts(`#copy-status`), ""); got != "Copied to the clipboard." {
		t.Errorf("status region announces %q, want %q", got, "Copied to the clipboard.")
	}
	clip := eval[string](tb, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)
	if clip != shown {
		t.Errorf("clipboard holds %q, want the package URL shown, %q", clip, shown)
	}
	checkDownload(t, shown, strings.Join(tb.texts(`[data-testid="package-sha256"]`), ""))
}

// checkDownload fetches the copied URL and wants the sha256 the page shows.
func checkDownload(t *testing.T, url, wantSHA string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("download %s: %v", url, err)
	}
	defer res.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, res.Body); err != nil {
		t.Fatalf("download %s: %v", url, err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("download %s: status %d", url, res.StatusCode)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.TrimSpace(wantSHA) {
		t.Errorf("downloaded package sha256 = %s, page shows %q", got, wantSHA)
	}
}

// testCanvasPreviews opens the canvas through its tab and card: each preview plugins.yaml
// lists is shown as the registry's own copy, captioned with its alternative text, or
// (offline, as here, where nothing was fetched) a placeholder that shows that text;
// never the remote image.
func testCanvasPreviews(t *testing.T, s *suite) {
	entry, ok := s.reg.List.Plugin("task-board-canvas")
	if !ok || len(entry.Previews) == 0 {
		t.Fatal("plugins.yaml lists no previews for task-board-canvas")
	}
	var wantAlt []string
	for _, p := range entry.Previews {
		wantAlt = append(wantAlt, p.Alt)
	}
	tb := s.tab(t)
	tb.open("/")
	tb.follow("click the Canvases tab", chromedp.Click(chromedp.CSS(`[data-testid="kind-tabs"] a[data-kind="canvas"]`)))
	if diff := cmp.Diff([]string{"task-board-canvas"}, tb.attrs(resultCards, "data-id")); diff != "" {
		t.Fatalf("canvas results (-want +got):\n%s", diff)
	}
	tb.follow("click the canvas card", chromedp.Click(chromedp.CSS(resultCards+` .card-title a`)))
	if diff := cmp.Diff([]string{"Canvas"}, tb.texts(`[data-testid="package-header"] .pkg-kind`)); diff != "" {
		t.Errorf("kind label (-want +got):\n%s", diff)
	}
	type preview struct {
		Alt    string `json:"alt"`
		Src    string `json:"src"`    // "" for a placeholder
		Broken bool   `json:"broken"` // an image that did not load
		Shown  string `json:"shown"`  // the visible text: the caption, or the placeholder's
	}
	tb.do("show the previews", chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="previews"]`)))
	got := eval[[]preview](tb, `Array.from(document.querySelectorAll('[data-testid="previews"] figure'), f => {
		const img = f.querySelector("img"), ph = f.querySelector('[data-testid="preview-placeholder"]');
		const cap = f.querySelector("figcaption"), text = e => e ? e.textContent.replace(/\s+/g, " ").trim() : "";
		return img ? {alt: img.alt, src: img.src, broken: img.complete && img.naturalWidth === 0, shown: text(cap)}
			: {alt: ph ? ph.getAttribute("aria-label") : "", src: "", broken: false, shown: text(ph && ph.querySelector("span"))};
	})`)
	var gotAlt, gotShown []string
	for _, p := range got {
		gotAlt, gotShown = append(gotAlt, p.Alt), append(gotShown, p.Shown)
		if p.Src != "" && !strings.HasPrefix(p.Src, s.reg.URL+"/previews/") {
			t.Errorf("preview %q loads %s, want the registry's copy under %s/previews/ or a placeholder", p.Alt, p.Src, s.reg.URL)
		}
		if p.Broken {
			t.Errorf("preview %q shows as a broken image", p.Alt)
		}
	}
	if diff := cmp.Diff(wantAlt, gotAlt); diff != "" {
		t.Errorf("preview alternative texts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAlt, gotShown); diff != "" {
		t.Errorf("preview captions or placeholder texts (-want +got):\n%s", diff)
	}
}

func testExtensionTriggers(t *testing.T, s *suite) {
	const name = "curupira-github-issues"
	it, ok := s.reg.Svc.Catalog().Item(name)
	if !ok || it.Extension == nil || len(it.Extension.TriggerTypes) == 0 {
		t.Fatalf("the catalog has no extension %s with trigger types", name)
	}
	tb := s.tab(t)
	tb.open("/")
	tb.follow("click the extensions tab", chromedp.Click(chromedp.CSS(`[data-testid="kind-tabs"] a[data-kind="extension"]`)))
	if diff := cmp.Diff([]string{name}, tb.attrs(resultCards, "data-id")); diff != "" {
		t.Fatalf("extension results (-want +got):\n%s", diff)
	}
	tb.follow("click the extension card", chromedp.Click(chromedp.CSS(resultCards+` .card-title a`)))
	if got := eval[string](tb, `location.pathname`); got != "/extensions/"+name {
		t.Errorf("path = %q, want /extensions/%s", got, name)
	}
	triggers := `[data-testid="extension-panel"] [data-testid="trigger-types"] li`
	tb.do("show the triggers", chromedp.ScrollIntoView(chromedp.CSS(triggers)))
	if diff := cmp.Diff(it.Extension.TriggerTypes, tb.visibleTexts(triggers)); diff != "" {
		t.Errorf("trigger types (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Curupira extension"}, tb.texts(`[data-testid="package-header"] .pkg-kind`)); diff != "" {
		t.Errorf("kind label (-want +got):\n%s", diff)
	}
}

// contrast is the WCAG contrast ratio of one element's text against the first opaque
// background behind it.
type contrast struct {
	Selector string  `json:"selector"`
	Ratio    float64 `json:"ratio"`
}

// contrastJS measures every selector's first match; it walks up the ancestors for the
// background, and the page background counts as the last one.
const contrastJS = `((sels) => {
	const rgb = c => (c.match(/[\d.]+/g) || []).map(Number);
	const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
	const bg = e => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0.5) return c; }
		return rgb(getComputedStyle(document.documentElement).backgroundColor); };
	return sels.map(s => { const e = document.querySelector(s); if (!e) return {selector: s, ratio: 0};
		const a = lum(rgb(getComputedStyle(e).color)), b = lum(bg(e));
		return {selector: s, ratio: Math.round(100 * (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) / 100}; });
})`

func testContrast(t *testing.T, s *suite) {
	texts := []string{"h1", ".site-nav a", `[data-testid="card"] .card-title a`, ".card-author", ".card-desc",
		".kind-chip", `[data-testid="category-link"]`, `[data-testid="search-form"] button[type="submit"]`, ".site-footer p"}
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			tb := s.tab(t)
			if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatalf("emulate prefers-color-scheme: %s: %v", scheme, err)
			}
			tb.open("/")
			if got := eval[bool](tb, `matchMedia("(prefers-color-scheme: `+scheme+`)").matches`); !got {
				t.Fatalf("the page does not see prefers-color-scheme: %s", scheme)
			}
			arg, _ := json.Marshal(texts)
			got := eval[[]contrast](tb, contrastJS+`(`+string(arg)+`)`)
			t.Logf("contrast ratios: %v", got)
			for _, c := range got {
				if c.Ratio < 4.5 {
					t.Errorf("%s: text contrast %.2f:1, want at least 4.5:1 (0 means the element is missing)", c.Selector, c.Ratio)
				}
			}
		})
	}
}
