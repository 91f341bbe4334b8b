package signature_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pluginyard/registry/verify/signature"
	"github.com/pluginyard/registry/verify/signature/signaturetest"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

const (
	helloRepo = "acme/kandev-plugin-hello"
	helloSAN  = "https://github.com/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/tags/v1.2.0"
)

// The virtual Sigstore issues no SCTs, so its tests require none.
var virtualThresholds = signature.Thresholds{TransparencyLog: 1, Timestamps: 1}

var artifact = []byte("acme-hello-1.2.0.tar.gz bytes\n")

type signer func(tb testing.TB, vs *ca.VirtualSigstore, san, issuer string, file []byte) verify.SignedEntity

func signMessage(tb testing.TB, vs *ca.VirtualSigstore, san, issuer string, file []byte) verify.SignedEntity {
	tb.Helper()
	e, err := vs.Sign(san, issuer, file)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func attestSHA256(tb testing.TB, vs *ca.VirtualSigstore, san, issuer string, file []byte) verify.SignedEntity {
	tb.Helper()
	e, err := vs.Attest(san, issuer, statement(tb, "hello.tar.gz", map[string]string{"sha256": sha256Hex(file)}))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func attestSHA512(tb testing.TB, vs *ca.VirtualSigstore, san, issuer string, file []byte) verify.SignedEntity {
	tb.Helper()
	e, err := vs.Attest(san, issuer, statement(tb, "hello.tar.gz", map[string]string{"sha512": sha512Hex(file)}))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

var shapes = []struct {
	name  string
	sign  signer
	shape string
}{
	{"message signature", signMessage, signature.BundleMessageSignature},
	{"dsse sha256", attestSHA256, signature.BundleDSSE},
	{"dsse sha512", attestSHA512, signature.BundleDSSE},
}

func TestVirtualSigstoreVerifies(t *testing.T) {
	ids := []signature.Identity{
		{Repository: helloRepo},
		{Repository: helloRepo, Workflow: "release.yml", Ref: "refs/tags/v*"},
		{Repository: helloRepo, Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1.2.0", Issuer: signature.GitHubActionsIssuer},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			vs := mustSigstore(t)
			entity := sh.sign(t, vs, helloSAN, signature.GitHubActionsIssuer, artifact)
			for _, id := range ids {
				got, err := signature.NewVerifier(vs, virtualThresholds).VerifyEntity(entity, bytes.NewReader(artifact), id)
				if err != nil {
					t.Fatalf("%+v: %v", id, err)
				}
				want := &signature.Result{
					Type: signature.TypeSigstore, SAN: helloSAN, Issuer: signature.GitHubActionsIssuer,
					Repository: helloRepo, Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1.2.0",
					BundleType: sh.shape,
				}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(signature.Result{}, "LogIndex", "IntegratedTime")); diff != "" {
					t.Errorf("%+v: result (-want +got):\n%s", id, diff)
				}
				if got.IntegratedTime.IsZero() {
					t.Errorf("integrated time not reported")
				}
			}
		})
	}
}

func TestVirtualSigstoreRefuses(t *testing.T) {
	good := signature.Identity{Repository: helloRepo, Workflow: "release.yml", Ref: "refs/tags/v*"}
	tests := []struct {
		name     string
		san      string
		issuer   string
		id       signature.Identity
		file     []byte // what is verified instead of the signed artifact
		other    bool   // verify against another virtual Sigstore
		th       *signature.Thresholds
		wantRule string
		wantExp  string
		wantFnd  string
	}{
		{name: "wrong repository", san: helloSAN, id: signature.Identity{Repository: "acme/other"},
			wantRule: signature.RuleRepository, wantExp: "acme/other", wantFnd: helloRepo},
		{name: "look-alike longer repository", san: "https://github.com/acme/kandev-plugin-hello-evil/.github/workflows/release.yml@refs/tags/v1.2.0", id: good,
			wantRule: signature.RuleRepository, wantExp: helloRepo, wantFnd: "acme/kandev-plugin-hello-evil"},
		{name: "look-alike shorter repository", san: helloSAN, id: signature.Identity{Repository: "acme/kandev-plugin-hell"},
			wantRule: signature.RuleRepository, wantExp: "acme/kandev-plugin-hell", wantFnd: helloRepo},
		{name: "repository case differs", san: helloSAN, id: signature.Identity{Repository: "acme/Kandev-Plugin-Hello"},
			wantRule: signature.RuleRepository, wantExp: "acme/Kandev-Plugin-Hello", wantFnd: helloRepo},
		{name: "dot is not a wildcard", san: "https://github.com/acme/kandev-plugin-helloXyml/.github/workflows/release.yml@refs/tags/v1.2.0",
			id: signature.Identity{Repository: "acme/kandev-plugin-hello.yml"}, wantRule: signature.RuleRepository,
			wantExp: "acme/kandev-plugin-hello.yml", wantFnd: "acme/kandev-plugin-helloXyml"},
		{name: "wrong workflow", san: "https://github.com/acme/kandev-plugin-hello/.github/workflows/ci.yml@refs/tags/v1.2.0", id: good,
			wantRule: signature.RuleWorkflow, wantExp: ".github/workflows/release.yml", wantFnd: ".github/workflows/ci.yml"},
		{name: "wrong ref", san: "https://github.com/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/heads/main", id: good,
			wantRule: signature.RuleRef, wantExp: "refs/tags/v*", wantFnd: "refs/heads/main"},
		{name: "wrong issuer", san: helloSAN, issuer: "https://accounts.google.com", id: good,
			wantRule: signature.RuleIssuer, wantExp: signature.GitHubActionsIssuer, wantFnd: "https://accounts.google.com"},
		{name: "one byte of the file changed", san: helloSAN, id: good, file: changedByte(artifact), wantRule: signature.RuleArtifact},
		{name: "untrusted root", san: helloSAN, id: good, other: true, wantRule: signature.RuleRootUntrusted},
		{name: "SCT required", san: helloSAN, id: good, th: &signature.Thresholds{TransparencyLog: 1, Timestamps: 1, SCTs: 1},
			wantRule: signature.RuleBundleInvalid},
		{name: "two log entries required", san: helloSAN, id: good, th: &signature.Thresholds{TransparencyLog: 2, Timestamps: 1},
			wantRule: signature.RuleBundleInvalid},
	}
	for _, sh := range shapes {
		for _, tt := range tests {
			t.Run(sh.name+"/"+tt.name, func(t *testing.T) {
				vs := mustSigstore(t)
				issuer := tt.issuer
				if issuer == "" {
					issuer = signature.GitHubActionsIssuer
				}
				entity := sh.sign(t, vs, tt.san, issuer, artifact)
				trusted, file, th := vs, artifact, virtualThresholds
				if tt.other {
					trusted = mustSigstore(t)
				}
				if tt.file != nil {
					file = tt.file
				}
				if tt.th != nil {
					th = *tt.th
				}
				_, err := signature.NewVerifier(trusted, th).VerifyEntity(entity, bytes.NewReader(file), tt.id)
				e, ok := signature.AsError(err)
				if !ok {
					t.Fatalf("err = %v, want a *signature.Error", err)
				}
				if e.Rule != tt.wantRule {
					t.Fatalf("rule = %s, want %s: %v", e.Rule, tt.wantRule, e)
				}
				if tt.wantExp != "" && (e.Expected != tt.wantExp || e.Found != tt.wantFnd) {
					t.Errorf("expected/found = %q/%q, want %q/%q", e.Expected, e.Found, tt.wantExp, tt.wantFnd)
				}
			})
		}
	}
}

func changedByte(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)/2] ^= 0x20
	return c
}

