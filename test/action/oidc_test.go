package action_test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pluginyard/registry/test/internal/oidctest"
)

// tokenService answers ACTIONS_ID_TOKEN_REQUEST_URL as the Actions runtime does: with the
// request token as bearer, GET ?audience=AUD returns {"value": JWT}, the job's identity
// (from the runner's GITHUB_* variables) signed by the issuer.
type tokenService struct {
	srv          *httptest.Server
	requestToken string
	is           *oidctest.Issuer

	mu        sync.Mutex
	env       map[string]string // the job's GITHUB_* variables
	audiences []string          // the audience of each request answered
}

func newTokenService(t *testing.T, is *oidctest.Issuer) *tokenService {
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
	raw, err := ts.is.Sign(ts.is.Claims(aud, oidctest.JobFromEnv(env)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"value": raw})
}
