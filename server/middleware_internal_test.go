package server

import "testing"

// TestNewRequestID: a fresh request id is 32 characters of echo's alphabet, each of the
// 62 shows up over a few thousand ids, and no two are alike.
func TestNewRequestID(t *testing.T) {
	seen := map[string]bool{}
	chars := map[rune]int{}
	for range 2000 {
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
		if chars[r] < 500 { // 1,032 expected: 64,000 characters over 62
			t.Errorf("character %q drawn %d times in 64,000, want about 1,032", r, chars[r])
		}
	}
	if len(chars) != len(requestIDChars) {
		t.Errorf("%d distinct characters, want %d", len(chars), len(requestIDChars))
	}
}
