package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// The per-package documents and the change feed let a mirror or a host keep up with the
// registry by fetching only what changed (docs/sync-for-tools.md): GET /api/v1/changes
// says which packages changed after a serial, GET /api/v1/index/{file id}.json is one
// package's releases, GET /api/v1/index.json names every listed package.

// PackageIndexPath is the path of a package's document: /api/v1/index/<file id>.json
// (FileID: an extension @scope/name is scope-name).
func PackageIndexPath(id string) string {
	return "/api/v1/index/" + url.PathEscape(FileID(id)) + ".json"
}

// PackageIndexURL is the absolute URL of a package's document.
func (s *Service) PackageIndexURL(id string) string { return s.cfg.PublicURL + PackageIndexPath(id) }

// ReleaseLine is one release in a package document. Every field is fixed at publish and
// never changes (what can change, yanks and deprecation, is in PackageState), so a mirror
// may keep a line once it has it, as crates.io's index keeps its lines.
type ReleaseLine struct {
	Version       string    `json:"version"`
	Kind          string    `json:"kind"` // plugin | canvas | extension
	PackageURL    string    `json:"package_url"`
	PackageSHA256 string    `json:"package_sha256"`
	Size          int64     `json:"size"`
	PublishedAt   time.Time `json:"published_at"`
	// From the release's card (left out for a release whose card is not computed yet):
	// what a host checks before it installs. Platforms is empty for a release without an
	// executable (UI or web-app only).
	APIVersion       int      `json:"api_version,omitempty"`
	MinKandevVersion string   `json:"min_kandev_version,omitempty"`
	Platforms        []string `json:"platforms,omitempty"`
	ProtocolVersion  int      `json:"protocol_version,omitempty"` // extensions
}

// PackageState is what can change about a package after its releases were published.
type PackageState struct {
	Deprecated *Deprecation `json:"deprecated"` // null when not deprecated
	Yanked     []Yank       `json:"yanked"`     // the yanked versions, in publish order
	// Curated are the host ranges an admin narrowed after publish (registry compat set), in
	// publish order: a host newer than MaxKandev must not install that version.
	Curated []Curated `json:"curated"`
	// Quarantined are the quarantines in force (docs/quarantine.md): the whole package
	// (version "") or releases a mirror must stop serving. Absent when there is none, so
	// the documents of packages never quarantined keep their bytes.
	Quarantined []Quarantined `json:"quarantined,omitempty"`
	// ArchivedAt is when its owner archived it (no more releases expected; docs/archived.md);
	// absent while active.
	ArchivedAt *time.Time `json:"archived_at,omitempty"`
}

// Quarantined is one quarantine of a package document's state.
type Quarantined struct {
	Version string `json:"version"` // "" for the whole package
	Reason  string `json:"reason"`
}

// Curated is one release's curated host range.
type Curated struct {
	Version   string `json:"version"`
	MaxKandev string `json:"max_kandev"`
	Reason    string `json:"reason"`
}

// Deprecation is a package's deprecation notice.
type Deprecation struct {
	Reason      string `json:"reason"`
	Replacement string `json:"replacement,omitempty"`
}

// Yank is one yanked release.
type Yank struct {
	Version string `json:"version"`
	Reason  string `json:"reason,omitempty"`
}

// PackageIndex is a built package document: its bytes and strong ETag.
type PackageIndex struct {
	ID   string
	Body []byte
	ETag string
}

// PackageIndexByFile builds the document of the listed package whose file id is fileID
// (the id part of /api/v1/index/<file id>.json) from that package's rows alone, so its cost
// is bounded by the package's releases, never by the catalogue. ErrNotFound when no listed
// package with a release has that file id.
func (s *Service) PackageIndexByFile(ctx context.Context, fileID string) (*PackageIndex, error) {
	found := listedByFileIndexed(s.List(), fileID)
	if len(found) != 1 {
		return nil, fmt.Errorf("ingest: package index %q: %w", fileID, ErrNotFound)
	}
	return s.packageIndex(ctx, found[0].ID, found[0].Extension)
}

// fileIndex maps the file ids of one curated list to its entries (listedByFile, without a
// walk of the list per request). One slot, for the list in force: a reload replaces it.
type fileIndex struct {
	list   *index.List
	byFile map[string][]target
}

var lastFileIndex atomic.Pointer[fileIndex]

// listedByFileIndexed is listedByFile(l, fileID) in time independent of the list's length
// once l was indexed.
func listedByFileIndexed(l *index.List, fileID string) []target {
	fi := lastFileIndex.Load()
	if fi == nil || fi.list != l {
		fi = &fileIndex{list: l, byFile: map[string][]target{}}
		if l != nil {
			for i := range l.Plugins {
				id := l.Plugins[i].ID
				fi.byFile[id] = listedByFile(&index.List{Plugins: l.Plugins[i : i+1]}, id)
			}
			for i := range l.Extensions {
				fid := FileID(l.Extensions[i].Name)
				fi.byFile[fid] = append(fi.byFile[fid], listedByFile(&index.List{Extensions: l.Extensions[i : i+1]}, fid)...)
			}
		}
		lastFileIndex.Store(fi)
	}
	return fi.byFile[fileID]
}

