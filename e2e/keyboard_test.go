package e2e_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
)

// phoneWidths are the viewport widths of the phone tests: a small and a common phone.
var phoneWidths = []int64{375, 390}

// testPhone loads the listing and every kind of package page on phone-size viewports:
// nothing may scroll sideways, neither the page nor the versions table inside it, and the
// search box stays visible.
func testPhone(t *testing.T, s *suite) {
	tests := []struct {
		name, path, search string
	}{
		{"home", "/", searchBox},
		{"plugin", "/plugins/slack-relay", `[data-testid="nav-search"]`},
		{"canvas", "/plugins/task-board-canvas", `[data-testid="nav-search"]`},
		{"extension", "/extensions/curupira-github-issues", `[data-testid="nav-search"]`},
	}
	for _, width := range phoneWidths {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s-%d", tc.name, width), func(t *testing.T) {
				tb := s.tab(t)
				tb.do("emulate a phone", chromedp.EmulateViewport(width, 812, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait))
				tb.open(tc.path)
				got := eval[layout](tb, layoutJS)
				if got.InnerWidth != int(width) {
					t.Errorf("viewport width = %d, want %d (mobile emulation)", got.InnerWidth, width)
				}
				if got.ScrollWidth > got.InnerWidth {
					t.Errorf("page scrolls sideways: scrollWidth %d > innerWidth %d; widest elements: %v", got.ScrollWidth, got.InnerWidth, got.Wide)
				}
				for _, sc := range got.Scrollers {
					t.Errorf("%s scrolls sideways inside the page: content %d px in %d px", sc.What, sc.ScrollWidth, sc.ClientWidth)
				}
				if why := tb.visibleWhy(tc.search); why != "" {
					t.Errorf("search box %s is not visible on a phone: %s", tc.search, why)
				}
			})
		}
	}
}

// layout is how a page fits the viewport's width.
type layout struct {
	ScrollWidth int        `json:"scrollWidth"`
	InnerWidth  int        `json:"innerWidth"`
	Wide        []string   `json:"wide"`      // elements reaching past the viewport
	Scrollers   []scroller `json:"scrollers"` // tables and table regions wider than their box
}

type scroller struct {
	What        string `json:"what"`
	ScrollWidth int    `json:"scrollWidth"`
	ClientWidth int    `json:"clientWidth"`
}

const layoutJS = `(() => {
	const w = window.innerWidth;
	const name = e => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).trim().split(/\s+/).join(".") : "") +
		(e.dataset.testid ? "[" + e.dataset.testid + "]" : "");
	const wide = Array.from(document.querySelectorAll("body *"))
		.filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > w + 1 || r.left < -1); })
		.slice(0, 8).map(e => name(e) + " " + Math.round(e.getBoundingClientRect().right));
	const scrollers = Array.from(document.querySelectorAll(".table-scroll, table"))
		.filter(e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
		.map(e => ({what: name(e), scrollWidth: e.scrollWidth, clientWidth: e.clientWidth}));
	return {scrollWidth: document.scrollingElement.scrollWidth, innerWidth: w, wide, scrollers};
})()`

// visibleWhy says why the element is not visible within the viewport's width, or "".
func (tb *tab) visibleWhy(selector string) string {
	tb.t.Helper()
	return eval[string](tb, `(() => {
		const e = document.querySelector(`+jsString(selector)+`);
		if (!e) return "absent";
		const st = getComputedStyle(e), r = e.getBoundingClientRect();
		if (st.display === "none" || st.visibility === "hidden" || Number(st.opacity) === 0) return "hidden by CSS";
		if (r.width < 1 || r.height < 1) return "zero size";
		if (r.left < 0 || r.right > window.innerWidth + 1) return "outside the viewport width (" + Math.round(r.left) + ".." + Math.round(r.right) + ")";
		return "";
	})()`)
}

// focused describes document.activeElement after a key press.
type focused struct {
	TestID  string `json:"testid"`
	Copy    string `json:"copy"`    // data-copy-target of a copy button
	Card    string `json:"card"`    // data-id of the result card it is in
	Install bool   `json:"install"` // inside the install panel
	Skip    bool   `json:"skip"`    // the skip link
	Ring    string `json:"ring"`    // the visible focus outline, on the element or its card
	InView  bool   `json:"inView"`  // within the viewport
	Label   string `json:"label"`   // tag and text, for messages
	// Name is its data-copy-target, else its data-testid, else its href.
	Name string `json:"name"`
}

const focusedJS = `(() => {
	const e = document.activeElement;
	const ring = x => { const st = getComputedStyle(x); return st.outlineStyle !== "none" && parseFloat(st.outlineWidth) > 0 ? st.outlineWidth + " " + st.outlineStyle + " " + st.outlineColor : ""; };
	const c = e.closest('[data-testid="results"] [data-testid="card"]') || e.closest('[data-testid="card"]');
	const r = e.getBoundingClientRect();
	return {testid: e.getAttribute("data-testid") ?? "", copy: e.getAttribute("data-copy-target") ?? "",
		card: e.closest('[data-testid="results"]') && c ? c.dataset.id : "",
		install: !!e.closest('[data-testid="install-panel"]'), skip: e.classList.contains("skip-link"),
		ring: ring(e) || (c ? ring(c) : ""),
		inView: r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth && r.width > 0,
		label: e.tagName.toLowerCase() + " " + JSON.stringify((e.textContent || e.value || "").trim().slice(0, 40)),
		name: e.getAttribute("data-copy-target") || e.getAttribute("data-testid") || e.getAttribute("href") || ""};
})()`

