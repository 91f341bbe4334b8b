package ingest

import (
	"container/list"
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/version"
)

// DefaultHostCacheBytes bounds the host-aware documents kept built (their bodies and
// shards), whatever versions and platforms hosts ask for.
const DefaultHostCacheBytes = 128 << 20

// HostDoc is a host-aware index document (GET /kandev/{host_version}/{platform}/index.json)
// with its shards, built for one class of hosts: those in the same capability row, between
// the same thresholds, on the same platform.
type HostDoc struct {
	Kandev Document
	Shards map[string]Document // by shard name ("all.a.json", "tools.json")
	Listed int                 // entries in Kandev
	Total  int                 // entries installable on the host (Kandev plus shards)
	// Canonical is the host version the document's URLs name: the lowest version of its
	// class, so that every host of the class gets the same bytes.
	Canonical string
	key       string
	size      int
}

// hostState is the Service's host-aware view: the release table and the built documents
// of the documents generation in force. The zero value is ready.
type hostState struct {
	mu    sync.Mutex // guards the fields below
	gen   *Documents // the documents in force when table and cache were made
	table *relTable
	lru   *list.List // of *HostDoc, most recently used first
	byKey map[string]*list.Element
	bytes int
	// build serialises table refreshes and document builds: a flood of distinct hosts
	// costs one build at a time, never one per request at once.
	build sync.Mutex
	// builds and buildNanos count the documents built and the time they took.
	builds, buildNanos atomic.Int64
}

// hostBuildStats are the host-aware documents built so far and the time they took.
func hostBuildStats(s *Service) (int64, time.Duration) {
	return s.host.builds.Load(), time.Duration(s.host.buildNanos.Load())
}

// HostIndex returns the host-aware document for h, built on first request per class and
// documents generation; nil before the first rebuild.
func (s *Service) HostIndex(ctx context.Context, h Host) (*HostDoc, error) {
	docs := s.docs.Load()
	if docs == nil {
		return nil, nil
	}
	if d := s.host.cached(docs, s.caps(), h); d != nil {
		return d, nil
	}
	if !s.host.build.TryLock() {
		// Another build is running (after a change, every class is rebuilt on demand): the
		// previous generation's document of this class, when there is one, answers until it
		// is done, as /index.json answers with the previous build during a rebuild.
		if d := s.host.stale(s.caps(), h); d != nil {
			return d, nil
		}
		s.host.build.Lock()
	}
	defer s.host.build.Unlock()
	t, err := s.hostTable(ctx, docs)
	if err != nil {
		return nil, err
	}
	if d := s.host.cached(docs, s.caps(), h); d != nil {
		return d, nil
	}
	key, canon := classOf(t, s.caps(), h)
	start := time.Now()
	d, err := s.buildHostDoc(ctx, docs, t, Host{Kandev: canon.String(), Version: canon, Platform: h.Platform})
	s.host.builds.Add(1)
	s.host.buildNanos.Add(int64(time.Since(start)))
	if err != nil {
		return nil, err
	}
	d.key = key
	s.host.put(docs, d, s.hostCacheBytes())
	return d, nil
}

// hostTable is the release table for the documents generation docs, refreshed (through
// the change feed) when the generation changed; build is held.
func (s *Service) hostTable(ctx context.Context, docs *Documents) (*relTable, error) {
	s.host.mu.Lock()
	gen, t := s.host.gen, s.host.table
	s.host.mu.Unlock()
	if gen == docs && t != nil {
		return t, nil
	}
	t, err := s.refreshTable(ctx, t)
	if err != nil {
		return nil, err
	}
	s.host.mu.Lock()
	s.host.gen, s.host.table = docs, t
	s.host.lru, s.host.byKey, s.host.bytes = list.New(), map[string]*list.Element{}, 0
	s.host.mu.Unlock()
	return t, nil
}

func (s *Service) caps() *HostCaps {
	if s.cfg.HostCaps != nil {
		return s.cfg.HostCaps
	}
	return defaultCaps
}

var defaultCaps = DefaultHostCaps()

func (s *Service) hostCacheBytes() int {
	if s.cfg.HostCacheBytes > 0 {
		return s.cfg.HostCacheBytes
	}
	return DefaultHostCacheBytes
}

// cached returns the built document of h's class in generation docs, if any.
func (hs *hostState) cached(docs *Documents, caps *HostCaps, h Host) *HostDoc {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.gen != docs || hs.table == nil {
		return nil
	}
	key, _ := classOf(hs.table, caps, h)
	el, ok := hs.byKey[key]
	if !ok {
		return nil
	}
	hs.lru.MoveToFront(el)
	return el.Value.(*HostDoc)
}

// stale returns the built document of h's class in the generation the cache holds,
// whichever it is.
func (hs *hostState) stale(caps *HostCaps, h Host) *HostDoc {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.table == nil {
		return nil
	}
	key, _ := classOf(hs.table, caps, h)
	if el, ok := hs.byKey[key]; ok {
		return el.Value.(*HostDoc)
	}
	return nil
}

