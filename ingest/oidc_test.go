package ingest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
	"github.com/pluginyard/registry/verify"
)

const (
	testAudience = "https://registry.test"
	helloRepo    = "acme/kandev-plugin-hello"
)

// testIssuer is a local OIDC issuer: discovery and JWKS over httptest, tokens signed here.
type testIssuer struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey

	mu            sync.Mutex
	paths         []string
	failDiscovery int               // discovery requests still to answer 503
	rotated       *ecdsa.PrivateKey // when set, the JWKS also publishes it as k2
	jtis          int               // token ids handed out by claims
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	is := &testIssuer{key: mustKey(t)}
	is.srv = httptest.NewServer(http.HandlerFunc(is.serve))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) serve(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	is.paths = append(is.paths, r.URL.Path)
	fail := is.failDiscovery > 0 && r.URL.Path == "/.well-known/openid-configuration"
	if fail {
		is.failDiscovery--
	}
	is.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case fail:
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	case r.URL.Path == "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"ES256"}, "response_types_supported": []string{"id_token"}})
	case r.URL.Path == "/jwks":
		keys := []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}
		is.mu.Lock()
		if is.rotated != nil {
			keys = append(keys, jose.JSONWebKey{Key: &is.rotated.PublicKey, KeyID: "k2", Algorithm: "ES256", Use: "sig"})
		}
		is.mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: keys})
	default:
		http.NotFound(w, r)
	}
}

func (is *testIssuer) fetched() []string {
	is.mu.Lock()
	defer is.mu.Unlock()
	return append([]string(nil), is.paths...)
}

// jwksFetches counts the key-set requests received.
func (is *testIssuer) jwksFetches() int {
	n := 0
	for _, p := range is.fetched() {
		if p == "/jwks" {
			n++
		}
	}
	return n
}

