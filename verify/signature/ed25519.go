package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidKey reports a listed ed25519 key that is not the base64 of 32 bytes.
var ErrInvalidKey = errors.New("signature: invalid ed25519 public key")

// ParseEd25519Key decodes a base64 (standard alphabet) ed25519 public key.
func ParseEd25519Key(s string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not base64: %w", ErrInvalidKey, s, err)
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: %q decodes to %d bytes, want %d", ErrInvalidKey, s, len(raw), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

// KeyFingerprint is the first 16 hex digits of the sha256 of a public key's raw bytes.
func KeyFingerprint(key ed25519.PublicKey) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])[:16]
}

// DecodeEd25519Signature accepts a checksums.txt.sig as 64 raw bytes or as their base64
// (standard alphabet, surrounding whitespace and a trailing newline allowed).
func DecodeEd25519Signature(sig []byte) ([]byte, error) {
	if len(sig) == ed25519.SignatureSize {
		return sig, nil
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sig)))
	if err != nil || len(raw) != ed25519.SignatureSize {
		return nil, refuse(RuleEd25519Invalid, "64 raw bytes or their base64", fmt.Sprintf("%d bytes", len(sig)),
			"checksums.txt.sig is not an ed25519 signature; write the 64-byte signature of checksums.txt, raw or base64")
	}
	return raw, nil
}

// VerifyEd25519 checks sig over the exact bytes of checksums against the listed base64
// public keys. A malformed signature is refused with RuleEd25519Invalid; a signature that no
// listed key verifies (another key, or checksums.txt changed after signing) with
// RuleEd25519Key. A malformed listed key is an ErrInvalidKey error.
func VerifyEd25519(checksums, sig []byte, keys []string) (*Result, error) {
	raw, err := DecodeEd25519Signature(sig)
	if err != nil {
		return nil, err
	}
	fingerprints := make([]string, 0, len(keys))
	for _, k := range keys {
		pub, err := ParseEd25519Key(k)
		if err != nil {
			return nil, err
		}
		fp := KeyFingerprint(pub)
		if ed25519.Verify(pub, checksums, raw) {
			return &Result{Type: TypeEd25519, KeyFingerprint: fp}, nil
		}
		fingerprints = append(fingerprints, fp)
	}
	expected := "one of the listed keys " + strings.Join(fingerprints, ", ")
	if len(fingerprints) == 0 {
		expected = "a listed key (none is listed)"
	}
	return nil, refuse(RuleEd25519Key, expected, "a signature no listed key verifies",
		"checksums.txt.sig was made by a key the registry does not list for this entry, or checksums.txt changed after signing")
}
