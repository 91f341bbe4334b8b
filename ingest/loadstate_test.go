package ingest

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
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

// countingUses is a store that records how the start's blob check reads blob uses;
// RecordedBlobs also answers unused, recorded blobs no row holds (what earlier versions
// left when a preview was fetched twice).
type countingUses struct {
	*store.Store
	records int
	asked   [][]string
	unused  []store.BlobRecord
}

func (s *countingUses) RecordedBlobs(ctx context.Context) ([]store.BlobRecord, error) {
	recs, err := s.Store.RecordedBlobs(ctx)
	recs = append(recs, s.unused...)
	slices.SortFunc(recs, func(a, b store.BlobRecord) int { return strings.Compare(a.SHA256, b.SHA256) })
	return recs, err
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
	inUse := []byte("the copy in use")
	sha, err := st.Blobs.Put(inUse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordPreviewFetched(ctx, url, sha, "image/png", int64(len(inUse))); err != nil {
		t.Fatal(err)
	}
	later := strings.Repeat("0f", 32) // recorded, used by nothing, its file gone
	cs.unused = []store.BlobRecord{{SHA256: later, Size: 12}}
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

// TestPreloadIsTheFirstBuildsOnly: a Service given a Preload builds its first index from
// the preloaded rows, a consistent view as of the serial read with them (a release
// committed after is not in it, as if it came just after the start), and every later
// build from the store.
func TestPreloadIsTheFirstBuildsOnly(t *testing.T) {
	ctx := context.Background()
	st := mustStore(t)
	l := seedCatalogue(t, st, 30)
	cfg := Config{PublicURL: "http://r.example", Blobs: st.Blobs.Folder()}
	// generated_at is the wall clock of each build: two builds a second apart differ there.
	stamp := regexp.MustCompile(`"generated_at":"[^"]*"`)
	body := func(s *Service) string {
		return stamp.ReplaceAllString(string(s.Documents().Kandev.Body.Bytes()), `"generated_at":""`)
	}
	want := body(rebuiltService(t, st, l, cfg))
	cfg.Preload = StartPreload(ctx, st)
	cfg.Preload.Wait()
	later := &store.Release{PackageID: "plugin-000007", Version: "2.0.0", Kind: "plugin", SHA256: strings.Repeat("e", 64), Size: 1,
		Manifest: []byte("id: plugin-000007\napi_version: 2\nversion: 2.0.0\ndisplay_name: P\ndescription: later\nauthor: A\n"),
		Card: &store.Card{Kind: "plugin", Name: "P", Description: "later", Author: "A", Categories: []string{"tools"}, APIVersion: 2,
			Platforms: []string{"linux-amd64"}}, PublishedBy: "test"}
	if err := st.InsertReleases(ctx, []*store.Release{later}, func(*store.Release) store.AuditEntry {
		return store.AuditEntry{Actor: "test", Action: "publish"}
	}); err != nil {
		t.Fatal(err)
	}
	s := rebuiltService(t, st, l, cfg)
	if got := body(s); got != want {
		t.Fatalf("the first build is not that of the preloaded rows: index.json %d bytes, want %d; plugin-000007 at %q", len(got), len(want), indexed(s, "plugin-000007"))
	}
	if cfg.Preload.rows.rels != nil || s.cfg.Preload != nil {
		t.Error("the preloaded rows outlive the first build (held by the Preload or the Service's Config)")
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if v := indexed(s, "plugin-000007"); v != "2.0.0" {
		t.Fatalf("after a second build plugin-000007 is at %q, want 2.0.0: a later build used the preloaded rows again", v)
	}
}

// TestPreloadFailureFailsTheFirstBuild: rows the preload could not read fail the first
// build, as a failed read of the store would; the next build reads the store.
func TestPreloadFailureFailsTheFirstBuild(t *testing.T) {
	ctx := context.Background()
	st := mustStore(t)
	l := seedCatalogue(t, st, 3)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	cfg := Config{PublicURL: "http://r.example", Blobs: st.Blobs.Folder(), Preload: StartPreload(canceled, st)}
	s := New(st, l, cfg, discard())
	t.Cleanup(s.Close)
	if err := s.Rebuild(ctx); err == nil {
		t.Fatal("the first build succeeded on rows the preload failed to read")
	}
	if err := s.Rebuild(ctx); err != nil || indexed(s, "plugin-000002") != "1.0.0" {
		t.Fatalf("second build: %v, plugin-000002 at %q", err, indexed(s, "plugin-000002"))
	}
}

// failingSide is a store whose packages or quarantines cannot be read.
type failingSide struct {
	*store.Store
	packages bool // Packages fails, else Quarantines
}

var errSide = errors.New("side read failed")

func (s failingSide) Packages(ctx context.Context) (map[string]*store.Package, error) {
	if s.packages {
		return nil, errSide
	}
	return s.Store.Packages(ctx)
}

func (s failingSide) Quarantines(ctx context.Context) ([]store.Quarantine, error) {
	if !s.packages {
		return nil, errSide
	}
	return s.Store.Quarantines(ctx)
}

// TestBuildFailsOnASideRead: the packages and quarantines are read beside the releases;
// either failing fails the build (never a build without the packages' rows, or with no
// quarantine in force).
func TestBuildFailsOnASideRead(t *testing.T) {
	for _, packages := range []bool{true, false} {
		st := mustStore(t)
		l := seedCatalogue(t, st, 3)
		s := New(failingSide{st, packages}, l, Config{PublicURL: "http://r.example", Blobs: st.Blobs.Folder()}, discard())
		if err := s.Rebuild(context.Background()); !errors.Is(err, errSide) {
			t.Errorf("packages failing %v: build error %v, want %v", packages, err, errSide)
		}
		s.Close()
	}
}
