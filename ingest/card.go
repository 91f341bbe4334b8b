package ingest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// cardOf is the card of a parsed manifest (a *manifest.Manifest or *extension.Manifest):
// what lists and index documents need from it, stored with the release.
func cardOf(parsed any) (*store.Card, error) {
	switch m := parsed.(type) {
	case *manifest.Manifest:
		return pluginCard(m), nil
	case *extension.Manifest:
		return extensionCard(m), nil
	}
	return nil, fmt.Errorf("ingest: card of %T: not a manifest", parsed)
}

func pluginCard(m *manifest.Manifest) *store.Card {
	c := &store.Card{Kind: m.Kind(), Name: m.Name(), Description: m.Description, Author: m.Author,
		Categories: slices.Clone(m.Categories), License: m.License, MinKandevVersion: m.MinKandevVersion,
		APIVersion: m.APIVersion, RepoURL: m.RepoURL}
	if m.Runtime != nil {
		for p := range m.Runtime.Executables {
			c.Platforms = append(c.Platforms, p)
		}
		slices.Sort(c.Platforms)
	}
	if m.Distribution != nil {
		c.Distribution, c.License = true, m.Distribution.License
		c.Permissions = &store.CardPermissions{Reads: m.Capabilities.APIRead, Writes: m.Capabilities.APIWrite,
			Events: m.Capabilities.Events, SharedState: m.Capabilities.State}
		if m.UI != nil {
			for _, w := range m.UI.WebApps {
				c.Permissions.ExternalOrigins = append(c.Permissions.ExternalOrigins, w.NetworkOrigins...)
			}
		}
	}
	return c
}

func extensionCard(m *extension.Manifest) *store.Card {
	return &store.Card{Kind: "extension", Name: m.Name, Version: m.Version, Description: m.Description,
		License: m.License, TriggerTypes: slices.Clone(m.TriggerTypes), Runtime: m.Runtime, ProtocolVersion: m.ProtocolVersion,
		Launch: &store.CardLaunch{Type: m.Launch.Type, Package: m.Launch.Package, Version: m.Launch.Version,
			Command: m.Launch.Command, Args: slices.Clone(m.Launch.Args)},
		Repository: m.Repository}
}

// storedCard is the card of a stored release: its recorded one, else computed from its
// manifest (a candidate not stored yet, or a release whose card is not backfilled yet).
func (s *Service) storedCard(ctx context.Context, r *store.Release) (*store.Card, error) {
	if r.Card != nil {
		return r.Card, nil
	}
	parsed, err := s.parsedManifest(ctx, r)
	if err != nil {
		return nil, err
	}
	c, err := cardOf(parsed)
	if err != nil {
		return nil, err
	}
	r.Card = c
	return c, nil
}

// cardBatch is how many cards one backfill transaction writes (a variable for tests).
var cardBatch = 500

// BackfillCards computes, once, the card of every release stored before cards existed
// (migration 0008): it parses each one's manifest and writes the cards back in batches of
// cardBatch, so later starts parse none. A manifest that no longer parses is skipped (its
// release keeps no card, and a rebuild that needs it fails as it would have). It returns
// how many cards it wrote.
func (s *Service) BackfillCards(ctx context.Context) (int, error) {
	done, after := 0, int64(0)
	for {
		rels, err := s.store.ReleasesWithoutCard(ctx, after, cardBatch)
		if err != nil {
			return done, err
		}
		cards := make(map[int64]*store.Card, len(rels))
		for _, r := range rels {
			after = r.ID
			parsed, err := parseStored(r)
			if err != nil {
				s.log.Warn("no card for a stored release", "release", r.PackageID+"@"+r.Version, "err", err)
				continue
			}
			if cards[r.ID], err = cardOf(parsed); err != nil {
				return done, err
			}
		}
		if err := s.store.SetCards(ctx, cards); err != nil {
			return done, err
		}
		done += len(cards)
		if len(rels) < cardBatch {
			return done, nil
		}
	}
}

// setCard records on rel the card of the manifest verify parsed.
func setCard(rel *store.Release, rep *verify.Report) error {
	var err error
	switch {
	case rep.Manifest != nil:
		rel.Card, err = cardOf(rep.Manifest)
	case rep.Extension != nil:
		rel.Card, err = cardOf(rep.Extension)
	default:
		err = fmt.Errorf("ingest: %s@%s: no parsed manifest to make its card from", rep.ID, rep.Version)
	}
	return err
}

// backfillCardsOnce runs BackfillCards on the first rebuild (a start); rebuildMu is held.
// A failure is logged and tried again by the next rebuild: until then the cards missing
// are computed in memory.
func (s *Service) backfillCardsOnce(ctx context.Context) {
	if s.cardsDone {
		return
	}
	n, err := s.BackfillCards(ctx)
	if err != nil {
		s.log.Error("cards of releases stored before cards existed not all written; the next rebuild retries", "written", n, "err", err)
		return
	}
	if n > 0 {
		s.log.Info("cards written for releases stored before cards existed", "releases", n)
	}
	s.cardsDone = true
}

// manifestCacheSize is how many parsed manifests Service.Manifest keeps: the plugin pages
// read most recently.
const manifestCacheSize = 256

// manifestCache keeps up to max parsed manifests by release id, dropping the oldest added.
type manifestCache struct {
	mu    sync.Mutex
	max   int
	m     map[int64]any
	order []int64
}

func newManifestCache(max int) *manifestCache {
	return &manifestCache{max: max, m: map[int64]any{}}
}

func (c *manifestCache) get(id int64) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	return v, ok
}

func (c *manifestCache) put(id int64, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok {
		return
	}
	if len(c.order) >= c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[id] = v
	c.order = append(c.order, id)
}
