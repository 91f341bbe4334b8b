package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// indexEntries is index.json's entries array, verbatim.
func (e *env) indexEntries() string {
	e.t.Helper()
	var d struct {
		Plugins json.RawMessage `json:"plugins"`
	}
	e.get("/index.json").json(e.t, &d)
	return string(d.Plugins)
}

// TestQuarantineThroughTheAdminAPI: an admin quarantines a package; at once it leaves
// index.json and search, its download is 410 quarantine.download with the reason, its
// page stays with the reason and no install panel, its owner's token cannot publish it
// (403 publish.quarantined), the feed, the audit log and the admin list record it; the
// release restores index.json byte for byte and the download.
func TestQuarantineThroughTheAdminAPI(t *testing.T) {
	e := newEnv(t, "")
	owner := e.token("acme")
	if r := e.publish(owner, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	before := e.indexEntries()
	if r := e.get("/api/v1/plugins?q=hello"); !strings.Contains(string(r.Body), `"acme-hello"`) {
		t.Fatalf("search does not find acme-hello before the quarantine: %s", r.Body)
	}
	const reason = "a leaked token published a credential stealer"
	const download = "/packages/acme-hello/acme-hello-1.0.0.tar.gz"

	if r := e.post("/api/v1/admin/quarantine/acme-hello", "", map[string]string{"reason": reason}); r.Status != http.StatusUnauthorized {
		t.Errorf("anonymous quarantine: %d", r.Status)
	}
	if r := e.post("/api/v1/admin/quarantine/acme-hello", owner, map[string]string{"reason": reason}); r.Status != http.StatusForbidden {
		t.Errorf("the owner's quarantine: %d", r.Status)
	}
	if r := e.post("/api/v1/admin/quarantine/acme-hello", adminToken, map[string]string{"reason": ""}); r.Status != http.StatusUnprocessableEntity || !hasRule(t, r, "quarantine.reason") {
		t.Errorf("quarantine without a reason: %d %s, want 422 quarantine.reason", r.Status, r.Body)
	}
	if r := e.post("/api/v1/admin/quarantine/acme-hello", adminToken, map[string]string{"reason": reason}); r.Status != http.StatusOK {
		t.Fatalf("quarantine: %d %s", r.Status, r.Body)
	}

	if got := e.indexEntries(); strings.Contains(got, "acme-hello") {
		t.Errorf("index.json still lists acme-hello: %s", got)
	}
	if r := e.get("/api/v1/plugins?q=hello"); strings.Contains(string(r.Body), `"acme-hello"`) {
		t.Errorf("search still finds acme-hello: %s", r.Body)
	}
	r := e.get(download)
	if r.Status != http.StatusGone || !hasRule(t, r, "quarantine.download") || !strings.Contains(string(r.Body), reason) {
		t.Errorf("download: %d %s, want 410 quarantine.download with the reason", r.Status, r.Body)
	}
	page := e.get("/plugins/acme-hello")
	if page.Status != http.StatusOK || !strings.Contains(string(page.Body), `data-testid="quarantine-notice"`) || !strings.Contains(string(page.Body), reason) {
		t.Errorf("page: %d, want 200 with the quarantine notice and its reason", page.Status)
	}
	if strings.Contains(string(page.Body), `id="install-heading"`) {
		t.Error("the page of a quarantined package still offers to install it")
	}
	var detail struct {
		Versions []struct {
			Version    string
			Quarantine *struct {
				Package bool
				Reason  string
			}
		}
	}
	e.get("/api/v1/plugins/acme-hello").json(t, &detail)
	if len(detail.Versions) != 1 || detail.Versions[0].Quarantine == nil || !detail.Versions[0].Quarantine.Package || detail.Versions[0].Quarantine.Reason != reason {
		t.Errorf("GET /api/v1/plugins/acme-hello = %+v, want its version marked quarantined with the package's reason", detail)
	}
	if r := e.publish(owner, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "says hello")); r.Status != http.StatusForbidden || !hasRule(t, r, "publish.quarantined") {
		t.Errorf("publish by the owner: %d %s, want 403 publish.quarantined", r.Status, r.Body)
	}
	var list struct {
		Quarantines []struct{ ID, Version, Reason, SetBy string } `json:"quarantines"`
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/admin/quarantine", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	e.do(req).json(t, &list)
	if len(list.Quarantines) != 1 || list.Quarantines[0].ID != "acme-hello" || list.Quarantines[0].Reason != reason {
		t.Errorf("admin list = %+v", list.Quarantines)
	}
	if feed := string(e.get("/api/v1/changes?since=0").Body); !strings.Contains(feed, `"change":"quarantine","package":"acme-hello"`) {
		t.Errorf("the feed does not record the quarantine: %s", feed)
	}
	if doc := string(e.get("/api/v1/index/acme-hello.json").Body); !strings.Contains(doc, `"quarantined":[{"version":"","reason":"`+reason+`"}]`) {
		t.Errorf("the package document does not show the quarantine: %s", doc)
	}

	if r := e.post("/api/v1/admin/quarantine/acme-hello/release", adminToken, nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"released":true`) {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	if got := e.indexEntries(); got != before {
		t.Errorf("index.json entries after the release:\n%s\nwant the bytes from before:\n%s", got, before)
	}
	if r := e.get(download); r.Status != http.StatusOK {
		t.Errorf("download after the release: %d", r.Status)
	}
	if page := e.get("/plugins/acme-hello"); strings.Contains(string(page.Body), "quarantine-notice") {
		t.Error("the page still shows a quarantine after its release")
	}
	audit := auditActions(t, e)
	if !strings.Contains(audit, "unquarantine acme-hello") || !strings.Contains(audit, "quarantine acme-hello") {
		t.Errorf("audit = %s", audit)
	}
}

// TestQuarantineOneReleaseThroughTheAdminAPI: a quarantined release is marked on the
// page, its download is 410, the index offers the version before it.
func TestQuarantineOneReleaseThroughTheAdminAPI(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if r := e.publish(adminToken, "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "says hello")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", v, r.Status, r.Body)
		}
	}
	if r := e.post("/api/v1/admin/quarantine/acme-hello/versions/1.1.0", adminToken, map[string]string{"reason": "steals tokens"}); r.Status != http.StatusOK {
		t.Fatalf("quarantine: %d %s", r.Status, r.Body)
	}
	if doc := e.index(); len(doc.Plugins) != 1 || doc.Plugins[0].Version != "1.0.0" {
		t.Errorf("index.json = %+v, want acme-hello at 1.0.0", doc.Plugins)
	}
	if r := e.get("/packages/acme-hello/acme-hello-1.1.0.tar.gz"); r.Status != http.StatusGone || !hasRule(t, r, "quarantine.download") {
		t.Errorf("download of 1.1.0: %d %s", r.Status, r.Body)
	}
	if r := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz"); r.Status != http.StatusOK {
		t.Errorf("download of 1.0.0: %d", r.Status)
	}
	for v, want := range map[string]string{"1.1.0": `"quarantine":{"package":false,"reason":"steals tokens"`, "1.0.0": ""} {
		body := string(e.get("/api/v1/plugins/acme-hello/versions/" + v).Body)
		if got := strings.Contains(body, `"quarantine":`); got != (want != "") || !strings.Contains(body, want) {
			t.Errorf("GET version %s = %s, want quarantine %q", v, body, want)
		}
	}
	page := string(e.get("/plugins/acme-hello").Body)
	if !strings.Contains(page, `data-testid="quarantined-label"`) || !strings.Contains(page, `data-version="1.1.0"`) || !strings.Contains(page, "steals tokens") {
		t.Error("the page does not mark 1.1.0 quarantined with its reason")
	}
	if r := e.post("/api/v1/admin/quarantine/acme-hello/versions/1.1.0/release", adminToken, nil); r.Status != http.StatusOK {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	if doc := e.index(); doc.Plugins[0].Version != "1.1.0" {
		t.Errorf("latest after the release = %s, want 1.1.0", doc.Plugins[0].Version)
	}
}

// auditActions is the audit log as "action target" lines.
func auditActions(t *testing.T, e *env) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/admin/audit", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	var body struct {
		Entries []struct{ Action, Target string }
	}
	e.do(req).json(t, &body)
	var lines []string
	for _, en := range body.Entries {
		lines = append(lines, en.Action+" "+en.Target)
	}
	return strings.Join(lines, "\n")
}

// TestQuarantinedExtensionKeepsItsPage: an extension quarantined whole leaves the Curupira
// index; its page stays, with the reason and no install panel.
func TestQuarantinedExtensionKeepsItsPage(t *testing.T) {
	e := newDetailsEnv(t)
	toml := "manifest_version = 1\nname = \"acme-ext\"\nversion = \"1.2.0\"\nprotocol_version = 2\nruntime = \"node\"\n" +
		"kind = \"trigger\"\ntrigger_types = [\"github-issue\"]\n\n[launch]\ntype = \"node\"\ncommand = \"index.js\"\n"
	e.mustPublish("acme-ext-1.2.0.tar.gz", tarGz(t, map[string]string{
		"package/curupira-extension.toml": toml,
		"package/index.js":                "console.log('hi')\n",
	}))
	if r := e.post("/api/v1/admin/quarantine/acme-ext", adminToken, map[string]string{"reason": "mines coins"}); r.Status != http.StatusOK {
		t.Fatalf("quarantine: %d %s", r.Status, r.Body)
	}
	if body := string(e.get("/curupira/index.json").Body); strings.Contains(body, "acme-ext") {
		t.Errorf("the Curupira index still lists acme-ext: %s", body)
	}
	doc := e.page("/extensions/acme-ext")
	if got := doc.Find(`[data-testid="quarantine-reason"]`).Text(); got != "mines coins" {
		t.Errorf("quarantine reason on the page = %q", got)
	}
	if doc.Find(`#install-heading`).Length() != 0 {
		t.Error("the page of a quarantined extension still offers to install it")
	}
}

// TestQuarantineBodyIsBounded: the largest body an admin may send a quarantine is 64 KiB;
// one over it is refused unread (413, naming the limit), and nothing is quarantined.
func TestQuarantineBodyIsBounded(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(e.token("acme"), "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	r := e.post("/api/v1/admin/quarantine/acme-hello", adminToken, map[string]string{"reason": strings.Repeat("x", 64<<10)})
	if r.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.Body), "over 64 KiB (65536 bytes)") {
		t.Errorf("a quarantine body over 64 KiB: %d %s, want 413 naming the limit", r.Status, r.Body)
	}
	if r := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz"); r.Status != http.StatusOK {
		t.Errorf("download after the refused quarantine: %d, want 200", r.Status)
	}
}
