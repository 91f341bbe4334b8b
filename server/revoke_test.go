package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/token"
)

// revokeReq posts body as contentType to POST /api/v1/tokens/revoke, with no token of
// its own unless bearer is set.
func (e *env) revokeReq(contentType, body, bearer string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/tokens/revoke", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return e.do(req)
}

func publisherToken(t *testing.T, e *env) (string, *store.Token) {
	t.Helper()
	secret, tok, err := ingest.CreateToken(context.Background(), e.st, ingest.TokenSpec{Kind: "publisher", Publisher: "acme"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	return secret, tok
}

func TestPublicRevoke(t *testing.T) {
	e := newEnv(t, "")
	secret, tok := publisherToken(t, e)
	if r := e.publish(secret, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish before the report: %d %s", r.Status, r.Body)
	}
	first := e.revokeReq("application/json", `{"token": "`+secret+`", "type": "pyr", "url": "https://example.com/leak"}`, "")
	if first.Status != http.StatusAccepted {
		t.Fatalf("report: %d %s, want 202", first.Status, first.Body)
	}
	if r := e.publish(secret, "acme-hello-1.0.1.tar.gz", pkg(t, "acme-hello", "1.0.1", "x")); r.Status != http.StatusUnauthorized {
		t.Errorf("publish after the report: %d %s, want 401", r.Status, r.Body)
	}
	// The answer is the same for a token already revoked and for one never issued.
	unknown, err := token.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"again": secret, "never issued": unknown} {
		if r := e.revokeReq("application/json", `{"token": "`+s+`"}`, ""); r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
			t.Errorf("%s: %d %s, want the first answer %d %s", name, r.Status, r.Body, first.Status, first.Body)
		}
	}
	var audit struct {
		Entries []store.AuditEntry `json:"entries"`
	}
	res := e.get("/api/v1/admin/audit", "Authorization", "Bearer "+adminToken)
	res.json(t, &audit)
	var revokes []string
	for _, a := range audit.Entries {
		if a.Action == "token.revoke" {
			revokes = append(revokes, a.Actor+" "+a.Target+" "+a.Outcome)
		}
	}
	if want := []string{"public revoke " + tok.ID + " ok"}; fmt.Sprint(revokes) != fmt.Sprint(want) {
		t.Errorf("token.revoke audit entries = %v, want %v (one, for the live token only)", revokes, want)
	}
	if bytes.Contains(res.Body, []byte(secret)) {
		t.Error("the audit log holds the secret")
	}
}

func TestPublicRevokeBodies(t *testing.T) {
	e := newEnv(t, "")
	tests := []struct {
		name        string
		contentType string
		body        func(a, b string) string
	}{
		{"a JSON array", "application/json", func(a, b string) string { return `[{"token": "` + a + `"}, {"token": "` + b + `"}]` }},
		{"a form", "application/x-www-form-urlencoded", func(a, b string) string { return url.Values{"token": {a, b}}.Encode() }},
		{"plain text", "text/plain; charset=utf-8", func(a, b string) string { return a + "\n" + b + "\n" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := publisherToken(t, e)
			b, _ := publisherToken(t, e)
			if r := e.revokeReq(tt.contentType, tt.body(a, b), ""); r.Status != http.StatusAccepted || !bytes.Contains(r.Body, []byte(`"tokens":2`)) {
				t.Fatalf("report: %d %s, want 202 for 2 tokens", r.Status, r.Body)
			}
			for _, s := range []string{a, b} {
				if r := e.publish(s, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusUnauthorized {
					t.Errorf("publish with a reported token: %d, want 401", r.Status)
				}
			}
		})
	}
}

func TestPublicRevokeRefusesWhatIsNoToken(t *testing.T) {
	e := newEnv(t, "")
	good, _ := token.New()
	badSum := good[:len(good)-1] + map[bool]string{true: "B", false: "A"}[good[len(good)-1] == 'A']
	tests := []struct {
		name, contentType, body string
		want                    int
	}{
		{"a wrong checksum", "application/json", `{"token": "` + badSum + `"}`, http.StatusBadRequest},
		{"no prefix", "text/plain", "ghp_" + good[4:], http.StatusBadRequest},
		{"nothing", "application/json", `{}`, http.StatusBadRequest},
		{"not JSON", "application/json", `token=` + good, http.StatusBadRequest},
		{"too many", "text/plain", strings.Repeat(good+"\n", 33), http.StatusBadRequest},
		{"too big", "text/plain", strings.Repeat("a", 17<<10), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.revokeReq(tt.contentType, tt.body, ""); r.Status != tt.want {
				t.Errorf("%d %s, want %d", r.Status, r.Body, tt.want)
			}
		})
	}
}

func TestPublicRevokeOfTheEnvironmentAdminToken(t *testing.T) {
	e := newEnv(t, "")
	if r := e.revokeReq("text/plain", adminToken, ""); r.Status != http.StatusAccepted {
		t.Fatalf("report of the admin token: %d %s, want 202 (the same answer as any other)", r.Status, r.Body)
	}
	var audit struct {
		Entries []store.AuditEntry `json:"entries"`
	}
	r := e.get("/api/v1/admin/audit", "Authorization", "Bearer "+adminToken)
	if r.Status != http.StatusOK {
		t.Fatalf("the admin token stopped working: %d (only the operator can rotate it)", r.Status)
	}
	r.json(t, &audit)
	if len(audit.Entries) == 0 || audit.Entries[0].Action != "token.revoke" || audit.Entries[0].Target != "env" || audit.Entries[0].Outcome != "refused" {
		t.Errorf("audit = %+v, want a refused token.revoke of env first, so the operator sees it must be rotated", audit.Entries)
	}
}

// TestPublicRevokeIsLimitedPerAddress: the reports share the auth budget per address
// (30 a minute by default), and a bearer header, which a stranger can vary at will, does
// not buy a fresh one.
func TestPublicRevokeIsLimitedPerAddress(t *testing.T) {
	e := newEnv(t, "")
	unknown, _ := token.New()
	var last response
	for i := range ingestAuthBudget + 1 {
		last = e.revokeReq("text/plain", unknown, fmt.Sprintf("made-up-%d", i))
		if i < ingestAuthBudget && last.Status != http.StatusAccepted {
			t.Fatalf("report %d: %d %s, want 202", i+1, last.Status, last.Body)
		}
	}
	if last.Status != http.StatusTooManyRequests || !bytes.Contains(last.Body, []byte("rate.auth")) {
		t.Errorf("report %d: %d %s, want 429 rate.auth", ingestAuthBudget+1, last.Status, last.Body)
	}
}

const ingestAuthBudget = server.DefaultRateAuth
