package ingest

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// searchCounter counts the full rewrites of the search table and can fail an upsert.
type searchCounter struct {
	Store
	mu         sync.Mutex
	replaces   int
	failUpsert error
	// during, when set, runs at the start of each upsert and full rewrite (before the
	// table changes).
	during func()
}

func (c *searchCounter) ReplaceSearch(ctx context.Context, docs []store.SearchDoc) error {
	c.mu.Lock()
	c.replaces++
	during := c.during
	c.mu.Unlock()
	if during != nil {
		during()
	}
	return c.Store.ReplaceSearch(ctx, docs)
}

func (c *searchCounter) UpsertSearch(ctx context.Context, docs []store.SearchDoc) error {
	c.mu.Lock()
	err, during := c.failUpsert, c.during
	c.mu.Unlock()
	if during != nil {
		during()
	}
	if err != nil {
		return err
	}
	return c.Store.UpsertSearch(ctx, docs)
}

func (c *searchCounter) replaced() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replaces
}

// countedService is MustService over st with its search writes counted.
func countedService(t *testing.T, st *store.Store) (*Service, *searchCounter) {
	t.Helper()
	svc := MustService(t, st, Config{})
	c := &searchCounter{Store: svc.store}
	svc.store = c
	return svc, c
}

// catalogSum is the search table digest of cat's rows, as search.sum holds it.
func catalogSum(cat *Catalog) string {
	var sum rowSum
	for _, d := range searchDocs(cat) {
		sum.xor(searchRowSum(d))
	}
	return hex.EncodeToString(sum[:])
}

func readSearchSum(t *testing.T, svc *Service) string {
	t.Helper()
	b, err := os.ReadFile(svc.searchSumPath())
	if err != nil {
		t.Fatalf("search.sum: %v", err)
	}
	return string(b)
}

func publishHello(t *testing.T, svc *Service, version, description string) {
	t.Helper()
	pkg := helloPackage(t, version, description)
	if _, err := svc.Publish(context.Background(), PublishInput{Package: bytes.NewReader(pkg), FileName: "acme-hello-" + version + ".tar.gz", Actor: admin}); err != nil {
		t.Fatalf("publish %s: %v", version, err)
	}
}

// TestCloseWritesFinalSearchSum: publishes do not write search.sum themselves, but a
// clean Close after them leaves the digest of the final table, so the next start skips
// rewriting the search table.
func TestCloseWritesFinalSearchSum(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc, _ := countedService(t, st)
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		publishHello(t, svc, fmt.Sprintf("1.0.%d", i), fmt.Sprintf("Says hello, take %d", i))
	}
	want := catalogSum(svc.Catalog())
	svc.Close()
	if got := readSearchSum(t, svc); got != want {
		t.Errorf("search.sum after Close = %s, want the final table's %s", got, want)
	}
	next, c := countedService(t, st)
	if err := next.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c.replaced(); n != 0 {
		t.Errorf("the start after a clean Close rewrote the search table %d times, want 0", n)
	}
	if !bytes.Contains(next.Documents().Kandev.Body.Bytes(), []byte("take 3")) {
		t.Error("the restarted index does not show the last publish")
	}
}

// TestFailedSearchWriteLeavesNoSum: a search write that fails leaves the table unknown:
// no search.sum after Close (the digest of the table before would let the next start
// skip a rewrite the table needs), and the next start rewrites it.
func TestFailedSearchWriteLeavesNoSum(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc, c := countedService(t, st)
	svc.retry.base = time.Hour // no retry during the test
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	publishHello(t, svc, "1.0.0", "Says hello")
	c.mu.Lock()
	c.failUpsert = errors.New("disk full")
	c.mu.Unlock()
	pkg := helloPackage(t, "1.0.1", "Says hello again")
	_, _ = svc.Publish(context.Background(), PublishInput{Package: bytes.NewReader(pkg), FileName: "acme-hello-1.0.1.tar.gz", Actor: admin})
	svc.Close()
	if b, err := os.ReadFile(svc.searchSumPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("search.sum after a failed search write = %q (%v), want none", b, err)
	}
	next, c2 := countedService(t, st)
	if err := next.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c2.replaced(); n != 1 {
		t.Errorf("the start after a failed search write rewrote the search table %d times, want 1", n)
	}
}

// TestFullBuildTrustsCommittedSum: once this process committed the search table, a full
// build compares the catalogue with that table's digest, not with search.sum (which the
// persister may not have written yet): a catalogue matching the older file but not the
// table rewrites it.
func TestFullBuildTrustsCommittedSum(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc, c := countedService(t, st)
	ctx := context.Background()
	if err := svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	publishHello(t, svc, "1.0.0", "Says hello")
	before := svc.Catalog()
	publishHello(t, svc, "1.0.1", "Says hello again")
	// The file as the persister leaves it until its turn: the digest of the table before.
	if err := os.WriteFile(svc.searchSumPath(), []byte(catalogSum(before)), 0o640); err != nil {
		t.Fatal(err)
	}
	n := c.replaced()
	svc.rebuildMu.Lock()
	err := svc.syncSearch(ctx, &built{}, before, nil)
	svc.rebuildMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.replaced() - n; got != 1 {
		t.Errorf("a full build of the older catalogue rewrote the search table %d times, want 1 (the table holds the newer rows)", got)
	}
}

