package signature

import (
	"errors"
	"fmt"
	"io"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// MaxBundleSize bounds the bundle JSON accepted by VerifyBundle; real bundles are a few KiB.
const MaxBundleSize = 4 << 20

// Verifier checks Sigstore bundles offline against one trusted root.
type Verifier struct {
	trusted root.TrustedMaterial
	th      Thresholds
}

// NewVerifier returns a Verifier for trustedRoot (a trusted_root.json, or a virtual Sigstore
// in tests) requiring th proofs from each bundle. Negative thresholds count as zero.
func NewVerifier(trustedRoot root.TrustedMaterial, th Thresholds) *Verifier {
	th.TransparencyLog = max(th.TransparencyLog, 0)
	th.Timestamps = max(th.Timestamps, 0)
	th.SCTs = max(th.SCTs, 0)
	return &Verifier{trusted: trustedRoot, th: th}
}

// LoadTrustedRoot reads a Sigstore trusted_root.json without touching the network.
func LoadTrustedRoot(path string) (root.TrustedMaterial, error) {
	tr, err := root.NewTrustedRootFromPath(path)
	if err != nil {
		return nil, fmt.Errorf("signature: load trusted root %s: %w", path, err)
	}
	return tr, nil
}

// ParseBundle decodes a protobuf-JSON Sigstore bundle (media types v0.1 to v0.3). A bundle
// that cannot be decoded is refused with RuleBundleInvalid.
func ParseBundle(bundleJSON []byte) (*bundle.Bundle, error) {
	if len(bundleJSON) > MaxBundleSize {
		return nil, refuse(RuleBundleInvalid, "", "",
			"the bundle is %d bytes, more than the %d allowed", len(bundleJSON), MaxBundleSize)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		e := refuse(RuleBundleInvalid, "", "", "the bundle is not a valid Sigstore bundle: %v", err)
		e.Cause = err
		return nil, e
	}
	return &b, nil
}

// VerifyBundle verifies bundleJSON as a signature over the artifact, by the signer id
// expects. The artifact is read from its start to compute its digests. A refusal is an
// *Error; any other error is configuration or I/O.
func (v *Verifier) VerifyBundle(bundleJSON []byte, artifact io.ReadSeeker, id Identity) (*Result, error) {
	b, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	return v.VerifyEntity(b, artifact, id)
}

// VerifyBundleDigest is VerifyBundle for an artifact known only by its digest
// (algorithm "sha256", "sha384" or "sha512").
func (v *Verifier) VerifyBundleDigest(bundleJSON []byte, algorithm string, digest []byte, id Identity) (*Result, error) {
	b, err := ParseBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	return v.VerifyEntityDigests(b, Digests{algorithm: digest}, id)
}

// VerifyEntity is VerifyBundle for any signed entity (a parsed bundle, or a test entity).
func (v *Verifier) VerifyEntity(entity verify.SignedEntity, artifact io.ReadSeeker, id Identity) (*Result, error) {
	d, err := DigestArtifact(artifact)
	if err != nil {
		return nil, err
	}
	return v.VerifyEntityDigests(entity, d, id)
}

// VerifyEntityDigests verifies entity against an artifact known by its digests: the
// artifact binding first, then sigstore-go's checks against the trusted root (signature,
// certificate chain at the logged time, transparency log, timestamps, SCTs), then the
// signer identity against id.
func (v *Verifier) VerifyEntityDigests(entity verify.SignedEntity, digests Digests, id Identity) (*Result, error) {
	m, err := NewMatcher(id)
	if err != nil {
		return nil, err
	}
	bound, err := bindArtifact(entity, digests)
	if err != nil {
		return nil, err
	}
	sv, err := v.sigstoreVerifier()
	if err != nil {
		return nil, err
	}
	policy := verify.NewPolicy(verify.WithArtifactDigest(bound.algorithm, bound.digest), verify.WithoutIdentitiesUnsafe())
	res, err := sv.Verify(entity, policy)
	if err != nil {
		return nil, classify(entity, v.trusted, err)
	}
	if res.Signature == nil || res.Signature.Certificate == nil {
		return nil, refuse(RuleBundleInvalid, "a Fulcio certificate", "a public key",
			"the bundle is signed with a key, not a certificate that names the signer")
	}
	if e := m.Check(*res.Signature.Certificate); e != nil {
		return nil, e
	}
	r := ResultFromSummary(*res.Signature.Certificate)
	r.BundleType = bound.shape
	v.addLogEntry(entity, r)
	return r, nil
}

func (v *Verifier) sigstoreVerifier() (*verify.Verifier, error) {
	var opts []verify.VerifierOption
	if v.th.TransparencyLog > 0 {
		opts = append(opts, verify.WithTransparencyLog(v.th.TransparencyLog))
	}
	if v.th.Timestamps > 0 {
		opts = append(opts, verify.WithObserverTimestamps(v.th.Timestamps))
	}
	if v.th.SCTs > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(v.th.SCTs))
	}
	sv, err := verify.NewVerifier(v.trusted, opts...)
	if err != nil {
		return nil, fmt.Errorf("signature: thresholds %+v: %w", v.th, err)
	}
	return sv, nil
}

// addLogEntry reports the first transparency log entry from a log the root trusts.
func (v *Verifier) addLogEntry(entity verify.SignedEntity, r *Result) {
	entries, err := entity.TlogEntries()
	if err != nil {
		return
	}
	logs := v.trusted.RekorLogs()
	for _, e := range entries {
		if _, ok := logs[hexKeyID(e.LogKeyID())]; ok {
			r.LogIndex = e.LogIndex()
			r.IntegratedTime = e.IntegratedTime().UTC()
			return
		}
	}
}

// classify turns a sigstore-go verification failure into a refusal: RuleRootUntrusted when
// neither the bundle's transparency log nor its certificate's issuer is in the trusted root,
// RuleBundleInvalid otherwise.
func classify(entity verify.SignedEntity, tm root.TrustedMaterial, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if found, ok := untrustedBy(entity, tm); ok {
		e = refuse(RuleRootUntrusted, "a transparency log and certificate authority of the trusted root", found,
			"the bundle comes from a Sigstore instance the trusted root does not list; "+
				"use that instance's trusted_root.json, or a newer one if its keys rotated (%v)", err)
	} else {
		e = refuse(RuleBundleInvalid, "", "", "the bundle does not verify: %v", err)
	}
	e.Cause = err
	return e
}
