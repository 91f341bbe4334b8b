package signature_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"testing"

	"github.com/pluginyard/registry/verify/signature/signaturetest"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

func mustSigstore(tb testing.TB) *ca.VirtualSigstore {
	tb.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		tb.Fatal(err)
	}
	return vs
}

func statement(tb testing.TB, name string, digests map[string]string) []byte {
	tb.Helper()
	return signaturetest.Statement(tb, name, digests)
}

func bundleJSON(tb testing.TB, vs *ca.VirtualSigstore, e verify.SignedEntity, version string) []byte {
	tb.Helper()
	return signaturetest.BundleJSON(tb, vs, e, version)
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func sha512Hex(b []byte) string { s := sha512.Sum512(b); return hex.EncodeToString(s[:]) }
