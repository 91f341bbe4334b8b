package ingest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/plist"
	"github.com/pluginyard/registry/store"
)

// state is what a catalog and its documents are built from: a curated list and the store's
// rows.
type state struct {
	list   *index.List
	rels   []*store.Release
	pkgs   map[string]*store.Package
	serial int64
	read   int64 // the serial read before the rows: a build at serial == read shows every change up to it
}

func (s *Service) loadState(ctx context.Context, l *index.List) (*state, error) {
	r, ok := s.takePreload()
	if !ok {
		r = readRows(ctx, s.store)
	}
	if r.err != nil {
		return nil, r.err
	}
	s.setQuarantines(r.quarantines)
	return &state{list: l, rels: r.rels, pkgs: r.pkgs, serial: r.serial, read: r.serial}, nil
}

// rows are what a build reads from the store, the list apart: a consistent view as of
// serial (read first: a change after it is at a later serial).
type rows struct {
	serial      int64
	rels        []*store.Release
	pkgs        map[string]*store.Package
	quarantines []store.Quarantine
	err         error
}

// readRows reads the rows of a build. The packages and quarantines are read beside the
// releases (the most rows, decoded over the CPUs as they come): each is a statement of its
// own either way.
func readRows(ctx context.Context, st Store) rows {
	var r rows
	if r.serial, r.err = st.Serial(ctx); r.err != nil {
		return r
	}
	var (
		sideErr error
		side    sync.WaitGroup
	)
	side.Go(func() {
		if r.pkgs, sideErr = st.Packages(ctx); sideErr == nil {
			r.quarantines, sideErr = st.Quarantines(ctx)
		}
	})
	r.rels, r.err = st.AllReleases(ctx)
	side.Wait()
	if r.err == nil {
		r.err = sideErr
	}
	return r
}

// limitError is documents a host would not take, or a change the guard holds back.
type limitError struct {
	Rule   string // index.shrink | index.invalid | index.size (a limit that holds no entry)
	Reason string
}

func (e *limitError) Error() string { return e.Reason }

// encodeParallelMin is the catalogue size from which a build spreads its per-package work
// over the CPUs (inParallel: a worker per encodeParallelMin packages): a start at 50k
// plugins makes 50,000 items and encodes 100,000 entry forms, most of its build. A
// variable for tests.
var encodeParallelMin = 2048

