package web_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

func TestSearchURL(t *testing.T) {
	tests := []struct {
		q, kind, category, sort string
		page                    int
		want                    string
	}{
		{"", "", "", "", 1, "/"},
		{"", "", "", "", 0, "/"},
		{"git hub", "", "", "", 1, "/?q=git+hub"},
		{"a&b=c", web.KindCanvas, "dev tools", web.SortName, 3, "/?category=dev+tools&kind=canvas&page=3&q=a%26b%3Dc&sort=name"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, web.SearchURL(tt.q, tt.kind, tt.category, tt.sort, tt.page)); diff != "" {
			t.Errorf("SearchURL(%q, %q, %q, %q, %d) (-want +got):\n%s", tt.q, tt.kind, tt.category, tt.sort, tt.page, diff)
		}
	}
}

func TestPathHelpers(t *testing.T) {
	got := []string{web.CategoryURL("dev tools"), web.CategoryURL("a/b"), web.PublisherURL("acme")}
	want := []string{"/categories/dev%20tools", "/categories/a%2Fb", "/publishers/acme"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestNewInstall(t *testing.T) {
	tests := []struct {
		url  string
		want string
	}{
		{"https://r.example.com/packages/a/a-1.0.0.tar.gz", "curl -fsSL https://r.example.com/packages/a/a-1.0.0.tar.gz | sha256sum"},
		{"https://r.example.com/p?x=1&y=2", "curl -fsSL 'https://r.example.com/p?x=1&y=2' | sha256sum"},
		{"https://r.example.com/it's", `curl -fsSL 'https://r.example.com/it'\''s' | sha256sum`},
	}
	for _, tt := range tests {
		got := web.NewInstall("https://r.example.com/index.json", tt.url, "abc")
		want := web.Install{IndexURL: "https://r.example.com/index.json", PackageURL: tt.url, SHA256: "abc", CurlCheck: tt.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("NewInstall(%q) (-want +got):\n%s", tt.url, diff)
		}
	}
}
