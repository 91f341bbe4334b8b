package signature_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/verify/signature"
)

// The npm provenance bundle of sigstore@2.0.0, built by GitHub Actions in
// sigstore/sigstore-js, and the public-good trusted root of its time (both from
// sigstore-go's test data). Its subject is the npm tarball's sha512.
const (
	realBundle      = "sigstore-js-2.0.0-provenance.sigstore.json"
	realRoot        = "trusted-root-public-good.json"
	otherRoot       = "trusted-root-scaffolding.json"
	realTarballHash = "46d4e2f74c4877316640000a6fdf8a8b59f1e0847667973e9859f774dd31b8f1e0937813b777fb66a2ac67d50540fe34640966eee9fc2ccca387082b4c85cd3c"
)

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "signature", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustVerifier(tb testing.TB, rootFile string) *signature.Verifier {
	tb.Helper()
	tm, err := signature.LoadTrustedRoot(filepath.Join("..", "..", "testdata", "signature", rootFile))
	if err != nil {
		tb.Fatal(err)
	}
	return signature.NewVerifier(tm, signature.DefaultThresholds())
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestRealGitHubActionsBundle(t *testing.T) {
	v := mustVerifier(t, realRoot)
	id := signature.Identity{Repository: "sigstore/sigstore-js", Workflow: "release.yml", Ref: "refs/heads/*"}
	got, err := v.VerifyBundleDigest(mustRead(t, realBundle), "sha512", mustHex(t, realTarballHash), id)
	if err != nil {
		t.Fatalf("VerifyBundleDigest: %v", err)
	}
	want := &signature.Result{
		Type:           signature.TypeSigstore,
		SAN:            "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main",
		Issuer:         signature.GitHubActionsIssuer,
		Repository:     "sigstore/sigstore-js",
		RepositoryID:   "495574555",
		OwnerID:        "71096353",
		Workflow:       ".github/workflows/release.yml",
		Ref:            "refs/heads/main",
		CommitSHA:      "f0b49a04e5a62250e0f60fb128004a73110fe311",
		RunURL:         "https://github.com/sigstore/sigstore-js/actions/runs/5904696764/attempts/1",
		LogIndex:       31821305,
		IntegratedTime: time.Unix(1692374735, 0).UTC(),
		BundleType:     signature.BundleDSSE,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestRealGitHubActionsBundleRefused(t *testing.T) {
	good := signature.Identity{Repository: "sigstore/sigstore-js"}
	tests := []struct {
		name     string
		root     string
		bundle   func([]byte) []byte
		id       signature.Identity
		digest   string
		wantRule string
	}{
		{"look-alike repository", realRoot, nil, signature.Identity{Repository: "sigstore/sigstore-j"}, realTarballHash, signature.RuleRepository},
		{"longer repository", realRoot, nil, signature.Identity{Repository: "sigstore/sigstore-js-evil"}, realTarballHash, signature.RuleRepository},
		{"other owner", realRoot, nil, signature.Identity{Repository: "sigstore-evil/sigstore-js"}, realTarballHash, signature.RuleRepository},
		{"case differs", realRoot, nil, signature.Identity{Repository: "sigstore/Sigstore-JS"}, realTarballHash, signature.RuleRepository},
		{"wrong workflow", realRoot, nil, signature.Identity{Repository: "sigstore/sigstore-js", Workflow: "publish.yml"}, realTarballHash, signature.RuleWorkflow},
		{"wrong ref", realRoot, nil, signature.Identity{Repository: "sigstore/sigstore-js", Ref: "refs/tags/v*"}, realTarballHash, signature.RuleRef},
		{"wrong issuer", realRoot, nil, signature.Identity{Repository: "sigstore/sigstore-js", Issuer: "https://gitlab.com"}, realTarballHash, signature.RuleIssuer},
		{"other file", realRoot, nil, good, "00" + realTarballHash[2:], signature.RuleArtifact},
		{"untrusted root", otherRoot, nil, good, realTarballHash, signature.RuleRootUntrusted},
		{"not json", realRoot, func([]byte) []byte { return []byte("{") }, good, realTarballHash, signature.RuleBundleInvalid},
		{"envelope signature altered", realRoot, func(b []byte) []byte {
			return alterJSON(t, b, func(m map[string]any) {
				sig := m["dsseEnvelope"].(map[string]any)["signatures"].([]any)[0].(map[string]any)
				sig["sig"] = flipBase64(t, sig["sig"].(string))
			})
		}, good, realTarballHash, signature.RuleBundleInvalid},
		{"log index altered", realRoot, func(b []byte) []byte {
			return alterJSON(t, b, func(m map[string]any) {
				entry := m["verificationMaterial"].(map[string]any)["tlogEntries"].([]any)[0].(map[string]any)
				entry["logIndex"] = "31821306"
			})
		}, good, realTarballHash, signature.RuleBundleInvalid},
		{"payload altered", realRoot, func(b []byte) []byte {
			return alterJSON(t, b, func(m map[string]any) {
				env := m["dsseEnvelope"].(map[string]any)
				env["payload"] = flipBase64(t, env["payload"].(string))
			})
		}, good, realTarballHash, signature.RuleBundleInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustRead(t, realBundle)
			if tt.bundle != nil {
				b = tt.bundle(b)
			}
			_, err := mustVerifier(t, tt.root).VerifyBundleDigest(b, "sha512", mustHex(t, tt.digest), tt.id)
			e, ok := signature.AsError(err)
			if !ok {
				t.Fatalf("err = %v, want a *signature.Error", err)
			}
			if e.Rule != tt.wantRule {
				t.Errorf("rule = %s, want %s (%v)", e.Rule, tt.wantRule, e)
			}
		})
	}
}

// alterJSON decodes a bundle, lets change edit it and encodes it again.
func alterJSON(tb testing.TB, b []byte, change func(map[string]any)) []byte {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	change(m)
	out, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// flipBase64 flips one bit in the middle of base64-encoded bytes.
func flipBase64(tb testing.TB, s string) string {
	tb.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x01
	return base64.StdEncoding.EncodeToString(raw)
}

func TestRealBundleWithFile(t *testing.T) {
	// The file given is not the tarball the attestation names: refused with both digests.
	_, err := mustVerifier(t, realRoot).VerifyBundle(mustRead(t, realBundle), bytes.NewReader([]byte("not the tarball")),
		signature.Identity{Repository: "sigstore/sigstore-js"})
	e, ok := signature.AsError(err)
	if !ok || e.Rule != signature.RuleArtifact {
		t.Fatalf("err = %v, want %s", err, signature.RuleArtifact)
	}
	if want := "pkg:npm/sigstore@2.0.0 sha512:" + realTarballHash; e.Expected != want {
		t.Errorf("expected = %q, want %q", e.Expected, want)
	}
}
