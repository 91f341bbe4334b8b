package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/problem"
)

// pkgWith is pkg with extra files.
func pkgWith(t *testing.T, version string, extra map[string]string) []byte {
	t.Helper()
	manifest := "id: acme-hello\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Scanned" +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	for name, body := range extra {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// refusal decodes a 422's problems as "rule file".
func refusal(t *testing.T, r response) []string {
	t.Helper()
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422: %s", r.Status, r.Body)
	}
	var body struct{ Problems []problem.Problem }
	r.json(t, &body)
	var out []string
	for _, p := range body.Problems {
		if p.Severity == problem.Error {
			out = append(out, p.Rule+" "+p.File)
		}
	}
	return out
}

// TestPublishScanRefusal: POST /api/v1/packages refuses a package bundling a private key
// with 422, the rule id and the file's path inside the package, and does not echo the key.
func TestPublishScanRefusal(t *testing.T) {
	e := newEnv(t, "")
	key := "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n" + strings.Repeat("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 4) + "\n-----END OPENSSH PRIVATE KEY-----\n"
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkgWith(t, "1.0.0", map[string]string{"deploy/key": key}))
	if diff := cmp.Diff([]string{"scan.private_key deploy/key"}, refusal(t, r)); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	if bytes.Contains(r.Body, []byte("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ")) {
		t.Errorf("the refusal echoes the key: %s", r.Body)
	}
}

// TestBlocklistAPI: an admin blocks a package's sha256 (201), its publish is refused with
// scan.blocklist.package, the list shows the entry, unblocking (200) lets it publish, and
// a second unblock is 404; a publisher token may not touch the list; changes are audited.
func TestBlocklistAPI(t *testing.T) {
	e := newEnv(t, "")
	data := pkgWith(t, "1.0.0", map[string]string{"lib/a.js": "module.exports = 1\n"})
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])

	if r := e.post("/api/v1/admin/blocklist", adminToken, map[string]string{"sha256": sha, "reason": "known-bad build"}); r.Status != http.StatusCreated {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	if r := e.post("/api/v1/admin/blocklist", adminToken, map[string]string{"sha256": "abc", "reason": "x"}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("bad digest: %d %s, want 422", r.Status, r.Body)
	}
	if r := e.post("/api/v1/admin/blocklist", adminToken, map[string]any{"sha256": sha, "why": "x"}); r.Status != http.StatusBadRequest {
		t.Errorf("unknown field: %d %s, want 400", r.Status, r.Body)
	}
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data)
	if diff := cmp.Diff([]string{"scan.blocklist.package "}, refusal(t, r)); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	var list struct {
		Entries []struct{ SHA256, Reason, AddedBy string } `json:"entries"`
	}
	e.get("/api/v1/admin/blocklist", "Authorization", "Bearer "+adminToken).json(t, &list)
	if len(list.Entries) != 1 || list.Entries[0].SHA256 != sha || list.Entries[0].Reason != "known-bad build" {
		t.Errorf("list = %+v", list)
	}
	if r := e.post("/api/v1/admin/blocklist/"+sha+"/remove", adminToken, nil); r.Status != http.StatusOK {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	if r := e.post("/api/v1/admin/blocklist/"+sha+"/remove", adminToken, nil); r.Status != http.StatusNotFound {
		t.Errorf("second remove: %d, want 404", r.Status)
	}
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data); r.Status != http.StatusCreated {
		t.Errorf("publish after unblocking: %d %s", r.Status, r.Body)
	}
	if r := e.get("/api/v1/admin/blocklist"); r.Status != http.StatusUnauthorized {
		t.Errorf("anonymous list: %d, want 401", r.Status)
	}
	var audit struct {
		Entries []struct{ Action, Target string } `json:"entries"`
	}
	e.get("/api/v1/admin/audit", "Authorization", "Bearer "+adminToken).json(t, &audit)
	var actions []string
	for _, a := range audit.Entries {
		if strings.HasPrefix(a.Action, "blocklist.") && a.Target == sha {
			actions = append(actions, a.Action)
		}
	}
	if diff := cmp.Diff([]string{"blocklist.remove", "blocklist.add"}, actions); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}
