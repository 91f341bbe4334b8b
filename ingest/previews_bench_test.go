package ingest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// BenchmarkListedPreview looks a copy up in a catalog of n listed packages with two
// previews each, as every /previews/ request does, for a hit in the middle and a miss (one
// map lookup), and measures building the digest index that the first request after a
// catalog or record change pays for (one pass over the listed previews).
func BenchmarkListedPreview(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		s := &Service{previews: &previewJob{}}
		var items []*Item
		recs := map[string]*store.Preview{}
		for i := range n {
			e := &index.Entry{ID: "p" + strconv.Itoa(i)}
			for j := range 2 {
				u := fmt.Sprintf("https://raw.githubusercontent.com/o/p%d/main/%d.png", i, j)
				e.Previews = append(e.Previews, index.Preview{URL: u, Alt: "A"})
				recs[u] = &store.Preview{URL: u, SHA256: fmt.Sprintf("%064x", 2*i+j), ContentType: "image/png", Size: 1}
			}
			items = append(items, &Item{ID: e.ID, Entry: e})
		}
		cat := NewCatalog(items)
		s.catalog.Store(cat)
		s.previews.records.Store(&recs)
		b.Run("index/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				indexListed(cat, &recs)
			}
		})
		for name, sha := range map[string]string{"hit": fmt.Sprintf("%064x", n), "miss": fmt.Sprintf("%064x", 2*n+1)} {
			b.Run(name+"/"+strconv.Itoa(n), func(b *testing.B) {
				s.ListedPreview(sha) // builds the digest index once, as the first request after a change does
				for b.Loop() {
					if got := s.ListedPreview(sha); (got != nil) != (name == "hit") {
						b.Fatalf("ListedPreview = %v", got)
					}
				}
			})
		}
	}
}