// maxTabs bounds a walk with the Tab key; a page whose controls are not reached in as
// many presses fails.
const maxTabs = 80

// tabUntil presses Tab until done says the walk so far is enough, and returns every
// element focused on the way.
func (tb *tab) tabUntil(done func(path []focused) bool) []focused {
	tb.t.Helper()
	var path []focused
	for len(path) < maxTabs && !done(path) {
		tb.do("press Tab", chromedp.KeyEvent(kb.Tab))
		path = append(path, eval[focused](tb, focusedJS))
	}
	if !done(path) {
		labels := make([]string, len(path))
		for i, f := range path {
			labels[i] = f.Label
		}
		tb.t.Fatalf("%d presses of Tab never reached what the test waits for; focus went through %q", maxTabs, labels)
	}
	return path
}

// wantRing fails the test for every focused element in path with no visible focus
// outline, or outside the viewport.
func wantRing(t *testing.T, path []focused, which func(focused) bool) {
	t.Helper()
	for _, f := range path {
		if !which(f) {
			continue
		}
		if f.Ring == "" {
			t.Errorf("focused %s shows no focus outline", f.Label)
		}
		if !f.InView {
			t.Errorf("focused %s is outside the viewport", f.Label)
		}
	}
}

// testKeyboardSearch walks the home page and a results page with Tab: the skip link
// comes first, then the search box, then every result card in the order shown, each with
// a visible focus outline.
func testKeyboardSearch(t *testing.T, s *suite) {
	for _, path := range []string{"/", "/?q=pluginyard"} {
		t.Run(path, func(t *testing.T) {
			tb := s.tab(t)
			tb.open(path)
			// The order shown: top to bottom, then left to right.
			cards := eval[[]string](tb, `Array.from(document.querySelectorAll(`+jsString(resultCards)+`))
				.map(e => ({id: e.dataset.id, r: e.getBoundingClientRect()}))
				.sort((a, b) => Math.round(a.r.top - b.r.top) || a.r.left - b.r.left).map(c => c.id)`)
			if len(cards) < 2 {
				t.Fatalf("%s shows %d result cards; the test needs at least 2", path, len(cards))
			}
			walk := tb.tabUntil(func(p []focused) bool { return countCards(p) == len(cards) })
			if !walk[0].Skip {
				t.Errorf("the first Tab stop is %s, want the skip link", walk[0].Label)
			}
			box := slices.IndexFunc(walk, func(f focused) bool { return f.TestID == "search-box" })
			first := slices.IndexFunc(walk, func(f focused) bool { return f.Card != "" })
			if box < 0 || box > first {
				t.Errorf("Tab reached the search box at stop %d and the first result at stop %d; want the search box first", box, first)
			}
			var order []string
			for _, f := range walk {
				if f.Card != "" && !slices.Contains(order, f.Card) {
					order = append(order, f.Card)
				}
			}
			if diff := cmp.Diff(cards, order); diff != "" {
				t.Errorf("Tab visits the result cards out of order (-shown +tabbed):\n%s", diff)
			}
			wantRing(t, walk, func(f focused) bool { return f.TestID == "search-box" || f.Card != "" })
		})
	}
}

// countCards counts the distinct result cards a Tab walk focused.
func countCards(path []focused) int {
	var seen []string
	for _, f := range path {
		if f.Card != "" && !slices.Contains(seen, f.Card) {
			seen = append(seen, f.Card)
		}
	}
	return len(seen)
}

// testKeyboardPlugin walks a plugin page with Tab to every install control: the copy
// buttons and the download link are reached in the panel's order with a visible focus
// outline, and Enter on a copy button copies.
func testKeyboardPlugin(t *testing.T, s *suite) {
	tb := s.tab(t)
	tb.grantClipboard()
	tb.open("/plugins/slack-relay")
	const controls = `[data-testid="install-panel"] :is(a[href], button:not([hidden]))`
	tb.do("wait for the copy buttons (shown by the script)", chromedp.WaitVisible(chromedp.CSS(`[data-testid="install-panel"] button[data-copy-target]`)))
	want := eval[[]string](tb, `Array.from(document.querySelectorAll(`+jsString(controls)+`), e => e.getAttribute("data-copy-target") || e.getAttribute("data-testid") || e.getAttribute("href"))`)
	if !slices.Contains(want, "download-link") || !slices.Contains(want, "package-url") {
		t.Fatalf("install panel controls %q lack the download link or the package URL copy button", want)
	}
	walk := tb.tabUntil(func(p []focused) bool {
		return len(p) > 0 && p[len(p)-1].Install && p[len(p)-1].Copy == "package-url"
	})
	tb.do("press Enter on the package URL copy button", chromedp.KeyEvent(kb.Enter))
	copied, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](`document.querySelector('[data-copy-target="package-url"]').dataset.copied === "true"`))
	if err != nil || !copied {
		t.Errorf("Enter on the focused copy button did not copy: %v", err)
	}
	walk = append(walk, tb.tabUntil(func(p []focused) bool {
		return len(p) > 0 && !p[len(p)-1].Install && slices.ContainsFunc(p, func(f focused) bool { return f.Install })
	})...)
	var got []string
	for _, f := range walk {
		if f.Install {
			got = append(got, f.Name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("install controls reached with Tab (-in the panel +tabbed):\n%s", diff)
	}
	wantRing(t, walk, func(f focused) bool { return f.Install })
}
