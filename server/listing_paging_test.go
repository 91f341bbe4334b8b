package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/bench/catalog"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
)

// pagingN plugins are listed by newPagingEnv: two and a half pages of 24.
const pagingN = 60

var pagingCategories = []string{"tools", "connector", "automation"}

// pagingID is plugin i of newPagingEnv; its display name sorts as its id does.
func pagingID(i int) string { return fmt.Sprintf("page-%02d", i) }

// pagingPublisher is the owner of plugin i: pub-a owns the even ones, pub-b the odd.
func pagingPublisher(i int) string { return "pub-" + string(rune('a'+i%2)) }

// pagingCats are plugin i's categories; every fifth plugin names a second, tools.
func pagingCats(i int) []string {
	c := []string{pagingCategories[i%3]}
	if i%5 == 0 && c[0] != "tools" {
		c = append(c, "tools")
	}
	return c
}

// pagingFeatured: every eleventh plugin is featured.
func pagingFeatured(i int) bool { return i%11 == 0 }

// newPagingEnv serves pagingN published plugins.
func newPagingEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	var list strings.Builder
	list.WriteString("plugins:\n")
	for i := range pagingN {
		fmt.Fprintf(&list, "  - id: %s\n    repo: acme/%s\n    owners: [%s]\n    featured: %t\n", pagingID(i), pagingID(i), pagingPublisher(i), pagingFeatured(i))
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)
	for i := range pagingN {
		if res := e.publish(adminToken, pagingID(i)+"-1.0.0.tar.gz", pagingPackage(t, i)); res.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", pagingID(i), res.Status, res.Body)
		}
	}
	return e
}

func pagingPackage(t *testing.T, i int) []byte {
	t.Helper()
	manifest := "id: " + pagingID(i) + "\napi_version: 2\nversion: \"1.0.0\"\ndisplay_name: Paging " + pagingID(i)[5:] +
		"\ndescription: A plugin for the paging tests\nauthor: Acme\ncategories: [" + strings.Join(pagingCats(i), ", ") + "]\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cardIDs are the ids of a page's result cards, in order.
func cardIDs(doc *goquery.Document) []string {
	var ids []string
	doc.Find(resultCardSel).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-id")
		ids = append(ids, id)
	})
	return ids
}

// followPages reads start and every page its "next" links lead to (links a browser without
// JavaScript follows), checking each page's "prev" link leads back, and returns the ids in
// order.
func followPages(t *testing.T, e *env, start string) []string {
	t.Helper()
	var ids []string
	prev := ""
	for path, n := start, 1; path != ""; n++ {
		doc := e.page(path)
		ids = append(ids, cardIDs(doc)...)
		back, hasPrev := doc.Find(`[data-testid="prev-page"]`).Attr("href")
		if n > 1 && (!hasPrev || back != prev) {
			t.Errorf("page %d (%s): prev link %q, want %q", n, path, back, prev)
		}
		if n == 1 && hasPrev {
			t.Errorf("page 1 (%s) has a prev link %q", path, back)
		}
		prev = path
		path, _ = doc.Find(`[data-testid="next-page"]`).Attr("href")
		if n > pagingN {
			t.Fatal("next links never end")
		}
	}
	return ids
}

func pagingWant(filter func(i int) bool) []string {
	var ids []string
	for i := range pagingN {
		if filter(i) {
			ids = append(ids, pagingID(i))
		}
	}
	return ids
}

