package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
	"github.com/pluginyard/registry/version"
)

// Document is one built index document, ready to serve: plain and gzip bytes and their
// validators.
type Document struct {
	Body         []byte
	Gzip         []byte
	ETag         string
	LastModified time.Time
	File         string // Body on disk, for zero-copy serving; "" when only in memory
}

// Documents are the index documents of one rebuild.
type Documents struct {
	Kandev   Document
	Curupira Document
	Serial   int64
	Plugins  int // entries in the Kandev document
	// Signatures sign both documents (nil when no key is configured, or for a fallback).
	Signatures *IndexSignatures
}

// IndexRefusal records a rebuild that was refused, the previous documents kept.
type IndexRefusal struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Item is a listed package with its latest non-yanked release, as pages and the API show it.
type Item struct {
	ID        string
	Kind      string // plugin | canvas | extension
	Entry     *index.Entry
	ExtEntry  *index.ExtensionEntry
	Package   *store.Package
	Latest    *store.Release
	Card      *store.Card         // what lists and indexes need from Latest's manifest
	Manifest  *manifest.Manifest  // plugins and canvases
	Extension *extension.Manifest // extensions
	Signature *signature.Result
	IconURL   string
	Downloads int64 // every version
	// YankedNewest is the newest version when it was yanked (so Latest is an older one),
	// else "": cards say so without a query per card.
	YankedNewest string
	UpdatedAt    time.Time
}

// Name is the display name.
func (it *Item) Name() string {
	if it.Manifest != nil {
		return it.Manifest.Name()
	}
	return it.ID
}

// Description is the manifest's description.
func (it *Item) Description() string {
	switch {
	case it.Manifest != nil:
		return it.Manifest.Description
	case it.Extension != nil:
		return it.Extension.Description
	}
	return ""
}

// Author is the manifest's author (extensions: the repository owner).
func (it *Item) Author() string {
	if it.Manifest != nil {
		return it.Manifest.Author
	}
	if it.ExtEntry != nil {
		owner, _, _ := strings.Cut(it.ExtEntry.Repo, "/")
		return owner
	}
	return ""
}

// Categories are the manifest's categories, else the curated list's.
func (it *Item) Categories() []string {
	if it.Manifest != nil && len(it.Manifest.Categories) > 0 {
		return it.Manifest.Categories
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
	case it.Manifest != nil:
		return it.Manifest.RepoURL
	case it.Extension != nil:
		return it.Extension.Repository
	}
	return ""
}

// Featured reports the curated featured flag.
func (it *Item) Featured() bool {
	return (it.Entry != nil && it.Entry.Featured) || (it.ExtEntry != nil && it.ExtEntry.Featured)
}

// Catalog is the in-memory view of what is listed, rebuilt with the documents.
type Catalog struct {
	Items  []*Item // sorted by id
	byID   map[string]*Item
	byFile map[string]string // file id (see FileID) → package id, listed or not
	views  viewsOnce         // listing orders and aggregates, computed once per catalog (views.go)
}

// Item returns a listed package by id.
func (c *Catalog) Item(id string) (*Item, bool) {
	it, ok := c.byID[id]
	return it, ok
}

// PackageIDForFile maps the id part of a package URL back to the package id.
func (c *Catalog) PackageIDForFile(fileID string) (string, bool) {
	id, ok := c.byFile[fileID]
	return id, ok
}

// Documents returns the documents in force (nil before the first rebuild).
func (s *Service) Documents() *Documents { return s.docs.Load() }

// Catalog returns the catalog in force.
func (s *Service) Catalog() *Catalog {
	if c := s.catalog.Load(); c != nil {
		return c
	}
	return &Catalog{byID: map[string]*Item{}, byFile: map[string]string{}}
}

// LastRefusal returns the last refused rebuild, if any.
func (s *Service) LastRefusal() *IndexRefusal { return s.refusal.Load() }

// Rebuild recomputes the catalog and the index documents from the store and swaps them in
// atomically. A rebuild that would exceed the host size cap, or drop more than MaxShrink of
// the listed entries at once, is refused and the previous documents stay.
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

// rebuildLocked builds from the store with list l and installs the result; rebuildMu is held.
func (s *Service) rebuildLocked(ctx context.Context, l *index.List, force bool) (err error) {
	start := time.Now()
	defer func() { s.observeRebuild(start, s.docs.Load(), err) }()
	if s.failRebuild != nil {
		if err := s.failRebuild(); err != nil {
			return err
		}
	}
	st, err := s.loadState(ctx, l)
	if err != nil {
		return err
	}
	cat, docs, err := s.build(ctx, st, force)
	var lim *limitError
	if errors.As(err, &lim) {
		return s.refuseRebuild(lim.Error())
	}
	if err != nil {
		return err
	}
	if s.beforeInstall != nil {
		s.beforeInstall()
	}
	return s.install(ctx, l, cat, docs)
}

