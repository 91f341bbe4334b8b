package server_test

import (
	"strings"
	"testing"
)

// TestVersionWarningsLinkTheReference: the warnings a release was accepted with carry the
// link to their rule's reference entry in the API, as refusals' problems do.
func TestVersionWarningsLinkTheReference(t *testing.T) {
	e := newEnv(t, "")
	data := withManifest(t, manifestYAML("acme-hello", "1.0.0", "colour: red\n"))
	e.mustPublish("acme-hello-1.0.0.tar.gz", data)
	var v struct {
		Warnings []struct {
			Rule   string `json:"rule"`
			DocURL string `json:"doc_url"`
		} `json:"warnings"`
	}
	e.get("/api/v1/plugins/acme-hello/versions/1.0.0").json(t, &v)
	found := false
	for _, w := range v.Warnings {
		if w.Rule == "manifest.unknown_field" {
			found = true
			if !strings.HasPrefix(w.DocURL, e.srv.URL+"/docs/reference/") || !strings.HasSuffix(w.DocURL, "#manifest.unknown_field") {
				t.Errorf("doc_url %q, want %s/docs/reference/…#manifest.unknown_field", w.DocURL, e.srv.URL)
			}
		}
	}
	if !found {
		t.Fatalf("no manifest.unknown_field warning: %+v", v.Warnings)
	}
}
