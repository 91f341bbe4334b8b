package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestReasonLimitsCountCharacters: the reason limit is 1000 characters, not bytes (400
// CJK characters are 1,200 bytes and pass); a refusal names the field, the length found
// and the limit, and a yank's refusal says nothing of a replacement. An unyank refused to
// someone who does not own the package names the unyank.
func TestReasonLimitsCountCharacters(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	const yank = "/api/v1/plugins/acme-hello/versions/1.0.0/yank"
	if r := e.post(yank, adminToken, map[string]string{"reason": strings.Repeat("壊", 400)}); r.Status != http.StatusOK {
		t.Errorf("a reason of 400 CJK characters: %d %s, want 200", r.Status, r.Body)
	}
	var body apiErr
	r := e.post(yank, adminToken, map[string]string{"reason": strings.Repeat("壊", 1001)})
	if r.json(t, &body); r.Status != http.StatusBadRequest || !strings.Contains(body.Error, "reason is limited to 1000 characters, found 1001") ||
		strings.Contains(body.Error, "replacement") {
		t.Errorf("a reason of 1001 characters: %d %s", r.Status, r.Body)
	}
	r = e.post("/api/v1/plugins/acme-hello/deprecate", adminToken, map[string]string{"reason": "old", "replacement": strings.Repeat("a", 215)})
	if r.json(t, &body); r.Status != http.StatusBadRequest || !strings.Contains(body.Error, "replacement is limited to 214 characters") ||
		!strings.Contains(body.Error, "found 215") {
		t.Errorf("a replacement of 215 characters: %d %s", r.Status, r.Body)
	}
	r = e.post("/api/v1/plugins/acme-hello/versions/1.0.0/unyank", e.token("someone-else"), nil)
	if r.json(t, &body); r.Status != http.StatusForbidden || !strings.Contains(body.Error, "may not unyank") {
		t.Errorf("an unyank by someone else: %d %s, want 403 naming the unyank", r.Status, r.Body)
	}
}
