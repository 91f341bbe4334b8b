package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/store"
)

// Quarantine takes a whole package or one release out of reach without deleting anything
// (PyPI's answer to a compromised project): it leaves the index documents, shards,
// host-aware documents, search and listings at once; its downloads answer 410 with the
// reason (quarantine.download); nobody may publish it (publish.quarantined); its page
// stays and shows the reason. Its rows, blobs and log records stay, so releasing the
// quarantine puts back exactly what was there. See docs/quarantine.md.

// ErrQuarantined is a download of a quarantined package or release: 410 Gone.
var ErrQuarantined = errors.New("quarantined")

// MaxQuarantineReason is the most characters a quarantine's public reason may have (the
// store's CHECK holds the same bound).
const MaxQuarantineReason = 500

// quarantineSet is the quarantines in force, by package id: lookups on the download and
// publish paths are map reads, never a query. Immutable once stored in Service.quar.
type quarantineSet struct {
	pkg map[string]store.Quarantine            // whole packages
	rel map[string]map[string]store.Quarantine // releases, by id then version
}

func newQuarantineSet(qs []store.Quarantine) *quarantineSet {
	set := &quarantineSet{pkg: map[string]store.Quarantine{}, rel: map[string]map[string]store.Quarantine{}}
	for _, q := range qs {
		set.put(q)
	}
	return set
}

// of is the quarantine that covers id@version: the package's own, else the release's.
func (qs *quarantineSet) of(id, version string) (store.Quarantine, bool) {
	if q, ok := qs.pkg[id]; ok {
		return q, true
	}
	return qs.own(id, version)
}

// own is id's own quarantine (version "") or id@version's, whether or not the package's
// covers it too.
func (qs *quarantineSet) own(id, version string) (store.Quarantine, bool) {
	if version == "" {
		q, ok := qs.pkg[id]
		return q, ok
	}
	q, ok := qs.rel[id][version]
	return q, ok
}

// loadQuarantines reads the quarantines in force from the store (every full build, and
// after every quarantine change).
func (s *Service) loadQuarantines(ctx context.Context) error {
	qs, err := s.store.Quarantines(ctx)
	if err != nil {
		return err
	}
	s.setQuarantines(qs)
	return nil
}

// setQuarantines puts qs in force.
func (s *Service) setQuarantines(qs []store.Quarantine) { s.quar.Store(newQuarantineSet(qs)) }

func (s *Service) quarantines() *quarantineSet {
	if qs := s.quar.Load(); qs != nil {
		return qs
	}
	return newQuarantineSet(nil)
}

// itemFor is itemOf without what is quarantined: nil for a package quarantined whole, and
// its quarantined releases left out (a quarantined latest gives way to the newest other).
// Every document, listing and search row is built from the catalog it makes, so this is
// where a quarantine leaves all of them.
func (s *Service) itemFor(ctx context.Context, li *listIndex, id string, rels []*store.Release, pkg *store.Package) (*Item, error) {
	qs := s.quarantines()
	if _, ok := qs.pkg[id]; ok {
		return nil, nil
	}
	if vs := qs.rel[id]; len(vs) > 0 {
		rels = slices.DeleteFunc(slices.Clone(rels), func(r *store.Release) bool { _, q := vs[r.Version]; return q })
	}
	return s.itemOf(ctx, li, id, rels, pkg)
}

// QuarantineOf returns the quarantine in force that covers id@version (version "": the
// package's own only).
func (s *Service) QuarantineOf(id, version string) (store.Quarantine, bool) {
	return s.quarantines().of(id, version)
}

// QuarantinesOf returns the quarantines in force on id: the package's own first, then its
// releases' by version.
func (s *Service) QuarantinesOf(id string) []store.Quarantine {
	qs := s.quarantines()
	var out []store.Quarantine
	if q, ok := qs.pkg[id]; ok {
		out = append(out, q)
	}
	vs := qs.rel[id]
	keys := make([]string, 0, len(vs))
	for v := range vs {
		keys = append(keys, v)
	}
	slices.Sort(keys)
	for _, v := range keys {
		out = append(out, vs[v])
	}
	return out
}

