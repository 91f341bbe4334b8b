package server_test

import (
	"bytes"
	"net/http"
	"testing"
)

// An owner archives and unarchives through the API; another publisher may not; while
// archived, the package stays in index.json and downloadable, its page says so, and a
// publish is a 409 naming publish.archived.
func TestArchiveAPI(t *testing.T) {
	e := newEnv(t, "")
	data := e.publishVersion("acme-hello", "1.0.0")
	owner, other := e.token("acme"), e.token("someone-else")
	if r := e.post("/api/v1/plugins/acme-hello/archive", other, nil); r.Status != http.StatusForbidden {
		t.Fatalf("archive by another publisher: %d %s, want 403", r.Status, r.Body)
	}
	if r := e.post("/api/v1/plugins/acme-hello/archive", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("archive without a token: %d, want 401", r.Status)
	}
	r := e.post("/api/v1/plugins/acme-hello/archive", owner, nil)
	var res struct {
		Archived   bool    `json:"archived"`
		ArchivedAt *string `json:"archived_at"`
		Changed    bool    `json:"changed"`
	}
	r.json(t, &res)
	if r.Status != http.StatusOK || !res.Archived || res.ArchivedAt == nil || !res.Changed {
		t.Fatalf("archive by its owner: %d %s", r.Status, r.Body)
	}
	if idx := e.get("/index.json"); !bytes.Contains(idx.Body, []byte(`"archived":true`)) || !bytes.Contains(idx.Body, []byte(`"id":"acme-hello"`)) {
		t.Errorf("index.json lost the archived package or its archived field")
	}
	if dl := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz"); dl.Status != http.StatusOK || !bytes.Equal(dl.Body, data) {
		t.Errorf("download of an archived package: %d", dl.Status)
	}
	if page := e.get("/plugins/acme-hello"); !bytes.Contains(page.Body, []byte(`data-testid="archived-notice"`)) {
		t.Errorf("the page of an archived package has no archived notice")
	}
	pub := e.publish(owner, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "Says hello"))
	if pub.Status != http.StatusConflict || !hasRule(t, pub, "publish.archived") {
		t.Fatalf("publish to an archived package: %d %s, want 409 publish.archived", pub.Status, pub.Body)
	}
	if r := e.post("/api/v1/plugins/acme-hello/unarchive", owner, nil); r.Status != http.StatusOK {
		t.Fatalf("unarchive by its owner: %d %s", r.Status, r.Body)
	}
	if page := e.get("/plugins/acme-hello"); bytes.Contains(page.Body, []byte(`data-testid="archived-notice"`)) {
		t.Errorf("the page of an unarchived package still has the archived notice")
	}
	if pub := e.publish(owner, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "Says hello")); pub.Status != http.StatusCreated {
		t.Fatalf("publish after unarchiving: %d %s", pub.Status, pub.Body)
	}
	if r := e.post("/api/v1/plugins/nobody/archive", adminToken, nil); r.Status != http.StatusNotFound {
		t.Errorf("archive of an unknown package: %d, want 404", r.Status)
	}
}
