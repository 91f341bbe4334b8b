package signature_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/verify/signature"
)

// fixedKey derives a deterministic ed25519 key from a label.
func fixedKey(label string) (ed25519.PrivateKey, string) {
	seed := sha256.Sum256([]byte(label))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return priv, base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
}

func TestVerifyEd25519(t *testing.T) {
	checksums := []byte("3f0a...  manifest.yaml\n9b1c...  plugin.js\n")
	priv, pub := fixedKey("publisher")
	_, otherPub := fixedKey("someone else")
	unlisted, _ := fixedKey("unlisted")
	sig := ed25519.Sign(priv, checksums)
	b64 := []byte(base64.StdEncoding.EncodeToString(sig))
	sum := sha256.Sum256(priv.Public().(ed25519.PublicKey))
	fp := hex.EncodeToString(sum[:])[:16]

	tests := []struct {
		name      string
		checksums []byte
		sig       []byte
		keys      []string
		wantRule  string // "" verifies
	}{
		{"raw signature", checksums, sig, []string{pub}, ""},
		{"base64 signature", checksums, b64, []string{pub}, ""},
		{"base64 with trailing newline", checksums, append(b64, '\n'), []string{pub}, ""},
		{"second listed key", checksums, sig, []string{otherPub, pub}, ""},
		{"key with surrounding space", checksums, sig, []string{" " + pub + "\n"}, ""},
		{"signed by an unlisted key", checksums, ed25519.Sign(unlisted, checksums), []string{pub, otherPub}, signature.RuleEd25519Key},
		{"no key listed", checksums, sig, nil, signature.RuleEd25519Key},
		{"checksums changed", append([]byte("x"), checksums...), sig, []string{pub}, signature.RuleEd25519Key},
		{"signature bit flipped", checksums, flip(sig), []string{pub}, signature.RuleEd25519Key},
		{"truncated signature", checksums, sig[:63], []string{pub}, signature.RuleEd25519Invalid},
		{"not base64", checksums, []byte("not a signature at all\n"), []string{pub}, signature.RuleEd25519Invalid},
		{"base64 of 32 bytes", checksums, []byte(base64.StdEncoding.EncodeToString(sig[:32])), []string{pub}, signature.RuleEd25519Invalid},
		{"empty", checksums, nil, []string{pub}, signature.RuleEd25519Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := signature.VerifyEd25519(tt.checksums, tt.sig, tt.keys)
			if tt.wantRule == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(&signature.Result{Type: signature.TypeEd25519, KeyFingerprint: fp}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			e, ok := signature.AsError(err)
			if !ok || e.Rule != tt.wantRule {
				t.Errorf("err = %v, want rule %s", err, tt.wantRule)
			}
		})
	}
}

func flip(b []byte) []byte {
	c := append([]byte(nil), b...)
	c[10] ^= 0x01
	return c
}

func TestVerifyEd25519BadListedKey(t *testing.T) {
	priv, _ := fixedKey("publisher")
	sig := ed25519.Sign(priv, []byte("x"))
	for _, key := range []string{"not base64!", base64.StdEncoding.EncodeToString(make([]byte, 31))} {
		if _, err := signature.VerifyEd25519([]byte("x"), sig, []string{key}); !errors.Is(err, signature.ErrInvalidKey) {
			t.Errorf("key %q: err = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestCheckPin(t *testing.T) {
	r := &signature.Result{RepositoryID: "123", OwnerID: "77"}
	tests := []struct {
		name     string
		pin      signature.Pin
		wantRule string
	}{
		{"nothing pinned", signature.Pin{}, ""},
		{"same ids", signature.Pin{RepositoryID: "123", OwnerID: "77"}, ""},
		{"repository re-created", signature.Pin{RepositoryID: "122", OwnerID: "77"}, signature.RuleChanged},
		{"owner changed", signature.Pin{RepositoryID: "123", OwnerID: "78"}, signature.RuleChanged},
	}
	for _, tt := range tests {
		e := signature.CheckPin(tt.pin, r)
		var got string
		if e != nil {
			got = e.Rule
		}
		if got != tt.wantRule {
			t.Errorf("%s: rule = %q, want %q", tt.name, got, tt.wantRule)
		}
	}
	if p, ok := signature.PinOf(r); !ok || p != (signature.Pin{RepositoryID: "123", OwnerID: "77"}) {
		t.Errorf("PinOf = %+v, %v", p, ok)
	}
	if _, ok := signature.PinOf(&signature.Result{Type: signature.TypeEd25519}); ok {
		t.Errorf("PinOf(ed25519 result) pinned something")
	}
}
