package ingest_test

import (
	"testing"

	"github.com/pluginyard/registry/ingest"
)

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.2.0", "1.10.0", -1},
		{"v2.0.0", "1.9.9", 1},
		{"1.0", "1.0.0", 0},
		{"1.0.0-rc.1", "1.0.0", -1},
		{"0.2.0-fork.1", "0.2.0-fork.2", -1},
		{"nightly", "1.0.0", 1}, // whole-string compare: "n" > "1"
	}
	for _, tt := range tests {
		if got := ingest.CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
