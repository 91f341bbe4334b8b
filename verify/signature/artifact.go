package signature

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// Digests are an artifact's digests by lowercase algorithm name ("sha256", "sha384",
// "sha512").
type Digests map[string][]byte

// DigestArtifact reads r from its start once and returns its sha256, sha384 and sha512
// digests: enough for a message signature over any of them and for any in-toto subject.
func DigestArtifact(r io.ReadSeeker) (Digests, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("signature: rewind artifact: %w", err)
	}
	h256, h384, h512 := sha256.New(), sha512.New384(), sha512.New()
	if _, err := io.Copy(io.MultiWriter(h256, h384, h512), r); err != nil {
		return nil, fmt.Errorf("signature: read artifact: %w", err)
	}
	return Digests{"sha256": h256.Sum(nil), "sha384": h384.Sum(nil), "sha512": h512.Sum(nil)}, nil
}

// binding is the artifact digest a bundle is checked against, and the bundle's shape.
type binding struct {
	algorithm string
	digest    []byte
	shape     string
}

// bindArtifact checks that the entity signs this artifact: the message digest of a message
// signature, or one subject of a DSSE in-toto statement. The values read here are not yet
// authenticated; sigstore-go verifies them afterwards with the digest returned.
func bindArtifact(entity verify.SignedEntity, d Digests) (*binding, error) {
	sc, err := entity.SignatureContent()
	if err != nil {
		return nil, invalid(err)
	}
	if env := sc.EnvelopeContent(); env != nil {
		return bindStatement(env, d)
	}
	if msg := sc.MessageSignatureContent(); msg != nil {
		return bindMessage(msg, d)
	}
	return nil, refuse(RuleBundleInvalid, "", "", "the bundle has neither a message signature nor a DSSE envelope")
}

func bindMessage(msg verify.MessageSignatureContent, d Digests) (*binding, error) {
	alg := hashName(msg.DigestAlgorithm())
	want := alg + ":" + hex.EncodeToString(msg.Digest())
	got, ok := d[alg]
	if !ok {
		return nil, refuse(RuleArtifact, want, describe(d),
			"the bundle signs a %s digest, which is not known for this artifact", alg)
	}
	if string(got) != string(msg.Digest()) {
		return nil, refuse(RuleArtifact, want, alg+":"+hex.EncodeToString(got),
			"the bundle signs another file: the file's digest differs from the signed digest")
	}
	return &binding{algorithm: alg, digest: got, shape: BundleMessageSignature}, nil
}

// subjectPreference orders the digests tried against in-toto subjects, strongest first.
var subjectPreference = []string{"sha512", "sha384", "sha256"}

func bindStatement(env verify.EnvelopeContent, d Digests) (*binding, error) {
	st, err := env.Statement()
	if err != nil {
		return nil, invalid(err)
	}
	var subjects []string
	for _, alg := range subjectPreference {
		got, ok := d[alg]
		if !ok {
			continue
		}
		for _, s := range st.GetSubject() {
			for key, value := range s.GetDigest() {
				if strings.ToLower(key) != alg {
					continue
				}
				if strings.EqualFold(value, hex.EncodeToString(got)) {
					return &binding{algorithm: key, digest: got, shape: BundleDSSE}, nil
				}
			}
		}
	}
	for _, s := range st.GetSubject() {
		for key, value := range s.GetDigest() {
			subjects = append(subjects, strings.TrimSpace(s.GetName()+" "+strings.ToLower(key)+":"+value))
		}
	}
	slices.Sort(subjects)
	return nil, refuse(RuleArtifact, strings.Join(subjects, ", "), describe(d),
		"the attestation's subjects do not include this file")
}

// describe renders the strongest known digest of the artifact.
func describe(d Digests) string {
	for _, alg := range subjectPreference {
		if v, ok := d[alg]; ok {
			return alg + ":" + hex.EncodeToString(v)
		}
	}
	return "no digest"
}

func hashName(protoName string) string {
	switch protoName {
	case "SHA2_256":
		return "sha256"
	case "SHA2_384":
		return "sha384"
	case "SHA2_512":
		return "sha512"
	}
	return strings.ToLower(protoName)
}

func invalid(err error) *Error {
	e := refuse(RuleBundleInvalid, "", "", "the bundle's signed content cannot be read: %v", err)
	e.Cause = err
	return e
}

func hexKeyID(keyID string) string { return hex.EncodeToString([]byte(keyID)) }

// oidSAN is the X.509 subject alternative name extension, which Go leaves "unhandled" when
// it holds an otherName (as Fulcio issues for some identities).
var oidSAN = asn1.ObjectIdentifier{2, 5, 29, 17}

// untrustedBy reports whether the entity comes from another Sigstore instance than tm: none
// of its transparency log entries is from a log of tm, or no certificate authority of tm
// issued its certificate. found names the foreign material.
func untrustedBy(entity verify.SignedEntity, tm root.TrustedMaterial) (found string, untrusted bool) {
	if entries, err := entity.TlogEntries(); err == nil && len(entries) > 0 {
		logs := tm.RekorLogs()
		known := slices.ContainsFunc(entries, func(e *tlog.Entry) bool {
			_, ok := logs[hexKeyID(e.LogKeyID())]
			return ok
		})
		if !known {
			return "transparency log " + hexKeyID(entries[0].LogKeyID()), true
		}
	}
	vc, err := entity.VerificationContent()
	if err != nil || vc.Certificate() == nil {
		return "", false
	}
	leaf := *vc.Certificate()
	leaf.UnhandledCriticalExtensions = slices.DeleteFunc(slices.Clone(leaf.UnhandledCriticalExtensions),
		func(o asn1.ObjectIdentifier) bool { return o.Equal(oidSAN) })
	if issuedBy(&leaf, tm) {
		return "", false
	}
	return "certificate issuer " + leaf.Issuer.String(), true
}

// issuedBy reports whether a certificate authority of tm issued leaf, checked in the middle
// of the leaf's validity (Fulcio certificates live minutes; the log time is checked by
// sigstore-go itself).
func issuedBy(leaf *x509.Certificate, tm root.TrustedMaterial) bool {
	at := leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)
	for _, ca := range tm.FulcioCertificateAuthorities() {
		if _, err := ca.Verify(leaf, at); err == nil {
			return true
		}
	}
	return false
}