// put keeps d, evicting the least recently used documents over limit bytes (d itself is
// kept even when alone over it: it is what this request serves).
func (hs *hostState) put(docs *Documents, d *HostDoc, limit int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.gen != docs {
		return
	}
	if el, ok := hs.byKey[d.key]; ok {
		hs.bytes -= el.Value.(*HostDoc).size
		hs.lru.Remove(el)
	}
	hs.byKey[d.key] = hs.lru.PushFront(d)
	hs.bytes += d.size
	for hs.bytes > limit && hs.lru.Len() > 1 {
		old := hs.lru.Back()
		od := old.Value.(*HostDoc)
		hs.lru.Remove(old)
		delete(hs.byKey, od.key)
		hs.bytes -= od.size
	}
}

// HostCacheStats reports the built host-aware documents kept and their bytes.
func (s *Service) HostCacheStats() (docs, bytes int) {
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	if s.host.lru == nil {
		return 0, 0
	}
	return s.host.lru.Len(), s.host.bytes
}

// classOf is h's class key (capability row, place among the thresholds, platform) and
// the lowest host version of that class, which the class's documents name.
func classOf(t *relTable, caps *HostCaps, h Host) (string, version.V) {
	row := caps.Row(h.Version)
	below, atOrBelow := t.bucket(h.Version)
	key := fmt.Sprintf("%d|%d|%d|%s", row, below, atOrBelow, h.Platform)
	if atOrBelow > below {
		return key, t.thresholds[below]
	}
	low := version.V{}
	if below > 0 {
		low = successor(t.thresholds[below-1])
	}
	if from := caps.Hosts[row].from; from.Compare(low) > 0 {
		low = from
	}
	return key, low
}

// successor is the lowest SemVer version above v: X.Y.(Z+1)-0 for a release, v.0 for a
// prerelease.
func successor(v version.V) version.V {
	if len(v.Pre) == 0 {
		return version.V{Major: v.Major, Minor: v.Minor, Patch: v.Patch + 1, Pre: []string{"0"}}
	}
	return version.V{Major: v.Major, Minor: v.Minor, Patch: v.Patch, Pre: append(append([]string{}, v.Pre...), "0")}
}

// HostPath is the path of h's host-aware document.
func HostPath(kandev, platform string) string {
	return "/kandev/" + url.PathEscape(kandev) + "/" + url.PathEscape(platform) + "/index.json"
}

// buildHostDoc fits the entries installable on h (the newest installable release of
// each listed plugin and canvas; none for a plugin without one) under the index policy.
func (s *Service) buildHostDoc(ctx context.Context, docs *Documents, t *relTable, h Host) (*HostDoc, error) {
	cat := s.Catalog()
	caps := s.caps()
	snap := index.Snapshot{Serial: docs.Serial, GeneratedAt: docs.Kandev.LastModified,
		Source: index.Source{Name: s.cfg.SourceName, URL: s.cfg.PublicURL + HostPath(h.Kandev, h.Platform)}}
	for _, it := range cat.Items {
		if it.Kind == "extension" {
			continue
		}
		e := pick(t.byID[it.ID], caps, h, s.BlobDamaged)
		if e == nil {
			continue // left out: the compatibility API says why
		}
		p, err := s.hostEntry(ctx, it, e)
		if err != nil {
			return nil, err
		}
		snap.Plugins = append(snap.Plugins, p)
	}
	pol := s.cfg.Policy
	if pol.BaseURL == "" {
		pol.BaseURL = s.cfg.PublicURL
	}
	pol.ShardPath = "/kandev/" + url.PathEscape(h.Kandev) + "/" + url.PathEscape(h.Platform) + "/index"
	f, err := index.Fit(pol, snap)
	if err != nil {
		return nil, fmt.Errorf("ingest: host-aware index for Kandev %s on %s: %w", h.Kandev, h.Platform, err)
	}
	d := &HostDoc{Kandev: newDocument(f.Kandev, snap.GeneratedAt), Shards: map[string]Document{}, Listed: f.Listed,
		Total: f.Total, Canonical: h.Kandev}
	d.size = len(f.Kandev)
	for _, sh := range f.Shards {
		d.Shards[sh.Name] = newDocument(sh.Body, snap.GeneratedAt)
		d.size += len(sh.Body)
	}
	d.size += d.size / 2 // the gzip representations, made on first use
	return d, nil
}

// pick is the newest installable release among es (newest first), or nil.
func pick(es []*relEntry, caps *HostCaps, h Host, damaged func(string) bool) *relEntry {
	for _, e := range es {
		if judge(e, caps, h, damaged).Installable {
			return e
		}
	}
	return nil
}

// hostEntry is the index entry of it with release e: the catalog's own entry when e is
// the release the catalog lists, else one made from e's stored row and card.
func (s *Service) hostEntry(ctx context.Context, it *Item, e *relEntry) (index.Plugin, error) {
	if it.Latest == nil || it.Latest.ID != e.rel.ID {
		c := *it
		c.Latest, c.Card, c.Signature, c.IconURL = e.rel, nil, nil, ""
		if err := s.fillItem(ctx, &c); err != nil {
			return index.Plugin{}, err
		}
		it = &c
	}
	p := s.pluginEntry(it)
	p.APIVersion, p.Platforms = e.card.APIVersion, nonNilStrings(e.card.Platforms)
	return p, nil
}