// install puts a list, its catalog and its documents in force together.
func (s *Service) install(ctx context.Context, l *index.List, cat *Catalog, docs *Documents) error {
	if err := s.signDocuments(ctx, docs); err != nil {
		return err
	}
	if err := s.store.ReplaceSearch(ctx, searchDocs(cat)); err != nil {
		return err
	}
	s.writeDocFiles(docs)
	s.list.Store(l)
	s.catalog.Store(cat)
	s.docs.Store(docs)
	if s.refusedList == nil { // a refused reload stays reported until a list is in force
		s.refusal.Store(nil)
	}
	s.keepLastGood(docs)
	s.previews.request(s.ctx, l) // copies the list's new preview images, in the background
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

// buildCatalog picks each listed package's latest non-yanked release (by version.Compare).
func (s *Service) buildCatalog(ctx context.Context, st *state) (*Catalog, error) {
	cat := &Catalog{byID: map[string]*Item{}, byFile: map[string]string{}}
	latest, newest, downloads := map[string]*store.Release{}, map[string]*store.Release{}, map[string]int64{}
	for _, r := range st.rels {
		cat.byFile[FileID(r.PackageID)] = r.PackageID
		downloads[r.PackageID] += r.Downloads
		if cur, ok := newest[r.PackageID]; !ok || version.Compare(r.Version, cur.Version) > 0 {
			newest[r.PackageID] = r
		}
		if r.Yanked || s.BlobDamaged(r.SHA256) { // a damaged blob cannot be installed
			continue
		}
		if cur, ok := latest[r.PackageID]; !ok || version.Compare(r.Version, cur.Version) > 0 {
			latest[r.PackageID] = r
		}
	}
	for _, it := range s.listedItemsOf(st.list, latest, st.pkgs, downloads) {
		if err := s.fillItem(ctx, it); err != nil {
			return nil, err
		}
		if n := newest[it.ID]; n != nil && n.Yanked {
			it.YankedNewest = n.Version
		}
		cat.Items = append(cat.Items, it)
		cat.byID[it.ID] = it
	}
	return cat, nil
}

func (s *Service) fillItem(ctx context.Context, it *Item) error {
	r := it.Latest
	card, err := s.storedCard(ctx, r)
	if err != nil {
		return err
	}
	it.Card = card
	parsed, err := s.parsedManifest(ctx, r)
	if err != nil {
		return err
	}
	switch m := parsed.(type) {
	case *manifest.Manifest:
		it.Manifest = m
	case *extension.Manifest:
		it.Extension = m
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

// parsedManifest parses a release's stored manifest once; releases never change.
func (s *Service) parsedManifest(ctx context.Context, r *store.Release) (any, error) {
	if r.ID == 0 {
		return parseStored(r) // a candidate release, not stored yet: nothing to cache by
	}
	if v, ok := s.cache.Load(r.ID); ok {
		return v, nil
	}
	if err := s.store.FillManifests(ctx, []*store.Release{r}); err != nil {
		return nil, err
	}
	v, err := parseStored(r)
	if err != nil {
		return nil, err
	}
	s.cache.Store(r.ID, v)
	return v, nil
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

func (s *Service) buildDocuments(cat *Catalog, serial int64) (*Documents, error) {
	b, err := s.buildBodies(cat, serial)
	if err != nil {
		return nil, err
	}
	kd, err := newDocument(b.kandev, b.at)
	if err != nil {
		return nil, err
	}
	cd, err := newDocument(b.curupira, b.at)
	if err != nil {
		return nil, err
	}
	return &Documents{Kandev: kd, Curupira: cd, Serial: serial, Plugins: b.entries}, nil
}

// bodies are the documents' bytes before compression.
type bodies struct {
	kandev, curupira []byte
	entries          int
	at               time.Time
}

// buildBodies renders the documents of cat and checks them against the host limit (a
// *limitError when over it).
func (s *Service) buildBodies(cat *Catalog, serial int64) (bodies, error) {
	b := bodies{at: s.now()}
	snap := index.Snapshot{Serial: serial, GeneratedAt: b.at,
		Source: index.Source{Name: s.cfg.SourceName, URL: s.cfg.PublicURL + "/index.json"}}
	for _, it := range cat.Items {
		if it.Kind == "extension" {
			snap.Extensions = append(snap.Extensions, s.extensionEntry(it))
		} else {
			snap.Plugins = append(snap.Plugins, s.pluginEntry(it))
		}
	}
	b.entries = len(snap.Plugins) + len(snap.Extensions)
	var err error
	if b.kandev, err = index.BuildKandev(snap); err != nil {
		return b, &limitError{Rule: "index.invalid", Reason: err.Error()}
	}
	if len(b.kandev) > s.cfg.MaxIndexBytes {
		return b, sizeError("index.json", len(b.kandev), s.cfg.MaxIndexBytes)
	}
	if b.curupira, err = index.BuildCurupira(snap); err != nil {
		return b, &limitError{Rule: "index.invalid", Reason: err.Error()}
	}
	if len(b.curupira) > s.cfg.MaxIndexBytes {
		return b, sizeError("curupira/index.json", len(b.curupira), s.cfg.MaxIndexBytes)
	}
	return b, nil
}

func newDocument(body []byte, at time.Time) (Document, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return Document{}, err
	}
	if _, err := zw.Write(body); err != nil {
		return Document{}, err
	}
	if err := zw.Close(); err != nil {
		return Document{}, err
	}
	sum := sha256.Sum256(body)
	return Document{Body: body, Gzip: buf.Bytes(), ETag: `"` + hex.EncodeToString(sum[:16]) + `"`,
		LastModified: at.Truncate(time.Second)}, nil
}

func searchDocs(cat *Catalog) []store.SearchDoc {
	docs := make([]store.SearchDoc, 0, len(cat.Items))
	for _, it := range cat.Items {
		docs = append(docs, store.SearchDoc{ID: it.ID, Name: it.Name(), Description: it.Description(), Author: it.Author(),
			Categories: it.Categories(), Kind: it.Kind, UpdatedAt: it.UpdatedAt, Downloads: it.Downloads})
	}
	return docs
}
