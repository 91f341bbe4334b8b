// Package signaturetest builds Sigstore test material from sigstore-go's virtual Sigstore
// (pkg/testing/ca): protobuf-JSON bundles, trusted_root.json files and in-toto statements.
// It is for tests only.
package signaturetest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Statement returns an in-toto v1 statement naming one subject by the given digests.
func Statement(tb testing.TB, name string, digests map[string]string) []byte {
	tb.Helper()
	b, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": name, "digest": digests}},
		"predicateType": "https://slsa.dev/provenance/v1",
		"predicate":     map[string]any{"buildDefinition": map[string]any{"buildType": "https://actions.github.io/buildtypes/workflow/v1"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BundleJSON serializes a virtual Sigstore test entity as a protobuf-JSON bundle of the
// given version ("0.2" with a certificate chain, "0.3" with a single certificate). The
// virtual log's inclusion promise is not exported, so each entry gets an inclusion proof
// from the virtual log instead, as bundles v0.2 and later require.
func BundleJSON(tb testing.TB, vs *ca.VirtualSigstore, e verify.SignedEntity, version string) []byte {
	tb.Helper()
	vc, err := e.VerificationContent()
	if err != nil {
		tb.Fatal(err)
	}
	vm := &protobundle.VerificationMaterial{TimestampVerificationData: &protobundle.TimestampVerificationData{}}
	leaf := &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}
	if version == "0.3" {
		vm.Content = &protobundle.VerificationMaterial_Certificate{Certificate: leaf}
	} else {
		vm.Content = &protobundle.VerificationMaterial_X509CertificateChain{
			X509CertificateChain: &protocommon.X509CertificateChain{Certificates: []*protocommon.X509Certificate{leaf}}}
	}
	tss, err := e.Timestamps()
	if err != nil {
		tb.Fatal(err)
	}
	for _, ts := range tss {
		vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps,
			&protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	vm.TlogEntries = tlogEntries(tb, vs, e)
	pb := &protobundle.Bundle{MediaType: "application/vnd.dev.sigstore.bundle.v" + version + "+json", VerificationMaterial: vm}
	if version == "0.2" {
		pb.MediaType = "application/vnd.dev.sigstore.bundle+json;version=0.2"
	}
	setContent(tb, pb, e)
	out, err := protojson.Marshal(pb)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func tlogEntries(tb testing.TB, vs *ca.VirtualSigstore, e verify.SignedEntity) []*protorekor.TransparencyLogEntry {
	tb.Helper()
	entries, err := e.TlogEntries()
	if err != nil {
		tb.Fatal(err)
	}
	var out []*protorekor.TransparencyLogEntry
	for _, entry := range entries {
		tle := proto.Clone(entry.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		var body struct{ Kind, APIVersion string }
		if err := json.Unmarshal(tle.CanonicalizedBody, &body); err != nil {
			tb.Fatal(err)
		}
		tle.KindVersion = &protorekor.KindVersion{Kind: body.Kind, Version: body.APIVersion}
		p, err := vs.GetInclusionProof(tle.CanonicalizedBody)
		if err != nil {
			tb.Fatal(err)
		}
		tle.InclusionProof = &protorekor.InclusionProof{
			LogIndex: *p.LogIndex, RootHash: mustHex(tb, *p.RootHash), TreeSize: *p.TreeSize,
			Checkpoint: &protorekor.Checkpoint{Envelope: *p.Checkpoint},
		}
		for _, h := range p.Hashes {
			tle.InclusionProof.Hashes = append(tle.InclusionProof.Hashes, mustHex(tb, h))
		}
		out = append(out, tle)
	}
	return out
}

func setContent(tb testing.TB, pb *protobundle.Bundle, e verify.SignedEntity) {
	tb.Helper()
	sc, err := e.SignatureContent()
	if err != nil {
		tb.Fatal(err)
	}
	if env := sc.EnvelopeContent(); env != nil {
		raw := env.RawEnvelope()
		payload, err := base64.StdEncoding.DecodeString(raw.Payload)
		if err != nil {
			tb.Fatal(err)
		}
		d := &protodsse.Envelope{Payload: payload, PayloadType: raw.PayloadType}
		for _, s := range raw.Signatures {
			sig, err := base64.StdEncoding.DecodeString(s.Sig)
			if err != nil {
				tb.Fatal(err)
			}
			d.Signatures = append(d.Signatures, &protodsse.Signature{Sig: sig, Keyid: s.KeyID})
		}
		pb.Content = &protobundle.Bundle_DsseEnvelope{DsseEnvelope: d}
		return
	}
	msg := sc.MessageSignatureContent()
	alg := protocommon.HashAlgorithm(protocommon.HashAlgorithm_value[msg.DigestAlgorithm()])
	pb.Content = &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
		MessageDigest: &protocommon.HashOutput{Algorithm: alg, Digest: msg.Digest()},
		Signature:     msg.Signature(),
	}}
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TrustedRootJSON serializes the virtual Sigstore's public material as a trusted_root.json,
// so that code reading a trusted root from a file can be tested against it.
func TrustedRootJSON(tb testing.TB, vs *ca.VirtualSigstore) []byte {
	tb.Helper()
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), rawLogIDs(tb, vs.CTLogs()),
		vs.TimestampingAuthorities(), rawLogIDs(tb, vs.RekorLogs()))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// rawLogIDs copies logs with their ID as the raw key id: the virtual Sigstore sets ID to
// the hex string, which a serialized root would hex-encode a second time.
func rawLogIDs(tb testing.TB, logs map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
	tb.Helper()
	out := make(map[string]*root.TransparencyLog, len(logs))
	for id, l := range logs {
		c := *l
		c.ID = mustHex(tb, id)
		out[id] = &c
	}
	return out
}