// Quarantines returns every quarantine in force, as stored.
func (s *Service) Quarantines(ctx context.Context) ([]store.Quarantine, error) {
	return s.store.Quarantines(ctx)
}

// DownloadRefusal is nil when id@version may be downloaded, else the 410 (ErrQuarantined,
// rule quarantine.download) that names the quarantine and its reason.
func (s *Service) DownloadRefusal(id, version string) error {
	q, ok := s.QuarantineOf(id, version)
	if !ok {
		return nil
	}
	return refuseOne(ErrQuarantined, "quarantine.download", "", "%s is quarantined by the registry's administrators: %s. It cannot be downloaded until the quarantine is released; nothing was deleted",
		describeQuarantine(q, id, version), q.Reason)
}

// publishRefusal is nil unless id@version may not be published because of a quarantine
// (publish.quarantined, 403): a whole package takes no release at all, a quarantined
// release cannot be published again (not even with the same bytes). Another version of a
// package with a quarantined release may be published: that is how a fix ships.
func (s *Service) publishRefusal(id, version string) error {
	q, ok := s.QuarantineOf(id, version)
	if !ok {
		return nil
	}
	return refuseOne(ErrForbidden, "publish.quarantined", "id", "%s is quarantined by the registry's administrators (%s): no token may publish it until an admin releases the quarantine (registry quarantine release, POST /api/v1/admin/quarantine/.../release)",
		describeQuarantine(q, id, version), q.Reason)
}

func describeQuarantine(q store.Quarantine, id, version string) string {
	if q.Version == "" {
		return fmt.Sprintf("the package %s (every version)", id)
	}
	return store.TargetName(id, version)
}

// CheckQuarantineReason refuses a reason that is empty, longer than MaxQuarantineReason
// characters or not one line of text (rule quarantine.reason): it is shown on pages and in
// 410 answers to anyone.
func CheckQuarantineReason(reason string) error {
	n := utf8.RuneCountInString(reason)
	var msg string
	switch {
	case strings.TrimSpace(reason) == "":
		msg = "reason is required: say publicly why (one line, e.g. \"a leaked token published a version that steals credentials\")"
	case n > MaxQuarantineReason:
		msg = fmt.Sprintf("reason is %d characters; the limit is %d: shorten it (link to a longer write-up)", n, MaxQuarantineReason)
	case manifest.TextProblem(reason, false) != "":
		msg = "reason " + manifest.TextProblem(reason, false) + ": give one line of plain text"
	default:
		return nil
	}
	return refuseOne(ErrInvalid, "quarantine.reason", "reason", "%s", msg)
}

// Quarantine puts id (version "": every version) or id@version in quarantine with a
// public reason, or replaces the reason of one in force; admins only. The documents
// in force no longer show it when it returns.
func (s *Service) Quarantine(ctx context.Context, a Actor, id, version, reason string) (*store.Quarantine, error) {
	if err := quarantineAllowed(a, id); err != nil {
		return nil, err
	}
	if err := CheckQuarantineReason(reason); err != nil {
		return nil, err
	}
	q := store.Quarantine{PackageID: id, Version: version, Reason: reason, SetBy: a.Name}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	audit := store.AuditEntry{Actor: a.Name, Action: "quarantine", Target: q.Target(), Outcome: "ok", Detail: map[string]any{"reason": reason}}
	if err := s.store.SetQuarantine(ctx, q, audit); err != nil {
		return nil, quarantineStoreErr("quarantine", id, version, err)
	}
	q.SetAt = s.now().UTC().Truncate(time.Second)
	s.quarantineChanged(ctx, "quarantine "+q.Target(), id, func(qs *quarantineSet) { qs.put(q) })
	got, _ := s.quarantines().own(id, version) // the one set, not the package's that may cover it
	return &got, nil
}

