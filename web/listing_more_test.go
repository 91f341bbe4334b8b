package web_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/web"
)

// TestHomeTotalLowerBound: a text search that stopped counting says so ("1,000+"), in the
// heading, the range and each category count; an exact total reads plainly.
func TestHomeTotalLowerBound(t *testing.T) {
	cards := []web.Card{{ID: "a", Kind: web.KindPlugin, Name: "A", URL: "/plugins/a"}}
	for _, tt := range []struct {
		more                   bool
		heading, shown, counts string
	}{
		{true, "1,000+ results for “work”", "Showing 1–1 of 1,000+", "412+"},
		{false, "1,000 results for “work”", "Showing 1–1 of 1,000", "412"},
	} {
		p := web.HomePage{Query: "work", Cards: cards, Total: 1000, TotalMore: tt.more, Page: 1, PerPage: 24,
			Categories: []web.CategoryCount{{Name: "tools", Count: 412, AtLeast: tt.more}}}
		_, doc := mustRender(t, web.Home(p))
		if got := strings.TrimSpace(doc.Find("#results-heading").Text()); got != tt.heading {
			t.Errorf("more=%t: heading %q, want %q", tt.more, got, tt.heading)
		}
		if got := strings.TrimSpace(doc.Find(testid("result-count")).Text()); got != tt.shown {
			t.Errorf("more=%t: range %q, want %q", tt.more, got, tt.shown)
		}
		count := strings.Join(strings.Fields(doc.Find(testid("category-link")+" .count").Text()), " ")
		if want := ", " + tt.counts + " packages"; count != want {
			t.Errorf("more=%t: category count %q, want %q", tt.more, count, want)
		}
	}
}

// TestPublisherLabelsBounded: a publisher page names the repositories and authors it was
// given and counts the rest.
func TestPublisherLabelsBounded(t *testing.T) {
	p := web.PublisherPage{Name: "acme", Repos: []string{"acme/a", "acme/b"}, MoreRepos: 2476, Authors: []string{"Ann"}, MoreAuthors: 3,
		Cards: []web.Card{{ID: "a", Kind: web.KindPlugin, Name: "A", URL: "/plugins/a"}}, Total: 2478, Page: 1, PerPage: 24}
	_, doc := mustRender(t, web.Publisher(p))
	if got := strings.TrimSpace(doc.Find(testid("more-repos")).Text()); got != "and 2,476 more" {
		t.Errorf("more repos %q", got)
	}
	if got := strings.TrimSpace(doc.Find(testid("more-authors")).Text()); got != "and 3 more" {
		t.Errorf("more authors %q", got)
	}
	if n := doc.Find(testid("publisher-repos") + " a").Length(); n != 2 {
		t.Errorf("%d repository links, want 2", n)
	}
}
