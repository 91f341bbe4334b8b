package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/plist"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
	"github.com/pluginyard/registry/version"
)

// Document is one built index document, ready to serve from memory: its bytes and
// validators; its gzip representation (Gzip) is made once, on first use, off the write path.
type Document struct {
	Body         index.Body // the parts it is joined from (index.Body): never written
	ETag         string
	LastModified time.Time
	lazy         *docLazy
}

// Documents are the index documents of one rebuild.
type Documents struct {
	Kandev   Document
	Curupira Document
	Serial   int64
	Plugins  int // entries in the catalogue (the Kandev and Curupira documents' scope)
	// Total is how many plugins and canvases the catalogue has, Listed how many of them
	// index.json holds (Total unless it is partial); Mode is index.ModeFull, ModeCompact or
	// ModeSelected.
	Total, Listed int
	Mode          string
	// Signatures sign both documents (nil when no key is configured, or for a fallback).
	Signatures *IndexSignatures
	shards     *shardDocs
}

// IndexRefusal records a rebuild that was refused, the previous documents kept.
type IndexRefusal struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Item is a listed package with its latest non-yanked release, as pages and the API show it.
type Item struct {
	ID       string
	Kind     string // plugin | canvas | extension
	Entry    *index.Entry
	ExtEntry *index.ExtensionEntry
	Package  *store.Package
	Latest   *store.Release
	// Card is what lists and indexes need from Latest's manifest (stored at publish); the
	// whole manifest of a plugin is Service.Manifest, loaded for the one page that shows it.
	Card      *store.Card
	Extension *extension.Manifest // extensions: the card's fields, as the manifest type
	Signature *signature.Result
	IconURL   string
	Downloads int64 // every version
	// YankedNewest is the newest version when it was yanked (so Latest is an older one),
	// else "": cards say so without a query per card.
	YankedNewest string
	UpdatedAt    time.Time
}

// Name is the display name (extensions: their name, the id).
func (it *Item) Name() string {
	if it.Card != nil && it.Kind != "extension" {
		return it.Card.Name
	}
	return it.ID
}

// Description is the manifest's description.
func (it *Item) Description() string {
	if it.Card != nil {
		return it.Card.Description
	}
	return ""
}

// Author is the manifest's author (extensions: the repository owner).
func (it *Item) Author() string {
	if it.Kind != "extension" && it.Card != nil {
		return it.Card.Author
	}
	if it.ExtEntry != nil {
		owner, _, _ := strings.Cut(it.ExtEntry.Repo, "/")
		return owner
	}
	return ""
}

// Categories are the manifest's categories, else the curated list's.
func (it *Item) Categories() []string {
	if it.Kind != "extension" && it.Card != nil && len(it.Card.Categories) > 0 {
		return it.Card.Categories
	}
	if it.Entry != nil && len(it.Entry.Categories) > 0 {
		return it.Entry.Categories
	}
	if it.ExtEntry != nil && len(it.ExtEntry.Categories) > 0 {
		return it.ExtEntry.Categories
	}
	return []string{}
}

// RepoURL is the source repository: the curated owner/name on GitHub, else what the
// manifest declares.
func (it *Item) RepoURL() string {
	switch {
	case it.Entry != nil && it.Entry.Repo != "":
		return "https://github.com/" + it.Entry.Repo
	case it.ExtEntry != nil && it.ExtEntry.Repo != "":
		return "https://github.com/" + it.ExtEntry.Repo
	case it.Card == nil:
		return ""
	case it.Kind == "extension":
		return it.Card.Repository
	}
	return it.Card.RepoURL
}

// Featured reports the curated featured flag.
func (it *Item) Featured() bool {
	return (it.Entry != nil && it.Entry.Featured) || (it.ExtEntry != nil && it.ExtEntry.Featured)
}

// Catalog is the in-memory view of what is listed, rebuilt with the documents. A catalog
// in force is never changed: a change makes a new one that shares the unchanged items.
//
// Its items are a plist.List: a publish makes the next catalog by replacing one item, which
// copies a chunk of the list, not the list (50,000 pointers at 50k plugins).
type Catalog struct {
	items  plist.List[*Item] // sorted by id
	byFile *fileIDs
	views  viewsOnce // listing orders and aggregates, computed once per catalog (views.go)
	icons  iconIndex
}

// iconIndex maps an icon's sha256 to the latest releases (in id order) whose icon it is,
// made on a catalog's first icon request: a request for an icon nothing lists would
// otherwise read every item (about 1 ms at 50k plugins, for anyone to ask).
type iconIndex struct {
	once  sync.Once
	first map[string]*store.Release   // the first release (in id order) with each icon
	more  map[string][]*store.Release // the others, for the few icons packages share
}

