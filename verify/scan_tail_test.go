package verify

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// keyBlockRE is the private-key rule as one expression, the form before its gap moved to
// a loop (tail); the rule must still match exactly what it matches.
var keyBlockRE = regexp.MustCompile(`\A-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,300}?[A-Za-z0-9+/]{40}`)

// TestPrivateKeyTailMatchesExpression: on key blocks with gaps of 0 to 400 bytes and base64
// runs of 30 to 50, the rule's match (header expression, then tail) has the length the one
// expression's has, or is absent when it is.
func TestPrivateKeyTailMatchesExpression(t *testing.T) {
	rule := &secretRules[0]
	if rule.id != "scan.private_key" {
		t.Fatalf("secretRules[0] is %s; expected scan.private_key", rule.id)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	const other = " \n-=:!\x00\xff"
	for n := 0; n < 5000; n++ {
		var b strings.Builder
		b.WriteString([]string{"-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----"}[rng.IntN(3)])
		for b.Len() < 600 {
			set := other
			if rng.IntN(2) == 0 {
				set = b64
			}
			for k := rng.IntN(50); k > 0; k-- {
				b.WriteByte(set[rng.IntN(len(set))])
			}
		}
		data := []byte(b.String())
		want := 0
		if loc := keyBlockRE.FindIndex(data[:maxMatch]); loc != nil {
			want = loc[1]
		}
		if got := rule.match(data, 0, "-----BEGIN"); got != want {
			t.Fatalf("%q: the rule matched %d bytes, the expression %d", data, got, want)
		}
	}
}

// BenchmarkScannerWorstCase: text made of inputs that pass a rule's pre-filter and fail
// later (a key block's BEGIN line with no key after it, placeholders, tokens with a wrong
// checksum), so every occurrence runs the rule's expression: the most a text file costs.
func BenchmarkScannerWorstCase(b *testing.B) {
	for _, c := range []struct{ name, unit string }{
		{"key_block_header", "-----BEGIN PRIVATE KEY-----\n!!\n"},
		{"github_placeholder", "gh" + "p_" + strings.Repeat("a", 36) + "\n"},
		{"registry_bad_checksum", "pyr_" + strings.Repeat("aB", 18) + "\n"},
		{"slack_low_entropy", "xox" + "b-1-" + strings.Repeat("a", 30) + "\n"},
	} {
		for _, mib := range []int{1, 8} {
			data := []byte(strings.Repeat(c.unit, mib<<20/len(c.unit)))
			b.Run(fmt.Sprintf("%s/MiB=%d", c.name, mib), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					s := newScanner()
					for i := 0; i < len(data); i += copyBufferSize {
						s.write(data[i:min(len(data), i+copyBufferSize)])
					}
					if f := s.close(); len(f) != 0 {
						b.Fatalf("found %v", f)
					}
				}
			})
		}
	}
}

// TestScanRulesOnceEach: ScanRules names every content and file-name rule once, sorted,
// and a caller that changes its copy changes no later answer.
func TestScanRulesOnceEach(t *testing.T) {
	want := map[string]bool{}
	for _, r := range secretRules {
		want[r.id] = true
	}
	for _, r := range nameRules {
		want[r.id] = true
	}
	got := ScanRules()
	if len(got) != len(want) || !slices.IsSorted(got) {
		t.Fatalf("ScanRules() = %v; expected the %d rule ids, each once, sorted", got, len(want))
	}
	for _, id := range got {
		if !want[id] {
			t.Errorf("ScanRules() names %s, which no rule has", id)
		}
	}
	got[0] = "changed"
	if ScanRules()[0] == "changed" {
		t.Error("ScanRules() shares its slice with callers")
	}
}
