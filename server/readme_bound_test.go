package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pluginyard/registry/readme"
)

// amplifyingREADME is a few KB of Markdown whose HTML is about 100 MB: one reference
// definition with a 2,000-byte URL, used 50,000 times.
func amplifyingREADME() string {
	return "[a]: https://example.com/" + strings.Repeat("x", 2000) + "\n\n" + strings.Repeat("[a] ", 50_000) + "\n"
}

// TestHostileAmplifyingREADMEIsNotStored: a README whose HTML is far over readme.MaxHTML is
// accepted with the readme.truncated warning naming the limit, and the page shows a short
// notice instead of the HTML.
func TestHostileAmplifyingREADMEIsNotStored(t *testing.T) {
	e := newEnv(t, "")
	data := buildPackage(t, withChecksums([]tarEntry{regular("manifest.yaml", manifestYAML("acme-hello", "1.0.0", "")),
		executable("server/plugin-linux-amd64", "#!/bin/sh\necho hello\n"), regular("README.md", amplifyingREADME())}), nil)
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data)
	if r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %.400s", r.Status, r.Body)
	}
	var body struct {
		Warnings []string `json:"warnings"`
	}
	r.json(t, &body)
	var warned bool
	for _, w := range body.Warnings {
		warned = warned || strings.Contains(w, "readme.truncated") && strings.Contains(w, strconv.Itoa(readme.MaxHTML))
	}
	if !warned {
		t.Errorf("warnings %q lack readme.truncated naming the %d-byte limit", body.Warnings, readme.MaxHTML)
	}
	page := e.get("/plugins/acme-hello")
	if page.Status != http.StatusOK {
		t.Fatalf("page: %d", page.Status)
	}
	if len(page.Body) > 2<<20 {
		t.Errorf("page is %d bytes, want under 2 MiB", len(page.Body))
	}
	if !strings.Contains(string(page.Body), readme.OversizeClass) {
		t.Errorf("page lacks the %s notice", readme.OversizeClass)
	}
}

// TestCatalogHoldsNoREADMEHTML: AllReleases, which every index rebuild reads, leaves
// READMEHTML empty, and the plugin page still shows the README, loaded by release id.
func TestCatalogHoldsNoREADMEHTML(t *testing.T) {
	e := newEnv(t, "")
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkgWithREADME(t, "acme-hello", "1.0.0", "# Hello\n\nSays **hello** to you.\n"))
	all, err := e.st.AllReleases(context.Background())
	if err != nil || len(all) != 1 {
		t.Fatalf("AllReleases: %v, %d releases", err, len(all))
	}
	if all[0].READMEHTML != nil {
		t.Errorf("AllReleases loaded %d bytes of README HTML; the catalog must not hold it", len(all[0].READMEHTML))
	}
	doc := e.page("/plugins/acme-hello")
	if got := doc.Find(`[data-testid="readme"] strong`).Text(); got != "hello" {
		t.Errorf("README section strong = %q, want %q", got, "hello")
	}
}
