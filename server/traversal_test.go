package server_test

import (
	"bytes"
	"net/http"
	"testing"
)

// TestPathTraversalOnEveryParameter sends traversal attempts through every path parameter;
// none may reach a file outside the blob store or answer 200.
func TestPathTraversalOnEveryParameter(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d", r.Status)
	}
	evil := []string{"..%2f..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "..%5c..%5cetc%5cpasswd", "....%2f%2f....%2f%2fetc%2fpasswd"}
	routes := []string{
		"/packages/%s/acme-hello-1.0.0.tar.gz", "/packages/acme-hello/%s", "/icons/%s", "/static/%s",
		"/plugins/%s", "/extensions/%s", "/publishers/%s", "/categories/%s", "/docs/%s",
		"/api/v1/plugins/%s", "/api/v1/plugins/acme-hello/versions/%s", "/api/v1/plugins/%s/versions/1.0.0",
	}
	for _, route := range routes {
		for _, p := range evil {
			path := route
			path = path[:bytes.Index([]byte(path), []byte("%s"))] + p + path[bytes.Index([]byte(path), []byte("%s"))+2:]
			r := e.get(path)
			if r.Status == http.StatusOK || bytes.Contains(r.Body, []byte("root:")) {
				t.Errorf("GET %s: %d (%d bytes)", path, r.Status, len(r.Body))
			}
		}
	}
}

func TestRequestIDIsSanitised(t *testing.T) {
	e := newEnv(t, "")
	tests := []struct {
		sent string
		kept bool
	}{
		{"abc-123_x.y", true},
		{"<script>alert(1)</script>", false},
		{string(bytes.Repeat([]byte("a"), 65)), false},
	}
	for _, tt := range tests {
		got := e.get("/healthz", "X-Request-ID", tt.sent).Header.Get("X-Request-ID")
		if (got == tt.sent) != tt.kept || got == "" {
			t.Errorf("sent %q, echoed %q (kept %v)", tt.sent, got, tt.kept)
		}
	}
}
