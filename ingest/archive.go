package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pluginyard/registry/store"
)

// Archived packages. An owner (a publisher among the entry's owners) or an admin archives a
// package to say that no more releases are expected. It stays installable, in index.json
// (with "archived": true) and on its page (with a notice); it sorts after every active
// package in listings, search results and the selection of a partial index.
//
// A publish to an archived package is refused (publish.archived, 409) until it is
// unarchived. Accepting it silently would make "archived" a promise nobody keeps, and
// unarchiving on publish would let a leaked token undo the owner's statement with the very
// release it warns about; one explicit, audited unarchive first costs an owner little.
// Re-publishing the identical bytes of an existing release stays idempotent: it adds
// nothing.

// ArchiveResult says what Archive did.
type ArchiveResult struct {
	ID       string     `json:"id"`
	Archived bool       `json:"archived"`
	Since    *time.Time `json:"archived_at"` // nil when active
	Changed  bool       `json:"changed"`     // false: it already was in that state
}

// Archive archives id (archived true) or unarchives it, audited and recorded in the change
// feed, then updates the index documents.
func (s *Service) Archive(ctx context.Context, a Actor, id string, archived bool) (*ArchiveResult, error) {
	action := archiveAction(archived)
	if !s.mayManage(a, id) {
		return nil, refuse(ErrForbidden, nil, "%s may not %s %q: only its owners (plugins.yaml owners) or an admin may", a.Name, action, id)
	}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	err := s.checkCandidate(ctx, action+"ing "+id, id, func(st *pkgState) error {
		if st.pkg == nil {
			return refuse(ErrNotFound, nil, "%q has no published release", id)
		}
		c := *st.pkg
		c.ArchivedAt = nil
		if archived {
			now := s.now()
			c.ArchivedAt = &now
		}
		st.pkg = &c
		return nil
	})
	if err != nil {
		return nil, err
	}
	audit := store.AuditEntry{Actor: a.Name, Action: action, Target: id, Outcome: "ok"}
	changed, err := s.store.SetArchived(ctx, id, archived, audit)
	if errors.Is(err, store.ErrNotFound) {
		return nil, refuse(ErrNotFound, nil, "%q has no published release", id)
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: %s %s: %w", action, id, err)
	}
	if changed {
		s.afterChange(action+" "+id, id)
	}
	pkg, err := s.store.Package(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ingest: %s %s: %w", action, id, err)
	}
	return &ArchiveResult{ID: id, Archived: pkg.ArchivedAt != nil, Since: pkg.ArchivedAt, Changed: changed}, nil
}

func archiveAction(archived bool) string {
	if archived {
		return "archive"
	}
	return "unarchive"
}

// refuseArchived refuses a new release of an archived package (publish.archived).
func refuseArchived(pkg *store.Package, id, version string) error {
	if pkg == nil || pkg.ArchivedAt == nil {
		return nil
	}
	return refuseOne(ErrConflict, "publish.archived", "", "%s is archived since %s (its owner expects no more releases), so %s@%s was not published; "+
		"if the package is active again, an owner or an admin unarchives it first (`registry unarchive %s`, or POST /api/v1/plugins/%s/unarchive), then publishes",
		id, pkg.ArchivedAt.UTC().Format(time.DateOnly), id, version, id, id)
}

// Archived reports whether the item's package is archived.
func (it *Item) Archived() bool { return it.Package != nil && it.Package.ArchivedAt != nil }

// archivedLast orders active items before archived ones (0 when both are alike).
func archivedLast(a, b *Item) int {
	switch x, y := a.Archived(), b.Archived(); {
	case x == y:
		return 0
	case y:
		return -1
	}
	return 1
}