// inParallel runs f(i) for every i in [0, n), over up to GOMAXPROCS goroutines when n is
// large (each a contiguous range of i); the error is that of the first i (in order) whose
// f fails. f must write only what is its i's.
func inParallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	workers := min(runtime.GOMAXPROCS(0), max(n/encodeParallelMin, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				errs[i] = f(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// itemsOf makes the catalog item of each of the packages ids (sorted) and encodes its
// entry, in parallel for a large catalogue: the items in ids' order, without the packages
// that have none (not listed, nothing installable), and their entries.
func (s *Service) itemsOf(ctx context.Context, b *built, ids []string) ([]*Item, []*index.Encoded, error) {
	items := make([]*Item, len(ids))
	encs := make([]*index.Encoded, len(ids))
	err := inParallel(len(ids), func(i int) error {
		it, err := s.itemFor(ctx, b.li, ids[i], b.rels[ids[i]], b.pkgs[ids[i]])
		if err != nil || it == nil {
			return err
		}
		items[i] = it
		encs[i], err = s.encode(it)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	n := 0
	for i, it := range items {
		if it != nil {
			items[n], encs[n] = it, encs[i]
			n++
		}
	}
	return items[:n], encs[:n], nil
}

// build makes the catalog and documents of st from scratch; a *limitError when they are
// invalid or (unless force) the shrink guard refuses them.
func (s *Service) build(ctx context.Context, st *state, force bool) (*built, *Catalog, *Documents, error) {
	b := newBuilt(st, s.cfg.Policy)
	cat := &Catalog{byFile: newFileIDs()}
	ids := make([]string, 0, len(b.rels))
	for id := range b.rels {
		cat.byFile.add(id)
		ids = append(ids, id)
	}
	sort.Strings(ids)
	items, encs, err := s.itemsOf(ctx, b, ids)
	if err != nil {
		return nil, nil, nil, err
	}
	var plugins, exts []*index.Encoded
	for i, it := range items {
		if it.Kind == "extension" {
			exts = append(exts, encs[i])
		} else {
			plugins = append(plugins, encs[i])
		}
	}
	cat.items = plist.Of(items) // ids is sorted: so are items
	if b.plugins, err = index.NewSet(b.policy.Order, plugins); err != nil {
		return nil, nil, nil, &limitError{Rule: "index.invalid", Reason: err.Error()}
	}
	if b.exts, err = index.NewSet(b.policy.Order, exts); err != nil {
		return nil, nil, nil, &limitError{Rule: "index.invalid", Reason: err.Error()}
	}
	docs, err := s.sharedDocuments(ctx, b, st.serial, st.serial == st.read) // one build per serial over replicas (replica_docs.go)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := s.shrinkGuard(docs.Plugins, force); err != nil {
		return nil, nil, nil, err
	}
	return b, cat, docs, nil
}

func (s *Service) shrinkGuard(entries int, force bool) error {
	if prev := s.docs.Load(); prev != nil && !force && s.fallback.Load() == nil {
		if reason := shrinkReason(prev.Plugins, entries, s.cfg.MaxShrink); reason != "" {
			return &limitError{Rule: "index.shrink", Reason: reason}
		}
	}
	return nil
}

// checkCandidate checks, before a change to package id is committed, that the index entry
// the package would then have is one hosts can read (index.invalid otherwise, a 422
// naming the rule). change applies the change to the package's rows as the commit will to
// the store. Only that package is read and encoded: no change depends on the catalogue's
// size, which the size policy absorbs. rebuildMu is held, and stays held through the
// commit and the incremental build.
func (s *Service) checkCandidate(ctx context.Context, what, id string, change func(*pkgState) error) error {
	ps, err := s.loadPackage(ctx, id)
	if err != nil {
		return err
	}
	if err := change(ps); err != nil {
		return err
	}
	it, err := s.itemFor(ctx, newListIndexCached(s), id, ps.rels, ps.pkg)
	if err != nil || it == nil {
		return err
	}
	if _, err := s.encode(it); err != nil {
		return refuseOne(ErrInvalid, "index.invalid", "", "%s was refused before anything was stored: with it, the index entry of %s would be one hosts cannot read (%v); fix the fields the index shows (id, kind, description, display_name, author, categories) or ask the registry's operator", what, id, err)
	}
	return nil
}

// pkgState is one package's rows: its releases and its curation row.
type pkgState struct {
	rels []*store.Release
	pkg  *store.Package
}

func (s *Service) loadPackage(ctx context.Context, id string) (*pkgState, error) {
	rels, err := s.store.Releases(ctx, id)
	if err != nil {
		return nil, err
	}
	pkg, err := s.store.Package(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		pkg, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &pkgState{rels: rels, pkg: pkg}, nil
}

// afterChange updates the catalog and documents after a committed change to the packages
// ids, on the Service's own context: a client that went away must not leave the index
// stale. Only those packages are read and re-encoded. A failure is retried in the
// background (a full rebuild) and reported through LastRefusal and PendingRebuild; the
// change itself stands.
func (s *Service) afterChange(what string, ids ...string) {
	if s.afterCommit != nil {
		s.afterCommit()
	}
	if err := s.applyLocked(s.ctx, ids); err != nil {
		s.retry.failed(s, what, err)
	}
}

// PendingRebuild describes a committed change the index documents do not show yet: the
// rebuild after it failed and is being retried.
type PendingRebuild struct {
	Change    string    `json:"change"` // the first change not shown, e.g. "publish acme-hello@1.2.0"
	Since     time.Time `json:"since"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
}

// PendingRebuild returns the rebuild being retried, or nil when the documents show every
// committed change.
func (s *Service) PendingRebuild() *PendingRebuild { return s.retry.status() }

// retrier owns the background retry of failed rebuilds: one goroutine at a time, backing
// off from base to 30 s, stopped by Close.
type retrier struct {
	mu      sync.Mutex
	running bool
	gen     int // bumped by every failure, so a success only ends the failures it covered
	pending *PendingRebuild
	base    time.Duration
}

const maxRetryDelay = 30 * time.Second

func (r *retrier) failed(s *Service, what string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recordLocked(s, what, err)
	s.refusal.Store(&IndexRefusal{At: s.now(), Reason: fmt.Sprintf(
		"the index does not show %s yet: the rebuild failed (%v); retrying", r.pending.Change, err)})
	s.log.Error("rebuild after a committed change failed; retrying", "change", what, "err", err)
}

// failedAtStart retries, in the background, the rebuild at start that failed with a
// storage error while a fallback is served; the fallback's refusal stays the one reported.
func (r *retrier) failedAtStart(s *Service, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recordLocked(s, "the rebuild at start", err)
}

// recordLocked records the failure and starts the retry loop unless it runs; r.mu is held.
func (r *retrier) recordLocked(s *Service, what string, err error) {
	r.gen++
	if r.pending == nil {
		r.pending = &PendingRebuild{Change: what, Since: s.now()}
	}
	r.pending.Attempts++
	r.pending.LastError = err.Error()
	if !r.running {
		r.running = true
		go r.loop(s)
	}
}

func (r *retrier) loop(s *Service) {
	delay := r.base
	if delay == 0 {
		delay = 500 * time.Millisecond
	}
	for {
		select {
		case <-s.ctx.Done():
			r.mu.Lock()
			r.running = false
			r.mu.Unlock()
			return
		case <-time.After(delay):
		}
		r.mu.Lock()
		gen := r.gen
		r.mu.Unlock()
		// Forced, with the list in force (never a refused one): what failed was a committed
		// change or a blob-health change, and the shrink guard is for list mistakes, which
		// SetList refuses before anything is in force.
		s.rebuildMu.Lock()
		err := s.rebuildLocked(s.ctx, s.List(), true)
		s.rebuildMu.Unlock()
		r.mu.Lock()
		if err == nil && gen == r.gen {
			r.running, r.pending = false, nil
			r.mu.Unlock()
			s.log.Info("rebuild after a failed one succeeded; the index shows every committed change")
			return
		}
		if err != nil {
			r.pending.Attempts++
			r.pending.LastError = err.Error()
		}
		r.mu.Unlock()
		delay = min(2*delay, maxRetryDelay)
	}
}

func (r *retrier) status() *PendingRebuild {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		return nil
	}
	p := *r.pending
	return &p
}

// listedItemsOf pairs each chosen release with its entry in l, sorted by id.
func (s *Service) listedItemsOf(l *index.List, chosen map[string]*store.Release, pkgs map[string]*store.Package, downloads map[string]int64) []*Item {
	var items []*Item
	for i := range l.Plugins {
		e := &l.Plugins[i]
		if r, ok := chosen[e.ID]; ok && r.Kind != "extension" {
			items = append(items, &Item{ID: e.ID, Kind: r.Kind, Entry: e, Package: pkgs[e.ID], Latest: r, Downloads: downloads[e.ID]})
		}
	}
	for i := range l.Extensions {
		e := &l.Extensions[i]
		if r, ok := chosen[e.Name]; ok && r.Kind == "extension" {
			items = append(items, &Item{ID: e.Name, Kind: r.Kind, ExtEntry: e, Package: pkgs[e.Name], Latest: r, Downloads: downloads[e.Name]})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return items
}
