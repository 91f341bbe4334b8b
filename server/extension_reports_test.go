package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// scopedExtList curates one npm-style scoped extension.
const scopedExtList = `extensions:
  - name: "@acme/hello-ext"
    repo: acme/curupira-hello
    owners: [acme]
`

// scopedExtID is the extension's id, and scopedExtEsc the id as one escaped path segment
// (the form the API routes take, like the quarantine API).
const (
	scopedExtID  = "@acme/hello-ext"
	scopedExtEsc = "%40acme%2Fhello-ext"
)

// extEnv is a registry with @acme/hello-ext 1.0.0 published.
func extEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(scopedExtList), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)
	toml := "manifest_version = 1\nname = \"" + scopedExtID + "\"\nversion = \"1.0.0\"\nprotocol_version = 2\nruntime = \"node\"\n" +
		"kind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n[launch]\ntype = \"node\"\ncommand = \"index.js\"\n"
	e.mustPublish("acme-hello-ext-1.0.0.tar.gz", tarGz(t, map[string]string{
		"package/curupira-extension.toml": toml,
		"package/index.js":                "console.log('hi')\n",
	}))
	return e
}

// TestExtensionReportForm: the extension's page carries the same no-script form, posting
// to /extensions/{name}/report, which files the report and links back to the page.
func TestExtensionReportForm(t *testing.T) {
	e := extEnv(t)
	page := e.get("/extensions/" + scopedExtEsc)
	for _, want := range []string{`data-testid="report-form"`, `method="post"`, `name="reason"`, `maxlength="4096"`, `<option value="1.0.0">`} {
		if !bytes.Contains(page.Body, []byte(want)) {
			t.Errorf("extension page lacks %s", want)
		}
	}
	action := e.page("/extensions/"+scopedExtEsc).Find(`form[data-testid="report-form"]`).AttrOr("action", "")
	if got, _ := url.PathUnescape(action); got != "/extensions/"+scopedExtID+"/report" {
		t.Fatalf("the form posts to %q, want /extensions/%s/report", action, scopedExtID)
	}
	// The form's own action, the escaped id and the bare one all reach the same route.
	paths := map[string]string{"malicious": action, "broken": "/extensions/" + scopedExtEsc + "/report", "other": "/extensions/" + scopedExtID + "/report"}
	for kind, path := range paths {
		r := e.postForm(path, url.Values{"kind": {kind}, "version": {"1.0.0"}, "reason": {"panics on start"}},
			"Sec-Fetch-Site", "same-origin", "Origin", e.srv.URL)
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`data-testid="report-filed"`)) {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		if back := backLink(t, r); back != "/extensions/"+scopedExtID {
			t.Errorf("POST %s: the confirmation links back to %q, want the extension's page", path, back)
		}
	}
	got := e.reports("?open=true&package=" + url.QueryEscape(scopedExtID))
	if len(got) != len(paths) {
		t.Fatalf("stored reports = %+v, want %d", got, len(paths))
	}
	for _, r := range got {
		if r.PackageID != scopedExtID || r.Version != "1.0.0" {
			t.Errorf("stored report %+v, want %s@1.0.0", r, scopedExtID)
		}
	}
}

