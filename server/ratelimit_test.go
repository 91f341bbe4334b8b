package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/server"
)

// call is one request of a rate-limit scenario and the status it must get.
type call struct {
	method, path, token, ip string
	want                    int
}

func (e *env) call(c call) response {
	e.t.Helper()
	var body io.Reader
	if c.method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(c.method, e.srv.URL+c.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.ip != "" {
		req.Header.Set("X-Forwarded-For", c.ip)
	}
	req.Header.Set("Content-Type", "application/json")
	return e.do(req)
}

func TestRateLimits(t *testing.T) {
	const (
		ip1, ip2 = "203.0.113.1", "203.0.113.2"
		bad      = "not-a-real-token"
		other    = "another-unknown-token"
	)
	tests := []struct {
		name   string
		limits server.RateLimits
		calls  []call
	}{
		{"search API and home page with q share a per-IP budget", server.RateLimits{Search: 3}, []call{
			{http.MethodGet, "/api/v1/plugins", "", "", 200},
			{http.MethodGet, "/?q=hello", "", "", 200},
			{http.MethodGet, "/", "", "", 200}, // no q: not a search
			{http.MethodGet, "/api/v1/plugins?q=x", "", "", 200},
			{http.MethodGet, "/api/v1/plugins", "", "", 429},
			{http.MethodGet, "/?q=again", "", "", 429},
			{http.MethodGet, "/index.json", "", "", 200},
			{http.MethodGet, "/", "", "", 200},
		}},
		{"HEAD searches spend the search budget as GET ones do", server.RateLimits{Search: 2}, []call{
			{http.MethodHead, "/api/v1/plugins?q=hello", "", "", 200},
			{http.MethodHead, "/?q=hello", "", "", 200},
			{http.MethodHead, "/api/v1/plugins?q=hello", "", "", 429},
			{http.MethodHead, "/?q=hello", "", "", 429},
			{http.MethodGet, "/api/v1/plugins", "", "", 429},
			{http.MethodHead, "/", "", "", 200}, // no q: not a search
		}},
		{"forwarded headers are ignored unless trusted", server.RateLimits{Search: 1}, []call{
			{http.MethodGet, "/api/v1/plugins", "", ip1, 200},
			{http.MethodGet, "/api/v1/plugins", "", ip2, 429},
		}},
		{"trusted forwarded headers key by client", server.RateLimits{Search: 1, TrustForwarded: true}, []call{
			{http.MethodGet, "/api/v1/plugins", "", ip1, 200},
			{http.MethodGet, "/api/v1/plugins", "", ip1, 429},
			{http.MethodGet, "/api/v1/plugins", "", ip2, 200},
		}},
		{"publish is limited per token", server.RateLimits{Publish: 2, TrustForwarded: true}, []call{
			{http.MethodPost, "/api/v1/packages", adminToken, ip1, 400}, // not multipart: through the limiter, refused by the handler
			{http.MethodPost, "/api/v1/packages", adminToken, ip2, 400},
			{http.MethodPost, "/api/v1/packages", adminToken, ip1, 429},                     // the token's budget is spent, from any address
			{http.MethodPost, "/api/v1/plugins/acme-hello/deprecate", adminToken, ip2, 429}, // writes share the budget
			{http.MethodPost, "/api/v1/packages", "", ip1, 401},                             // a missing token is a failure, not a write
			{http.MethodPost, "/api/v1/packages", bad, ip1, 401},
		}},
		{"failed tokens are limited apart from valid ones", server.RateLimits{Auth: 2, TrustForwarded: true}, []call{
			{http.MethodPost, "/api/v1/packages", bad, ip1, 401},
			{http.MethodGet, "/api/v1/admin/audit", other, ip1, 401},
			{http.MethodGet, "/api/v1/admin/audit", other, ip1, 429},
			{http.MethodPost, "/api/v1/packages", "", ip1, 429}, // so is a missing token
			{http.MethodGet, "/api/v1/admin/audit", adminToken, ip1, 200},
			{http.MethodGet, "/api/v1/plugins", "", ip1, 200}, // anonymous reads go on
			{http.MethodGet, "/api/v1/admin/audit", bad, ip2, 401},
		}},
		{"IPv6 clients count by /64", server.RateLimits{Search: 1, TrustForwarded: true}, []call{
			{http.MethodGet, "/api/v1/plugins", "", "2001:db8:1:2::1", 200},
			{http.MethodGet, "/api/v1/plugins", "", "2001:db8:1:2:ffff:ffff:ffff:fffe", 429},
			{http.MethodGet, "/api/v1/plugins", "", "2001:db8:1:3::1", 200},
			{http.MethodGet, "/api/v1/plugins", "", "203.0.113.9", 200},
			{http.MethodGet, "/api/v1/plugins", "", "::ffff:203.0.113.9", 429}, // an IPv4-mapped address is that IPv4 address
		}},
		{"OIDC exchanges spend the auth budget", server.RateLimits{Auth: 2, TrustForwarded: true}, []call{
			{http.MethodPost, "/api/v1/auth/oidc", "", ip1, 404}, // trusted publishing is off here
			{http.MethodPost, "/api/v1/auth/oidc", "", ip1, 404},
			{http.MethodPost, "/api/v1/auth/oidc", "", ip1, 429},
			{http.MethodPost, "/api/v1/auth/oidc", "", ip2, 404},
		}},
		{"a negative budget turns a class off", server.RateLimits{Search: -1}, []call{
			{http.MethodGet, "/api/v1/plugins", "", "", 200},
			{http.MethodGet, "/api/v1/plugins", "", "", 200},
			{http.MethodGet, "/api/v1/plugins", "", "", 200},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWith(t, server.Config{RateLimits: tt.limits}, nil, true)
			for i, c := range tt.calls {
				r := e.call(c)
				if r.Status != c.want {
					t.Fatalf("call %d %s %s (ip %q): status %d, want %d: %s", i, c.method, c.path, c.ip, r.Status, c.want, r.Body)
				}
				if c.want == http.StatusTooManyRequests && c.method != http.MethodHead { // a HEAD answer has no body to read
					checkTooMany(t, r)
					if isJSON(r) && !slices.ContainsFunc([]string{"rate.auth", "rate.auth_failures", "rate.publish", "rate.search"},
						func(rule string) bool { return hasRule(t, r, rule) }) {
						t.Errorf("call %d: 429 without a rate.* rule: %s", i, r.Body)
					}
				}
			}
		})
	}
}

// TestCategoryPageIgnoresQuery: a category page has no search box, so ?q= neither
// searches (a search there would spend no search budget) nor turns a category that
// exists into a 404 when the text matches nothing.
func TestCategoryPageIgnoresQuery(t *testing.T) {
	e := newEnvWith(t, server.Config{RateLimits: server.RateLimits{Search: 1}}, nil, true)
	e.publishVersion("acme-hello", "1.0.0")
	for i := range 3 {
		r := e.get("/categories/tools?q=zzzz-nothing")
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "acme-hello") {
			t.Fatalf("GET /categories/tools?q=zzzz-nothing (%d): %d, want 200 listing acme-hello: %.300s", i, r.Status, r.Body)
		}
	}
	if r := e.get("/api/v1/plugins?q=hello"); r.Status != http.StatusOK {
		t.Errorf("the search budget was spent by category pages: %d %s", r.Status, r.Body)
	}
}

