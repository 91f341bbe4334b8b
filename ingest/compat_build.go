package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/index"
)

// hostGzipLevel compresses host-aware documents once, when built: a class is compressed
// for every build, so a fast level; the gzip bytes are what the cache keeps of a class.
const hostGzipLevel = gzip.DefaultCompression

// buildHostClass fits the entries installable on h (the newest installable release of
// each listed plugin and canvas; none for a plugin without one) under the index policy,
// and returns the class with the document's body. Entries encoded for an earlier build
// (of any class, this generation or the last) are reused, not encoded again.
func (s *Service) buildHostClass(ctx context.Context, docs *Documents, t *relTable, h Host) (*hostClass, index.Body, error) {
	cat := s.Catalog()
	caps := s.caps()
	pol := s.cfg.Policy
	if pol.BaseURL == "" {
		pol.BaseURL = s.cfg.PublicURL
	}
	encs := make([]*index.Encoded, 0, cat.Len())
	for it := range cat.All() {
		if it.Kind == "extension" {
			continue
		}
		e := pick(t.byID[it.ID], caps, h, s.BlobDamaged)
		if e == nil {
			continue // left out: the compatibility API says why
		}
		enc, err := s.hostEncoded(ctx, it, e, pol)
		if err != nil {
			return nil, index.Body{}, err
		}
		encs = append(encs, enc)
	}
	pol.ShardPath = "/kandev/" + url.PathEscape(h.Kandev) + "/" + url.PathEscape(h.Platform) + "/index"
	hdr := index.Header{Serial: docs.Serial, GeneratedAt: docs.Kandev.LastModified,
		Source: index.Source{Name: s.cfg.SourceName, URL: s.cfg.PublicURL + HostPath(h.Kandev, h.Platform)}}
	cl, body, err := fitHostClass(pol, hdr, encs)
	if err != nil {
		return nil, index.Body{}, fmt.Errorf("ingest: host-aware index for Kandev %s on %s: %w", h.Kandev, h.Platform, err)
	}
	cl.canonical = h.Kandev
	return cl, body, nil
}

// fitHostClass fits encs under pol as index.Fit does (the same bytes), planning the shards
// without building them: a shard is built when first asked for.
func fitHostClass(pol index.Policy, hdr index.Header, encs []*index.Encoded) (*hostClass, index.Body, error) {
	set, err := index.NewSet(pol.Order, encs)
	if err != nil {
		return nil, index.Body{}, err
	}
	plans, err := index.PlanShards(pol, hdr, set, nil)
	if err != nil {
		return nil, index.Body{}, err
	}
	fd, err := index.FitKandev(pol, hdr, set, plans)
	if err != nil {
		return nil, index.Body{}, err
	}
	cl := &hostClass{listed: fd.Listed, total: set.Len(), sum: fd.Digest, // every fitted Doc has its Digest
		modified: hdr.GeneratedAt, gz: gzipBytes(fd.Body), policy: pol, header: hdr, set: set}
	cl.shards.Store(&hostShards{plans: plans, docs: map[string]*Document{}})
	return cl, fd.Body, nil
}

