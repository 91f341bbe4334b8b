package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/verify/signature"
	"github.com/pluginyard/registry/verify/signature/signaturetest"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
)

// A real GitHub Actions bundle: the npm provenance of sigstore@2.0.0, from sigstore-go's test
// data, with the public-good trusted root of its time. Its subject is the tarball's sha512.
var (
	csData         = filepath.Join("..", "..", "testdata", "signature")
	csRealBundle   = filepath.Join(csData, "sigstore-js-2.0.0-provenance.sigstore.json")
	csRealRoot     = filepath.Join(csData, "trusted-root-public-good.json")
	csOtherRoot    = filepath.Join(csData, "trusted-root-scaffolding.json")
	csTarballSHA   = "sha512:46d4e2f74c4877316640000a6fdf8a8b59f1e0847667973e9859f774dd31b8f1e0937813b777fb66a2ac67d50540fe34640966eee9fc2ccca387082b4c85cd3c"
	csRealSAN      = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
	csHelloSAN     = "https://github.com/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/tags/v1.2.0"
	csHelloPackage = []byte("acme-hello-1.2.0.tar.gz bytes\n")
)

func runCheckSignatureCmd(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &cli{stdout: &out, stderr: &errOut, getenv: func(k string) string { return env[k] }}
	code = cmdCheckSignature(context.Background(), c, args)
	return code, out.String(), errOut.String()
}

func TestCheckSignatureRealBundle(t *testing.T) {
	code, out, errOut := runCheckSignatureCmd(t, nil, "--digest", csTarballSHA, "--bundle", csRealBundle,
		"--trusted-root", csRealRoot, "--repo", "sigstore/sigstore-js", "--workflow", "release.yml", "--ref", "refs/heads/main")
	want := "verified: " + csTarballSHA + "\n" +
		"  signer:      " + csRealSAN + "\n" +
		"  issuer:      https://token.actions.githubusercontent.com\n" +
		"  repository:  sigstore/sigstore-js (repository id 495574555, owner id 71096353)\n" +
		"  workflow:    .github/workflows/release.yml\n" +
		"  ref:         refs/heads/main\n" +
		"  commit:      f0b49a04e5a62250e0f60fb128004a73110fe311\n" +
		"  run:         https://github.com/sigstore/sigstore-js/actions/runs/5904696764/attempts/1\n" +
		"  bundle:      dsse\n" +
		"  log entry:   31821305, integrated 2023-08-18T16:05:35Z\n"
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestCheckSignatureRealBundleJSON(t *testing.T) {
	env := map[string]string{"REGISTRY_SIGSTORE_TRUSTED_ROOT": csRealRoot}
	code, out, _ := runCheckSignatureCmd(t, env, "--json", "--digest", csTarballSHA, "--bundle", csRealBundle, "--repo", "sigstore/sigstore-js")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out)
	}
	var got checkSignatureOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Verified || got.Signer == nil || got.Signer.SAN != csRealSAN || got.Signer.RepositoryID != "495574555" {
		t.Errorf("got %+v", got)
	}
}

func TestCheckSignatureRealBundleRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"look-alike repository", []string{"--digest", csTarballSHA, "--trusted-root", csRealRoot, "--repo", "sigstore/sigstore-js-evil"},
			"refused: " + csTarballSHA + "\n" +
				"  rule:        signature.identity.repository\n" +
				"  reason:      the signing workflow ran in another repository (certificate SAN " + csRealSAN +
				`, want ^https://github\.com/sigstore/sigstore-js-evil/[^@]+@[^@]+$)` + "\n" +
				"  expected:    sigstore/sigstore-js-evil\n" +
				"  found:       sigstore/sigstore-js\n"},
		{"wrong ref", []string{"--digest", csTarballSHA, "--trusted-root", csRealRoot, "--repo", "sigstore/sigstore-js", "--ref", "refs/tags/v*"},
			"rule:        signature.identity.ref\n"},
		{"untrusted root", []string{"--digest", csTarballSHA, "--trusted-root", csOtherRoot, "--repo", "sigstore/sigstore-js"},
			"rule:        signature.root.untrusted\n"},
		{"another file", []string{filepath.Join(csData, "trusted-root-scaffolding.json"), "--trusted-root", csRealRoot, "--repo", "sigstore/sigstore-js"},
			"  expected:    pkg:npm/sigstore@2.0.0 " + csTarballSHA + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCheckSignatureCmd(t, nil, append(tt.args, "--bundle", csRealBundle)...)
			if code != exitInvalid || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("stdout %q does not contain %q", out, tt.want)
			}
		})
	}
}

