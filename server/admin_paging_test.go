package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAdminListParametersAreChecked: the audit log and the report list refuse a malformed
// limit or before with 400 naming it, as the webhook delivery log does, instead of
// answering the default page; well-formed ones still answer.
func TestAdminListParametersAreChecked(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	for path, param := range map[string]string{
		"/api/v1/admin/audit?limit=abc":              "limit=",
		"/api/v1/admin/audit?before=xyz":             "before=",
		"/api/v1/admin/audit?limit=abc&before=xyz":   "limit=",
		"/api/v1/admin/audit?limit=0":                "limit=",
		"/api/v1/admin/audit?limit=501":              "limit=",
		"/api/v1/admin/reports?limit=abc":            "limit=",
		"/api/v1/admin/webhooks/deliveries?before=x": "before=",
	} {
		r := e.get(path, "Authorization", "Bearer "+adminToken)
		var body apiErr
		if r.json(t, &body); r.Status != http.StatusBadRequest || !strings.HasPrefix(body.Error, param) {
			t.Errorf("GET %s: %d %s, want 400 naming %s", path, r.Status, r.Body, param)
		}
	}
	for _, path := range []string{"/api/v1/admin/audit", "/api/v1/admin/audit?limit=5&before=1000", "/api/v1/admin/reports?limit=10"} {
		if r := e.get(path, "Authorization", "Bearer "+adminToken); r.Status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
}