// hostEncoded is the encoded entry of it with release e, encoded once per item and release
// (build is held).
func (s *Service) hostEncoded(ctx context.Context, it *Item, e *relEntry, pol index.Policy) (*index.Encoded, error) {
	k := encKey{it: it, e: e}
	if enc, ok := s.host.encs[k]; ok {
		return enc, nil
	}
	enc, ok := s.host.prev[k]
	if !ok {
		p, err := s.hostEntry(ctx, it, e)
		if err != nil {
			return nil, err
		}
		if enc, err = index.EncodePlugin(p, pol); err != nil {
			return nil, err
		}
		s.host.encodes.Add(1)
	}
	if s.host.encs == nil {
		s.host.encs = map[encKey]*index.Encoded{}
	}
	s.host.encs[k] = enc
	return enc, nil
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

// newDoc is the class's whole document with body.
func (cl *hostClass) newDoc(body index.Body) *HostDoc {
	doc := newDocumentDigest(body, cl.modified, cl.sum)
	withGzip(&doc, cl.gz)
	return &HostDoc{Kandev: doc, Listed: cl.listed, Total: cl.total, Canonical: cl.canonical, class: cl}
}

// compressedDoc is the class's document as its gzip bytes only (Body empty).
func (cl *hostClass) compressedDoc() *HostDoc {
	doc := newDocumentDigest(index.Body{}, cl.modified, cl.sum)
	withGzip(&doc, cl.gz)
	return &HostDoc{Kandev: doc, Listed: cl.listed, Total: cl.total, Canonical: cl.canonical, class: cl}
}

// wholeDoc is the class's whole document, its body decompressed from its gzip bytes.
func (cl *hostClass) wholeDoc() (*HostDoc, error) {
	zr, err := gzip.NewReader(bytes.NewReader(cl.gz))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return cl.newDoc(index.BodyOf(body)), nil
}

// withGzip gives d gz as its gzip representation, ready: serving it compresses nothing.
func withGzip(d *Document, gz []byte) {
	d.lazy = &docLazy{gz: gz}
	d.lazy.gzOnce.Do(func() {})
	d.lazy.gzReady.Store(true)
}

// gzipBytes is a host-aware document's gzip bytes, at hostGzipLevel.
func gzipBytes(body index.Body) []byte { return gzipAt(body, hostGzipLevel) }

// Shard returns the shard document named name ("all.a.json", "tools.json", or the shard
// list), built on first use; false when the document has no shard of that name.
func (d *HostDoc) Shard(name string) (*Document, bool, error) {
	return d.class.shard(name)
}

// ShardBuilt reports whether Shard(name) would answer without building a document.
func (d *HostDoc) ShardBuilt(name string) bool {
	sh := d.class.shards.Load()
	if sh == nil {
		return false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	_, ok := sh.docs[name]
	return ok
}

// ShardNames are the names of the document's shards, id shards first.
func (d *HostDoc) ShardNames() []string {
	sh, err := d.class.shardSet()
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range sh.plans.Plans {
		out = append(out, p.Name)
	}
	return out
}

// shardSet is the class's shard plans, planned again when they were let go.
func (cl *hostClass) shardSet() (*hostShards, error) {
	if sh := cl.shards.Load(); sh != nil {
		return sh, nil
	}
	cl.setMu.Lock()
	defer cl.setMu.Unlock()
	if sh := cl.shards.Load(); sh != nil {
		return sh, nil
	}
	plans, err := index.PlanShards(cl.policy, cl.header, cl.set, nil)
	if err != nil {
		return nil, err
	}
	sh := &hostShards{plans: plans, docs: map[string]*Document{}}
	cl.shards.Store(sh)
	return sh, nil
}

func (cl *hostClass) shard(name string) (*Document, bool, error) {
	sh, err := cl.shardSet()
	if err != nil {
		return nil, true, err
	}
	var doc Document
	at := cl.header.GeneratedAt
	if name == index.ShardListName {
		list, err := sh.plans.List()
		if err != nil {
			return nil, true, err
		}
		doc = newDocument(list, at)
	} else {
		sp, ok := sh.plans.Plan(name)
		if !ok {
			return nil, false, nil
		}
		sh.mu.Lock()
		built, ok := sh.docs[name]
		sh.mu.Unlock()
		if ok {
			return built, true, nil
		}
		fd, err := sp.Doc()
		if err != nil {
			return nil, true, err
		}
		doc = docOf(fd, sp.GeneratedAt())
	}
	sh.mu.Lock()
	if doc, ok := sh.docs[name]; ok {
		sh.mu.Unlock()
		return doc, true, nil
	}
	withGzip(&doc, gzipBytes(doc.Body))
	sh.docs[name] = &doc
	sh.mu.Unlock()
	if cl.hs != nil {
		cl.hs.charge(cl, doc.Body.Len()+len(doc.lazy.gz))
	}
	return &doc, true, nil
}

// shardBytes are the bytes of the class's built shard documents.
func (cl *hostClass) shardBytes() int {
	sh := cl.shards.Load()
	if sh == nil {
		return 0
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := 0
	for _, d := range sh.docs {
		n += d.Body.Len() + len(d.lazy.gz)
	}
	return n
}