// IconRelease is the first latest release listed (in id order) whose icon is sha and which
// keep accepts, or nil.
func (c *Catalog) IconRelease(sha string, keep func(*store.Release) bool) *store.Release {
	ix := &c.icons
	ix.once.Do(func() {
		ix.first, ix.more = make(map[string]*store.Release, c.Len()), map[string][]*store.Release{}
		for it := range c.All() {
			r := it.Latest
			if r == nil || r.IconSHA256 == "" {
				continue
			}
			if _, ok := ix.first[r.IconSHA256]; ok {
				ix.more[r.IconSHA256] = append(ix.more[r.IconSHA256], r)
			} else {
				ix.first[r.IconSHA256] = r
			}
		}
	})
	r, ok := ix.first[sha]
	if !ok || keep(r) {
		return r
	}
	for _, r := range ix.more[sha] {
		if keep(r) {
			return r
		}
	}
	return nil
}

// NewCatalog is a catalog listing items (copied, sorted by id).
func NewCatalog(items []*Item) *Catalog {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b *Item) int { return strings.Compare(a.ID, b.ID) })
	return &Catalog{items: plist.Of(sorted), byFile: newFileIDs()}
}

// Len is the number of listed packages.
func (c *Catalog) Len() int { return c.items.Len() }

// All yields the listed packages sorted by id. It walks the chunks itself rather than
// wrap plist's All (an iterator in an iterator: twice the cost of a scan per item).
func (c *Catalog) All() iter.Seq[*Item] {
	return func(yield func(*Item) bool) {
		for _, chunk := range c.items.Chunks() {
			for _, it := range chunk {
				if !yield(it) {
					return
				}
			}
		}
	}
}

// Items are the listed packages sorted by id, as a new slice (All iterates without one).
func (c *Catalog) Items() []*Item { return c.items.Slice() }

// Item returns a listed package by id.
func (c *Catalog) Item(id string) (*Item, bool) {
	i, ok := c.items.Search(func(it *Item) int { return strings.Compare(it.ID, id) })
	if !ok {
		return nil, false
	}
	return c.items.At(i), true
}

// PackageIDForFile maps the id part of a package URL back to the package id.
func (c *Catalog) PackageIDForFile(fileID string) (string, bool) {
	return c.byFile.get(fileID)
}

// fileIDs maps file ids (see FileID) to package ids, listed or not. Releases are never
// deleted, so it only grows; catalogs share it.
type fileIDs struct {
	mu sync.RWMutex
	m  map[string]string
}

func newFileIDs() *fileIDs { return &fileIDs{m: map[string]string{}} }

func (f *fileIDs) get(fileID string) (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	id, ok := f.m[fileID]
	return id, ok
}

func (f *fileIDs) add(id string) {
	f.mu.Lock()
	f.m[FileID(id)] = id
	f.mu.Unlock()
}

// Documents returns the documents in force (nil before the first rebuild).
func (s *Service) Documents() *Documents { return s.docs.Load() }

// Catalog returns the catalog in force.
func (s *Service) Catalog() *Catalog {
	if c := s.catalog.Load(); c != nil {
		return c
	}
	return &Catalog{byFile: newFileIDs()}
}

// LastRefusal returns the last refused rebuild, if any.
func (s *Service) LastRefusal() *IndexRefusal { return s.refusal.Load() }

// Rebuild recomputes the catalog and the index documents from the store and swaps them in
// atomically. A rebuild that would drop more than MaxShrink of the listed entries at once
// is refused and the previous documents stay. The catalogue's size never refuses one: the
// size policy (index.Policy) fits index.json within the host limit and shards the rest.
func (s *Service) Rebuild(ctx context.Context) error { return s.rebuild(ctx, false) }

// ForceRebuild rebuilds without the shrink guard (an admin who really delisted half). When
// the last SetList was refused, it rebuilds with that list, which is then in force.
func (s *Service) ForceRebuild(ctx context.Context) error { return s.rebuild(ctx, true) }

func (s *Service) rebuild(ctx context.Context, force bool) error {
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	s.backfillCardsOnce(ctx)
	l := s.List()
	if force && s.refusedList != nil {
		l = s.refusedList
	}
	err := s.rebuildLocked(ctx, l, force)
	if err == nil && l == s.refusedList {
		s.refusedList = nil
	}
	return err
}