// TestListingPagesFollowLinks: the home, category and publisher pages list a page of 24
// at a time, and following their next links visits every package once, in order, with
// prev links leading back.
func TestListingPagesFollowLinks(t *testing.T) {
	e := newPagingEnv(t)
	for _, tt := range []struct {
		start string
		want  []string
	}{
		{"/", pagingWant(func(int) bool { return true })},
		{"/?sort=name", pagingWant(func(int) bool { return true })},
		{"/categories/tools", pagingWant(func(i int) bool { return slices.Contains(pagingCats(i), "tools") })},
		{"/?category=connector", pagingWant(func(i int) bool { return slices.Contains(pagingCats(i), "connector") })},
		{"/publishers/pub-a", pagingWant(func(i int) bool { return i%2 == 0 })},
		{"/?q=paging", pagingWant(func(int) bool { return true })},
	} {
		got := followPages(t, e, tt.start)
		if tt.start == "/?q=paging" {
			slices.Sort(got) // relevance order: every one matches alike; the set is what counts
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("pages from %s (-want +got):\n%s", tt.start, diff)
		}
	}
	pub := e.page("/publishers/pub-a")
	if n, more := pub.Find(`[data-testid="publisher-repos"] a`).Length(), strings.TrimSpace(pub.Find(`[data-testid="more-repos"]`).Text()); n != 24 || more != "and 6 more" {
		t.Errorf("publisher page names %d repositories and %q, want 24 and \"and 6 more\" (30 in all)", n, more)
	}
	if n := len(cardIDs(e.page("/"))); n != 24 {
		t.Errorf("home page 1 shows %d cards, want 24", n)
	}
	if n := len(cardIDs(e.page("/?page=3"))); n != pagingN-48 {
		t.Errorf("home page 3 shows %d cards, want %d", n, pagingN-48)
	}
}

// TestListingPageBounds: a page past the last is 404 (it names the last); a page number
// that is not a whole number from 1 to 10,000 is 400 before any work; none is a 500.
func TestListingPageBounds(t *testing.T) {
	e := newPagingEnv(t)
	for _, tt := range []struct {
		path string
		want int
	}{
		{"/?page=3", 200}, {"/?page=4", 404}, {"/?page=10000", 404},
		{"/categories/tools?page=2", 200}, {"/categories/tools?page=3", 404},
		{"/publishers/pub-a?page=2", 200}, {"/publishers/pub-a?page=3", 404},
		{"/api/v1/plugins?per_page=25&page=3", 200}, {"/api/v1/plugins?per_page=25&page=4", 404},
		{"/?q=paging&page=3", 200}, {"/?q=paging&page=4", 404},
	} {
		if res := e.get(tt.path); res.Status != tt.want {
			t.Errorf("GET %s: %d, want %d (%s)", tt.path, res.Status, tt.want, res.Body)
		}
	}
	// A page past the last names the last page, not the number of entries.
	for path, last := range map[string]string{"/?page=4": "3 pages", "/api/v1/plugins?per_page=25&page=4": "3 pages"} {
		if res := e.get(path); !bytes.Contains(res.Body, []byte("this listing has "+last)) {
			t.Errorf("GET %s: %.300s, want it to say the listing has %s", path, res.Body, last)
		}
	}
	for _, hostile := range []string{"0", "-1", "99999999999", "99999999999999999999999", "10001", "1e3", "abc", "%00", "2.5", "+2"} {
		for _, base := range []string{"/?page=", "/categories/tools?page=", "/publishers/pub-a?page=", "/api/v1/plugins?page="} {
			res := e.get(base + hostile)
			if res.Status != http.StatusBadRequest || !bytes.Contains(res.Body, []byte("page must be a whole number from 1 to 10000")) {
				t.Errorf("GET %s%s: %d %.200s, want 400 naming the range", base, hostile, res.Status, res.Body)
			}
		}
	}
}

