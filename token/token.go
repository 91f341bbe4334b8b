// Package token is the format of this registry's API tokens, in a package of its own so
// that the secret scanner (verify/) and the token issuer (ingest/) share one definition
// without importing each other.
//
// A token is the prefix "pyr_", 30 random base62 characters and a 6-character base62
// checksum, 40 characters in all. An example (valid, never issued):
//
//	pyr_WBnr9tOwZlf2FH4kwQm3R3RXhSXKzf4IqPi8
//	    └───────── 30 random ──────────┘└CRC─┘
//
// The random part carries 178 bits (30 × log2 62) from crypto/rand. The checksum is the
// CRC-32 (IEEE) of the prefix and the random part, in base62, left-padded with '0' to six
// characters. This is the scheme GitHub uses for its tokens (ghp_ and the like): the
// prefix lets a scanner find candidates with one regular expression (Pattern), and the
// checksum lets it drop the near-misses (a variable name, a placeholder, a truncated copy)
// offline, without asking the registry; a string that matches Pattern by chance passes the
// checksum once in 2^32.
//
// Tokens made before this format, "pyr_" and 40 lowercase base32 characters
// (LegacyPattern), keep working: the registry stores only the sha256 of a secret, whatever
// its shape. They have no checksum, so a scanner can only match their shape.
package token

import (
	"crypto/rand"
	"fmt"
	"hash/crc32"
	"regexp"
	"strings"
)

// Prefix starts every registry token.
const Prefix = "pyr_"

// Lengths of the parts after Prefix.
const (
	RandomLen   = 30
	ChecksumLen = 6
	// Len is the length of a whole token.
	Len = len(Prefix) + RandomLen + ChecksumLen
)

// Pattern matches a token of the current format anywhere in text (RE2 syntax, as Go's
// regexp and most scanners take it): the prefix at a word boundary, 36 base62 characters,
// and a word boundary after them. A match is a candidate; Valid confirms it.
const Pattern = `\b` + shape + `\b`

// LegacyPattern matches a token of the format before checksums (40 lowercase base32
// characters after the prefix).
const LegacyPattern = `\b` + legacyShape + `\b`

// The shapes of a whole token, without the boundaries.
const (
	shape       = `pyr_[0-9A-Za-z]{36}`
	legacyShape = `pyr_[a-z2-7]{40}`
)

// alphabet is base62 in ASCII order: digits, upper case, lower case.
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

var (
	wholeRE  = regexp.MustCompile(`^` + shape + `$`)
	legacyRE = regexp.MustCompile(`^` + legacyShape + `$`)
)

// New returns a new token of the current format.
func New() (string, error) {
	random, err := randomBase62(RandomLen)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return Prefix + random + checksum(Prefix+random), nil
}

// Valid reports whether s is a whole token of the current format with a correct checksum.
func Valid(s string) bool {
	if len(s) != Len || !wholeRE.MatchString(s) {
		return false
	}
	body := s[:Len-ChecksumLen]
	return s[Len-ChecksumLen:] == checksum(body)
}

// Legacy reports whether s has the shape of a token made before checksums.
func Legacy(s string) bool { return legacyRE.MatchString(s) }

// checksum is the CRC-32 (IEEE) of s in base62, left-padded with '0' to ChecksumLen
// characters (62^6 > 2^32, so it always fits).
func checksum(s string) string {
	v := crc32.ChecksumIEEE([]byte(s))
	var b [ChecksumLen]byte
	for i := ChecksumLen - 1; i >= 0; i-- {
		b[i] = alphabet[v%62]
		v /= 62
	}
	return string(b[:])
}

// randomBase62 returns n characters drawn uniformly from the alphabet: random bytes of 248
// or more are discarded, so that each of the 62 characters is equally likely (248 = 4 × 62).
func randomBase62(n int) (string, error) {
	var out strings.Builder
	buf := make([]byte, n+n/4)
	for out.Len() < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, c := range buf {
			if c < 248 && out.Len() < n {
				out.WriteByte(alphabet[c%62])
			}
		}
	}
	return out.String(), nil
}
