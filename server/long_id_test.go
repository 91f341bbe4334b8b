package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestNotFoundDoesNotEchoLongIDs: the message of a 404 for a 30 KB id names a truncated
// id, on the pages, in the API and on the download route, not the whole request back (the
// page's canonical link still holds the path it was asked for).
func TestNotFoundDoesNotEchoLongIDs(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	long := strings.Repeat("a", 30<<10)
	for _, path := range []string{"/plugins/" + long, "/api/v1/plugins/" + long, "/api/v1/plugins/acme-hello/versions/" + long,
		"/extensions/" + long, "/publishers/" + long, "/packages/" + long + "/x-1.0.0.tar.gz", "/packages/acme-hello/acme-hello-" + long + ".tar.gz"} {
		r := e.get(path)
		if r.Status != http.StatusNotFound || strings.Contains(string(r.Body), " "+strings.Repeat("a", 65)) {
			t.Errorf("GET %.60s…: %d with %d bytes, want 404 whose message names at most 64 characters of the id", path, r.Status, len(r.Body))
		}
	}
}