// TestBearerSchemeIsCaseInsensitive: "bearer", "BEARER" and extra whitespace around the
// token authenticate as "Bearer " does (RFC 9110 §11.1), and the rate limiter keys the
// token the same way however its scheme is spelled.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	e := newEnvWith(t, server.Config{RateLimits: server.RateLimits{Publish: 1, TrustForwarded: true}}, nil, true)
	audit := func(auth, ip string) response {
		req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/admin/audit", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
		req.Header.Set("X-Forwarded-For", ip)
		return e.do(req)
	}
	for _, h := range []string{"bearer " + adminToken, "BEARER " + adminToken, "Bearer   " + adminToken + "  ", "  bEaReR " + adminToken} {
		if r := audit(h, "203.0.113.1"); r.Status != http.StatusOK {
			t.Errorf("Authorization %q: %d %s", h, r.Status, r.Body)
		}
	}
	for _, h := range []string{"Basic " + adminToken, "Bearer", "Bearer    ", "Bearer" + adminToken} {
		if r := audit(h, "203.0.113.1"); r.Status != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d %s, want 401", h, r.Status, r.Body)
		}
	}
	// The publish budget is the token's: one write under "Bearer ", and the same token
	// under "bearer " from another address finds the budget spent.
	if r := e.call(call{http.MethodPost, "/api/v1/packages", adminToken, "203.0.113.1", 0}); r.Status != http.StatusBadRequest {
		t.Fatalf("first write: %d %s", r.Status, r.Body)
	}
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/packages", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "bearer  "+adminToken)
	req.Header.Set("X-Forwarded-For", "203.0.113.2")
	req.Header.Set("Content-Type", "application/json")
	if r := e.do(req); r.Status != http.StatusTooManyRequests {
		t.Errorf("the same token under a lower-case scheme: %d %s, want 429 (one budget per token)", r.Status, r.Body)
	}
}

