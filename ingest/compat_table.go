package ingest

import (
	"context"
	"maps"
	"slices"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/version"
)

// relTable is every stored release of every package with its compatibility facts, newest
// version first per package, as of serial. It is immutable once made: a refresh makes a
// new one that shares the unchanged packages' slices.
type relTable struct {
	serial int64
	byID   map[string][]*relEntry
	// thresholds are the distinct host versions at which some release's installability
	// changes (min_kandev_version, curated max_kandev), sorted: two hosts between the same
	// thresholds and in the same capability row get the same document.
	thresholds []version.V
}

// maxFeedChanges is how many changes a refresh applies one package at a time; more, or a
// feed that does not reach back far enough, reloads the whole table.
const maxFeedChanges = 2000

// releaseKinds are the feed changes that change a package's releases or their curation.
var releaseKinds = map[string]bool{store.ChangePublish: true, store.ChangeYank: true, store.ChangeUnyank: true,
	store.ChangeYankAll: true, store.ChangeCompat: true, store.ChangeQuarantine: true, store.ChangeUnquarantine: true}

// refreshTable returns a table at the store's current serial: t itself when nothing
// changed, t with only the packages the change feed names reloaded, or a full load.
func (s *Service) refreshTable(ctx context.Context, t *relTable) (*relTable, error) {
	serial, completeSince, err := s.store.FeedSerials(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case t != nil && serial == t.serial:
		return t, nil
	case t == nil || completeSince > t.serial || serial-t.serial > maxFeedChanges:
		return s.loadTable(ctx)
	}
	changed, at, err := s.changedPackages(ctx, t.serial)
	if err != nil {
		return nil, err
	}
	if changed == nil {
		return s.loadTable(ctx)
	}
	next := &relTable{serial: at, byID: maps.Clone(t.byID)}
	for id := range changed {
		entries, err := s.packageEntries(ctx, id)
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			delete(next.byID, id)
		} else {
			next.byID[id] = entries
		}
	}
	next.thresholds = thresholdsOf(next.byID)
	return next, nil
}

// changedPackages reads the feed after since: the packages whose releases changed and the
// serial it reached; nil when there are more than maxFeedChanges changes.
func (s *Service) changedPackages(ctx context.Context, since int64) (map[string]bool, int64, error) {
	changed := map[string]bool{}
	for seen := 0; ; {
		p, err := s.store.Changes(ctx, since, 500)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range p.Changes {
			if releaseKinds[c.Kind] && c.PackageID != "" {
				changed[c.PackageID] = true
			}
			since = c.Serial
		}
		seen += len(p.Changes)
		if !p.More {
			return changed, max(since, p.Serial), nil
		}
		if seen > maxFeedChanges {
			return nil, 0, nil
		}
	}
}

// loadTable loads every release and curation.
func (s *Service) loadTable(ctx context.Context) (*relTable, error) {
	serial, err := s.store.Serial(ctx)
	if err != nil {
		return nil, err
	}
	rels, err := s.store.AllReleases(ctx)
	if err != nil {
		return nil, err
	}
	curs, err := s.store.AllCurations(ctx)
	if err != nil {
		return nil, err
	}
	t := &relTable{serial: serial, byID: map[string][]*relEntry{}}
	for _, r := range rels {
		if e := s.relEntryOf(ctx, r, curs[r.PackageID]); e != nil {
			t.byID[r.PackageID] = append(t.byID[r.PackageID], e)
		}
	}
	for _, es := range t.byID {
		sortEntries(es)
	}
	t.thresholds = thresholdsOf(t.byID)
	return t, nil
}

// packageEntries loads the releases and curations of one package, newest first.
func (s *Service) packageEntries(ctx context.Context, id string) ([]*relEntry, error) {
	rels, err := s.store.Releases(ctx, id)
	if err != nil {
		return nil, err
	}
	curs, err := s.store.Curations(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]*relEntry, 0, len(rels))
	for _, r := range rels {
		if e := s.relEntryOf(ctx, r, curs); e != nil {
			out = append(out, e)
		}
	}
	sortEntries(out)
	return out, nil
}

// relEntryOf is r with its facts; nil (logged) when its card cannot be had: a stored
// manifest that no longer parses leaves that one release out, not every host document.
func (s *Service) relEntryOf(ctx context.Context, r *store.Release, curs map[string]store.Curation) *relEntry {
	c, err := s.storedCard(ctx, r) // the stored card; computed once for a release stored before cards
	if err != nil {
		s.log.Warn("release left out of host-aware documents: no card", "release", r.PackageID+"@"+r.Version, "err", err)
		return nil
	}
	var cur *store.Curation
	if cu, ok := curs[r.Version]; ok {
		cur = &cu
	}
	e := newRelEntry(r, c, cur)
	if q, ok := s.QuarantineOf(r.PackageID, r.Version); ok {
		e.quar = &q
	}
	return e
}

func sortEntries(es []*relEntry) {
	slices.SortFunc(es, func(a, b *relEntry) int { return version.Compare(b.rel.Version, a.rel.Version) })
}

func thresholdsOf(byID map[string][]*relEntry) []version.V {
	var out []version.V
	for _, es := range byID {
		for _, e := range es {
			if e.minSet && !e.minBad {
				out = append(out, e.min)
			}
			if e.cur != nil {
				out = append(out, e.max)
			}
		}
	}
	slices.SortFunc(out, version.V.Compare)
	return slices.CompactFunc(out, func(a, b version.V) bool { return a.Compare(b) == 0 })
}

// bucket is a host's place among the thresholds: how many are below it and how many at or
// below it. Hosts with the same bucket, row and platform are offered the same releases.
func (t *relTable) bucket(v version.V) (below, atOrBelow int) {
	below, found := slices.BinarySearchFunc(t.thresholds, v, version.V.Compare)
	atOrBelow = below
	if found {
		atOrBelow++
	}
	return below, atOrBelow
}