func (s *Service) packageIndex(ctx context.Context, id string, ext bool) (*PackageIndex, error) {
	rels, err := s.store.Releases(ctx, id)
	if err != nil {
		return nil, err
	}
	rels = releasesOfKind(rels, ext)
	if len(rels) == 0 {
		return nil, fmt.Errorf("ingest: package index %q: no release: %w", id, ErrNotFound)
	}
	pkg, err := s.store.Package(ctx, id)
	if err != nil {
		return nil, err
	}
	curated, err := s.store.Curations(ctx, id)
	if err != nil {
		return nil, err
	}
	body, err := s.packageIndexBody(id, rels, pkg, curated)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return &PackageIndex{ID: id, Body: body, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// releasesOfKind keeps the releases a listing of that kind shows (as listedItemsOf pairs
// them), oldest published first: lines are only ever appended.
func releasesOfKind(rels []*store.Release, ext bool) []*store.Release {
	out := rels[:0:0]
	for _, r := range rels {
		if (r.Kind == "extension") == ext {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// packageIndexBody renders the document: one release per line, then the mutable state.
//
//	{"id":"acme-hello","releases":[
//	{"version":"1.0.0",...},
//	{"version":"1.1.0",...}
//	],
//	"state":{"deprecated":null,"yanked":[{"version":"1.0.0","reason":"..."}],
//	 "curated":[{"version":"1.1.0","max_kandev":"0.95.0","reason":"..."}]}}
func (s *Service) packageIndexBody(id string, rels []*store.Release, pkg *store.Package, curated map[string]store.Curation) ([]byte, error) {
	var buf bytes.Buffer
	head, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`{"id":`)
	buf.Write(head)
	buf.WriteString(`,"releases":[`)
	state := PackageState{Yanked: []Yank{}, Curated: []Curated{}}
	for i, r := range rels {
		line, err := json.Marshal(s.releaseLine(r))
		if err != nil {
			return nil, fmt.Errorf("ingest: package index %s@%s: %w", id, r.Version, err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
		buf.Write(line)
		if r.Yanked {
			state.Yanked = append(state.Yanked, Yank{Version: r.Version, Reason: r.YankReason})
		}
		if c, ok := curated[r.Version]; ok {
			state.Curated = append(state.Curated, Curated{Version: r.Version, MaxKandev: c.MaxKandev, Reason: c.Reason})
		}
	}
	for _, q := range s.QuarantinesOf(id) {
		state.Quarantined = append(state.Quarantined, Quarantined{Version: q.Version, Reason: q.Reason})
	}
	if pkg.DeprecatedReason != "" {
		state.Deprecated = &Deprecation{Reason: pkg.DeprecatedReason, Replacement: pkg.DeprecatedReplacement}
	}
	state.ArchivedAt = pkg.ArchivedAt
	tail, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	buf.WriteString("\n],\n\"state\":")
	buf.Write(tail)
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

func (s *Service) releaseLine(r *store.Release) ReleaseLine {
	l := ReleaseLine{Version: r.Version, Kind: r.Kind, PackageURL: s.PackageURL(r.PackageID, r.Version),
		PackageSHA256: r.SHA256, Size: r.Size, PublishedAt: r.CreatedAt}
	if c := r.Card; c != nil {
		l.APIVersion, l.MinKandevVersion, l.ProtocolVersion = c.APIVersion, c.MinKandevVersion, c.ProtocolVersion
		l.Platforms = c.Platforms
	}
	return l
}

// Listing is GET /api/v1/index.json: the serial it was read at and every listed package
// with a release, with the URL of its document.
type Listing struct {
	Serial        int64          `json:"serial"`
	CompleteSince int64          `json:"complete_since"`
	Packages      []ListingEntry `json:"packages"`
}

// ListingEntry names one package of a Listing.
type ListingEntry struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Listing returns every listed package that has a release, sorted by id, with the serial
// read before it: a mirror that fetches the listing, then the documents, then the feed
// after Serial misses nothing (what changed meanwhile it fetches twice). Its cost grows
// with the catalogue; a mirror needs it only to start, after a "list" change, or when
// its serial is older than CompleteSince.
func (s *Service) Listing(ctx context.Context) (*Listing, error) { return s.listing(ctx, s.List()) }

func (s *Service) listing(ctx context.Context, l *index.List) (*Listing, error) {
	serial, since, err := s.store.FeedSerials(ctx)
	if err != nil {
		return nil, err
	}
	pkgs, err := s.store.Packages(ctx)
	if err != nil {
		return nil, err
	}
	out := &Listing{Serial: serial, CompleteSince: since, Packages: []ListingEntry{}}
	add := func(id string, ext bool) {
		if p, ok := pkgs[id]; ok && (p.Kind == "extension") == ext {
			out.Packages = append(out.Packages, ListingEntry{ID: id, URL: s.PackageIndexURL(id)})
		}
	}
	for i := range l.Plugins {
		add(l.Plugins[i].ID, false)
	}
	for i := range l.Extensions {
		add(l.Extensions[i].Name, true)
	}
	sort.Slice(out.Packages, func(i, j int) bool { return out.Packages[i].ID < out.Packages[j].ID })
	return out, nil
}

// listingCache is the last listing served, by the serial and list it was built at: every
// change that can change the listing bumps the serial, and a reload also replaces the list.
type listingCache struct {
	svc    *Service
	serial int64
	list   *index.List
	doc    PackageIndex
}

var lastListing atomic.Pointer[listingCache]

// ListingDocument is the Listing as served (FeedJSON) with its strong ETag, built once per
// serial and list: its cost grows with the catalogue, so repeated reads must not.
func (s *Service) ListingDocument(ctx context.Context) (*PackageIndex, error) {
	l := s.List()
	serial, _, err := s.store.FeedSerials(ctx)
	if err != nil {
		return nil, err
	}
	if c := lastListing.Load(); c != nil && c.svc == s && c.serial == serial && c.list == l {
		return &c.doc, nil
	}
	lst, err := s.listing(ctx, l)
	if err != nil {
		return nil, err
	}
	body, err := FeedJSON(lst)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	c := &listingCache{svc: s, serial: lst.Serial, list: l, doc: PackageIndex{Body: body, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}}
	lastListing.Store(c)
	return &c.doc, nil
}

// FeedPage is one page of the change feed, as GET /api/v1/changes answers it.
type FeedPage struct {
	Serial        int64        `json:"serial"`         // the current serial: continue from here once Next is null
	CompleteSince int64        `json:"complete_since"` // the feed holds every change after this serial
	Since         int64        `json:"since"`
	Changes       []FeedChange `json:"changes"`
	Next          *string      `json:"next"` // the next page, null on the last
}

// FeedChange is one change: a package's document changed (IndexURL) or, for "list", the
// curated list was reloaded and any package may have been listed or delisted.
type FeedChange struct {
	Serial   int64     `json:"serial"`
	Change   string    `json:"change"`
	Package  string    `json:"package,omitempty"`
	Version  string    `json:"version,omitempty"`
	At       time.Time `json:"at"`
	IndexURL string    `json:"index_url,omitempty"`
}

// ErrFeedIncomplete is a feed read from before CompleteSince: those changes are not known.
var ErrFeedIncomplete = errors.New("the change feed is incomplete before its complete_since serial")

// Feed returns at most limit changes after since, in serial order (Next left nil); more
// reports whether changes follow the page. A since below the feed's CompleteSince is
// ErrFeedIncomplete, with the page's serials filled in.
func (s *Service) Feed(ctx context.Context, since int64, limit int) (page *FeedPage, more bool, err error) {
	p, err := s.store.Changes(ctx, since, limit)
	if err != nil {
		return nil, false, err
	}
	out := s.feedPage(p, since)
	if since < p.CompleteSince {
		out.Changes = []FeedChange{}
		return out, false, ErrFeedIncomplete
	}
	return out, p.More, nil
}

func (s *Service) feedPage(p *store.ChangePage, since int64) *FeedPage {
	out := &FeedPage{Serial: p.Serial, CompleteSince: p.CompleteSince, Since: since, Changes: make([]FeedChange, 0, len(p.Changes))}
	for _, c := range p.Changes {
		fc := FeedChange{Serial: c.Serial, Change: c.Kind, Package: c.PackageID, Version: c.Version, At: c.At}
		if c.PackageID != "" {
			fc.IndexURL = s.PackageIndexURL(c.PackageID)
		}
		out.Changes = append(out.Changes, fc)
	}
	return out
}

// FeedPageSize is the number of serials one static page of the feed covers, and the most
// one request may ask for.
const FeedPageSize = 1000

// StaticFeedPath is the path of the static feed page holding the changes after since, a
// multiple of FeedPageSize, up to since+FeedPageSize: /api/v1/changes/<since>.json. An
// export writes them; a mirror at serial S reads StaticFeedPath(StaticFeedPage(S)).
func StaticFeedPath(since int64) string { return fmt.Sprintf("/api/v1/changes/%d.json", since) }

// StaticFeedPage is the since of the static page holding the change after serial.
func StaticFeedPage(serial int64) int64 { return serial - serial%FeedPageSize }