func isJSON(r response) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
}

func checkTooMany(t *testing.T, r response) {
	t.Helper()
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
		t.Errorf("Retry-After = %q, want whole seconds in [1, 60]", r.Header.Get("Retry-After"))
	}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		var body apiErr
		r.json(t, &body)
		if !strings.Contains(body.Error, "retry in") {
			t.Errorf("429 body error = %q", body.Error)
		}
	}
}

// TestFailedTokensDoNotLockOutValidOnes: 40 bad tokens from one address (a NAT, a CI
// runner pool) exhaust its failure budget, the failures then get 429 with
// rate.auth_failures, and a valid token from the same address still succeeds.
func TestFailedTokensDoNotLockOutValidOnes(t *testing.T) {
	const ip = "" // every request comes from the test's loopback address
	e := newEnvWith(t, server.Config{}, nil, true)
	var statuses []int
	for i := range 40 {
		r := e.call(call{http.MethodGet, "/api/v1/admin/audit", "bad-token-" + strconv.Itoa(i), ip, 0})
		statuses = append(statuses, r.Status)
		if r.Status == http.StatusTooManyRequests && !hasRule(t, r, "rate.auth_failures") {
			t.Fatalf("attempt %d: 429 without rule rate.auth_failures: %s", i, r.Body)
		}
	}
	if statuses[server.DefaultRateAuth-1] != http.StatusUnauthorized || statuses[server.DefaultRateAuth] != http.StatusTooManyRequests || statuses[39] != http.StatusTooManyRequests {
		t.Fatalf("bad-token statuses %v: want %d × 401, then 429", statuses, server.DefaultRateAuth)
	}
	if r := e.call(call{http.MethodGet, "/api/v1/admin/audit", adminToken, ip, 0}); r.Status != http.StatusOK {
		t.Fatalf("the valid admin token from the same address: %d %s, want 200", r.Status, r.Body)
	}
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish with the valid token after the failures: %d %s, want 201", r.Status, r.Body)
	}
}

// oidcOnly accepts one identity token and refuses every other as unauthenticated.
type oidcOnly struct{ good string }

func (o oidcOnly) Exchange(_ context.Context, raw string) (string, time.Time, []string, error) {
	switch raw {
	case o.good:
	case "replayed-jwt":
		return "", time.Time{}, nil, &ingest.Refusal{Kind: ingest.ErrUnauthenticated, Message: "OIDC token refused: replayed",
			Problems: problem.List{{Rule: "oidc.jti.replayed", Path: "jti", Severity: problem.Error, Message: "OIDC token refused: replayed"}}}
	default:
		return "", time.Time{}, nil, fmt.Errorf("test: %w", ingest.ErrUnauthenticated)
	}
	return "pyr_exchanged", time.Now().Add(time.Minute), []string{"acme-hello"}, nil
}

// TestOIDCRefusalKeepsItsRule: a replayed identity token answers 401 with the rule the
// exchange gave.
func TestOIDCRefusalKeepsItsRule(t *testing.T) {
	e := newEnvWith(t, server.Config{OIDC: oidcOnly{good: "good-jwt"}}, nil, true)
	r := e.post("/api/v1/auth/oidc", "", map[string]string{"token": "replayed-jwt"})
	if r.Status != http.StatusUnauthorized || !hasRule(t, r, "oidc.jti.replayed") {
		t.Fatalf("replayed token: %d %s, want 401 with oidc.jti.replayed", r.Status, r.Body)
	}
}

// TestOIDCBodyIsOneObject: the exchange's body is one JSON object with a token, as every
// other JSON body: junk after it, a token of the wrong type or none are refused, naming
// what is wrong.
func TestOIDCBodyIsOneObject(t *testing.T) {
	e := newEnvWith(t, server.Config{OIDC: oidcOnly{good: "good-jwt"}}, nil, true)
	for body, want := range map[string]string{
		`{"token": "good-jwt"} junk`: "one object and nothing after it",
		`{"token": ["good-jwt"]}`:    `field "token" must be a string, found an array`,
		`{}`:                         `field "token" is missing or empty`,
	} {
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/auth/oidc", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		r := e.do(req)
		var got apiErr
		r.json(t, &got)
		if r.Status != http.StatusBadRequest || !strings.Contains(got.Error, want) {
			t.Errorf("%s: %d %s, want 400 saying %q", body, r.Status, r.Body, want)
		}
	}
}

