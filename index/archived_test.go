package index_test

import (
	"bytes"
	"testing"

	"github.com/pluginyard/registry/index"
)

// A partial index spends its room on active packages first: archived ones rank after every
// active one, even official and featured ones.
func TestFitSelectedRanksArchivedLast(t *testing.T) {
	s := syntheticSnapshot(2000, 100)
	archived := map[string]bool{}
	for i := range s.Plugins {
		if p := &s.Plugins[i]; p.Official || p.Featured || p.Downloads >= 990 {
			p.Archived = true
			archived[p.ID] = true
		}
	}
	for _, order := range []string{index.OrderDownloads, index.OrderRecent} {
		t.Run(order, func(t *testing.T) {
			f, err := index.Fit(index.Policy{Limit: 64 << 10, Order: order}, s)
			if err != nil {
				t.Fatal(err)
			}
			d := decodeDoc(t, "index.json", f.Kandev)
			if f.KandevMode != index.ModeSelected || len(d.Plugins) == 0 || len(d.Plugins) >= len(s.Plugins)-len(archived) {
				t.Fatalf("mode %s with %d of %d entries: the test needs a selection smaller than the active entries", f.KandevMode, len(d.Plugins), len(s.Plugins))
			}
			for _, e := range d.Plugins {
				if id := e["id"].(string); archived[id] {
					t.Errorf("archived %s is listed while active entries are left out", id)
				}
			}
		})
	}
}

// The full entry says "archived": true when archived and nothing otherwise (an additive
// field, so the index of a catalogue with no archived package is unchanged).
func TestArchivedFieldOnlyWhenArchived(t *testing.T) {
	s := syntheticSnapshot(2, 10)
	s.Plugins[0].Archived = true
	doc, err := index.BuildKandev(s)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeDoc(t, "index.json", doc)
	if d.Plugins[0]["archived"] != true {
		t.Errorf("archived entry: archived = %v, want true", d.Plugins[0]["archived"])
	}
	if _, ok := d.Plugins[1]["archived"]; ok {
		t.Errorf("active entry carries archived: %v", d.Plugins[1])
	}
	if n := bytes.Count(doc, []byte(`"archived"`)); n != 1 {
		t.Errorf("%d archived fields in the document, want 1", n)
	}
}