// TestListingCountsEqualBruteForce: the sidebar counts and the result total of every kind
// tab are the brute-force counts of what was published.
func TestListingCountsEqualBruteForce(t *testing.T) {
	e := newPagingEnv(t)
	want := map[string]int{}
	for i := range pagingN {
		for _, c := range pagingCats(i) {
			want[c]++
		}
	}
	for _, path := range []string{"/", "/?kind=plugin", "/?page=2", "/categories/tools"} {
		counts, _ := sidebar(t, e.page(path))
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("sidebar of %s (-brute force +page):\n%s", path, diff)
		}
	}
	if counts, _ := sidebar(t, e.page("/?kind=canvas")); len(counts) != 0 {
		t.Errorf("canvas tab counts %v, want none", counts)
	}
	if got := strings.TrimSpace(e.page("/").Find(`[data-testid="result-count"]`).Text()); got != fmt.Sprintf("Showing 1–24 of %d", pagingN) {
		t.Errorf("result count %q", got)
	}
	var api struct {
		Total   int              `json:"total"`
		Next    *string          `json:"next"`
		Prev    *string          `json:"prev"`
		Plugins []map[string]any `json:"plugins"`
	}
	e.get("/api/v1/plugins?per_page=25&page=3").json(t, &api)
	if api.Total != pagingN || len(api.Plugins) != pagingN-50 || api.Next != nil || api.Prev == nil || !strings.Contains(*api.Prev, "page=2") {
		t.Errorf("API page 3 of 25: total %d, %d plugins, next %v, prev %v", api.Total, len(api.Plugins), api.Next, api.Prev)
	}
}

// TestFeaturedRowFirst: page 1 of the home page shows the featured packages, in a row
// above the results; later pages, searches and category filters do not repeat it.
func TestFeaturedRowFirst(t *testing.T) {
	e := newPagingEnv(t)
	doc := e.page("/")
	var got []string
	doc.Find(`[data-testid="featured-row"] [data-testid="card"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-id")
		got = append(got, id)
	})
	if diff := cmp.Diff(pagingWant(pagingFeatured), got); diff != "" {
		t.Errorf("featured row (-want +got):\n%s", diff)
	}
	if html, _ := doc.Html(); strings.Index(html, `data-testid="featured-row"`) > strings.Index(html, `data-testid="results"`) {
		t.Error("the featured row comes after the results")
	}
	for _, path := range []string{"/?page=2", "/?q=paging", "/?category=tools"} {
		if e.page(path).Find(`[data-testid="featured-row"]`).Length() != 0 {
			t.Errorf("%s repeats the featured row", path)
		}
	}
}

// TestSearchPastTheCap: a word in more packages than store.SearchCap reads "1,000+" on
// the page, and the API says its total is a lower bound; paging stops at the cap.
func TestSearchPastTheCap(t *testing.T) {
	url, _ := newScaleRegistry(t, store.SearchCap+1)
	get := func(path string) (int, []byte) {
		t.Helper()
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, body
	}
	status, body := get("/?q=" + catalog.CommonWord)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil || status != http.StatusOK {
		t.Fatalf("search: %d %v", status, err)
	}
	if got := doc.Find("#results-heading").Text(); !strings.HasPrefix(got, "1,000+ results") {
		t.Errorf("heading %q, want 1,000+ results", got)
	}
	var api struct {
		Total             int  `json:"total"`
		TotalIsLowerBound bool `json:"total_is_lower_bound"`
	}
	_, body = get("/api/v1/plugins?per_page=100&q=" + catalog.CommonWord)
	if err := json.Unmarshal(body, &api); err != nil || api.Total != store.SearchCap || !api.TotalIsLowerBound {
		t.Errorf("API: %+v %v, want total %d as a lower bound", api, err, store.SearchCap)
	}
	if status, _ := get("/api/v1/plugins?per_page=100&page=11&q=" + catalog.CommonWord); status != http.StatusNotFound {
		t.Errorf("API page 11 of 100 past the cap: %d, want 404", status)
	}
	_, body = get("/api/v1/plugins?per_page=100&q=" + catalog.ID(7))
	api.TotalIsLowerBound = false
	if err := json.Unmarshal(body, &api); err != nil || api.TotalIsLowerBound {
		t.Errorf("API search for one id: %+v %v, want an exact total", api, err)
	}
}
