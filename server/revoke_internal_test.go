package server

import (
	"testing"
)

// FuzzLeakedTokens: any body of any content type gives at most maxRevokeTokens tokens or
// an error, never a panic.
func FuzzLeakedTokens(f *testing.F) {
	f.Add("application/json", `{"token": "pyr_x"}`)
	f.Add("application/json", `[{"token": "a"}, {"token": "b", "url": "https://example.com"}]`)
	f.Add("application/x-www-form-urlencoded", "token=a&token=b")
	f.Add("text/plain; charset=utf-8", "a\nb\n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		got, err := leakedTokens(contentType, []byte(body))
		if err == nil && (len(got) == 0 || len(got) > maxRevokeTokens) {
			t.Fatalf("leakedTokens(%q, %q) = %d tokens and no error, want 1 to %d", contentType, body, len(got), maxRevokeTokens)
		}
	})
}
