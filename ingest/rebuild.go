package ingest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// state is what a catalog and its documents are built from: a curated list and the store's
// rows, possibly with a change not yet committed applied (a candidate).
type state struct {
	list   *index.List
	rels   []*store.Release
	pkgs   map[string]*store.Package
	serial int64
}

func (s *Service) loadState(ctx context.Context, l *index.List) (*state, error) {
	serial, err := s.store.Serial(ctx)
	if err != nil {
		return nil, err
	}
	rels, err := s.store.AllReleases(ctx)
	if err != nil {
		return nil, err
	}
	pkgs, err := s.store.Packages(ctx)
	if err != nil {
		return nil, err
	}
	return &state{list: l, rels: rels, pkgs: pkgs, serial: serial}, nil
}

// limitError is documents a host would not take, or a change the guard holds back.
type limitError struct {
	Rule   string // index.size | index.shrink | index.invalid
	Reason string
}

func (e *limitError) Error() string { return e.Reason }

func sizeError(doc string, size, limit int) *limitError {
	return &limitError{Rule: "index.size", Reason: fmt.Sprintf(
		"%s would be %d bytes, over the %d-byte host cap by %d bytes (hosts refuse a larger document)", doc, size, limit, size-limit)}
}

// build makes the catalog and documents of st; a *limitError when a host limit or (unless
// force) the shrink guard refuses them.
func (s *Service) build(ctx context.Context, st *state, force bool) (*Catalog, *Documents, error) {
	cat, err := s.buildCatalog(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	docs, err := s.buildDocuments(cat, st.serial)
	if err != nil {
		return nil, nil, err
	}
	if err := s.shrinkGuard(docs.Plugins, force); err != nil {
		return nil, nil, err
	}
	return cat, docs, nil
}

func (s *Service) shrinkGuard(entries int, force bool) error {
	if prev := s.docs.Load(); prev != nil && !force {
		if reason := shrinkReason(prev.Plugins, entries, s.cfg.MaxShrink); reason != "" {
			return &limitError{Rule: "index.shrink", Reason: reason}
		}
	}
	return nil
}

// checkCandidate builds the documents the store will give once change is committed (change
// applies it to the loaded rows as the commit will to the store) and refuses it, with a
// 422 naming the rule, when a host would not take them. rebuildMu is held, and stays held
// through the commit and the rebuild, so two changes cannot both pass against the same
// documents.
func (s *Service) checkCandidate(ctx context.Context, what string, change func(*state) error) error {
	st, err := s.loadState(ctx, s.List())
	if err != nil {
		return err
	}
	if err := change(st); err != nil {
		return err
	}
	st.serial++ // the commit bumps it
	cat, err := s.buildCatalog(ctx, st)
	if err != nil {
		return err
	}
	b, err := s.buildBodies(cat, st.serial) // no compression: only the sizes matter here
	if err == nil {
		err = s.shrinkGuard(b.entries, false)
	}
	var lim *limitError
	if errors.As(err, &lim) {
		return refuseOne(ErrInvalid, lim.Rule, "", "%s was refused before anything was stored: with it, %s; shorten the fields the index shows (description, display_name, author, categories) or ask the registry's operator", what, lim.Reason)
	}
	return err
}

// afterChange rebuilds after a committed change, on the Service's own context: a client
// that went away must not leave the index stale. A failure is retried in the background
// and reported through LastRefusal and PendingRebuild; the change itself stands.
func (s *Service) afterChange(what string) {
	if s.afterCommit != nil {
		s.afterCommit()
	}
	if err := s.rebuildLocked(s.ctx, s.List(), false); err != nil {
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
	r.gen++
	if r.pending == nil {
		r.pending = &PendingRebuild{Change: what, Since: s.now()}
	}
	r.pending.Attempts++
	r.pending.LastError = err.Error()
	s.refusal.Store(&IndexRefusal{At: s.now(), Reason: fmt.Sprintf(
		"the index does not show %s yet: the rebuild failed (%v); retrying", r.pending.Change, err)})
	s.log.Error("rebuild after a committed change failed; retrying", "change", what, "err", err)
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
