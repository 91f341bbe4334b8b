package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
)

// sidebar reads the category filter of a listing page: name → count, and name → link.
func sidebar(t *testing.T, doc *goquery.Document) (map[string]int, map[string]string) {
	t.Helper()
	counts, links := map[string]int{}, map[string]string{}
	doc.Find(`[data-testid="category-filter"] [data-testid="category-link"]`).Each(func(_ int, a *goquery.Selection) {
		name, _ := a.Attr("data-category")
		text := strings.Join(strings.Fields(a.Find(".count").Text()), " ") // ", 2 packages"
		n, err := strconv.Atoi(strings.Fields(strings.TrimPrefix(text, ","))[0])
		if err != nil {
			t.Fatalf("category %s: count %q: %v", name, text, err)
		}
		counts[name] = n
		links[name], _ = a.Attr("href")
	})
	return counts, links
}

const resultCardSel = `[data-testid="results"] [data-testid="card"]`

// TestCategoryCountsFollowKindAndQuery reads the sidebar under every kind tab and a
// query, on the demo catalog, and follows each category link: the page it opens lists
// exactly the number the sidebar showed.
func TestCategoryCountsFollowKindAndQuery(t *testing.T) {
	e := newDemoEnv(t)
	tests := []struct {
		name, path string
		want       map[string]int
	}{
		{"everything", "/", map[string]int{"analytics": 1, "automation": 1, "connector": 2, "tools": 2}},
		{"plugins tab", "/?kind=plugin", map[string]int{"analytics": 1, "automation": 1, "connector": 1, "tools": 1}},
		{"canvases tab", "/?kind=canvas", map[string]int{"tools": 1}},
		{"extensions tab", "/?kind=extension", map[string]int{"connector": 1}},
		{"query", "/?q=slack", map[string]int{"automation": 1, "connector": 1}},
		{"query and tab", "/?q=pull&kind=extension", map[string]int{"connector": 1}},
		{"chosen category stays, at 0", "/?kind=canvas&category=analytics", map[string]int{"analytics": 0, "tools": 1}},
		{"category page counts its own links", "/categories/tools", map[string]int{"analytics": 1, "automation": 1, "connector": 2, "tools": 2}},
		// Its links are plain category pages, every kind: the counts are theirs, not the filter's.
		{"category page with a kind", "/categories/tools?kind=canvas", map[string]int{"analytics": 1, "automation": 1, "connector": 2, "tools": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts, links := sidebar(t, e.page(tt.path))
			if diff := cmp.Diff(tt.want, counts); diff != "" {
				t.Errorf("sidebar counts of %s (-want +got):\n%s", tt.path, diff)
			}
			for name, href := range links {
				if got := e.page(href).Find(resultCardSel).Length(); got != counts[name] {
					t.Errorf("%s: %s shows %d, its link %s lists %d", tt.path, name, counts[name], href, got)
				}
			}
		})
	}
}