// rebuildLocked builds everything from the store with list l and installs the result;
// rebuildMu is held.
func (s *Service) rebuildLocked(ctx context.Context, l *index.List, force bool) (err error) {
	start := time.Now()
	defer func() { s.observeRebuild(start, s.docs.Load(), err) }()
	if s.failRebuild != nil {
		if err := s.failRebuild(); err != nil {
			s.built = nil
			return err
		}
	}
	st, err := s.loadState(ctx, l)
	if err != nil {
		s.built = nil
		return err
	}
	b, cat, docs, err := s.build(ctx, st, force)
	var lim *limitError
	if errors.As(err, &lim) {
		return s.refuseRebuild(lim.Error())
	}
	if err != nil {
		s.built = nil
		return err
	}
	if s.beforeInstall != nil {
		s.beforeInstall()
	}
	return s.install(ctx, b, cat, docs, nil)
}

// install puts a list, its catalog and its documents in force together. changed names the
// packages an incremental build touched (their search rows are rewritten); nil means a
// full build, whose search rows replace the table unless it already holds them.
func (s *Service) install(ctx context.Context, b *built, cat *Catalog, docs *Documents, changed []string) error {
	if err := s.signDocuments(ctx, docs); err != nil {
		s.built = nil
		return err
	}
	if err := s.syncSearch(ctx, b, cat, changed); err != nil {
		s.built = nil
		return err
	}
	s.built = b
	s.list.Store(b.list)
	cat.views.basis.Store(viewsBasis(s.catalog.Load()))
	s.catalog.Store(cat)
	s.docs.Store(docs)
	if s.refusedList == nil { // a refused reload stays reported until a list is in force
		s.refusal.Store(nil)
	}
	s.fallback.Store(nil)
	if !s.cfg.NoLastGood {
		s.persist.request(docs) // the last good copy, off the write path; none after Close
	}
	if changed == nil {
		s.previews.request(s.ctx, b.list) // copies the list's new preview images, in the background
	}
	return nil
}

func (s *Service) refuseRebuild(reason string) error {
	s.refusal.Store(&IndexRefusal{At: s.now(), Reason: reason})
	s.log.Error("index rebuild refused; the previous index stays", "reason", reason)
	return fmt.Errorf("ingest: index rebuild refused: %s", reason)
}

func shrinkReason(before, after int, maxShrink float64) string {
	if before < 4 || float64(after) >= float64(before)*(1-maxShrink) {
		return ""
	}
	return fmt.Sprintf("the catalog would shrink from %d to %d entries at once (more than %.0f%%); if that is intended, reload with force", before, after, maxShrink*100)
}

// itemOf is the catalog item of package id in list l: its latest non-yanked release
// (by version.Compare) whose blob is whole; nil when it is not listed for that kind or has
// no such release. itemFor (quarantine.go) is it without what is quarantined.
func (s *Service) itemOf(ctx context.Context, li *listIndex, id string, rels []*store.Release, pkg *store.Package) (*Item, error) {
	var latest, newest *store.Release
	var downloads int64
	for _, r := range rels {
		downloads += r.Downloads
		if newest == nil || version.Compare(r.Version, newest.Version) > 0 {
			newest = r
		}
		if r.Yanked || s.BlobDamaged(r.SHA256) { // a damaged blob cannot be installed
			continue
		}
		if latest == nil || version.Compare(r.Version, latest.Version) > 0 {
			latest = r
		}
	}
	if latest == nil {
		return nil, nil
	}
	it := &Item{ID: id, Kind: latest.Kind, Package: pkg, Latest: latest, Downloads: downloads}
	if latest.Kind == "extension" {
		if it.ExtEntry = li.extensions[id]; it.ExtEntry == nil {
			return nil, nil
		}
	} else if it.Entry = li.plugins[id]; it.Entry == nil {
		return nil, nil
	}
	if err := s.fillItem(ctx, it); err != nil {
		return nil, err
	}
	if newest.Yanked {
		it.YankedNewest = newest.Version
	}
	return it, nil
}

// listIndex finds a list's entries by id.
type listIndex struct {
	list       *index.List
	plugins    map[string]*index.Entry
	extensions map[string]*index.ExtensionEntry
}

func newListIndex(l *index.List) *listIndex {
	li := &listIndex{list: l, plugins: map[string]*index.Entry{}, extensions: map[string]*index.ExtensionEntry{}}
	if l == nil {
		return li
	}
	for i := range l.Plugins {
		if _, dup := li.plugins[l.Plugins[i].ID]; !dup {
			li.plugins[l.Plugins[i].ID] = &l.Plugins[i]
		}
	}
	for i := range l.Extensions {
		if _, dup := li.extensions[l.Extensions[i].Name]; !dup {
			li.extensions[l.Extensions[i].Name] = &l.Extensions[i]
		}
	}
	return li
}

