package server

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// BenchmarkListedIcon looks an icon up in a catalog of n listed packages, as every /icons/
// request does, for a hit in the middle and a miss, and the first lookup in a new catalog
// (after a publish), which makes its icon index.
func BenchmarkListedIcon(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		var items []*ingest.Item
		for i := range n {
			items = append(items, &ingest.Item{ID: "p" + strconv.Itoa(i),
				Latest: &store.Release{IconSHA256: fmt.Sprintf("%064x", i), IconType: "image/png"}})
		}
		cat := ingest.NewCatalog(items)
		b.Run("first-after-a-change/"+strconv.Itoa(n), func(b *testing.B) { // a new catalogue's index is made
			for b.Loop() {
				b.StopTimer()
				fresh := ingest.NewCatalog(items)
				b.StartTimer()
				listedIcon(fresh, fmt.Sprintf("%064x", n+1))
			}
		})
		for name, sha := range map[string]string{"hit": fmt.Sprintf("%064x", n/2), "miss": fmt.Sprintf("%064x", n+1)} {
			b.Run(name+"/"+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					if got := listedIcon(cat, sha); (got != nil) != (name == "hit") {
						b.Fatalf("listedIcon = %v", got)
					}
				}
			})
		}
	}
}

func TestListedIconAllowList(t *testing.T) {
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	cat := ingest.NewCatalog([]*ingest.Item{
		{ID: "png", Latest: &store.Release{IconSHA256: sha(1), IconType: "image/png"}},
		{ID: "gif", Latest: &store.Release{IconSHA256: sha(2), IconType: "image/gif"}},
		{ID: "untyped", Latest: &store.Release{IconSHA256: sha(3)}},
		{ID: "tarball", Latest: &store.Release{SHA256: sha(4)}},
		{ID: "a-untyped", Latest: &store.Release{IconSHA256: sha(5)}}, // the same icon, stored before the allow-list
		{ID: "b-png", Latest: &store.Release{IconSHA256: sha(5), IconType: "image/png"}},
	})
	tests := []struct {
		sha  string
		want string // the item id, "" for none
	}{
		{sha(1), "png"},
		{sha(5), "b-png"}, // the first listed with an allowed type, not the first listed
		{sha(2), ""},      // a type outside PNG, JPEG, WebP and SVG (stored before the allow-list)
		{sha(3), ""},
		{sha(4), ""}, // a package, not an icon
		{sha(1)[:63], ""},
		{"", ""},
	}
	for _, tt := range tests {
		got := ""
		if r := listedIcon(cat, tt.sha); r != nil {
			items := cat.Items()
			got = items[slices.IndexFunc(items, func(it *ingest.Item) bool { return it.Latest == r })].ID
		}
		if got != tt.want {
			t.Errorf("listedIcon(%q) = %q, want %q", tt.sha, got, tt.want)
		}
	}
}
