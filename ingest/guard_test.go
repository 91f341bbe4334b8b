package ingest

import "testing"

func TestShrinkGuard(t *testing.T) {
	tests := []struct {
		before, after int
		refused       bool
	}{
		{10, 5, false}, // exactly half stays
		{10, 4, true},  // more than half at once
		{4, 1, true},
		{3, 0, false}, // tiny catalogs may empty (first curation)
		{0, 100, false},
	}
	for _, tt := range tests {
		if got := shrinkReason(tt.before, tt.after, 0.5) != ""; got != tt.refused {
			t.Errorf("shrinkReason(%d, %d) refused = %v, want %v", tt.before, tt.after, got, tt.refused)
		}
	}
}
