package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDeprecateReplacementIsChecked: a deprecation's replacement must be another listed
// package, and come with a reason (an empty reason clears the deprecation, so the
// replacement would be dropped while the answer echoed it); refusals change nothing.
func TestDeprecateReplacementIsChecked(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	const deprecate = "/api/v1/plugins/acme-hello/deprecate"
	for _, tt := range []struct {
		name, reason, replacement, want string
	}{
		{"itself", "old", "acme-hello", "is the package being deprecated"},
		{"with an empty reason", "", "acme-other", "empty reason"},
		{"not listed", "old", "bob-tool", "is not listed in plugins.yaml"},
	} {
		r := e.post(deprecate, adminToken, map[string]string{"reason": tt.reason, "replacement": tt.replacement})
		var body apiErr
		if r.json(t, &body); r.Status != http.StatusBadRequest || !strings.Contains(body.Error, tt.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tt.name, r.Status, r.Body, tt.want)
		}
	}
	if r := e.post(deprecate, adminToken, map[string]string{"reason": "use the other", "replacement": "acme-other"}); r.Status != http.StatusOK {
		t.Errorf("a listed replacement: %d %s", r.Status, r.Body)
	}
}
