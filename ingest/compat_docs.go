package ingest

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/version"
)

// DefaultHostCacheBytes bounds the host-aware documents kept built (their bodies, gzip
// bytes and shards), whatever versions and platforms hosts ask for.
const DefaultHostCacheBytes = 128 << 20

// HostDoc is a host-aware index document (GET /kandev/{host_version}/{platform}/index.json)
// with its shards, built for one class of hosts: those in the same capability row, between
// the same thresholds, on the same platform.
type HostDoc struct {
	// Kandev is the document. Its gzip representation is always ready; its Body is empty
	// only in a document from HostIndexGzip whose class is kept compressed.
	Kandev Document
	Listed int // entries in Kandev
	Total  int // entries installable on the host (Kandev plus shards)
	// Canonical is the host version the document's URLs name: the lowest version of its
	// class, so that every host of the class gets the same bytes.
	Canonical string
	class     *hostClass
}

// hostState is the Service's host-aware view: the release table and the built classes of
// the documents generation in force. The zero value is ready.
//
// The cache keeps the most recently used classes whole (hot: body and gzip bytes, at most a
// quarter of the bound) and the others compressed only (their gzip bytes, which gzip
// clients, every Kandev host among them, are served as they are; a client without gzip
// gets the body decompressed, not rebuilt). A class costs a build once per generation while
// the bound holds it, and a build re-encodes only entries it has not encoded before.
type hostState struct {
	mu                  sync.Mutex // guards the fields below
	gen                 *Documents // the documents in force when table and cache were made
	table               *relTable
	hot                 *list.List // of *hostClass, most recently used first
	cold                *list.List // of *hostClass kept compressed, most recently used first
	byKey               map[string]*hostClass
	hotBytes, coldBytes int
	limit               int // the bound the last put applied
	// build serialises table refreshes and document builds: a flood of distinct hosts
	// costs one build at a time, never one per request at once. It guards encs and prev.
	build sync.Mutex
	// encs are the encoded entries of the picked releases, by catalog item and release,
	// of this generation; prev those of the previous one, taken over as builds use them.
	encs, prev map[encKey]*index.Encoded
	// builds and buildNanos count the documents built and the time they took, encodes the
	// entries encoded for them, hits the requests answered from the cache.
	builds, buildNanos, encodes, hits atomic.Int64
}

// encKey names an encoded entry: a catalog item (replaced whenever what its entry shows
// changes) with one of its releases (an entry of the release table, likewise).
type encKey struct {
	it *Item
	e  *relEntry
}

// hostClass is one built class: its document's bytes and what its shards are made from.
type hostClass struct {
	key       string
	canonical string
	listed    int
	total     int
	modified  time.Time
	sum       [sha256.Size]byte // index.Digest of the body: its ETag
	gz        []byte            // the document, gzip-compressed
	policy    index.Policy
	header    index.Header
	hs        *hostState
	setMu     sync.Mutex // guards set (planning shards updates it)
	set       *index.Set
	shards    atomic.Pointer[hostShards] // nil once dropped (compressed): planned again on use
	// guarded by hostState.mu:
	doc  *HostDoc // the whole document; nil while kept compressed only
	el   *list.Element
	size int
}

// hostShards are a class's shard plans and the shard documents built from them.
type hostShards struct {
	plans *index.Shards
	mu    sync.Mutex
	docs  map[string]*Document
}

// HostIndex returns the host-aware document for h with its body, built on first request
// per class and documents generation; nil before the first rebuild.
func (s *Service) HostIndex(ctx context.Context, h Host) (*HostDoc, error) {
	return s.hostIndex(ctx, h, false)
}

// HostIndexGzip is HostIndex for a client that accepts gzip: a class kept compressed
// answers with its gzip bytes only (Kandev.Body empty), without decompressing.
func (s *Service) HostIndexGzip(ctx context.Context, h Host) (*HostDoc, error) {
	return s.hostIndex(ctx, h, true)
}