// TestCardBadges deprecates a package and yanks the newest version of another: their
// cards say so on the home, category and publisher pages; the others carry no badge.
func TestCardBadges(t *testing.T) {
	e := newEnv(t, "")
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello"))
	e.mustPublish("acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "Says hello"))
	e.mustPublish("acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "Another"))
	if res := e.post("/api/v1/plugins/acme-hello/versions/1.1.0/yank", adminToken, map[string]string{"reason": "broken"}); res.Status != http.StatusOK {
		t.Fatalf("yank: %d %s", res.Status, res.Body)
	}
	if res := e.post("/api/v1/plugins/acme-other/deprecate", adminToken, map[string]string{"reason": "replaced", "replacement": "acme-hello"}); res.Status != http.StatusOK {
		t.Fatalf("deprecate: %d %s", res.Status, res.Body)
	}
	type badges struct{ Version, Deprecated, Yanked string }
	want := map[string]badges{
		"acme-hello": {Version: "v1.0.0", Yanked: "v1.1.0 yanked"},
		"acme-other": {Version: "v1.0.0", Deprecated: "Deprecated"},
	}
	for _, path := range []string{"/", "/?q=hello", "/categories/tools", "/publishers/acme", "/publishers/someone-else"} {
		t.Run(path, func(t *testing.T) {
			cards := e.page(path).Find(`[data-testid="card"]`)
			if cards.Length() == 0 {
				t.Fatalf("%s shows no card", path)
			}
			cards.Each(func(_ int, c *goquery.Selection) {
				id, _ := c.Attr("data-id")
				got := badges{
					Version:    strings.TrimSpace(c.Find(".card-meta span:nth-child(2)").Text()),
					Deprecated: strings.TrimSpace(c.Find(`[data-testid="deprecated-badge"]`).Text()),
					Yanked:     strings.TrimSpace(c.Find(`[data-testid="yanked-badge"]`).Text()),
				}
				if diff := cmp.Diff(want[id], got); diff != "" {
					t.Errorf("%s: card %s (-want +got):\n%s", path, id, diff)
				}
			})
		})
	}
}

// TestDeprecationBannerIsSentences wants the banner to read as sentences, whatever the
// owner typed as the reason.
func TestDeprecationBannerIsSentences(t *testing.T) {
	tests := []struct {
		reason, replacement, want string
	}{
		{"replaced", "acme-hello", "This package is deprecated. Reason given: replaced. Use acme-hello instead."},
		{"No longer maintained!", "", "This package is deprecated. Reason given: No longer maintained!"},
		{"Merged into Hello.  ", "acme-hello", "This package is deprecated. Reason given: Merged into Hello. Use acme-hello instead."},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			e := newEnv(t, "")
			e.mustPublish("acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "Another"))
			if res := e.post("/api/v1/plugins/acme-other/deprecate", adminToken, map[string]string{"reason": tt.reason, "replacement": tt.replacement}); res.Status != http.StatusOK {
				t.Fatalf("deprecate: %d %s", res.Status, res.Body)
			}
			got := strings.Join(strings.Fields(e.page("/plugins/acme-other").Find(`[data-testid="deprecation-notice"]`).Text()), " ")
			if got != tt.want {
				t.Errorf("banner reads %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPublisherHasOneName follows the byline of each demo package to its publisher page:
// the link, the page's h1 and its <title> all say the curated owner's name, and the
// manifest's author is a label.
func TestPublisherHasOneName(t *testing.T) {
	e := newDemoEnv(t)
	for _, path := range []string{"/plugins/slack-relay", "/plugins/task-board-canvas", "/extensions/curupira-github-issues"} {
		t.Run(path, func(t *testing.T) {
			doc := e.page(path)
			link := doc.Find(`[data-testid="package-header"] [data-testid="publisher-link"]`)
			href, _ := link.Attr("href")
			if link.Length() != 1 || link.Text() != "demo" || href != "/publishers/demo" {
				t.Fatalf("byline link %q → %q, want demo → /publishers/demo", link.Text(), href)
			}
			// Extensions' author is their repository's owner, "pluginyard".
			if got := strings.TrimSpace(doc.Find(`[data-testid="package-header"] [data-testid="author"]`).Text()); !strings.EqualFold(got, "author: Pluginyard") {
				t.Errorf("author label = %q, want %q", got, "author: Pluginyard")
			}
			pub := e.page(href)
			got := []string{pub.Find("h1").Text(), strings.SplitN(pub.Find("title").Text(), " · ", 2)[0],
				strings.ToLower(strings.Join(strings.Fields(pub.Find(`[data-testid="publisher-authors"] .label`).Text()), " "))}
			if diff := cmp.Diff([]string{"demo", "demo", "pluginyard"}, got); diff != "" {
				t.Errorf("publisher page h1, title, author labels, one per author whatever its case (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneSearchBox: the home page's own search form replaces the header's box; other
// pages keep the header's.
func TestOneSearchBox(t *testing.T) {
	e := newDemoEnv(t)
	tests := []struct{ path, want string }{
		{"/", "search-box"},
		{"/?q=slack&kind=plugin", "search-box"},
		{"/?category=tools&page=1", "search-box"},
		{"/plugins/slack-relay", "nav-search"},
		{"/categories/tools", "nav-search"},
		{"/publishers/demo", "nav-search"},
		{"/docs", "nav-search"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var got []string
			e.page(tt.path).Find(`input[type=search]`).Each(func(_ int, s *goquery.Selection) {
				id, _ := s.Attr("data-testid")
				got = append(got, id)
			})
			if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
				t.Errorf("search boxes on %s (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// TestCategoryCountedOncePerPackage publishes a manifest that names a category twice: the
// sidebar counts the package once, as the filter lists it once.
func TestCategoryCountedOncePerPackage(t *testing.T) {
	e := newEnv(t, "")
	data := pkg(t, "acme-hello", "1.0.0", "Says hello")
	e.mustPublish("acme-hello-1.0.0.tar.gz", repack(t, data, "categories: [tools]", "categories: [tools, analytics, tools]"))
	counts, links := sidebar(t, e.page("/"))
	if diff := cmp.Diff(map[string]int{"analytics": 1, "tools": 1}, counts); diff != "" {
		t.Errorf("sidebar counts (-want +got):\n%s", diff)
	}
	if got := e.page(links["tools"]).Find(resultCardSel).Length(); got != 1 {
		t.Errorf("the tools filter lists %d packages, want 1", got)
	}
}

// repack rewrites manifest.yaml in a package built by pkg, replacing old with new, and
// packs it again (pack writes a fresh checksums.txt).
func repack(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Name == "checksums.txt" {
			continue
		}
		if h.Name == "manifest.yaml" {
			if !bytes.Contains(b, []byte(old)) {
				t.Fatalf("manifest.yaml has no %q", old)
			}
			b = bytes.ReplaceAll(b, []byte(old), []byte(new))
		}
		fsys[h.Name] = &fstest.MapFile{Data: b, Mode: fs.FileMode(h.Mode)}
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
