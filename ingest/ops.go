package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/pluginyard/registry/store"
)

// mayManage reports whether the actor may yank or deprecate id: an admin, or a publisher
// among the entry's owners.
func (s *Service) mayManage(a Actor, id string) bool {
	if a.Admin {
		return true
	}
	lst, ok := s.listed(id, false)
	if !ok {
		lst, ok = s.listed(id, true)
	}
	return ok && a.Publisher != "" && slices.Contains(lst.Owners, a.Publisher)
}

// Yank hides a version from "latest" and the index (it stays downloadable by its exact
// URL); with yanked false it restores it.
func (s *Service) Yank(ctx context.Context, a Actor, id, version string, yanked bool, reason string) error {
	action := "yank"
	if !yanked {
		action, reason = "unyank", ""
	}
	if !s.mayManage(a, id) {
		return refuse(ErrForbidden, nil, "%s may not %s versions of %q: only its owners (plugins.yaml owners) or an admin may", a.Name, action, id)
	}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	err := s.checkCandidate(ctx, action+"ing "+id+"@"+version, id, func(st *pkgState) error {
		for i, r := range st.rels {
			if r.Version == version {
				c := *r
				c.Yanked, c.YankReason = yanked, reason
				st.rels[i] = &c
				return nil
			}
		}
		return refuse(ErrNotFound, nil, "%s@%s is not published", id, version)
	})
	if err != nil {
		return err
	}
	audit := store.AuditEntry{Actor: a.Name, Action: action, Target: id + "@" + version, Outcome: "ok", Detail: map[string]any{"reason": reason}}
	err = s.store.SetYanked(ctx, id, version, yanked, reason, audit)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(ErrNotFound, nil, "%s@%s is not published", id, version)
	}
	if err != nil {
		return fmt.Errorf("ingest: %s %s@%s: %w", action, id, version, err)
	}
	s.afterChange(action+" "+id+"@"+version, id)
	return nil
}

// checkReplacement refuses a deprecation's replacement that cannot be followed: the
// package itself, one given with an empty reason (which clears the deprecation, so the
// replacement would be dropped while the answer named it), or one plugins.yaml does not
// list.
func (s *Service) checkReplacement(id, reason, replacement string) error {
	switch {
	case replacement == "":
		return nil
	case reason == "":
		return refuse(ErrBadQuery, nil, "replacement %q was given with an empty reason, which clears the deprecation: send a reason to deprecate %q, or no replacement to clear it", replacement, id)
	case replacement == id:
		return refuse(ErrBadQuery, nil, "replacement %q is the package being deprecated: name another package, or leave replacement out", replacement)
	}
	if _, ok := s.listed(replacement, false); ok {
		return nil
	}
	if _, ok := s.listed(replacement, true); ok {
		return nil
	}
	return refuse(ErrBadQuery, nil, "replacement %q is not listed in plugins.yaml: name a listed package, or leave replacement out", replacement)
}

// Deprecate marks a package deprecated with a reason and an optional replacement id; an
// empty reason clears it.
func (s *Service) Deprecate(ctx context.Context, a Actor, id, reason, replacement string) error {
	if !s.mayManage(a, id) {
		return refuse(ErrForbidden, nil, "%s may not deprecate %q: only its owners (plugins.yaml owners) or an admin may", a.Name, id)
	}
	if err := s.checkReplacement(id, reason, replacement); err != nil {
		return err
	}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	err := s.checkCandidate(ctx, "deprecating "+id, id, func(st *pkgState) error {
		if st.pkg == nil {
			return refuse(ErrNotFound, nil, "%q has no published release", id)
		}
		c := *st.pkg
		c.DeprecatedReason, c.DeprecatedReplacement = reason, replacement
		st.pkg = &c
		return nil
	})
	if err != nil {
		return err
	}
	audit := store.AuditEntry{Actor: a.Name, Action: "deprecate", Target: id, Outcome: "ok",
		Detail: map[string]any{"reason": reason, "replacement": replacement}}
	err = s.store.Deprecate(ctx, id, reason, replacement, audit)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(ErrNotFound, nil, "%q has no published release", id)
	}
	if err != nil {
		return fmt.Errorf("ingest: deprecate %s: %w", id, err)
	}
	s.afterChange("deprecate "+id, id)
	return nil
}