// TestFailedOIDCExchangesAreRefunded: refused OIDC tokens spend the failure budget, not
// the exchange budget a valid token from the same address needs.
func TestFailedOIDCExchangesAreRefunded(t *testing.T) {
	e := newEnvWith(t, server.Config{OIDC: oidcOnly{good: "good-jwt"}, RateLimits: server.RateLimits{Auth: 3}}, nil, true)
	exchange := func(tok string) response {
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/auth/oidc", strings.NewReader(`{"token": "`+tok+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		return e.do(req)
	}
	var got []int
	for range 5 {
		got = append(got, exchange("forged-jwt").Status)
	}
	if want := []int{401, 401, 401, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("forged tokens: %v, want %v", got, want)
	}
	for i := range 3 {
		if r := exchange("good-jwt"); r.Status != http.StatusOK {
			t.Fatalf("valid exchange %d after the failures: %d %s, want 200", i, r.Status, r.Body)
		}
	}
	if r := exchange("replayed-jwt"); r.Status != http.StatusTooManyRequests {
		t.Errorf("a replayed token after the failures: %d %s, want 429", r.Status, r.Body)
	}
	if r := exchange("good-jwt"); r.Status != http.StatusTooManyRequests || !hasRule(t, r, "rate.auth") {
		t.Errorf("a fourth valid exchange within the minute: %d %s, want 429 rate.auth (valid use has its own budget)", r.Status, r.Body)
	}
}

func TestRateLimitedRequestsAreCounted(t *testing.T) {
	e := newEnvWith(t, server.Config{RateLimits: server.RateLimits{Search: 1}}, nil, true)
	e.get("/api/v1/plugins")
	e.get("/api/v1/plugins")
	got := e.metricLines("registry_rate_limited_total{", `registry_http_requests_total{method="GET",route="/api/v1/plugins"`)
	want := []string{
		`registry_http_requests_total{method="GET",route="/api/v1/plugins",status="200"} 1`,
		`registry_http_requests_total{method="GET",route="/api/v1/plugins",status="429"} 1`,
		`registry_rate_limited_total{class="search"} 1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// fakeOIDC accepts nothing; the body limit must answer before it is asked.
type fakeOIDC struct{}

func (fakeOIDC) Exchange(context.Context, string) (string, time.Time, []string, error) {
	return "", time.Time{}, nil, errors.New("fake: never valid")
}

// TestBodyLimits sends an oversized body to every route that reads one, and fails when a
// POST route is added without a case here.
func TestBodyLimits(t *testing.T) {
	e := newEnvWith(t, server.Config{OIDC: fakeOIDC{}, MaxBodyBytes: 1 << 20}, nil, true)
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	bigJSON := `{"reason": "` + strings.Repeat("a", 200<<10) + `"}`
	tests := []struct {
		route, path string
		body        []byte
		contentType string
		want        int
	}{
		{"/api/v1/packages", "/api/v1/packages", multipartOf(t, 2<<20), "", http.StatusRequestEntityTooLarge},
		{"/api/v1/plugins/:id/versions/:version/yank", "/api/v1/plugins/acme-hello/versions/1.0.0/yank", []byte(bigJSON), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/plugins/:id/deprecate", "/api/v1/plugins/acme-hello/deprecate", []byte(bigJSON), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/admin/compat/:id/versions/:version", "/api/v1/admin/compat/acme-hello/versions/1.0.0", []byte(`{"max_kandev": "9.0.0", "reason": "` + strings.Repeat("a", 200<<10) + `"}`), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/admin/quarantine/:id", "/api/v1/admin/quarantine/acme-hello", []byte(bigJSON), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/admin/quarantine/:id/versions/:version", "/api/v1/admin/quarantine/acme-hello/versions/1.0.0", []byte(bigJSON), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/auth/oidc", "/api/v1/auth/oidc", []byte(`{"token": "` + strings.Repeat("a", 200<<10) + `"}`), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/tokens/revoke", "/api/v1/tokens/revoke", []byte(`{"token": "` + strings.Repeat("a", 200<<10) + `"}`), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/plugins/:id/reports", "/api/v1/plugins/acme-hello/reports", []byte(bigJSON), "application/json", http.StatusRequestEntityTooLarge},
		{"/plugins/:id/report", "/plugins/acme-hello/report", []byte("kind=broken&reason=" + strings.Repeat("a", 200<<10)), "application/x-www-form-urlencoded", http.StatusRequestEntityTooLarge},
		{"/extensions/*", "/extensions/%40acme%2Fext/report", []byte("kind=broken&reason=" + strings.Repeat("a", 200<<10)), "application/x-www-form-urlencoded", http.StatusRequestEntityTooLarge},
		{"/api/v1/admin/reports/:report/resolve", "/api/v1/admin/reports/1/resolve", []byte(bigJSON), "application/json", http.StatusRequestEntityTooLarge},
		{"/api/v1/admin/blocklist", "/api/v1/admin/blocklist", []byte(`{"sha256": "` + strings.Repeat("a", 64) + `", "reason": "` + strings.Repeat("a", 200<<10) + `"}`), "application/json", http.StatusRequestEntityTooLarge},
		// these read no body at all: a big one is left unread
		{"/api/v1/plugins/:id/versions/:version/unyank", "/api/v1/plugins/acme-hello/versions/1.0.0/unyank", []byte(bigJSON), "application/json", http.StatusOK},
		{"/api/v1/plugins/:id/archive", "/api/v1/plugins/acme-hello/archive", []byte(bigJSON), "application/json", http.StatusOK},
		{"/api/v1/plugins/:id/unarchive", "/api/v1/plugins/acme-hello/unarchive", []byte(bigJSON), "application/json", http.StatusOK},
		{"/api/v1/admin/reload", "/api/v1/admin/reload", []byte(bigJSON), "application/json", http.StatusNotFound},
		{"/api/v1/admin/compat/:id/versions/:version/clear", "/api/v1/admin/compat/acme-hello/versions/1.0.0/clear", []byte(bigJSON), "application/json", http.StatusOK},
		{"/api/v1/admin/quarantine/:id/release", "/api/v1/admin/quarantine/acme-hello/release", []byte(bigJSON), "application/json", http.StatusOK},
		{"/api/v1/admin/quarantine/:id/versions/:version/release", "/api/v1/admin/quarantine/acme-hello/versions/1.0.0/release", []byte(bigJSON), "application/json", http.StatusOK},
		{"/api/v1/admin/blocklist/:digest/remove", "/api/v1/admin/blocklist/" + strings.Repeat("a", 64) + "/remove", []byte(bigJSON), "application/json", http.StatusNotFound},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.route] = true
		t.Run(tt.route, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.srv.URL+tt.path, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			ct := tt.contentType
			if ct == "" {
				ct = "multipart/form-data; boundary=" + testBoundary
			}
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+adminToken)
			if r := e.do(req); r.Status != tt.want {
				t.Errorf("status %d, want %d: %.200s", r.Status, tt.want, r.Body)
			}
		})
	}
	for _, rt := range e.routes() {
		if rt.Method == http.MethodPost && !covered[rt.Path] {
			t.Errorf("POST %s has no body-limit case", rt.Path)
		}
	}
}

const testBoundary = "limit-test-boundary"

// multipartOf is a "package" file field of n bytes.
func multipartOf(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("--" + testBoundary + "\r\nContent-Disposition: form-data; name=\"package\"; filename=\"acme-hello-9.0.0.tar.gz\"\r\n" +
		"Content-Type: application/gzip\r\n\r\n")
	b.Write(bytes.Repeat([]byte{0x1f}, n))
	b.WriteString("\r\n--" + testBoundary + "--\r\n")
	return b.Bytes()
}

// TestSlowHeadersAreCutOff trickles request headers one line at a time; the server must
// close the connection (ReadHeaderTimeout) long before the client would have finished,
// while a normal client is still served.
func TestSlowHeadersAreCutOff(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	srv := server.New(server.Config{PublicURL: "http://x", ReadHeaderTimeout: 100 * time.Millisecond}, e.svc, e.st,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	res, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", res.StatusCode)
	}

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
		close(closed)
	}()
	const lines = 400 // 400 × 25 ms = 10 s of trickling, 100× the timeout
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	for i := range lines {
		select {
		case <-closed:
			return
		case <-time.After(25 * time.Millisecond):
		}
		if _, err := io.WriteString(conn, "X-Slow-"+strconv.Itoa(i)+": 1\r\n"); err != nil {
			return // the server hung up
		}
	}
	t.Fatalf("the server still read headers after %d trickled lines", lines)
}