// HostCached reports whether h's class is built in the generation in force, whole or
// compressed: then HostIndex and HostIndexGzip answer without a build.
func (s *Service) HostCached(h Host) bool {
	docs := s.docs.Load()
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	if docs == nil || s.host.gen != docs || s.host.table == nil {
		return false
	}
	key, _ := classOf(s.host.table, s.caps(), h)
	_, ok := s.host.byKey[key]
	return ok
}

func (s *Service) hostIndex(ctx context.Context, h Host, gz bool) (*HostDoc, error) {
	docs := s.docs.Load()
	if docs == nil {
		return nil, nil
	}
	if d := s.host.lookup(docs, s.caps(), h, gz); d != nil {
		return d, nil
	}
	if !s.host.build.TryLock() {
		// Another build is running (after a change, every class is rebuilt on demand): the
		// previous generation's document of this class, when there is one, answers until it
		// is done, as /index.json answers with the previous build during a rebuild.
		if d := s.host.lookup(nil, s.caps(), h, gz); d != nil {
			return d, nil
		}
		s.host.build.Lock()
	}
	defer s.host.build.Unlock()
	t, err := s.hostTable(ctx, docs)
	if err != nil {
		return nil, err
	}
	if d := s.host.lookup(docs, s.caps(), h, gz); d != nil {
		return d, nil
	}
	key, canon := classOf(t, s.caps(), h)
	start := time.Now()
	cl, body, err := s.buildHostClass(ctx, docs, t, Host{Kandev: canon.String(), Version: canon, Platform: h.Platform})
	s.host.builds.Add(1)
	s.host.buildNanos.Add(int64(time.Since(start)))
	if err != nil {
		return nil, err
	}
	cl.key, cl.hs = key, &s.host
	return s.host.put(docs, cl, body, s.hostCacheBytes()), nil
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
	s.host.hot, s.host.cold, s.host.byKey, s.host.hotBytes, s.host.coldBytes = list.New(), list.New(), map[string]*hostClass{}, 0, 0
	s.host.mu.Unlock()
	s.host.prev, s.host.encs = s.host.encs, map[encKey]*index.Encoded{}
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

// lookup returns the built document of h's class in generation docs (nil: in whichever
// generation the cache holds), if any; a class kept compressed is made whole again
// (decompressed) unless gz says its gzip bytes will do.
func (hs *hostState) lookup(docs *Documents, caps *HostCaps, h Host, gz bool) *HostDoc {
	hs.mu.Lock()
	if (docs != nil && hs.gen != docs) || hs.table == nil {
		hs.mu.Unlock()
		return nil
	}
	key, _ := classOf(hs.table, caps, h)
	cl, ok := hs.byKey[key]
	if !ok {
		hs.mu.Unlock()
		return nil
	}
	hs.hits.Add(1)
	if cl.doc != nil {
		hs.hot.MoveToFront(cl.el)
		hs.mu.Unlock()
		return cl.doc
	}
	hs.cold.MoveToFront(cl.el)
	hs.mu.Unlock()
	if gz {
		return cl.compressedDoc()
	}
	d, err := cl.wholeDoc()
	if err != nil {
		return nil // cannot happen for bytes we compressed; a rebuild answers instead
	}
	return hs.promote(cl, d)
}

// put keeps cl (whole) and returns its document; older classes are compressed, then
// dropped, as the bound requires (cl itself is kept even when alone over it: it is what
// this request serves).
func (hs *hostState) put(docs *Documents, cl *hostClass, body index.Body, limit int) *HostDoc {
	d := cl.newDoc(body)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.gen != docs {
		return d
	}
	if old, ok := hs.byKey[cl.key]; ok {
		hs.remove(old)
	}
	cl.doc, cl.size = d, d.Kandev.Body.Len()+len(cl.gz)+cl.shardBytes()
	hs.byKey[cl.key], cl.el = cl, hs.hot.PushFront(cl)
	hs.hotBytes += cl.size
	hs.trim(limit)
	return d
}

// promote makes cl whole again with d, unless another request did first.
func (hs *hostState) promote(cl *hostClass, d *HostDoc) *HostDoc {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if cl.doc != nil {
		return cl.doc
	}
	if hs.byKey[cl.key] != cl { // dropped meanwhile: serve it, keep nothing
		return d
	}
	hs.cold.Remove(cl.el)
	hs.coldBytes -= cl.size
	cl.doc, cl.size = d, d.Kandev.Body.Len()+len(cl.gz)+cl.shardBytes()
	cl.el = hs.hot.PushFront(cl)
	hs.hotBytes += cl.size
	hs.trim(hs.limit)
	return d
}

// trim compresses the least recently used whole classes while they take more than a
// quarter of limit, then drops the least recently used compressed ones while everything
// takes more than limit. hs.mu is held.
func (hs *hostState) trim(limit int) {
	hs.limit = limit
	for {
		switch {
		case hs.hotBytes > limit/4 && hs.hot.Len() > 1:
			hs.compress(hs.hot.Back().Value.(*hostClass))
		case hs.hotBytes+hs.coldBytes > limit && hs.cold.Len() > 0:
			hs.remove(hs.cold.Back().Value.(*hostClass))
		default:
			return
		}
	}
}

// compress keeps cl as its gzip bytes only: its body and shard documents are let go.
func (hs *hostState) compress(cl *hostClass) {
	hs.hot.Remove(cl.el)
	hs.hotBytes -= cl.size
	cl.doc = nil
	cl.shards.Store(nil)
	cl.size = len(cl.gz) + 8*cl.listed
	cl.el = hs.cold.PushFront(cl)
	hs.coldBytes += cl.size
}

func (hs *hostState) remove(cl *hostClass) {
	if cl.doc != nil {
		hs.hot.Remove(cl.el)
		hs.hotBytes -= cl.size
	} else {
		hs.cold.Remove(cl.el)
		hs.coldBytes -= cl.size
	}
	delete(hs.byKey, cl.key)
}

// charge counts n more bytes of cl (a shard document built) and trims.
func (hs *hostState) charge(cl *hostClass, n int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.byKey[cl.key] != cl {
		return
	}
	cl.size += n
	if cl.doc != nil {
		hs.hotBytes += n
	} else {
		hs.coldBytes += n
	}
	hs.trim(hs.limit)
}

// HostCacheStats reports the built host-aware classes kept (whole or compressed) and their
// bytes.
func (s *Service) HostCacheStats() (docs, bytes int) {
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	if s.host.hot == nil {
		return 0, 0
	}
	return s.host.hot.Len() + s.host.cold.Len(), s.host.hotBytes + s.host.coldBytes
}

// HostCacheInfo is what the host-aware cache holds and has done.
type HostCacheInfo struct {
	Whole, Compressed           int   // classes kept whole and kept compressed only
	WholeBytes, CompressedBytes int   // their bytes
	Builds                      int64 // classes built since the start
	BuildTime                   time.Duration
	Encodes                     int64 // entries encoded for builds (each entry once)
	Hits                        int64 // requests answered from the cache
}

// HostCacheInfo reports the host-aware cache.
func (s *Service) HostCacheInfo() HostCacheInfo {
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	in := HostCacheInfo{Builds: s.host.builds.Load(), BuildTime: time.Duration(s.host.buildNanos.Load()), Hits: s.host.hits.Load(),
		Encodes: s.host.encodes.Load()}
	if s.host.hot != nil {
		in.Whole, in.Compressed, in.WholeBytes, in.CompressedBytes = s.host.hot.Len(), s.host.cold.Len(), s.host.hotBytes, s.host.coldBytes
	}
	return in
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
