package ingest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

func TestSameVersion(t *testing.T) {
	tests := []struct {
		stored, v string
		want      bool
	}{
		{"1.0.0", "1.0.0", true},
		{"v1.0.0", "1.0.0", true},      // legacy leading v
		{"1.0.0+build", "1.0.0", true}, // legacy build metadata
		{"01.0.0", "1.0.0", true},
		{"1.0", "1.0.0", true},
		{"1.0.0", "1.0.1", false},
		{"1.0.0-rc.1", "1.0.0", false},
		{"v1.0.0", "1.0.1", false},
		{"nightly", "1.0.0", false},
	}
	for _, tt := range tests {
		if got := sameVersion(tt.stored, tt.v); got != tt.want {
			t.Errorf("sameVersion(%q, %q) = %v, want %v", tt.stored, tt.v, got, tt.want)
		}
	}
}

func TestSortReleasesUsesSemVerPrecedence(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rels []*store.Release
	for i, v := range []string{"1.10.0", "v2.0.0", "1.2.0", "1.10.0-rc.1", "2.0.0"} {
		rels = append(rels, &store.Release{Version: v, CreatedAt: at.Add(time.Duration(i) * time.Hour)})
	}
	SortReleases(rels)
	var got []string
	for _, r := range rels {
		got = append(got, r.Version)
	}
	want := []string{"2.0.0", "1.10.0", "1.10.0-rc.1", "1.2.0", "v2.0.0"} // legacy sorts last
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if !Legacy(rels[4]) || Legacy(rels[0]) {
		t.Errorf("Legacy: v2.0.0 %v, 2.0.0 %v", Legacy(rels[4]), Legacy(rels[0]))
	}
}
