package token_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/pluginyard/registry/token"
)

func TestNewIsValidAndFound(t *testing.T) {
	re := regexp.MustCompile(token.Pattern)
	seen := map[string]bool{}
	for range 200 {
		tok, err := token.New()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != token.Len || !strings.HasPrefix(tok, token.Prefix) {
			t.Fatalf("New() = %q: want %d characters starting %s", tok, token.Len, token.Prefix)
		}
		if !token.Valid(tok) {
			t.Fatalf("New() = %q, which Valid refuses", tok)
		}
		if got := re.FindString("REGISTRY_TOKEN=" + tok + "\n"); got != tok {
			t.Fatalf("Pattern found %q in a .env line, want %q", got, tok)
		}
		if seen[tok] {
			t.Fatalf("New() repeated %q", tok)
		}
		seen[tok] = true
	}
}

func TestValidRefusesNearMisses(t *testing.T) {
	const good = "pyr_WBnr9tOwZlf2FH4kwQm3R3RXhSXKzf4IqPi8" // the documented example
	if !token.Valid(good) {
		t.Fatalf("the documented example %q is not valid", good)
	}
	for name, s := range map[string]string{
		"one random character changed": "pyr_WBnr9tOwZlf2FH4kwQm3R3RXhSXKzf4IqPi8"[:10] + "x" + good[11:],
		"checksum changed":             good[:len(good)-1] + "9",
		"two characters swapped":       good[:5] + string(good[6]) + string(good[5]) + good[7:],
		"truncated":                    good[:len(good)-1],
		"one more character":           good + "a",
		"other prefix":                 "pyx_" + good[4:],
		"not base62":                   good[:10] + "-" + good[11:],
		"legacy":                       "pyr_" + strings.Repeat("a", 40),
		"placeholder":                  "pyr_" + strings.Repeat("x", 36),
	} {
		if token.Valid(s) {
			t.Errorf("%s: Valid(%q) = true", name, s)
		}
	}
}

func TestPatternBoundaries(t *testing.T) {
	const good = "pyr_WBnr9tOwZlf2FH4kwQm3R3RXhSXKzf4IqPi8"
	re := regexp.MustCompile(token.Pattern)
	for text, want := range map[string]string{
		`token: "` + good + `"`: good,
		"Bearer " + good:        good,
		"xpyr_" + good[4:]:      "", // inside a longer word
		good + "a":              "", // one character too many
		good + "_suffix":        "", // '_' continues the word
		good[:39]:               "",
	} {
		if got := re.FindString(text); got != want {
			t.Errorf("Pattern in %q found %q, want %q", text, got, want)
		}
	}
}

func TestLegacy(t *testing.T) {
	legacy := "pyr_" + strings.Repeat("abcd2345", 5)
	if !token.Legacy(legacy) || token.Valid(legacy) {
		t.Errorf("Legacy(%q) = %v, Valid = %v; want true, false", legacy, token.Legacy(legacy), token.Valid(legacy))
	}
	if !regexp.MustCompile(token.LegacyPattern).MatchString("x=" + legacy) {
		t.Errorf("LegacyPattern does not find %q", legacy)
	}
	if token.Legacy("pyr_WBnr9tOwZlf2FH4kwQm3R3RXhSXKzf4IqPi8") {
		t.Error("a current token is Legacy")
	}
}

// TestCharactersAreUniform guards the rejection sampling: with c%62 over all 256 byte
// values, the first 8 characters would come up 5/4 as often as the rest.
func TestCharactersAreUniform(t *testing.T) {
	counts := map[byte]int{}
	const tokens = 4000
	for range tokens {
		tok, err := token.New()
		if err != nil {
			t.Fatal(err)
		}
		for i := len(token.Prefix); i < token.Len-token.ChecksumLen; i++ {
			counts[tok[i]]++
		}
	}
	mean := float64(tokens*token.RandomLen) / 62 // about 1935
	var low, high float64
	for _, c := range "01234567" {
		low += float64(counts[byte(c)])
	}
	for _, c := range "abcdefgh" {
		high += float64(counts[byte(c)])
	}
	// Biased, the first eight would average 1.2 × mean (about 2300); 8 × 1935 has a
	// standard deviation near 125, so 10% apart is over 6 of them.
	if low/8 > 1.1*mean || low/high > 1.1 {
		t.Errorf("digits 0-7 drawn %.0f times on average, letters a-h %.0f, want both near %.0f", low/8, high/8, mean)
	}
}