// checkSigFixture writes a virtual Sigstore's trusted root, a v0.3 message-signature bundle
// of csHelloPackage and the package itself into a temporary directory.
func checkSigFixture(t *testing.T) (root, bundle, file string) {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	entity, err := vs.Sign(csHelloSAN, signature.GitHubActionsIssuer, csHelloPackage)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	root, bundle, file = filepath.Join(dir, "root.json"), filepath.Join(dir, "hello.sigstore.json"), filepath.Join(dir, "hello.tar.gz")
	for path, data := range map[string][]byte{
		root:   signaturetest.TrustedRootJSON(t, vs),
		bundle: signaturetest.BundleJSON(t, vs, entity, "0.3"),
		file:   csHelloPackage,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root, bundle, file
}

func TestCheckSignatureFile(t *testing.T) {
	root, bundle, file := checkSigFixture(t)
	changed := filepath.Join(t.TempDir(), "hello.tar.gz")
	if err := os.WriteFile(changed, append([]byte("A"), csHelloPackage[1:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	// The virtual Sigstore issues no SCTs.
	base := []string{"--bundle", bundle, "--trusted-root", root, "--sct-threshold", "0"}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantRule string
	}{
		{"verified", []string{file, "--repo", "acme/kandev-plugin-hello", "--ref", "refs/tags/v*"}, exitOK, ""},
		{"one byte changed", []string{changed, "--repo", "acme/kandev-plugin-hello"}, exitInvalid, signature.RuleArtifact},
		{"look-alike repository", []string{file, "--repo", "acme/kandev-plugin-hell"}, exitInvalid, signature.RuleRepository},
		{"wrong workflow", []string{file, "--repo", "acme/kandev-plugin-hello", "--workflow", "ci.yml"}, exitInvalid, signature.RuleWorkflow},
		{"wrong issuer", []string{file, "--repo", "acme/kandev-plugin-hello", "--issuer", "https://gitlab.com"}, exitInvalid, signature.RuleIssuer},
		{"SCT required by default", []string{file, "--repo", "acme/kandev-plugin-hello", "--sct-threshold", "1"}, exitInvalid, signature.RuleBundleInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCheckSignatureCmd(t, nil, append(append([]string{"--json"}, base...), tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, tt.wantCode, out, errOut)
			}
			var got checkSignatureOutput
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var rule string
			if got.Refusal != nil {
				rule = got.Refusal.Rule
			}
			if rule != tt.wantRule || got.Verified != (tt.wantRule == "") {
				t.Errorf("verified %v rule %q, want rule %q", got.Verified, rule, tt.wantRule)
			}
		})
	}
}

func TestCheckSignatureUsage(t *testing.T) {
	root, bundle, file := checkSigFixture(t)
	tests := []struct {
		name string
		args []string
	}{
		{"nothing", nil},
		{"no repo", []string{file, "--bundle", bundle, "--trusted-root", root}},
		{"no bundle", []string{file, "--trusted-root", root, "--repo", "acme/x"}},
		{"no trusted root", []string{file, "--bundle", bundle, "--repo", "acme/x"}},
		{"two files", []string{file, file, "--bundle", bundle, "--trusted-root", root, "--repo", "acme/x"}},
		{"file and digest", []string{file, "--digest", csTarballSHA, "--bundle", bundle, "--trusted-root", root, "--repo", "acme/x"}},
		{"bad digest", []string{"--digest", "md5:abcd", "--bundle", bundle, "--trusted-root", root, "--repo", "acme/x"}},
		{"short digest", []string{"--digest", "sha256:abcd", "--bundle", bundle, "--trusted-root", root, "--repo", "acme/x"}},
		{"bad repo", []string{file, "--bundle", bundle, "--trusted-root", root, "--repo", "acme"}},
		{"unknown flag", []string{file, "--bundel", bundle}},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope"), "--bundle", bundle, "--trusted-root", root, "--repo", "acme/x"}},
		{"missing bundle", []string{file, "--bundle", filepath.Join(t.TempDir(), "nope"), "--trusted-root", root, "--repo", "acme/x"}},
		{"bad trusted root", []string{file, "--bundle", bundle, "--trusted-root", bundle, "--repo", "acme/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCheckSignatureCmd(t, nil, tt.args...)
			if code != exitUsage || out != "" || errOut == "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with a message on stderr", code, out, errOut)
			}
		})
	}
}
