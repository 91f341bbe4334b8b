package server_test

import (
	"bytes"
	"net/http"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/rules"
)

// TestRefusalProblemsLinkTheReference: every problem of a real 422 carries doc_url, the
// absolute link of its rule's entry on this registry's /docs/reference.
func TestRefusalProblemsLinkTheReference(t *testing.T) {
	e := newEnv(t, "")
	manifest := "id: acme-hello\napi_version: 3\nversion: \"1.0.0\"\nname: Hello\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	var buf bytes.Buffer
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
	}
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", buf.Bytes())
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("publish: %d %s, want 422", r.Status, r.Body)
	}
	var body struct {
		Problems []struct {
			Rule   string `json:"rule"`
			DocURL string `json:"doc_url"`
		} `json:"problems"`
	}
	r.json(t, &body)
	want := map[string]string{
		"manifest.api_version.value": e.srv.URL + "/docs/reference/kandev-manifest#manifest.api_version.value",
		"manifest.unknown_field":     e.srv.URL + "/docs/reference/kandev-manifest#manifest.unknown_field",
	}
	seen := 0
	for _, p := range body.Problems {
		if p.DocURL == "" {
			t.Errorf("problem %s has no doc_url", p.Rule)
		}
		if w, ok := want[p.Rule]; ok {
			seen++
			if p.DocURL != w {
				t.Errorf("%s: doc_url %q, want %q", p.Rule, p.DocURL, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("want problems %v in %s", want, r.Body)
	}
	// The link resolves: the reference page has the rule's anchor.
	page := e.get("/docs/reference/kandev-manifest")
	if page.Status != http.StatusOK || !bytes.Contains(page.Body, []byte(`id="manifest.api_version.value"`)) {
		t.Errorf("GET /docs/reference/kandev-manifest: %d, anchor present %v", page.Status, bytes.Contains(page.Body, []byte(`id="manifest.api_version.value"`)))
	}
}

// TestReferencePages: /docs/reference lists every section, each section page has an
// anchor for each of its rules, the package page states the canvas limits, and an unknown
// section is a 404.
func TestReferencePages(t *testing.T) {
	e := newEnv(t, "")
	overview := e.get("/docs/reference")
	if overview.Status != http.StatusOK {
		t.Fatalf("GET /docs/reference: %d", overview.Status)
	}
	for _, sec := range rules.Sections() {
		if !bytes.Contains(overview.Body, []byte(`href="/docs/reference/`+sec.Slug+`"`)) {
			t.Errorf("overview does not link section %s", sec.Slug)
		}
		page := e.get("/docs/reference/" + sec.Slug)
		if page.Status != http.StatusOK {
			t.Errorf("GET /docs/reference/%s: %d", sec.Slug, page.Status)
			continue
		}
		for _, r := range rules.InSection(sec.Slug) {
			if !bytes.Contains(page.Body, []byte(`id="`+r.ID+`"`)) {
				t.Errorf("/docs/reference/%s has no anchor for %s", sec.Slug, r.ID)
			}
		}
	}
	pkgPage := e.get("/docs/reference/package")
	if !bytes.Contains(pkgPage.Body, []byte("<th scope=\"row\">One file, decompressed</th><td>200 MiB</td><td>5 MiB</td>")) {
		t.Errorf("the package page does not state the 5 MiB per-file canvas limit")
	}
	kandev := e.get("/docs/reference/kandev-manifest")
	if !bytes.Contains(kandev.Body, []byte(`<th scope="row"><code>runtime.executables</code></th>`)) {
		t.Errorf("the Kandev page does not list the field runtime.executables")
	}
	if r := e.get("/docs/reference/nope"); r.Status != http.StatusNotFound {
		t.Errorf("GET /docs/reference/nope: %d, want 404", r.Status)
	}
}

// TestOpenAPIListsReferenceSections: the OpenAPI enum of /docs/reference/{section} is the
// rule table's list of sections.
func TestOpenAPIListsReferenceSections(t *testing.T) {
	e := newEnv(t, "")
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Parameters []struct {
					Schema struct {
						Enum []string `json:"enum"`
					} `json:"schema"`
				} `json:"parameters"`
			} `json:"get"`
		} `json:"paths"`
	}
	e.get("/api/v1/openapi.json").json(t, &doc)
	params := doc.Paths["/docs/reference/{section}"].Get.Parameters
	if len(params) != 1 {
		t.Fatalf("/docs/reference/{section} has %d parameters, want 1", len(params))
	}
	var want []string
	for _, s := range rules.Sections() {
		want = append(want, s.Slug)
	}
	if diff := cmp.Diff(want, params[0].Schema.Enum); diff != "" {
		t.Errorf("section enum (-rules +openapi):\n%s", diff)
	}
}
