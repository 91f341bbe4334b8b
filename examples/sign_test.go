package examples_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/verify"
	"github.com/pluginyard/registry/verify/signature"
)

// testKey is a fixed key, so that the signed package is the same on every run.
var testKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))

func mustPackSigned(tb testing.TB, name string, key ed25519.PrivateKey) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := examples.PackSigned(name, key, &buf); err != nil {
		tb.Fatalf("PackSigned(%s): %v", name, err)
	}
	return buf.Bytes()
}

// TestPackSignedVerifies: the signed package passes every publish check, its signature
// verifies against the public key (and only that key), and nothing else changed: the same
// files, modes and checksums.txt as the unsigned package, with checksums.txt.sig after it.
func TestPackSignedVerifies(t *testing.T) {
	signed := mustPackSigned(t, "hello-managed", testKey)
	rep, err := verify.Package(context.Background(), bytes.NewReader(signed), verify.Options{FileName: "hello-managed-1.0.0.tar.gz"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Errorf("signed package: %s", p)
	}
	pub := base64.StdEncoding.EncodeToString(testKey.Public().(ed25519.PublicKey))
	res, err := signature.VerifyEd25519(rep.Checksums, rep.ChecksumsSig, []string{pub})
	if err != nil {
		t.Fatalf("VerifyEd25519: %v", err)
	}
	if want := signature.KeyFingerprint(testKey.Public().(ed25519.PublicKey)); res.KeyFingerprint != want {
		t.Errorf("fingerprint %s, want %s", res.KeyFingerprint, want)
	}
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, ed25519.SeedSize))
	_, err = signature.VerifyEd25519(rep.Checksums, rep.ChecksumsSig, []string{base64.StdEncoding.EncodeToString(other.Public().(ed25519.PublicKey))})
	if e, ok := signature.AsError(err); !ok || e.Rule != signature.RuleEd25519Key {
		t.Errorf("another key: err = %v, want %s", err, signature.RuleEd25519Key)
	}

	plainOrder, plainFiles := mustUnpack(t, mustPack(t, "hello-managed"))
	order, files := mustUnpack(t, signed)
	if diff := cmp.Diff(append(plainOrder, "checksums.txt.sig"), order); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	for name, f := range plainFiles {
		if diff := cmp.Diff(f, files[name]); diff != "" {
			t.Errorf("%s changed by signing (-want +got):\n%s", name, diff)
		}
	}
	if got, want := gzipHeader(t, signed), gzipHeader(t, mustPack(t, "hello-managed")); got != want {
		t.Errorf("gzip header %+v, want pack's %+v", got, want)
	}
	if m := files["checksums.txt.sig"].Mode; m != 0o644 {
		t.Errorf("checksums.txt.sig mode %o, want 644", m)
	}
}

// gzipHeader is what the gzip header of pkg says of its origin.
func gzipHeader(tb testing.TB, pkg []byte) string {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("os %d, name %q, comment %q, mtime %d", zr.OS, zr.Name, zr.Comment, zr.ModTime.Unix())
}

func TestPackSignedIsDeterministic(t *testing.T) {
	a, b := mustPackSigned(t, "hello-managed", testKey), mustPackSigned(t, "hello-managed", testKey)
	if !bytes.Equal(a, b) {
		t.Error("two signed packs with the same key differ")
	}
}

func TestPackSignedRefuses(t *testing.T) {
	tests := []struct {
		name, example string
		key           ed25519.PrivateKey
		want          string
	}{
		{"short key", "hello-managed", testKey[:32], "32 bytes, want 64"},
		{"unknown example", "no-such-example", testKey, `no example "no-such-example"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := examples.PackSigned(tt.example, tt.key, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
