package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// slowPackages is a store whose Packages answers after the releases are read.
type slowPackages struct{ *store.Store }

func (s slowPackages) Packages(ctx context.Context) (map[string]*store.Package, error) {
	time.Sleep(100 * time.Millisecond)
	return s.Store.Packages(ctx)
}

// TestLoadStateWaitsForThePackages: a build reads the packages beside the releases and
// builds only once both are read: however late the packages come, every item has its
// package row.
func TestLoadStateWaitsForThePackages(t *testing.T) {
	st := mustStore(t)
	l := seedCatalogue(t, st, 50)
	s := New(slowPackages{st}, l, Config{PublicURL: "http://r.example", Blobs: st.Blobs.Folder()}, discard())
	defer s.Close()
	if err := s.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for it := range s.Catalog().All() {
		n++
		if it.Package == nil || it.Package.ID != it.ID {
			t.Fatalf("%s: package %+v, want its row", it.ID, it.Package)
		}
	}
	if n != 50 {
		t.Fatalf("%d items, want 50", n)
	}
}