// ReleaseQuarantine ends the quarantine of id (version "") or id@version; admins only. It
// reports whether there was one (a release of nothing changes nothing and records nothing).
func (s *Service) ReleaseQuarantine(ctx context.Context, a Actor, id, version string) (bool, error) {
	if err := quarantineAllowed(a, id); err != nil {
		return false, err
	}
	target := store.TargetName(id, version)
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	audit := store.AuditEntry{Actor: a.Name, Action: "unquarantine", Target: target, Outcome: "ok"}
	had, err := s.store.ReleaseQuarantine(ctx, id, version, audit)
	if err != nil {
		return false, quarantineStoreErr("release the quarantine of", id, version, err)
	}
	if !had {
		return false, nil
	}
	s.quarantineChanged(ctx, "unquarantine "+target, id, func(qs *quarantineSet) { qs.drop(id, version) })
	return true, nil
}

// quarantineChanged puts a committed quarantine change in force: the set in memory first
// (downloads and publishes see it at once), then the documents of the package. When the
// set cannot be read again, apply changes the set in memory as the commit did: a
// committed quarantine must never leave a download open.
func (s *Service) quarantineChanged(ctx context.Context, what, id string, apply func(*quarantineSet)) {
	if err := s.loadQuarantines(ctx); err != nil {
		s.log.Error("quarantine: re-read the quarantines; applied in memory", "change", what, "err", err)
		next := s.quarantines().clone()
		apply(next)
		s.quar.Store(next)
	}
	s.afterChange(what, id)
}

// put and drop are a quarantine set or released, in a set being made.
func (qs *quarantineSet) put(q store.Quarantine) {
	if q.Version == "" {
		qs.pkg[q.PackageID] = q
		return
	}
	if qs.rel[q.PackageID] == nil {
		qs.rel[q.PackageID] = map[string]store.Quarantine{}
	}
	qs.rel[q.PackageID][q.Version] = q
}

// clone is a copy of qs that put and drop change without changing qs.
func (qs *quarantineSet) clone() *quarantineSet {
	next := &quarantineSet{pkg: maps.Clone(qs.pkg), rel: make(map[string]map[string]store.Quarantine, len(qs.rel))}
	for id, vs := range qs.rel {
		next.rel[id] = maps.Clone(vs)
	}
	return next
}

// has reports whether id or any of its releases is quarantined.
func (qs *quarantineSet) has(id string) bool {
	_, ok := qs.pkg[id]
	return ok || len(qs.rel[id]) > 0
}

func (qs *quarantineSet) drop(id, version string) {
	if version == "" {
		delete(qs.pkg, id)
		return
	}
	delete(qs.rel[id], version)
}

func quarantineAllowed(a Actor, id string) error {
	if !a.Admin {
		return refuseOne(ErrForbidden, "quarantine.forbidden", "", "%s may not quarantine %q or release its quarantine: only the registry's admins may (the admin token)", a.Name, id)
	}
	return nil
}

func quarantineStoreErr(op, id, version string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		if version == "" {
			return refuse(ErrNotFound, nil, "cannot %s %q: no release of it is stored", op, id)
		}
		return refuse(ErrNotFound, nil, "cannot %s %s@%s: that release is not stored", op, id, version)
	}
	return fmt.Errorf("ingest: %s %s@%s: %w", op, id, version, err)
}

// QuarantinedItem is the catalog item of a listed package that quarantine keeps out of the
// catalog (its own quarantine, or every release quarantined), for its page: built as
// if nothing were quarantined. ErrNotFound when id has no quarantine or no such item.
func (s *Service) QuarantinedItem(ctx context.Context, id string) (*Item, error) {
	if !s.quarantines().has(id) {
		return nil, fmt.Errorf("ingest: %q is not quarantined: %w", id, ErrNotFound)
	}
	ps, err := s.loadPackage(ctx, id)
	if err != nil {
		return nil, err
	}
	it, err := s.itemOf(ctx, newListIndexCached(s), id, ps.rels, ps.pkg)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, fmt.Errorf("ingest: quarantined %q is not listed: %w", id, ErrNotFound)
	}
	return it, nil
}
