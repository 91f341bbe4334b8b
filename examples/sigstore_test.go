package examples_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/verify/signature"
	"github.com/pluginyard/registry/verify/signature/signaturetest"
)

var update = flag.Bool("update", false, "regenerate the demo's Sigstore bundle and test trusted root")

// TestDemoSigstoreBundle checks that the committed bundle signs the example's package as
// packed today, with the identity the demo expects, against the committed test root. With
// -update it makes both again from a fresh virtual Sigstore (a test authority whose keys
// are discarded when the test ends).
func TestDemoSigstoreBundle(t *testing.T) {
	pkg := mustPack(t, examples.SigstoreExample)
	if *update {
		regenerate(t, pkg)
	}
	v, err := examples.SigstoreVerifier()
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.VerifyBundle(examples.SigstoreBundle(), bytes.NewReader(pkg), examples.SigstoreIdentity)
	if err != nil {
		t.Fatalf("the committed bundle does not verify (run `go test ./examples -run TestDemoSigstoreBundle -update` after changing examples/%s): %v",
			examples.SigstoreExample, err)
	}
	want := &signature.Result{
		Type: signature.TypeSigstore, SAN: demoSAN, Issuer: signature.GitHubActionsIssuer,
		Repository: "pluginyard/slack-relay", Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1.2.0",
		BundleType: signature.BundleDSSE,
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(signature.Result{}, "LogIndex", "IntegratedTime")); diff != "" {
		t.Errorf("verified identity (-want +got):\n%s", diff)
	}
	rel, err := examples.SigstorePackage()
	if err != nil || rel.Stale != nil || !bytes.Equal(rel.Package, pkg) || !bytes.Equal(rel.Bundle, examples.SigstoreBundle()) {
		t.Errorf("SigstorePackage() = stale %v, err %v; want the packed example with the committed bundle", rel.Stale, err)
	}
}

const demoSAN = "https://github.com/pluginyard/slack-relay/.github/workflows/release.yml@refs/tags/v1.2.0"

func regenerate(t *testing.T, pkg []byte) {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pkg)
	st := signaturetest.Statement(t, "slack-relay-1.2.0.tar.gz", map[string]string{"sha256": hex.EncodeToString(sum[:])})
	e, err := vs.Attest(demoSAN, signature.GitHubActionsIssuer, st)
	if err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{
		examples.SigstoreBundlePath:      signaturetest.BundleJSON(t, vs, e, "0.3"),
		examples.SigstoreTrustedRootPath: signaturetest.TrustedRootJSON(t, vs),
	} {
		var pretty bytes.Buffer // protojson varies its spacing; indent for a readable, stable diff
		if err := json.Indent(&pretty, data, "", "  "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(pretty.Bytes(), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("regenerated the demo bundle and trusted root; run the tests again without -update (the embedded copies are rebuilt then)")
}

// TestDemoSigstoreRefusesOtherBytes: the committed bundle binds the package, not the name.
func TestDemoSigstoreRefusesOtherBytes(t *testing.T) {
	v, err := examples.SigstoreVerifier()
	if err != nil {
		t.Fatal(err)
	}
	other := mustPack(t, "pr-insights")
	_, err = v.VerifyBundle(examples.SigstoreBundle(), bytes.NewReader(other), examples.SigstoreIdentity)
	if e, ok := signature.AsError(err); !ok || e.Rule != signature.RuleArtifact {
		t.Errorf("bundle over another package: err = %v, want %s", err, signature.RuleArtifact)
	}
	id := examples.SigstoreIdentity
	id.Ref = "refs/tags/v9.9.9"
	_, err = v.VerifyBundle(examples.SigstoreBundle(), bytes.NewReader(mustPack(t, examples.SigstoreExample)), id)
	if e, ok := signature.AsError(err); !ok || e.Rule != signature.RuleRef {
		t.Errorf("bundle with another expected ref: err = %v, want %s", err, signature.RuleRef)
	}
}

// TestDemoSigstoreOutlivesItsCertificate: the bundle's certificate lives ten minutes, as
// Fulcio's do, and the bundle keeps verifying after it expired, because Sigstore checks it
// at the logged signing time. (Skipped only in the minutes right after -update, while the
// fresh certificate has not expired yet.)
func TestDemoSigstoreOutlivesItsCertificate(t *testing.T) {
	var b struct {
		VerificationMaterial struct{ Certificate struct{ RawBytes []byte } }
	}
	if err := json.Unmarshal(examples.SigstoreBundle(), &b); err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(b.VerificationMaterial.Certificate.RawBytes)
	if err != nil {
		t.Fatal(err)
	}
	if d := leaf.NotAfter.Sub(leaf.NotBefore); d > time.Hour {
		t.Errorf("the demo certificate is valid for %s; a short-lived one shows that verification does not depend on today's date", d)
	}
	if time.Now().Before(leaf.NotAfter) {
		t.Skipf("the certificate was made less than ten minutes ago (valid until %s)", leaf.NotAfter)
	}
	v, err := examples.SigstoreVerifier()
	if err != nil {
		t.Fatal(err)
	}
	pkg := mustPack(t, examples.SigstoreExample)
	if _, err := v.VerifyBundle(examples.SigstoreBundle(), bytes.NewReader(pkg), examples.SigstoreIdentity); err != nil {
		t.Errorf("the bundle stopped verifying once its certificate expired (%s): %v", leaf.NotAfter, err)
	}
}
