package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

func TestStatic(t *testing.T) {
	tests := []struct {
		name        string
		path        string
		pattern     string
		contentType string
		contains    string
	}{
		{"stylesheet", web.CSSPath(), `^/static/app\.[0-9a-f]{12}\.css$`, "text/css; charset=utf-8", "prefers-color-scheme: dark"},
		{"copy script", web.JSPath(), `^/static/copy\.[0-9a-f]{12}\.js$`, "text/javascript; charset=utf-8", "data-copy-target"},
		{"favicon", web.FaviconPath(), `^/static/favicon\.[0-9a-f]{12}\.svg$`, "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !regexp.MustCompile(tt.pattern).MatchString(tt.path) {
				t.Fatalf("path %q does not match %s", tt.path, tt.pattern)
			}
			name := strings.TrimPrefix(tt.path, "/static/")
			data, ct, ok := web.Static(name)
			if !ok {
				t.Fatalf("Static(%q) not found", name)
			}
			if diff := cmp.Diff(tt.contentType, ct); diff != "" {
				t.Errorf("content type (-want +got):\n%s", diff)
			}
			sum := sha256.Sum256(data)
			if !strings.Contains(name, "."+hex.EncodeToString(sum[:6])+".") {
				t.Errorf("name %q does not carry the content hash %x", name, sum[:6])
			}
			if !strings.Contains(string(data), tt.contains) {
				t.Errorf("content lacks %q", tt.contains)
			}
		})
	}
}

func TestStaticRefusesUnhashedNames(t *testing.T) {
	for _, name := range []string{"app.css", "copy.js", "app.000000000000.css", "../static/app.css", ""} {
		if _, _, ok := web.Static(name); ok {
			t.Errorf("Static(%q) found, want only current hashed names", name)
		}
	}
}

// TestStylesheetIsSmall keeps the one hand-written stylesheet small and
// free of anything fetched from elsewhere.
func TestStylesheetIsSmall(t *testing.T) {
	data, _, _ := web.Static(strings.TrimPrefix(web.CSSPath(), "/static/"))
	if len(data) > 24<<10 {
		t.Errorf("stylesheet is %d bytes, want at most 24 KiB", len(data))
	}
	for _, banned := range []string{"@import", "url(", "http://", "https://"} {
		if strings.Contains(string(data), banned) {
			t.Errorf("stylesheet contains %q: no external resources", banned)
		}
	}
}
