package index

import (
	"fmt"
	"testing"
)

// TestPluginIndex: a large list finds its entries through an index, the first entry of an
// id as a search in order would; a list changed in place (which lists are not, once
// asked) still never answers an entry of another id, nor misses an id it holds.
func TestPluginIndex(t *testing.T) {
	l := &List{}
	for i := range 2 * pluginIndexMin {
		l.Plugins = append(l.Plugins, Entry{ID: fmt.Sprintf("p-%04d", i), Repo: "first"})
	}
	l.Plugins = append(l.Plugins, Entry{ID: "p-0007", Repo: "second"}) // a duplicate id: the first wins
	for _, id := range []string{"p-0000", "p-0007", "p-0511"} {
		if e, ok := l.Plugin(id); !ok || e.ID != id || e.Repo != "first" {
			t.Fatalf("Plugin(%s): %+v, %v", id, e, ok)
		}
	}
	if _, ok := l.Plugin("p-9999"); ok {
		t.Fatal("Plugin found an id the list does not hold")
	}
	if pi := lastPluginIndex.Load(); pi == nil || pi.list != l {
		t.Fatal("a large list was searched without its index")
	}
	// Changed in place, same length: the entries at two positions trade ids.
	l.Plugins[3].ID, l.Plugins[4].ID = l.Plugins[4].ID, l.Plugins[3].ID
	l.Plugins[10].ID = "renamed"
	for id, want := range map[string]int{"p-0003": 4, "p-0004": 3, "renamed": 10} {
		if e, ok := l.Plugin(id); !ok || e != &l.Plugins[want] {
			t.Errorf("after a change, Plugin(%s): %+v, %v; want entry %d", id, e, ok, want)
		}
	}
	if _, ok := l.Plugin("p-0010"); ok {
		t.Error("after a change, Plugin found an id no entry has any more")
	}
	other := &List{Plugins: append([]Entry(nil), l.Plugins...)}
	if _, ok := other.Plugin("p-0001"); !ok {
		t.Fatal("a second list: Plugin missed an id it holds")
	}
	if pi := lastPluginIndex.Load(); pi == nil || pi.list != other {
		t.Fatal("a second list of the same length was searched through the first one's index")
	}
}