func (s *Service) fillItem(ctx context.Context, it *Item) error {
	r := it.Latest
	card, err := s.storedCard(ctx, r)
	if err != nil {
		return err
	}
	it.Card = card
	if it.Kind == "extension" {
		it.Extension = extensionOfCard(card)
	}
	if len(r.Signature) > 0 {
		var sig signature.Result
		if err := json.Unmarshal(r.Signature, &sig); err != nil {
			return fmt.Errorf("ingest: release %d signature: %w", r.ID, err)
		}
		it.Signature = &sig
	}
	if r.IconSHA256 != "" && !s.BlobDamaged(r.IconSHA256) {
		it.IconURL = fmt.Sprintf("%s/icons/%s.%s", s.cfg.PublicURL, r.IconSHA256, r.IconExt)
	}
	it.UpdatedAt = r.CreatedAt
	if it.Package != nil && it.Package.PushedAt != nil && it.Package.PushedAt.After(it.UpdatedAt) {
		it.UpdatedAt = *it.Package.PushedAt
	}
	return nil
}

// extensionOfCard is the manifest of an extension as its card records it.
func extensionOfCard(c *store.Card) *extension.Manifest {
	m := &extension.Manifest{Name: c.Name, Version: c.Version, Description: c.Description, ProtocolVersion: c.ProtocolVersion,
		Runtime: c.Runtime, TriggerTypes: c.TriggerTypes, License: c.License, Repository: c.Repository}
	if c.Launch != nil {
		m.Launch = extension.Launch{Type: c.Launch.Type, Package: c.Launch.Package, Version: c.Launch.Version,
			Command: c.Launch.Command, Args: c.Launch.Args}
	}
	return m
}

// parsedManifest parses a release's stored manifest; the cache keeps the last few parsed
// (a plugin's page shows its whole manifest; nothing else parses one).
func (s *Service) parsedManifest(ctx context.Context, r *store.Release) (any, error) {
	if r.ID == 0 {
		return parseStored(r) // a candidate release, not stored yet: nothing to cache by
	}
	if v, ok := s.manifests.get(r.ID); ok {
		return v, nil
	}
	c := *r // the caller's release stays without its manifest bytes
	c.Manifest = nil
	if err := s.store.FillManifests(ctx, []*store.Release{&c}); err != nil {
		return nil, err
	}
	v, err := parseStored(&c)
	if err != nil {
		return nil, err
	}
	s.manifests.put(r.ID, v)
	return v, nil
}

// Manifest is the whole parsed manifest of a plugin's or canvas's latest release, for the
// one page that shows it (lists and indexes use Item.Card). Parsed manifests are cached,
// a bounded number of them.
func (s *Service) Manifest(ctx context.Context, it *Item) (*manifest.Manifest, error) {
	v, err := s.parsedManifest(ctx, it.Latest)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*manifest.Manifest)
	if !ok {
		return nil, fmt.Errorf("ingest: %s@%s is an extension, it has no manifest.yaml", it.ID, it.Latest.Version)
	}
	return m, nil
}

func parseStored(r *store.Release) (any, error) {
	if r.Kind == "extension" {
		m, _ := extension.Parse(r.Manifest)
		if m == nil {
			return nil, fmt.Errorf("ingest: stored extension manifest of release %d no longer parses", r.ID)
		}
		return m, nil
	}
	m, _ := manifest.Parse(r.Manifest)
	if m == nil {
		return nil, fmt.Errorf("ingest: stored manifest of release %d no longer parses", r.ID)
	}
	return m, nil
}

// newDocument is a document of body; its gzip is made on first use (Gzip).
func newDocument(body []byte, at time.Time) Document {
	return newDocumentDigest(index.BodyOf(body), at, index.Digest(body))
}

// newDocumentDigest is newDocument when body's index.Digest is known: its ETag.
func newDocumentDigest(body index.Body, at time.Time, digest [sha256.Size]byte) Document {
	return Document{Body: body, ETag: `"` + hex.EncodeToString(digest[:16]) + `"`, LastModified: at.Truncate(time.Second),
		lazy: &docLazy{}}
}

// searchDoc is the search row of one item.
func searchDoc(it *Item) store.SearchDoc {
	return store.SearchDoc{ID: it.ID, Name: it.Name(), Description: it.Description(), Author: it.Author(),
		Categories: it.Categories(), Kind: it.Kind, UpdatedAt: it.UpdatedAt, Downloads: it.Downloads}
}

func searchDocs(cat *Catalog) []store.SearchDoc {
	docs := make([]store.SearchDoc, 0, cat.Len())
	for it := range cat.All() {
		docs = append(docs, searchDoc(it))
	}
	return docs
}
