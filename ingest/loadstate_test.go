package ingest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// rebuiltService is a Service over st with list l, built once; closed when the test ends.
func rebuiltService(t *testing.T, st Store, l *index.List, cfg Config) *Service {
	t.Helper()
	s := New(st, l, cfg, discard())
	t.Cleanup(s.Close)
	if err := s.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// parallelFrom sets encodeParallelMin to n until the test ends.
func parallelFrom(t *testing.T, n int) {
	old := encodeParallelMin
	encodeParallelMin = n
	t.Cleanup(func() { encodeParallelMin = old })
}

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
	s := rebuiltService(t, slowPackages{st}, l, Config{PublicURL: "http://r.example", Blobs: st.Blobs.Folder()})
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

// countingUses is a store that records how the start's blob check reads blob uses.
type countingUses struct {
	*store.Store
	records int
	asked   [][]string
}

func (s *countingUses) BlobRecords(ctx context.Context) ([]store.BlobRecord, error) {
	s.records++
	return s.Store.BlobRecords(ctx)
}

func (s *countingUses) BlobUsesOf(ctx context.Context, shas []string) (map[string][]store.BlobUse, error) {
	s.asked = append(s.asked, shas)
	return s.Store.BlobUsesOf(ctx, shas)
}

// TestBlobCheckReadsOnlyTheDamagedUses: the start's blob check reads the uses of the blobs
// it found damaged, not every use of every blob, and a damaged blob nothing uses stays
// out of the damaged set.
func TestBlobCheckReadsOnlyTheDamagedUses(t *testing.T) {
	ctx := context.Background()
	st := mustStore(t)
	cs := &countingUses{Store: st}
	s := New(cs, seedCatalogue(t, st, 20), Config{PublicURL: "http://r.example", Blobs: st.Blobs.Folder()}, discard())
	defer s.Close()
	const url = "https://example.com/p.png"
	var later string
	for _, b := range [][]byte{[]byte("the copy in use"), []byte("a later copy")} {
		sha, err := st.Blobs.Put(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.RecordPreviewFetched(ctx, url, sha, "image/png", int64(len(b))); err != nil {
			t.Fatal(err)
		}
		later = sha
	}
	if err := st.Blobs.Remove(later); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckBlobsExist(ctx); err != nil {
		t.Fatal(err)
	}
	// The seeded releases' blobs have no files either: they and the later copy are damaged.
	if cs.records != 0 || len(cs.asked) != 1 || len(cs.asked[0]) != 21 || !slices.Contains(cs.asked[0], later) {
		t.Errorf("BlobRecords read %d times, BlobUsesOf asked %d times (%d digests); want 0, and once for the 21 damaged", cs.records, len(cs.asked), len(slices.Concat(cs.asked...)))
	}
	if s.BlobDamaged(later) || len(s.Damaged()) != 20 {
		t.Errorf("damaged: %d blobs, the unused copy %v; want the 20 releases' only", len(s.Damaged()), s.BlobDamaged(later))
	}
}