// TestSearchSumAfterCommit: the digest of a search table goes to the persister only once
// the table is committed, and while a table write runs search.sum is not on disk at all:
// a crash in the write leaves no digest, so the next start rewrites the table (a digest of
// the table before would match a catalogue that returned to it, a package published and
// deleted, while the table holds other rows).
func TestSearchSumAfterCommit(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc, c := countedService(t, st)
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc.writeSearchSum(svc.search.table) // as the persister does, in its turn
	if _, err := os.Stat(svc.searchSumPath()); err != nil {
		t.Fatalf("search.sum after the full build's digest was written: %v", err)
	}
	var pending []string
	calls, onDisk := 0, 0
	c.during = func() {
		calls++
		svc.persist.mu.Lock()
		if p := svc.persist.sum; p != nil {
			pending = append(pending, hex.EncodeToString(p.sum[:]))
		}
		svc.persist.mu.Unlock()
		if _, err := os.Stat(svc.searchSumPath()); err == nil {
			onDisk++
		}
	}
	publishHello(t, svc, "1.0.0", "Says hello")
	want := catalogSum(svc.Catalog())
	for _, sum := range pending {
		if sum == want {
			t.Errorf("the digest of the table being written (%s) was handed over before its commit", want)
		}
	}
	if calls == 0 {
		t.Fatal("the publish wrote no search row")
	}
	if onDisk > 0 {
		t.Errorf("search.sum was on disk during %d of %d search table writes, want none", onDisk, calls)
	}
}

// TestNoSearchSumDuringARewrite: while a full build rewrites the search table (a start
// whose search.sum does not match), the file is not on disk.
func TestNoSearchSumDuringARewrite(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc, c := countedService(t, st)
	if err := os.MkdirAll(filepath.Dir(svc.searchSumPath()), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(svc.searchSumPath(), []byte(strings.Repeat("f", 64)), 0o640); err != nil {
		t.Fatal(err)
	}
	calls, onDisk := 0, 0
	c.during = func() {
		calls++
		if _, err := os.Stat(svc.searchSumPath()); err == nil {
			onDisk++
		}
	}
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || onDisk > 0 {
		t.Errorf("search.sum on disk during %d of %d rewrites, want none of at least one", onDisk, calls)
	}
}

// TestLateSearchSumIsNotWritten: a digest the persister gets to after a later table write
// has started is not written: the file would name a table that is no longer stored.
func TestLateSearchSumIsNotWritten(t *testing.T) {
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc, _ := countedService(t, st)
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	late := svc.search.table // the full build's digest, not written yet
	publishHello(t, svc, "1.0.0", "Says hello")
	svc.writeSearchSum(late)
	if b, err := os.ReadFile(svc.searchSumPath()); err == nil {
		t.Errorf("search.sum holds %s after a late digest of an older table; want no file", b)
	}
	svc.writeSearchSum(svc.search.table)
	if b, err := os.ReadFile(svc.searchSumPath()); err != nil || string(b) != catalogSum(svc.Catalog()) {
		t.Errorf("search.sum after the current digest: %q, %v; want the catalogue's digest", b, err)
	}
}

// TestPersisterWritesNothingAfterWait: a request as Close runs is written before wait
// returns or never: none starts a write after it (into a data directory being removed).
func TestPersisterWritesNothingAfterWait(t *testing.T) {
	var mu sync.Mutex
	var writes []string
	p := newPersister(func(*Documents) { mu.Lock(); writes = append(writes, "docs"); mu.Unlock() },
		func(tableSum) { mu.Lock(); writes = append(writes, "sum"); mu.Unlock() })
	p.requestSum(tableSum{known: true})
	p.wait()
	p.request(&Documents{})
	p.requestSum(tableSum{})
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if running || len(writes) != 1 || writes[0] != "sum" {
		t.Errorf("after wait: running %v, writes %v; want not running, [sum] (the one before wait)", running, writes)
	}
}

// TestFullBuildRowSums: a full build's digest of each search row (made in parallel for a
// large catalogue) is that row's, by id, as the incremental builds after it take them out
// and put them back.
func TestFullBuildRowSums(t *testing.T) {
	parallelFrom(t, 100)
	st := mustStore(t)
	s := rebuiltService(t, st, seedCatalogue(t, st, 1000), Config{PublicURL: "http://r.example"})
	n := 0
	for it := range s.Catalog().All() {
		n++
		if got, want := s.built.rows[it.ID], searchRowSum(searchDoc(it)); got != want {
			t.Fatalf("%s: row digest %x, want %x", it.ID, got, want)
		}
	}
	if n != 1000 || len(s.built.rows) != n {
		t.Fatalf("%d items, %d row digests; want 1000 each", n, len(s.built.rows))
	}
}
