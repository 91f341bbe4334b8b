package server_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// These tests guard rules that once had none: each fails when its rule is removed.

// TestPublishRefusesKindMismatch: plugins.yaml binds an id to a kind; a plugin package for
// an id listed as a canvas is refused with registry.kind.
func TestPublishRefusesKindMismatch(t *testing.T) {
	dir := t.TempDir()
	list := strings.Replace(testList, "    repo: acme/kandev-plugin-hello\n", "    repo: acme/kandev-plugin-hello\n    kind: canvas\n    previews:\n      - url: https://example.com/p.png\n        alt: A preview\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
	if r.Status != http.StatusUnprocessableEntity || !hasRule(t, r, "registry.kind") {
		t.Fatalf("plugin package for a canvas entry: %d %s, want 422 with registry.kind", r.Status, r.Body)
	}
	if got := e.get("/api/v1/plugins/acme-hello/versions/1.0.0"); got.Status != http.StatusNotFound {
		t.Errorf("refused release is visible: %d", got.Status)
	}
}

// TestYankAndDeprecateAreOwnerOnly: a publisher token whose publisher is not among the
// entry's owners may neither yank nor deprecate; an owner may.
func TestYankAndDeprecateAreOwnerOnly(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	stranger := e.token("someone-else")
	owner := e.token("acme")
	for _, p := range []string{"/api/v1/plugins/acme-hello/versions/1.0.0/yank", "/api/v1/plugins/acme-hello/deprecate"} {
		if r := e.post(p, stranger, map[string]string{"reason": "mine now"}); r.Status != http.StatusForbidden {
			t.Errorf("POST %s by a non-owner: %d %s, want 403", p, r.Status, r.Body)
		}
		if r := e.post(p, owner, map[string]string{"reason": "broken"}); r.Status != http.StatusOK {
			t.Errorf("POST %s by the owner: %d %s, want 200", p, r.Status, r.Body)
		}
	}
}

// TestExpiredTokenIsRefused: a publisher token past its expiry authenticates nobody.
func TestExpiredTokenIsRefused(t *testing.T) {
	e := newEnv(t, "")
	secret := "reg_expiredtokensecretforthetest"
	past := time.Now().Add(-time.Minute).UTC()
	tok := &store.Token{ID: "expired1", Kind: "publisher", Publisher: "acme", ExpiresAt: &past}
	if err := e.st.CreateToken(context.Background(), tok, ingest.HashToken(secret), store.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if r := e.publish(secret, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusUnauthorized {
		t.Fatalf("publish with an expired token: %d %s, want 401", r.Status, r.Body)
	}
	future := time.Now().Add(time.Hour).UTC()
	live := &store.Token{ID: "live0001", Kind: "publisher", Publisher: "acme", ExpiresAt: &future}
	if err := e.st.CreateToken(context.Background(), live, ingest.HashToken(secret+"x"), store.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if r := e.publish(secret+"x", "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish with a live token: %d %s, want 201", r.Status, r.Body)
	}
}

// TestReasonBodyLimit: yank and deprecate bodies are read up to 64 KiB. The body here is
// valid JSON with a short reason, so only the size limit can refuse it.
func TestReasonBodyLimit(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	for _, p := range []string{"/api/v1/plugins/acme-hello/versions/1.0.0/yank", "/api/v1/plugins/acme-hello/deprecate"} {
		body := `{"reason":"x"` + strings.Repeat(" ", 70<<10) + `}`
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+p, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+adminToken)
		if r := e.do(req); r.Status < 400 || r.Status >= 500 {
			t.Errorf("POST %s with a 70 KiB body: %d %s, want a 4xx", p, r.Status, r.Body)
		}
		small := `{"reason":"x"` + strings.Repeat(" ", 60<<10) + `}`
		req, _ = http.NewRequest(http.MethodPost, e.srv.URL+p, bytes.NewReader([]byte(small)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+adminToken)
		if r := e.do(req); r.Status != http.StatusOK {
			t.Errorf("POST %s with a 60 KiB body: %d %s, want 200", p, r.Status, r.Body)
		}
	}
}

// token creates a publisher token for publisher and returns its secret.
func (e *env) token(publisher string) string {
	e.t.Helper()
	secret, _, err := ingest.CreateToken(context.Background(), e.st, ingest.TokenSpec{Kind: "publisher", Publisher: publisher}, "test")
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// hasRule reports whether an error response lists a problem with rule.
func hasRule(t *testing.T, r response, rule string) bool {
	t.Helper()
	var body struct {
		Rule     string `json:"rule"`
		Problems []struct {
			Rule string `json:"rule"`
		} `json:"problems"`
	}
	r.json(t, &body)
	if body.Rule == rule {
		return true
	}
	for _, p := range body.Problems {
		if p.Rule == rule {
			return true
		}
	}
	return false
}
