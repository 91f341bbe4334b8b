package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// sharedMeta is what a stored serial's documents carry besides their bodies: the
// Documents fields a replica loading them cannot read off its own catalog (it may have
// other download totals, which rank entries).
type sharedMeta struct {
	Plugins int    `json:"plugins"`
	Total   int    `json:"total"`
	Listed  int    `json:"listed"`
	Mode    string `json:"mode"`
}

// sharedDocuments is documents(b, serial) for a build that shows every change up to
// serial (feedCatchUp, loadState); on a replica, one build per serial over all replicas:
// the documents another replica stored for serial are loaded; else the build lock is
// taken and, won, the documents built and stored; lost, the winner's are awaited (for
// BuildWait) and loaded, or built here when they do not come. A build that is not
// consistent (a list reload's, numbered before its serial exists) is never shared. Not
// a replica: documents. rebuildMu is held.
func (s *Service) sharedDocuments(ctx context.Context, b *built, serial int64, consistent bool) (*Documents, error) {
	r := &s.replica
	if !r.on.Load() {
		return s.documents(b, serial)
	}
	if !consistent {
		r.local.Add(1)
		return s.documents(b, serial)
	}
	docs, err := s.shareDocuments(ctx, b, serial)
	if err == nil && serial > r.applied.Load() {
		r.applied.Store(serial)
	}
	return docs, err
}

func (s *Service) shareDocuments(ctx context.Context, b *built, serial int64) (*Documents, error) {
	r := &s.replica
	if docs := s.loadShared(ctx, b, serial); docs != nil {
		return docs, nil
	}
	release, won, err := r.st.TryBuildLock(ctx, serial)
	defer release()
	if err != nil { // the database is out of reach: the documents are built, not shared
		s.log.Warn("replica: no build lock; building the documents here", "serial", serial, "err", err)
		return s.buildShared(ctx, b, serial, &r.local)
	}
	if won {
		if docs := s.loadShared(ctx, b, serial); docs != nil { // stored between the two looks
			return docs, nil
		}
		return s.buildShared(ctx, b, serial, &r.built)
	}
	deadline := time.Now().Add(r.opt.BuildWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(sharedPoll):
		}
		if docs := s.loadShared(ctx, b, serial); docs != nil {
			return docs, nil
		}
	}
	s.log.Warn("replica: the replica building this serial stored no documents in time; building them here",
		"serial", serial, "waited", r.opt.BuildWait.String())
	return s.buildShared(ctx, b, serial, &r.fallbacks)
}

// buildShared builds the documents of serial and stores them for the other replicas;
// when another stored that serial's first (a fallback build racing the winner's), those
// are served instead, so that every replica serves the same bytes. count counts the
// build (Built, Fallbacks or Local), stored or not.
func (s *Service) buildShared(ctx context.Context, b *built, serial int64, count *atomic.Int64) (*Documents, error) {
	docs, err := s.documents(b, serial)
	if err != nil {
		return nil, err
	}
	count.Add(1)
	stored, err := s.replica.st.PutDocuments(ctx, s.storedOf(docs))
	if err != nil {
		s.log.Warn("replica: the documents built were not stored; the other replicas build their own", "serial", serial, "err", err)
		return docs, nil
	}
	if !stored {
		if theirs := s.loadShared(ctx, b, serial); theirs != nil {
			return theirs, nil
		}
	}
	return docs, nil
}

// storedOf is docs as the documents table holds them.
func (s *Service) storedOf(docs *Documents) []store.StoredDocument {
	// Plain fields: Marshal cannot fail. Index documents name their time to the second.
	meta, _ := json.Marshal(sharedMeta{Plugins: docs.Plugins, Total: docs.Total, Listed: docs.Listed, Mode: docs.Mode})
	at := docs.Kandev.LastModified
	out := make([]store.StoredDocument, 0, 2)
	for _, d := range []struct {
		name string
		doc  *Document
	}{{store.DocumentKandev, &docs.Kandev}, {store.DocumentCurupira, &docs.Curupira}} {
		out = append(out, store.StoredDocument{Serial: docs.Serial, Name: d.name, ETag: d.doc.ETag, GeneratedAt: at,
			Meta: meta, Body: d.doc.Body.Bytes(), BuiltBy: s.replica.opt.Name})
	}
	return out
}

// loadShared is the documents another replica stored for serial, with the shard plans of
// b under their generated_at (so shards, planned from the same entries, match too); nil
// when none are stored or they cannot be read (then this replica builds).
func (s *Service) loadShared(ctx context.Context, b *built, serial int64) *Documents {
	rows, err := s.replica.st.Documents(ctx, serial)
	if err != nil {
		s.log.Debug("replica: stored documents unreadable", "serial", serial, "err", err)
		return nil
	}
	byName := map[string]store.StoredDocument{}
	for _, d := range rows {
		byName[d.Name] = d
	}
	kd, ok1 := byName[store.DocumentKandev]
	cd, ok2 := byName[store.DocumentCurupira]
	if !ok1 || !ok2 {
		return nil
	}
	docs, err := s.documentsOf(b, serial, kd, cd)
	if err != nil {
		s.log.Error("replica: the stored documents are refused; building them here", "serial", serial, "built_by", kd.BuiltBy, "err", err)
		return nil
	}
	s.replica.loaded.Add(1)
	return docs
}

// documentsOf makes Documents of the stored kd and cd, checking each body against its
// stored ETag (a damaged row is never served).
func (s *Service) documentsOf(b *built, serial int64, kd, cd store.StoredDocument) (*Documents, error) {
	var meta sharedMeta
	if err := json.Unmarshal(kd.Meta, &meta); err != nil {
		return nil, fmt.Errorf("meta: %w", err)
	}
	at := kd.GeneratedAt
	h := index.Header{Serial: serial, GeneratedAt: at, Source: index.Source{Name: s.cfg.SourceName, URL: s.cfg.PublicURL + "/index.json"}}
	shards, err := index.PlanShards(b.policy, h, b.plugins, b.shards)
	if err != nil {
		return nil, fmt.Errorf("shard plans: %w", err)
	}
	kandev := newDocument(kd.Body, at)
	curupira := newDocument(cd.Body, at)
	for _, c := range []struct {
		got  *Document
		want store.StoredDocument
	}{{&kandev, kd}, {&curupira, cd}} {
		if c.got.ETag != c.want.ETag {
			return nil, fmt.Errorf("%s: the stored body has ETag %s, its row says %s", c.want.Name, c.got.ETag, c.want.ETag)
		}
	}
	b.shards = shards
	var prev *shardDocs
	if d := s.docs.Load(); d != nil {
		prev = d.shards
	}
	return &Documents{Kandev: kandev, Curupira: curupira, Serial: serial, Plugins: meta.Plugins, Total: meta.Total,
		Listed: meta.Listed, Mode: meta.Mode, shards: newShardDocs(shards, prev)}, nil
}