func TestVirtualBundleJSON(t *testing.T) {
	id := signature.Identity{Repository: helloRepo, Ref: "refs/tags/v1.2.0"}
	for _, sh := range shapes {
		for _, version := range []string{"0.2", "0.3"} {
			t.Run(sh.name+"/v"+version, func(t *testing.T) {
				vs := mustSigstore(t)
				b := bundleJSON(t, vs, sh.sign(t, vs, helloSAN, signature.GitHubActionsIssuer, artifact), version)
				v := signature.NewVerifier(vs, virtualThresholds)
				got, err := v.VerifyBundle(b, bytes.NewReader(artifact), id)
				if err != nil {
					t.Fatalf("VerifyBundle: %v", err)
				}
				if got.SAN != helloSAN || got.BundleType != sh.shape {
					t.Errorf("got SAN %q type %q", got.SAN, got.BundleType)
				}
				altered := alterJSON(t, b, func(m map[string]any) {
					if env, ok := m["dsseEnvelope"].(map[string]any); ok {
						sig := env["signatures"].([]any)[0].(map[string]any)
						sig["sig"] = flipBase64(t, sig["sig"].(string))
						return
					}
					msg := m["messageSignature"].(map[string]any)
					msg["signature"] = flipBase64(t, msg["signature"].(string))
				})
				_, err = v.VerifyBundle(altered, bytes.NewReader(artifact), id)
				if e, ok := signature.AsError(err); !ok || e.Rule != signature.RuleBundleInvalid {
					t.Errorf("altered bundle: err = %v, want %s", err, signature.RuleBundleInvalid)
				}
			})
		}
	}
}

func TestTrustedRootFile(t *testing.T) {
	vs := mustSigstore(t)
	path := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(path, signaturetest.TrustedRootJSON(t, vs), 0o600); err != nil {
		t.Fatal(err)
	}
	tm, err := signature.LoadTrustedRoot(path)
	if err != nil {
		t.Fatal(err)
	}
	b := bundleJSON(t, vs, signMessage(t, vs, helloSAN, signature.GitHubActionsIssuer, artifact), "0.3")
	if _, err := signature.NewVerifier(tm, virtualThresholds).VerifyBundle(b, bytes.NewReader(artifact), signature.Identity{Repository: helloRepo}); err != nil {
		t.Fatalf("VerifyBundle with the root read from a file: %v", err)
	}
	if _, err := signature.LoadTrustedRoot(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Errorf("LoadTrustedRoot of a missing file succeeded")
	}
}

func TestThresholdsNeedATimestamp(t *testing.T) {
	vs := mustSigstore(t)
	entity := signMessage(t, vs, helloSAN, signature.GitHubActionsIssuer, artifact)
	_, err := signature.NewVerifier(vs, signature.Thresholds{}).VerifyEntity(entity, bytes.NewReader(artifact), signature.Identity{Repository: helloRepo})
	if err == nil {
		t.Fatal("verified with no timestamp required")
	}
	if _, ok := signature.AsError(err); ok {
		t.Errorf("err = %v: a configuration error, not a refusal, was expected", err)
	}
}