// TestExtensionReportFormRefusals: the extension route keeps every rule of the plugin
// form, links a refusal back to the extension's page, and answers 404 off its one path.
func TestExtensionReportFormRefusals(t *testing.T) {
	e := extEnv(t)
	form := "/extensions/" + scopedExtEsc + "/report"
	tests := []struct {
		name   string
		path   string
		form   url.Values
		header []string
		status int
		rules  []string
		link   bool
	}{
		{"from another site", form, url.Values{"kind": {"broken"}, "reason": {"x"}},
			[]string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, http.StatusForbidden, []string{"report.origin"}, true},
		{"unknown extension", "/extensions/%40acme%2Fnobody/report", url.Values{"kind": {"broken"}, "reason": {"x"}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusNotFound, []string{"report.package.unknown"}, false},
		{"kind and reason", form, url.Values{"kind": {"spam"}, "reason": {""}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusUnprocessableEntity, []string{"report.kind", "report.reason.missing"}, true},
		{"unknown version", form, url.Values{"kind": {"broken"}, "version": {"9.9.9"}, "reason": {"x"}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusNotFound, []string{"report.version.unknown"}, true},
		{"body over 8 KiB", form, url.Values{"kind": {"broken"}, "reason": {strings.Repeat("x", 8<<10)}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusRequestEntityTooLarge, []string{"report.body.size"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.postForm(tt.path, tt.form, tt.header...)
			if r.Status != tt.status || !bytes.Contains(r.Body, []byte(`data-testid="report-problems"`)) {
				t.Fatalf("%d %s, want %d with a problems page", r.Status, r.Body, tt.status)
			}
			if got := pageRules(r); strings.Join(got, ",") != strings.Join(tt.rules, ",") {
				t.Errorf("rules %v, want %v", got, tt.rules)
			}
			if linked := backLink(t, r) == "/extensions/"+scopedExtID; linked != tt.link {
				t.Errorf("links back to the extension's page: %v, want %v", linked, tt.link)
			}
		})
	}
	if r := e.postForm("/extensions/"+scopedExtEsc, url.Values{"kind": {"broken"}, "reason": {"x"}}, "Sec-Fetch-Site", "same-origin"); r.Status != http.StatusNotFound {
		t.Errorf("POST to the extension's page itself: %d, want 404", r.Status)
	}
	if got := e.reports(""); len(got) != 0 {
		t.Errorf("refused reports were stored: %+v", got)
	}
}

// TestExtensionReportAPIAndResolution: the API takes an extension's escaped id, and an
// actioned resolution shows on the extension's page.
func TestExtensionReportAPIAndResolution(t *testing.T) {
	e := extEnv(t)
	r := e.post("/api/v1/plugins/"+scopedExtEsc+"/reports", "", map[string]string{"kind": "malicious", "reason": "posts tokens away", "version": "1.0.0"})
	var filed struct {
		ID        int64  `json:"id"`
		PackageID string `json:"package_id"`
	}
	r.json(t, &filed)
	if r.Status != http.StatusCreated || filed.PackageID != scopedExtID {
		t.Fatalf("API report of %s: %d %s", scopedExtID, r.Status, r.Body)
	}
	if r := e.post("/api/v1/plugins/%40acme%2Fnobody/reports", "", map[string]string{"kind": "broken", "reason": "x"}); r.Status != http.StatusNotFound || !hasRule(t, r, "report.package.unknown") {
		t.Errorf("API report of an unknown extension: %d %s, want 404 report.package.unknown", r.Status, r.Body)
	}
	if r := e.post(fmt.Sprintf("/api/v1/admin/reports/%d/resolve", filed.ID), adminToken, map[string]string{"resolution": "confirmed", "action": "deprecated"}); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	page := e.get("/extensions/" + scopedExtEsc)
	notice := between(string(page.Body), `data-testid="report-resolution"`, "</div>")
	for _, want := range []string{"Reported as malicious", "version 1.0.0", `data-testid="report-action">deprecated</strong>`, "confirmed"} {
		if !strings.Contains(notice, want) {
			t.Errorf("extension page's resolution notice lacks %q:\n%s", want, notice)
		}
	}
}

// TestExtensionReportRateLimit: the extension form spends the report budget the plugin
// form and the API share (429 rate.report).
func TestExtensionReportRateLimit(t *testing.T) {
	e := extEnv(t)
	path := "/extensions/" + scopedExtEsc + "/report"
	for i := range 10 {
		if r := e.postForm(path, url.Values{"kind": {"spam"}, "reason": {"x"}}, "Sec-Fetch-Site", "same-origin"); r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("report %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	if r := e.postForm(path, url.Values{"kind": {"broken"}, "reason": {"x"}}, "Sec-Fetch-Site", "same-origin"); r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("eleventh report: %d %s, want 429 with Retry-After", r.Status, r.Body)
	}
	r := e.post("/api/v1/plugins/"+scopedExtEsc+"/reports", "", map[string]string{"kind": "broken", "reason": "x"})
	if r.Status != http.StatusTooManyRequests || !hasRule(t, r, "rate.report") {
		t.Errorf("the API after the extension form spent the budget: %d %s, want 429 rate.report", r.Status, r.Body)
	}
}

// backLink is where a report result page's "Back to" link points, unescaped ("" if none).
func backLink(t *testing.T, r response) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	href, ok := doc.Find(`[data-testid="report-back"]`).Attr("href")
	if !ok {
		return ""
	}
	u, err := url.PathUnescape(href)
	if err != nil {
		t.Fatalf("back link %q: %v", href, err)
	}
	return u
}

// TestExtensionArchiveAPI: archive and unarchive address an extension by its escaped id;
// its page shows the notice while archived, and a publish is refused (publish.archived).
func TestExtensionArchiveAPI(t *testing.T) {
	e := extEnv(t)
	owner, other := e.token("acme"), e.token("someone-else")
	archive := "/api/v1/plugins/" + scopedExtEsc + "/archive"
	if r := e.post(archive, other, nil); r.Status != http.StatusForbidden {
		t.Fatalf("archive by another publisher: %d %s, want 403", r.Status, r.Body)
	}
	r := e.post(archive, owner, nil)
	var res struct {
		ID       string `json:"id"`
		Archived bool   `json:"archived"`
		Changed  bool   `json:"changed"`
	}
	r.json(t, &res)
	if r.Status != http.StatusOK || res.ID != scopedExtID || !res.Archived || !res.Changed {
		t.Fatalf("archive by its owner: %d %s", r.Status, r.Body)
	}
	if idx := e.get("/curupira/index.json"); !bytes.Contains(idx.Body, []byte(scopedExtID)) {
		t.Errorf("the Curupira index lost the archived extension: %s", idx.Body)
	}
	if page := e.get("/extensions/" + scopedExtEsc); !bytes.Contains(page.Body, []byte(`data-testid="archived-notice"`)) {
		t.Errorf("the page of an archived extension has no archived notice")
	}
	toml := "manifest_version = 1\nname = \"" + scopedExtID + "\"\nversion = \"1.1.0\"\nprotocol_version = 2\nruntime = \"node\"\n" +
		"kind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n[launch]\ntype = \"node\"\ncommand = \"index.js\"\n"
	next := tarGz(t, map[string]string{"package/curupira-extension.toml": toml, "package/index.js": "console.log('hi')\n"})
	if pub := e.publish(owner, "acme-hello-ext-1.1.0.tar.gz", next); pub.Status != http.StatusConflict || !hasRule(t, pub, "publish.archived") {
		t.Fatalf("publish to an archived extension: %d %s, want 409 publish.archived", pub.Status, pub.Body)
	}
	if r := e.post("/api/v1/plugins/"+scopedExtEsc+"/unarchive", owner, nil); r.Status != http.StatusOK {
		t.Fatalf("unarchive by its owner: %d %s", r.Status, r.Body)
	}
	if page := e.get("/extensions/" + scopedExtEsc); bytes.Contains(page.Body, []byte(`data-testid="archived-notice"`)) {
		t.Errorf("the page of an unarchived extension still has the archived notice")
	}
	if pub := e.publish(owner, "acme-hello-ext-1.1.0.tar.gz", next); pub.Status != http.StatusCreated {
		t.Fatalf("publish after unarchiving: %d %s", pub.Status, pub.Body)
	}
	if r := e.post("/api/v1/plugins/%40acme%2Fnobody/archive", adminToken, nil); r.Status != http.StatusNotFound {
		t.Errorf("archive of an unknown extension: %d %s, want 404", r.Status, r.Body)
	}
}

// TestQuarantinedPageHidesItsIcon: /icons serves only listed releases' icons, so the page
// (and the API description) of a package quarantined whole links no icon; every icon URL
// left on the page is one the icon route serves.
func TestQuarantinedPageHidesItsIcon(t *testing.T) {
	e := newEnv(t, "")
	iconPath, _ := e.publishIcon("acme-hello", "icon.svg", []byte(svgIcon))
	if doc := e.page("/plugins/acme-hello"); doc.Find(`[data-testid="package-header"] img.icon`).AttrOr("src", "") == "" {
		t.Fatal("the listed package's page shows no icon: the test would pass vacuously")
	}
	if r := e.post("/api/v1/admin/quarantine/acme-hello", adminToken, map[string]string{"reason": "mines coins"}); r.Status != http.StatusOK {
		t.Fatalf("quarantine: %d %s", r.Status, r.Body)
	}
	if r := e.get(iconPath); r.Status != http.StatusNotFound {
		t.Fatalf("GET %s of a quarantined package: %d, want 404", iconPath, r.Status)
	}
	doc := e.page("/plugins/acme-hello")
	if got := doc.Find(`[data-testid="quarantine-reason"]`).Text(); got != "mines coins" {
		t.Fatalf("quarantine reason on the page = %q", got)
	}
	doc.Find("img").Each(func(_ int, img *goquery.Selection) {
		if src := img.AttrOr("src", ""); strings.Contains(src, "/icons/") {
			if r := e.get(strings.TrimPrefix(src, e.srv.URL)); r.Status != http.StatusOK {
				t.Errorf("the quarantined page links the icon %s, which answers %d", src, r.Status)
			}
		}
	})
	if show := e.get("/api/v1/plugins/acme-hello"); bytes.Contains(show.Body, []byte(iconPath)) {
		t.Errorf("the API describes the quarantined package with the refused icon %s: %s", iconPath, show.Body)
	}
}
