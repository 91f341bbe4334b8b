package action_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuer is a local OIDC issuer on loopback: discovery and JWKS, as the registry reads them
// from https://token.actions.githubusercontent.com.
type issuer struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	is.srv = httptest.NewServer(http.HandlerFunc(is.serve))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"ES256"}, "response_types_supported": []string{"id_token"}})
	case "/jwks":
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	default:
		http.NotFound(w, r)
	}
}

func (is *issuer) sign(claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// tokenService answers ACTIONS_ID_TOKEN_REQUEST_URL as the Actions runtime does: with the
// request token as bearer, GET ?audience=AUD returns {"value": JWT}, the job's identity
// (from the runner's GITHUB_* variables) signed by the issuer.
type tokenService struct {
	srv          *httptest.Server
	requestToken string
	is           *issuer

	mu        sync.Mutex
	env       map[string]string // the job's GITHUB_* variables
	audiences []string          // the audience of each request answered
}

func newTokenService(t *testing.T, is *issuer) *tokenService {
	t.Helper()
	ts := &tokenService{requestToken: "actions-runtime-" + rand.Text(), is: is}
	ts.srv = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.srv.Close)
	return ts
}

// url is ACTIONS_ID_TOKEN_REQUEST_URL; the real one carries a query too.
func (ts *tokenService) url() string {
	return ts.srv.URL + "/_apis/distributedtask/idtoken?api-version=2.0"
}

func (ts *tokenService) forJob(env map[string]string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.env, ts.audiences = env, nil
}

func (ts *tokenService) requested() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.audiences...)
}

func (ts *tokenService) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Authorization"), "bearer "+ts.requestToken) {
		http.Error(w, `{"message": "bad request token"}`, http.StatusUnauthorized)
		return
	}
	aud := r.URL.Query().Get("audience")
	if aud == "" || r.URL.Query().Get("api-version") != "2.0" {
		http.Error(w, `{"message": "expected api-version=2.0 and an audience"}`, http.StatusBadRequest)
		return
	}
	ts.mu.Lock()
	ts.audiences = append(ts.audiences, aud)
	env := ts.env
	ts.mu.Unlock()
	raw, err := ts.is.sign(jobClaims(ts.is.srv.URL, aud, env))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"value": raw})
}

// jobClaims are GitHub's claims for the job the variables describe.
func jobClaims(iss, aud string, env map[string]string) map[string]any {
	now := time.Now()
	return map[string]any{
		"jti": rand.Text(), "iss": iss, "aud": aud,
		"sub": "repo:" + env["GITHUB_REPOSITORY"] + ":ref:" + env["GITHUB_REF"],
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"repository": env["GITHUB_REPOSITORY"], "repository_id": env["GITHUB_REPOSITORY_ID"],
		"repository_owner": env["GITHUB_REPOSITORY_OWNER"], "repository_owner_id": env["GITHUB_REPOSITORY_OWNER_ID"],
		"workflow_ref": env["GITHUB_WORKFLOW_REF"], "ref": env["GITHUB_REF"], "ref_type": env["GITHUB_REF_TYPE"],
		"sha": env["GITHUB_SHA"], "event_name": env["GITHUB_EVENT_NAME"], "run_id": env["GITHUB_RUN_ID"],
	}
}
