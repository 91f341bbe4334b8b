package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

// check is one assertion about a rendered page: the number of elements a
// selector matches, and optionally the text of the first one and an
// attribute of the first one.
type check struct {
	sel       string
	count     int    // -1: at least one
	text      string // substring of the first match's text, when set
	attr      string // attribute of the first match, when set
	attrValue string
}

func TestPages(t *testing.T) {
	all := sampleCards(1000)
	emptySearch := web.HomePage{Query: "zzz-nothing", Category: "analytics", Sort: web.SortRelevance, Categories: sampleCategories(3)}
	filtered := homeFor(all, 2, 24)
	filtered.Category = "category-3"
	filtered.Kind = web.KindCanvas
	filtered.Query = "stats"

	tests := []struct {
		name   string
		page   templ.Component
		checks []check
	}{
		{"home first page", web.Home(homeFor(all, 1, 24)), []check{
			{sel: testid("search-box"), count: 1, attr: "name", attrValue: "q"},
			{sel: "label[for=q]", count: 1},
			{sel: testid("results") + " " + testid("card"), count: 24},
			{sel: testid("featured-row") + " " + testid("card"), count: 6},
			{sel: testid("category-filter") + " " + testid("category-link"), count: 30},
			{sel: testid("kind-tabs") + ` a[aria-current="page"]`, count: 1, text: "Everything"},
			{sel: testid("sort") + " option[selected]", count: 1, attr: "value", attrValue: web.SortDownloads},
			{sel: testid("pagination"), count: 1, text: "Page 1 of 42"},
			{sel: testid("next-page"), count: 1, attr: "href", attrValue: "/?page=2&sort=downloads"},
			{sel: testid("prev-page"), count: 0},
			{sel: testid("result-count"), count: 1, text: "1–24 of 1,000"},
			{sel: testid("no-results"), count: 0},
			{sel: testid("results") + " " + testid("card") + `[data-id="plugin-0000"] ` + testid("verified-badge"), count: 1},
			{sel: testid("results") + " " + testid("card") + `[data-id="plugin-0001"] ` + testid("verified-badge"), count: 0},
			{sel: testid("results") + " " + testid("card") + `[data-id="plugin-0000"] img.icon`, count: 1, attr: "alt", attrValue: ""},
			{sel: testid("results") + " " + testid("card") + `[data-id="plugin-0001"] .tile`, count: 1, text: "P"},
			{sel: testid("results") + " " + testid("card") + `[data-id="plugin-0001"] .card-title a`, count: 1, attr: "href", attrValue: "/plugins/plugin-0001"},
		}},
		{"home filtered second page", web.Home(filtered), []check{
			{sel: testid("search-box"), count: 1, attr: "value", attrValue: "stats"},
			{sel: `input[type=hidden][name=kind]`, count: 1, attr: "value", attrValue: web.KindCanvas},
			{sel: `input[type=hidden][name=category]`, count: 1, attr: "value", attrValue: "category-3"},
			{sel: testid("kind-tabs") + ` a[aria-current="page"]`, count: 1, attr: "data-kind", attrValue: web.KindCanvas},
			{sel: testid("category-filter") + ` a[aria-current="page"]`, count: 1, attr: "data-category", attrValue: "category-3"},
			{sel: testid("category-filter") + ` a[data-category="category-4"]`, count: 1, attr: "href", attrValue: "/?category=category-4&kind=canvas&q=stats&sort=downloads"},
			{sel: testid("featured-row"), count: 0},
			{sel: testid("prev-page"), count: 1, attr: "href", attrValue: "/?sort=downloads"},
			{sel: testid("result-count"), count: 1, text: "25–48 of 1,000"},
		}},
		{"home no results", web.Home(emptySearch), []check{
			{sel: testid("no-results"), count: 1, text: "Nothing matches “zzz-nothing”"},
			{sel: testid("clear-filters"), count: 1, attr: "href", attrValue: "/?q=zzz-nothing&sort=relevance"},
			{sel: testid("card"), count: 0},
			{sel: testid("pagination"), count: 0},
		}},
		{"plugin", web.Plugin(samplePlugin()), []check{
			{sel: "h1" + testid("package-name"), count: 1, text: "Acme Stats"},
			{sel: testid("verified-publisher"), count: 1, text: "built by acme/kandev-stats, release.yml at refs/tags/v1.2.0"},
			{sel: testid("publisher-link"), count: 1, attr: "href", attrValue: "/publishers/acme"},
			{sel: testid("publisher-link"), count: 1, text: "acme"},
			{sel: testid("author"), count: 0}, // author "Acme" is the publisher "acme": one name, no label
			{sel: testid("deprecation-notice"), count: 1, text: "This package is deprecated. Reason given: Merged into Acme Insights. Use acme-insights instead."},
			{sel: testid("readme") + " h3", count: 1, text: "Acme Stats"},
			{sel: testid("previews") + " img", count: 2, attr: "alt", attrValue: "The stats page with a week of throughput"},
			{sel: testid("permissions-panel") + " li", count: 4},
			{sel: testid("permissions-panel") + ` li[data-risky="true"]`, count: 2, text: "Risky"},
			{sel: testid("permissions-panel") + ` li[data-permission="secrets"]`, count: 1, text: "secrets"},
			{sel: testid("install-panel") + " " + testid("package-url"), count: 1, text: "https://plugins.example.com/packages/acme-stats/acme-stats-1.1.0.tar.gz"},
			{sel: testid("install-panel") + " " + testid("index-url"), count: 1, text: "https://plugins.example.com/index.json"},
			{sel: testid("install-panel") + " " + testid("package-sha256"), count: 1, text: fmt.Sprintf("%064x", 2)},
			{sel: testid("install-panel") + " " + testid("curl-check"), count: 1, text: "curl -fsSL https://plugins.example.com/packages/acme-stats/acme-stats-1.1.0.tar.gz | sha256sum"},
			{sel: testid("install-panel") + " " + testid("copy-button"), count: 4, attr: "data-copy-target", attrValue: "index-url"},
			{sel: testid("copy-button") + "[hidden]", count: 4},
			{sel: testid("verification-panel") + " " + testid("signer-repository") + " a", count: 1, attr: "href", attrValue: "https://github.com/acme/kandev-stats"},
			{sel: testid("verification-panel") + " " + testid("signer-workflow"), count: 1, text: ".github/workflows/release.yml"},
			{sel: testid("verification-panel") + " " + testid("transparency-log") + " a", count: 1, attr: "href", attrValue: "https://search.sigstore.dev/?logIndex=123456789"},
			{sel: testid("verification-panel") + " " + testid("checksums") + `[data-checksums="verified"]`, count: 1, text: "checksums.txt lists all 12 files, and each matches"},
			{sel: testid("versions-table") + " tbody tr", count: 3},
			{sel: testid("versions-table") + ` tr[data-version="1.2.0"] ` + testid("yanked-label"), count: 1},
			{sel: testid("versions-table") + ` tr[data-version="1.2.0"] td.reason`, count: 1, text: "corrupts the cache"},
			{sel: testid("versions-table") + ` tr[data-version="1.1.0"] .label-latest`, count: 1},
			{sel: testid("versions-table") + " caption .label-deprecated", count: 1},
			{sel: testid("deprecated-label"), count: 1},
			{sel: testid("deprecation-notice") + " a", count: 1, attr: "href", attrValue: "/plugins/acme-insights"},
			{sel: testid("warnings") + " li", count: 1, text: "homepage is not https"},
			{sel: testid("about-panel"), count: 1, text: "0.91.1 or later"},
		}},
		{"extension", web.Extension(sampleExtension()), []check{
			{sel: testid("trigger-types") + " li", count: 2, text: "jira_issue_created"},
			{sel: testid("runtime"), count: 1, text: "node"},
			{sel: testid("launch-command"), count: 1, text: "npx -y @acme/curupira-jira@0.3.0"},
			{sel: testid("install-panel"), count: 1, text: "Add this registry to Curupira"},
			{sel: testid("verification-panel") + " " + testid("signature-type"), count: 1, text: "Not signed"},
			{sel: testid("verification-panel") + " " + testid("checksums") + `[data-checksums="absent"]`, count: 1, text: "No checksums.txt"},
			{sel: testid("unsigned-hint"), count: 1, text: "ships no checksums.txt"},
			{sel: testid("verified-publisher"), count: 0},
			{sel: testid("readme"), count: 1, text: "ships no README"},
		}},
		{"publisher", web.Publisher(web.PublisherPage{Name: "acme", Repos: []string{"acme/kandev-stats"}, Cards: all[:5], Total: 5, Page: 1, PerPage: 24}), []check{
			{sel: testid("publisher-name"), count: 1, text: "acme"},
			{sel: testid("publisher-repos") + " a", count: 1, attr: "href", attrValue: "https://github.com/acme/kandev-stats"},
			{sel: testid("card"), count: 5},
			{sel: testid("pagination"), count: 0},
		}},
		{"publisher empty", web.Publisher(web.PublisherPage{Name: "nobody"}), []check{
			{sel: testid("no-results"), count: 1},
		}},
		{"category", web.Category(web.CategoryPage{Name: "category-2", Categories: sampleCategories(5), Cards: all[:24], Total: 40, Page: 1, PerPage: 24, NextURL: "/categories/category-2?page=2"}), []check{
			{sel: testid("category-name"), count: 1, text: "category-2"},
			{sel: testid("category-filter") + ` a[aria-current="page"]`, count: 1, attr: "href", attrValue: "/categories/category-2"},
			{sel: testid("card"), count: 24},
			{sel: testid("next-page"), count: 1, attr: "href", attrValue: "/categories/category-2?page=2"},
		}},
		{"docs overview", web.Docs(web.DocsPage{PublicURL: "https://reg.example.org/"}), []check{
			{sel: testid("docs-nav") + ` a[aria-current="page"]`, count: 1, text: "Overview"},
			{sel: testid("docs-content"), count: 1, text: "https://reg.example.org/index.json"},
		}},
		{"docs authors", web.Docs(web.DocsPage{Section: web.DocsAuthors, PublicURL: "https://reg.example.org", Action: "acme/publish@v2"}), []check{
			{sel: testid("docs-nav") + ` a[aria-current="page"]`, count: 1, text: "For plugin authors"},
			{sel: "h2#ci", count: 1},
			{sel: "pre", count: -1},
			{sel: testid("docs-content"), count: 1, text: "uses: acme/publish@v2"},
			{sel: testid("docs-content"), count: 1, text: "id-token: write"},
			{sel: testid("docs-content"), count: 1, text: "package: ${{ steps.pack.outputs.file }}"},
			{sel: testid("docs-content"), count: 1, text: "registry: https://reg.example.org"},
		}},
		{"docs operators", web.Docs(web.DocsPage{Section: web.DocsOperators, PublicURL: "https://reg.example.org"}), []check{
			{sel: "h2#add-source", count: 1},
			{sel: testid("docs-index-url"), count: 1, text: "https://reg.example.org/index.json"},
			{sel: testid("docs-curupira-url"), count: 1, text: "https://reg.example.org/curupira/index.json"},
			{sel: testid("config-table") + " tbody tr", count: -1, text: "--addr"},
		}},
		{"404", web.Error(web.ErrorPage{Status: 404, Query: "acme", Meta: web.Meta{NoIndex: true}}), []check{
			{sel: testid("search-box"), count: 1, attr: "value", attrValue: "acme"},
			{sel: testid("error"), count: 1, text: "Page not found"},
			{sel: `meta[name=robots]`, count: 1, attr: "content", attrValue: "noindex"},
			{sel: testid("error") + ` a[href="/"]`, count: 1},
		}},
		{"500", web.Error(web.ErrorPage{Status: 500, RequestID: "req-42"}), []check{
			{sel: testid("search-box"), count: 0},
			{sel: testid("request-id"), count: 1, text: "req-42"},
			{sel: testid("error-message"), count: 1, text: "Try again in a moment"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, doc := mustRender(t, tt.page)
			for _, c := range tt.checks {
				runCheck(t, doc, c)
			}
			checkLayout(t, doc)
		})
	}
}

func runCheck(t *testing.T, doc *goquery.Document, c check) {
	t.Helper()
	sel := doc.Find(c.sel)
	if c.count >= 0 && sel.Length() != c.count {
		t.Errorf("%s: matched %d elements, want %d", c.sel, sel.Length(), c.count)
		return
	}
	if sel.Length() == 0 {
		if c.count != 0 {
			t.Errorf("%s: matched nothing", c.sel)
		}
		return
	}
	first := sel.First()
	if c.text != "" && !strings.Contains(collapse(first.Text()), c.text) {
		t.Errorf("%s: text %q does not contain %q", c.sel, collapse(first.Text()), c.text)
	}
	if c.attr != "" {
		got, _ := first.Attr(c.attr)
		if diff := cmp.Diff(c.attrValue, got); diff != "" {
			t.Errorf("%s [%s] (-want +got):\n%s", c.sel, c.attr, diff)
		}
	}
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkLayout asserts what every page shares: the hashed stylesheet and
// script, a skip link to <main>, one h1, labelled search, no inline script
// or style (the server's CSP forbids them), alt text on every image.
func checkLayout(t *testing.T, doc *goquery.Document) {
	t.Helper()
	want := map[string]int{
		`html[lang="en"]`: 1,
		`link[rel=stylesheet][href="` + web.CSSPath() + `"]`: 1,
		`script[src="` + web.JSPath() + `"]`:                 1,
		`a.skip-link[href="#main"]`:                          1,
		`main#main`:                                          1,
		`h1`:                                                 1,
		testid("nav-search"):                                 1,
		`label[for=nav-q]`:                                   1,
		`script:not([src])`:                                  0,
		`style`:                                              0,
		`[style]`:                                            0,
		`img:not([alt])`:                                     0,
	}
	for sel, n := range want {
		if got := doc.Find(sel).Length(); got != n {
			t.Errorf("layout: %s matched %d, want %d", sel, got, n)
		}
	}
	doc.Find("input:not([type=hidden]), select").Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("id")
		if id == "" || doc.Find(`label[for="`+id+`"]`).Length() != 1 {
			t.Errorf("layout: form control %q has no label", id)
		}
	})
}
