package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFormatters(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"count small", compactCount(950), "950"},
		{"count k", compactCount(1234), "1.2k"},
		{"count round k", compactCount(2000), "2k"},
		{"count tens of k", compactCount(34_567), "34k"},
		{"count M", compactCount(1_500_000), "1.5M"},
		{"full count", fullCount(1234567), "1,234,567"},
		{"full count small", fullCount(12), "12"},
		{"one download", downloadsText(1), "1 download"},
		{"size bytes", humanSize(512), "512 B"},
		{"size KiB", humanSize(4096), "4.0 KiB"},
		{"size MiB", humanSize(13_107_200), "12.5 MiB"},
		{"letter", letterOf("  agent stats"), "A"},
		{"letter digit", letterOf("42 things"), "4"},
		{"letter none", letterOf("---"), "?"},
		{"excerpt short", excerpt("short", 10), "short"},
		{"excerpt cut at word", excerpt("one two three four", 12), "one two…"},
		{"range", rangeText(2, 24, 1000, 24), "25–48 of 1,000"},
		{"pages", fullCount(pageCount(1000, 24)), "42"},
		{"signer", signerSummary(Verification{Repository: "a/b", Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1"}), "a/b, release.yml at refs/tags/v1"},
		{"tile stable", tileClass("acme-stats"), tileClass("acme-stats")},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
