package server

import "testing"

// TestNewRequestID: a fresh request id is 32 characters of echo's alphabet, drawn
// uniformly (over 20,000 ids each character's count is within 10% of the 10,323 expected:
// ten standard deviations, where a byte taken modulo 62 unskipped gives seven characters
// 25% more), and no two are alike.
func TestNewRequestID(t *testing.T) {
	seen := map[string]bool{}
	chars := map[rune]int{}
	for range 20000 {
		id := newRequestID()
		if len(id) != 32 || !safeRequestID(id) {
			t.Fatalf("request id %q: want 32 characters of [A-Za-z0-9]", id)
		}
		if seen[id] {
			t.Fatalf("request id %q made twice", id)
		}
		seen[id] = true
		for _, r := range id {
			chars[r]++
		}
	}
	for _, r := range requestIDChars {
		if want := 20000 * 32 / len(requestIDChars); chars[r] < want*9/10 || chars[r] > want*11/10 {
			t.Errorf("character %q drawn %d times in 640,000, want %d ± 10%%", r, chars[r], want)
		}
	}
	if len(chars) != len(requestIDChars) {
		t.Errorf("%d distinct characters, want %d", len(chars), len(requestIDChars))
	}
}
