package replicas_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/pluginyard/registry/test/internal/oidctest"
	"github.com/pluginyard/registry/test/replicas"
)

// TestTrustAcrossReplicas is the security half of acceptance 4: what one replica decides
// about a credential holds on the others at once (no cache to expire, no poll to wait for).
func TestTrustAcrossReplicas(t *testing.T) {
	is := oidctest.New(t)
	c := startThree(t, replicas.Options{OIDCIssuer: is.URL})
	t.Run("revoked_token_refused_everywhere", func(t *testing.T) { testRevokedEverywhere(t, c) })
	t.Run("oidc_replay_refused_across_replicas", func(t *testing.T) { testOIDCReplay(t, c, is) })
	t.Run("tofu_pin_enforced_across_replicas", func(t *testing.T) { testPinAcrossReplicas(t, c, is) })
}

var secretRE = regexp.MustCompile(`\bpyr_[A-Za-z0-9_-]+`)

// testRevokedEverywhere: a publisher token made with `registry token create` against the
// shared database publishes on replicas 1 and 2; reported leaked on replica 0, it is
// refused on 1 and 2 by the very next request.
func testRevokedEverywhere(t *testing.T, c *replicas.Cluster) {
	out, err := c.CLI("token", "create", "--publisher", "acme", "--note", "replicas test")
	if err != nil {
		t.Fatal(err)
	}
	secret := secretRE.FindString(out)
	if secret == "" {
		t.Fatalf("registry token create printed no token:\n%s", out)
	}
	for k, r := range c.Replicas[1:] {
		pkg := mustPackage(t, "replica-beta", fmt.Sprintf("5.0.%d", k), 0, 4<<10)
		if a, err := replicas.Publish(r.URL, secret, pkg); err != nil || a.Status != http.StatusCreated {
			t.Fatalf("publish with the new token on replica %d: %v %v, want 201", r.Index, a, err)
		}
	}
	body, _ := json.Marshal(map[string]string{"token": secret})
	a, err := replicas.Post(c.Replicas[0].URL+"/api/v1/tokens/revoke", "application/json", "", body)
	if err != nil || a.Status != http.StatusAccepted {
		t.Fatalf("revoke on replica 0: %v %v, want 202", a, err)
	}
	for k, r := range c.Replicas[1:] {
		pkg := mustPackage(t, "replica-beta", fmt.Sprintf("5.1.%d", k), 0, 4<<10)
		a, err := replicas.Publish(r.URL, secret, pkg)
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != http.StatusUnauthorized || !strings.Contains(a.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("publish with the token revoked on replica 0, on replica %d: %s (WWW-Authenticate %q), want 401 invalid_token", r.Index, a, a.Header.Get("WWW-Authenticate"))
		}
	}
	for _, r := range c.Replicas {
		rels, err := replicas.Releases(r.URL, "replica-beta")
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range rels {
			if strings.HasPrefix(rel.Version, "5.1.") {
				t.Errorf("replica %d lists %s, published with a revoked token", r.Index, rel.Version)
			}
		}
	}
}

// job is the GitHub Actions job of the OIDC tests: repository acme/replica-alpha, listed
// in plugins.yaml.
func job(repoID, ownerID string) oidctest.Job {
	return oidctest.Job{Repository: "acme/replica-alpha", RepositoryID: repoID, OwnerID: ownerID,
		WorkflowRef: "acme/replica-alpha/.github/workflows/release.yml@refs/tags/v1.0.0", Ref: "refs/tags/v1.0.0",
		RefType: "tag", SHA: strings.Repeat("a", 40), EventName: "push", RunID: "42"}
}

// exchange is POST /api/v1/auth/oidc of raw on the replica at base.
func exchange(t *testing.T, base, raw string) replicas.Answer {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"token": raw})
	a, err := replicas.Post(base+"/api/v1/auth/oidc", "application/json", "", body)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func signed(t *testing.T, is *oidctest.Issuer, j oidctest.Job) string {
	t.Helper()
	raw, err := is.Sign(is.Claims(replicas.PublicURL, j))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// testOIDCReplay: an identity token exchanged on replica 0 is refused as replayed on
// replicas 1 and 2 (the jti is in the shared database), and the upload token replica 0
// gave publishes on replica 2.
func testOIDCReplay(t *testing.T, c *replicas.Cluster, is *oidctest.Issuer) {
	raw := signed(t, is, job("1001", "2001"))
	a := exchange(t, c.Replicas[0].URL, raw)
	if a.Status != http.StatusOK {
		t.Fatalf("first exchange on replica 0: %s, want 200", a)
	}
	var got struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(a.Body, &got); err != nil || got.Token == "" {
		t.Fatalf("exchange answer %s: %v", a, err)
	}
	for _, r := range c.Replicas[1:] {
		if a := exchange(t, r.URL, raw); a.Status != http.StatusUnauthorized || !hasRule(a, "oidc.jti.replayed") {
			t.Errorf("replay on replica %d of the token exchanged on replica 0: %s (rules %v), want 401 oidc.jti.replayed", r.Index, a, a.Rules())
		}
	}
	pkg := mustPackage(t, "replica-alpha", "6.0.0", 0, 4<<10)
	if a, err := replicas.Publish(c.Replicas[2].URL, got.Token, pkg); err != nil || a.Status != http.StatusCreated {
		t.Errorf("publish on replica 2 with the upload token of replica 0: %v %v, want 201", a, err)
	}
}

// testPinAcrossReplicas: replica 0 pinned acme/replica-alpha to repository 1001 of owner
// 2001 on its first exchange (testOIDCReplay); replicas 1 and 2 refuse a token whose ids
// differ, and accept a fresh one with the pinned ids.
func testPinAcrossReplicas(t *testing.T, c *replicas.Cluster, is *oidctest.Issuer) {
	if a := exchange(t, c.Replicas[0].URL, signed(t, is, job("1001", "2001"))); a.Status != http.StatusOK {
		t.Fatalf("exchange with the pinned ids on replica 0: %s, want 200", a)
	}
	for _, tc := range []struct {
		replica         int
		repoID, ownerID string
	}{{1, "9999", "2001"}, {2, "1001", "8888"}} {
		a := exchange(t, c.Replicas[tc.replica].URL, signed(t, is, job(tc.repoID, tc.ownerID)))
		if a.Status != http.StatusForbidden || !hasRule(a, "oidc.identity.changed") {
			t.Errorf("replica %d, repository_id %s owner_id %s (pinned on replica 0 as 1001/2001): %s (rules %v), want 403 oidc.identity.changed",
				tc.replica, tc.repoID, tc.ownerID, a, a.Rules())
		}
	}
	if a := exchange(t, c.Replicas[2].URL, signed(t, is, job("1001", "2001"))); a.Status != http.StatusOK {
		t.Errorf("exchange with the pinned ids on replica 2: %s, want 200", a)
	}
}
