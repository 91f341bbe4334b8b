package examples

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/pluginyard/registry/verify/signature"
)

// The demo's Sigstore release. testdata/demo-sigstore holds a bundle and the trusted_root.json
// that verifies it, both made once by sigstore-go's virtual Sigstore (a TEST authority: a
// certificate authority, transparency log and timestamp authority whose private keys were
// thrown away after signing, so nothing else can ever be signed by them). No real Sigstore
// instance, GitHub repository or workflow run stands behind the identity: it shows what a
// verified signer looks like, and a registry must never be given this root outside the demo.
//
// Sigstore checks certificates at the time the transparency log and the timestamp authority
// recorded, never at the current time, so the short-lived certificates in the bundle (ten
// minutes, as Fulcio issues them) keep verifying for as long as the bundle and the root are
// kept together: nothing here depends on today's date.
//
// The bundle signs the exact bytes of Pack(SigstoreExample). Change that example and
// regenerate both files with `go test ./examples -run TestDemoSigstoreBundle -update`.
const SigstoreExample = "slack-relay"

// SigstoreIdentity is the signer the demo bundle's certificate names: the workflow and tag a
// real release of slack-relay would be signed from. The demo's plugins.yaml expects it.
var SigstoreIdentity = signature.Identity{
	Repository: "pluginyard/slack-relay",
	Workflow:   ".github/workflows/release.yml",
	Ref:        "refs/tags/v1.2.0",
	Issuer:     signature.GitHubActionsIssuer,
}

// SigstoreThresholds are the proofs the demo bundle carries: one transparency log entry and
// one timestamp. The virtual Sigstore issues no signed certificate timestamps.
var SigstoreThresholds = signature.Thresholds{TransparencyLog: 1, Timestamps: 1}

// Paths of the committed demo material, relative to this package.
const (
	SigstoreBundlePath      = "testdata/demo-sigstore/slack-relay.sigstore.json"
	SigstoreTrustedRootPath = "testdata/demo-sigstore/trusted_root.json"
)

var (
	//go:embed testdata/demo-sigstore/slack-relay.sigstore.json
	sigstoreBundle []byte
	//go:embed testdata/demo-sigstore/trusted_root.json
	sigstoreRoot []byte
)

// SigstoreBundle returns the demo bundle over the package of SigstoreExample.
func SigstoreBundle() []byte { return bytes.Clone(sigstoreBundle) }

// SigstoreTrustedRootJSON returns the demo's test trusted_root.json.
func SigstoreTrustedRootJSON() []byte { return bytes.Clone(sigstoreRoot) }

// SigstoreVerifier returns a verifier that trusts only the demo's test trusted root.
func SigstoreVerifier() (*signature.Verifier, error) {
	tr, err := root.NewTrustedRootFromJSON(sigstoreRoot)
	if err != nil {
		return nil, fmt.Errorf("examples: demo trusted root %s: %w", SigstoreTrustedRootPath, err)
	}
	return signature.NewVerifier(tr, SigstoreThresholds), nil
}

// SigstoreRelease is the package of SigstoreExample with the demo bundle over it.
type SigstoreRelease struct {
	Package []byte
	Bundle  []byte // nil when Stale is set
	// Stale says why the bundle does not sign Package (the example changed, or a Go release
	// changed compress/flate's output, so the bytes differ) and how to regenerate it.
	Stale error
}

// SigstorePackage packs SigstoreExample and checks the demo bundle against it and the demo
// trusted root. A bundle that no longer signs the package is reported in Stale, not as an
// error: the example is still worth publishing, unsigned.
func SigstorePackage() (*SigstoreRelease, error) {
	var buf bytes.Buffer
	if err := Pack(SigstoreExample, &buf); err != nil {
		return nil, err
	}
	return sigstoreRelease(buf.Bytes())
}

// sigstoreRelease pairs pkg with the demo bundle when the bundle signs it.
func sigstoreRelease(pkg []byte) (*SigstoreRelease, error) {
	v, err := SigstoreVerifier()
	if err != nil {
		return nil, err
	}
	rel := &SigstoreRelease{Package: pkg}
	if _, err := v.VerifyBundle(sigstoreBundle, bytes.NewReader(rel.Package), SigstoreIdentity); err != nil {
		rel.Stale = fmt.Errorf("the committed demo bundle %s does not sign this build of %s: %w; "+
			"regenerate it with `go test ./examples -run TestDemoSigstoreBundle -update`", SigstoreBundlePath, SigstoreExample, err)
		return rel, nil
	}
	rel.Bundle = SigstoreBundle()
	return rel, nil
}
