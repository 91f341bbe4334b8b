// Package oidctest is a local OpenID Connect issuer for tests of trusted publishing: it
// serves discovery and JWKS on loopback, as https://token.actions.githubusercontent.com
// does, and signs the identity tokens a GitHub Actions job would be given.
package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is an issuer on a loopback httptest server; its URL is the `iss` of its tokens.
type Issuer struct {
	URL string
	srv *httptest.Server
	key *ecdsa.PrivateKey
}

// New starts an issuer, stopped when tb ends.
func New(tb testing.TB) *Issuer {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	is := &Issuer{key: key}
	is.srv = httptest.NewServer(http.HandlerFunc(is.serve))
	is.URL = is.srv.URL
	tb.Cleanup(is.srv.Close)
	return is
}

func (is *Issuer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL, "jwks_uri": is.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"ES256"}, "response_types_supported": []string{"id_token"}})
	case "/jwks":
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	default:
		http.NotFound(w, r)
	}
}

// Sign returns claims as a JWT signed with the issuer's published key.
func (is *Issuer) Sign(claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		return "", fmt.Errorf("oidctest: %w", err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("oidctest: %w", err)
	}
	return raw, nil
}

// Job describes the GitHub Actions job a token is for.
type Job struct {
	Repository, RepositoryID, OwnerID string
	WorkflowRef, Ref, RefType, SHA    string
	EventName, RunID                  string
}

// JobFromEnv reads a job from the runner's GITHUB_* variables.
func JobFromEnv(env map[string]string) Job {
	return Job{Repository: env["GITHUB_REPOSITORY"], RepositoryID: env["GITHUB_REPOSITORY_ID"], OwnerID: env["GITHUB_REPOSITORY_OWNER_ID"],
		WorkflowRef: env["GITHUB_WORKFLOW_REF"], Ref: env["GITHUB_REF"], RefType: env["GITHUB_REF_TYPE"], SHA: env["GITHUB_SHA"],
		EventName: env["GITHUB_EVENT_NAME"], RunID: env["GITHUB_RUN_ID"]}
}

// Claims are GitHub's claims for job, for audience aud, valid for five minutes from now.
func (is *Issuer) Claims(aud string, job Job) map[string]any {
	now := time.Now()
	owner, _, _ := strings.Cut(job.Repository, "/")
	return map[string]any{
		"jti": rand.Text(), "iss": is.URL, "aud": aud, "sub": "repo:" + job.Repository + ":ref:" + job.Ref,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"repository": job.Repository, "repository_id": job.RepositoryID,
		"repository_owner": owner, "repository_owner_id": job.OwnerID,
		"workflow_ref": job.WorkflowRef, "ref": job.Ref, "ref_type": job.RefType,
		"sha": job.SHA, "event_name": job.EventName, "run_id": job.RunID,
	}
}