// claims are valid GitHub Actions claims for repo at now, with a fresh jti each call.
func (is *testIssuer) claims(now time.Time, repo, repoID, ownerID string) map[string]any {
	is.mu.Lock()
	is.jtis++
	jti := fmt.Sprintf("jti-%d", is.jtis)
	is.mu.Unlock()
	return map[string]any{
		"jti": jti,
		"iss": is.srv.URL, "aud": testAudience, "sub": "repo:" + repo + ":ref:refs/tags/v1.2.0",
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"repository": repo, "repository_id": repoID, "repository_owner_id": ownerID,
		"workflow_ref": repo + "/.github/workflows/release.yml@refs/tags/v1.2.0",
		"ref":          "refs/tags/v1.2.0", "sha": "4f0c1e9d2b7a8c3e5f6a7b8c9d0e1f2a3b4c5d6e",
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustSign(t *testing.T, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func testList() *index.List {
	return &index.List{
		Plugins: []index.Entry{
			{ID: "hello", Repo: helloRepo, Kind: index.KindPlugin},
			{ID: "board", Repo: helloRepo, Kind: index.KindCanvas},
			{ID: "other", Repo: "globex/other", Kind: index.KindPlugin},
		},
		Extensions: []index.ExtensionEntry{{Name: "@acme/curupira-gh", Repo: "Acme/kandev-plugin-hello"}},
	}
}

// mustStore is a fresh store: SQLite in a temporary directory, or a fresh PostgreSQL
// database with REGISTRY_TEST_DATABASE=postgres (storetest.OpenStore), which .ci/run sets
// for a second pass of these tests.
func mustStore(t *testing.T) *store.Store {
	t.Helper()
	return storetest.OpenStore(t)
}

func newTestTP(st *store.Store, is *testIssuer, now time.Time) *TrustedPublishing {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tp := NewTrustedPublishing(context.Background(), st, testList, is.srv.URL, testAudience, log)
	tp.now = func() time.Time { return now }
	return tp
}

// outcome is what a caller of Exchange can observe.
type outcome struct {
	Status string // ok | unauthenticated | forbidden | error
	Rules  []string
	Scope  []string
}

func outcomeOf(scope []string, err error) outcome {
	var rf *Refusal
	switch {
	case err == nil:
		return outcome{Status: "ok", Scope: scope}
	case errors.Is(err, ErrUnauthenticated):
		return outcome{Status: "unauthenticated"}
	case errors.As(err, &rf) && errors.Is(err, ErrForbidden):
		return outcome{Status: "forbidden", Rules: rf.Problems.Rules()}
	}
	return outcome{Status: "error"}
}

func TestTrustedPublishingExchange(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC().Truncate(time.Second)
	stranger := mustKey(t)
	allHello := []string{"hello", "board", "@acme/curupira-gh"}
	valid := func(repo string) map[string]any { return is.claims(now, repo, "4242", "77") }
	with := func(key string, v any) map[string]any { c := valid(helloRepo); c[key] = v; return c }
	without := func(key string) map[string]any { c := valid(helloRepo); delete(c, key); return c }
	tests := []struct {
		name    string
		raw     string
		want    outcome
		wantMsg string // in the error
	}{
		{"valid", mustSign(t, is.key, "k1", valid(helloRepo)), outcome{Status: "ok", Scope: allHello}, ""},
		{"owner in another case", mustSign(t, is.key, "k1", valid("ACME/kandev-plugin-hello")), outcome{Status: "ok", Scope: allHello}, ""},
		{"audience among several", mustSign(t, is.key, "k1", with("aud", []string{"https://elsewhere", testAudience})), outcome{Status: "ok", Scope: allHello}, ""},
		{"wrong audience", mustSign(t, is.key, "k1", with("aud", "https://elsewhere")), outcome{Status: "unauthenticated"},
			`wrong audience: expected "https://registry.test", found ["https://elsewhere"]`},
		{"expired", mustSign(t, is.key, "k1", with("exp", now.Add(-time.Minute).Unix())), outcome{Status: "unauthenticated"}, "expired at"},
		{"not yet valid", mustSign(t, is.key, "k1", with("nbf", now.Add(time.Hour).Unix())), outcome{Status: "unauthenticated"}, "not yet valid"},
		{"wrong issuer", mustSign(t, is.key, "k1", with("iss", "https://issuer.example")), outcome{Status: "unauthenticated"},
			`wrong issuer: expected "` + is.srv.URL + `", found "https://issuer.example"`},
		{"unknown key, known key id", mustSign(t, stranger, "k1", valid(helloRepo)), outcome{Status: "unauthenticated"}, "signed by an unknown key"},
		{"unknown key id", mustSign(t, stranger, "k9", valid(helloRepo)), outcome{Status: "unauthenticated"}, "signed by an unknown key"},
		{"not a JWT", "not-a-jwt", outcome{Status: "unauthenticated"}, "expected a signed JWT"},
		{"no repository_id claim", mustSign(t, is.key, "k1", without("repository_id")), outcome{Status: "unauthenticated"},
			"expected the GitHub Actions claims"},
		{"repository not listed", mustSign(t, is.key, "k1", valid("acme/unlisted")), outcome{Status: "forbidden", Rules: []string{"oidc.repository.unlisted"}},
			"repository acme/unlisted is not listed"},
		{"name in another case", mustSign(t, is.key, "k1", valid("acme/Kandev-Plugin-Hello")), outcome{Status: "forbidden", Rules: []string{"oidc.repository.unlisted"}},
			"not listed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustStore(t)
			tp := newTestTP(st, is, now)
			secret, exp, scope, err := tp.Exchange(context.Background(), tt.raw)
			if diff := cmp.Diff(tt.want, outcomeOf(scope, err)); diff != "" {
				t.Fatalf("outcome (-want +got):\n%s\nerr: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error %q does not say %q", err, tt.wantMsg)
				}
				return
			}
			checkUploadToken(t, st, secret, exp, claimedRepo(t, tt.raw), tt.want.Scope)
		})
	}
}

// claimedRepo reads the repository claim of a test token.
func claimedRepo(t *testing.T, raw string) string {
	t.Helper()
	var c struct {
		Repository string `json:"repository"`
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err == nil {
		err = tok.UnsafeClaimsWithoutVerification(&c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c.Repository
}

// checkUploadToken checks that secret authenticates as an upload token of repo with scope,
// expiring when Exchange said.
func checkUploadToken(t *testing.T, st *store.Store, secret string, exp time.Time, repo string, scope []string) {
	t.Helper()
	ctx := context.Background()
	actor, err := NewAuthenticator(st, "").Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("Authenticate(exchanged token): %v", err)
	}
	if diff := cmp.Diff(Actor{Name: "upload:oidc:" + repo, Scope: scope, TokenID: actor.TokenID}, actor); diff != "" {
		t.Errorf("actor (-want +got):\n%s", diff)
	}
	tok, err := st.TokenByHash(ctx, HashToken(secret))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != "upload" || tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(exp) {
		t.Errorf("stored token kind %q expires %v; want upload expiring at the reported %v", tok.Kind, tok.ExpiresAt, exp)
	}
	if d := tok.ExpiresAt.Sub(tok.CreatedAt); d > OIDCTokenTTL {
		t.Errorf("token lives %v, want at most %v", d, OIDCTokenTTL)
	}
}

func mustExchange(t *testing.T, tp *TrustedPublishing, raw string) (string, []string) {
	t.Helper()
	secret, _, scope, err := tp.Exchange(context.Background(), raw)
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	return secret, scope
}

func TestTrustedPublishingPin(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC()
	st := mustStore(t)
	tp := newTestTP(st, is, now)
	ctx := context.Background()
	token := func(repoID, ownerID string) string {
		return mustSign(t, is.key, "k1", is.claims(now, "Acme/kandev-plugin-hello", repoID, ownerID))
	}
	mustExchange(t, tp, token("100", "7"))
	mustExchange(t, tp, token("100", "7"))

	pin, err := st.GetPin(ctx, "repo:acme/kandev-plugin-hello")
	if err != nil {
		t.Fatalf("GetPin: %v", err)
	}
	wantPin := store.Pin{Subject: "repo:acme/kandev-plugin-hello", Repository: "Acme/kandev-plugin-hello", RepositoryID: "100", OwnerID: "7", Source: "oidc"}
	pin.PinnedAt = time.Time{}
	if diff := cmp.Diff(wantPin, *pin); diff != "" {
		t.Errorf("pin (-want +got):\n%s", diff)
	}

	changed := []struct {
		name, repoID, ownerID string
		wantPaths             []string
		wantMsg               string
	}{
		{"re-created repository", "999", "7", []string{"repository_id"}, "expected repository id 100 (pinned for Acme/kandev-plugin-hello"},
		{"name taken by another account", "100", "8", []string{"repository_owner_id"}, "expected owner id 7"},
		{"both", "999", "8", []string{"repository_id", "repository_owner_id"}, "found 999"},
	}
	for _, tt := range changed {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := tp.Exchange(ctx, token(tt.repoID, tt.ownerID))
			var rf *Refusal
			if !errors.As(err, &rf) || !errors.Is(err, ErrForbidden) {
				t.Fatalf("Exchange = %v, want a forbidden refusal", err)
			}
			var paths, msgs []string
			for _, p := range rf.Problems {
				msgs = append(msgs, p.Message)
				if p.Rule != "oidc.identity.changed" || !strings.Contains(p.Message, "registry pin reset repo:acme/kandev-plugin-hello") {
					t.Errorf("problem %+v: want rule oidc.identity.changed naming `registry pin reset repo:acme/kandev-plugin-hello`", p)
				}
				paths = append(paths, p.Path)
			}
			if diff := cmp.Diff(tt.wantPaths, paths); diff != "" {
				t.Errorf("problem paths (-want +got):\n%s", diff)
			}
			if got := strings.Join(msgs, "\n"); !strings.Contains(got, tt.wantMsg) {
				t.Errorf("problems %q do not say %q", got, tt.wantMsg)
			}
		})
	}

	// An admin's `registry pin reset` deletes the pin; the next exchange pins the new ids.
	if err := st.DeletePin(ctx, "repo:acme/kandev-plugin-hello", store.AuditEntry{Actor: "cli", Action: "pin.reset"}); err != nil {
		t.Fatal(err)
	}
	mustExchange(t, tp, token("999", "8"))
	checkOIDCAudit(t, st, []string{"ok", "refused", "refused", "refused", "ok", "ok"})
}

// checkOIDCAudit checks the outcomes of the token.oidc audit entries, newest first.
func checkOIDCAudit(t *testing.T, st *store.Store, want []string) {
	t.Helper()
	entries, err := st.AuditLog(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Action != "token.oidc" {
			continue
		}
		got = append(got, e.Outcome)
		if e.Actor != "oidc:Acme/kandev-plugin-hello" || e.Target != "Acme/kandev-plugin-hello" || e.Detail["workflow_ref"] == "" {
			t.Errorf("audit entry %+v: want actor, target and workflow_ref of the token", e)
		}
		if e.Outcome == "refused" && e.Detail["reason"] == nil {
			t.Errorf("refused audit entry %+v has no reason", e)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token.oidc audit outcomes, newest first (-want +got):\n%s", diff)
	}
}

func TestTrustedPublishingScopeEnforced(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC()
	st := mustStore(t)
	tp := newTestTP(st, is, now)
	ctx := context.Background()
	svc := New(st, testList(), Config{PublicURL: testAudience}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	auth := NewAuthenticator(st, "")

	acme, _ := mustExchange(t, tp, mustSign(t, is.key, "k1", is.claims(now, helloRepo, "1", "1")))
	globex, _ := mustExchange(t, tp, mustSign(t, is.key, "k1", is.claims(now, "globex/other", "2", "2")))
	tests := []struct {
		token, id, kind string
		allowed         bool
	}{
		{acme, "hello", "plugin", true},
		{acme, "board", "canvas", true},
		{acme, "@acme/curupira-gh", "extension", true},
		{acme, "other", "plugin", false},
		{globex, "other", "plugin", true},
		{globex, "hello", "plugin", false},
		{globex, "@acme/curupira-gh", "extension", false},
	}
	for _, tt := range tests {
		actor, err := auth.Authenticate(ctx, tt.token)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.authorize(actor, &verify.Report{ID: tt.id, Kind: tt.kind})
		if got := err == nil; got != tt.allowed || (err != nil && !errors.Is(err, ErrForbidden)) {
			t.Errorf("%s publishing %s: err = %v, want allowed=%v (refusals are ErrForbidden)", actor.Name, tt.id, err, tt.allowed)
		}
	}
}

func TestTrustedPublishingRevokedToken(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC()
	st := mustStore(t)
	ctx := context.Background()
	secret, _ := mustExchange(t, newTestTP(st, is, now), mustSign(t, is.key, "k1", is.claims(now, helloRepo, "1", "1")))
	auth := NewAuthenticator(st, "")
	if _, err := auth.Authenticate(ctx, secret); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	tok, err := st.TokenByHash(ctx, HashToken(secret))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeToken(ctx, tok.ID, store.AuditEntry{Actor: "admin", Action: "token.revoke", Target: tok.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Authenticate(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("after revocation: err = %v, want ErrUnauthenticated", err)
	}
}

func TestTrustedPublishingDiscovery(t *testing.T) {
	is := newTestIssuer(t)
	is.failDiscovery = 1
	now := time.Now().UTC()
	tp := newTestTP(mustStore(t), is, now)
	if got := is.fetched(); len(got) != 0 {
		t.Fatalf("construction fetched %v; want nothing before the first exchange", got)
	}
	raw := mustSign(t, is.key, "k1", is.claims(now, helloRepo, "1", "1"))
	_, _, _, err := tp.Exchange(context.Background(), raw)
	if err == nil || errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "discovery of issuer") {
		t.Fatalf("Exchange with the issuer down = %v; want a discovery error that is not the caller's fault", err)
	}
	mustExchange(t, tp, raw)                                                            // discovery is retried, and the token was not used up
	mustExchange(t, tp, mustSign(t, is.key, "k1", is.claims(now, helloRepo, "1", "1"))) // and then kept
	want := []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration", "/jwks"}
	if diff := cmp.Diff(want, is.fetched()); diff != "" {
		t.Errorf("issuer URLs fetched (-want +got):\n%s", diff)
	}
}

// refusalRules are the rules of a *Refusal, nil for any other error.
func refusalRules(err error) []string {
	var rf *Refusal
	if errors.As(err, &rf) {
		return rf.Problems.Rules()
	}
	return nil
}

// TestTrustedPublishingSingleUse: a token is exchanged once, also after a restart; a
// token without jti is refused.
func TestTrustedPublishingSingleUse(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC().Truncate(time.Second)
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	raw := mustSign(t, is.key, "k1", is.claims(now, helloRepo, "1", "1"))
	mustExchange(t, newTestTP(st, is, now), raw)
	tests := []struct {
		name      string
		tp        func() *TrustedPublishing
		raw       string
		wantRules []string
		wantMsg   string
	}{
		{"replay", func() *TrustedPublishing { return newTestTP(st, is, now) }, raw, []string{"oidc.jti.replayed"}, `this token (jti "jti-1") was already exchanged`},
		{"replay after a restart", func() *TrustedPublishing {
			_ = st.Close()
			if st, err = store.Open(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			return newTestTP(st, is, now.Add(time.Minute))
		}, raw, []string{"oidc.jti.replayed"}, "single-use"},
		{"no jti", func() *TrustedPublishing { return newTestTP(st, is, now) }, func() string {
			c := is.claims(now, helloRepo, "1", "1")
			delete(c, "jti")
			return mustSign(t, is.key, "k1", c)
		}(), []string{"oidc.jti.missing"}, "no jti (token id) claim"},
		{"jti too long", func() *TrustedPublishing { return newTestTP(st, is, now) }, func() string {
			c := is.claims(now, helloRepo, "1", "1")
			c["jti"] = strings.Repeat("j", store.MaxJTILen+1)
			return mustSign(t, is.key, "k1", c)
		}(), []string{"oidc.jti.length"}, "its jti claim is 257 bytes, over the 256-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := tt.tp().Exchange(context.Background(), tt.raw)
			if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Exchange = %v; want unauthenticated, saying %q", err, tt.wantMsg)
			}
			if diff := cmp.Diff(tt.wantRules, refusalRules(err)); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
	_ = st.Close()
}

// TestJWKSRefreshedAtMostOncePerMinute: tokens with unknown key ids do not each fetch the
// key set; a rotated key is picked up once the minute has passed.
func TestJWKSRefreshedAtMostOncePerMinute(t *testing.T) {
	is := newTestIssuer(t)
	now := time.Now().UTC().Truncate(time.Second)
	clock := now
	tp := newTestTP(mustStore(t), is, now)
	tp.now = func() time.Time { return clock }
	token := func(key *ecdsa.PrivateKey, kid string) string {
		return mustSign(t, key, kid, is.claims(now, helloRepo, "1", "1"))
	}
	mustExchange(t, tp, token(is.key, "k1"))
	stranger := mustKey(t)
	for i := range 20 {
		if _, _, _, err := tp.Exchange(context.Background(), token(stranger, fmt.Sprintf("made-up-%d", i))); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("unknown key id %d: %v, want unauthenticated", i, err)
		}
	}
	if n := is.jwksFetches(); n != 1 {
		t.Fatalf("%d key-set fetches after 20 unknown key ids within a minute, want 1", n)
	}

	is.mu.Lock()
	is.rotated = mustKey(t)
	is.mu.Unlock()
	clock = now.Add(30 * time.Second)
	if _, _, _, err := tp.Exchange(context.Background(), token(is.rotated, "k2")); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "at most once a minute") {
		t.Fatalf("a rotated key within the minute: %v; want unauthenticated, saying the set is refreshed at most once a minute", err)
	}
	clock = now.Add(jwksMinInterval)
	mustExchange(t, tp, token(is.rotated, "k2"))
	mustExchange(t, tp, token(is.key, "k1"))
	if _, _, _, err := tp.Exchange(context.Background(), token(stranger, "made-up-again")); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("unknown key id after the refresh: %v", err)
	}
	if n := is.jwksFetches(); n != 2 {
		t.Errorf("%d key-set fetches, want 2", n)
	}
}
