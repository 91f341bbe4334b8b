package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/version"
)

// CompatReport is GET /api/v1/plugins/{id}/compatibility: for one host, every release of
// a plugin or canvas with whether it is installable there and why not.
type CompatReport struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"`
	Kandev   string  `json:"kandev"`
	Platform string  `json:"platform"`
	Host     HostCap `json:"host"` // the capability row the host falls in
	// Offered is the release the host-aware index lists (the newest installable one), or
	// nil: the plugin is left out of that index, and Summary says why.
	Offered  *string   `json:"offered"`
	Summary  string    `json:"summary"`
	IndexURL string    `json:"index_url"` // the host-aware index for this host
	Releases []Verdict `json:"releases"`  // newest version first
}

// Compatibility judges every release of the listed plugin or canvas id for host h.
func (s *Service) Compatibility(ctx context.Context, id string, h Host) (*CompatReport, error) {
	es, err := s.kandevEntries(ctx, id)
	if err != nil {
		return nil, err
	}
	caps := s.caps()
	row := caps.Hosts[caps.Row(h.Version)]
	rep := &CompatReport{ID: id, Kind: es[0].card.Kind, Kandev: h.Kandev, Platform: h.Platform, Host: row,
		IndexURL: s.cfg.PublicURL + HostPath(h.Kandev, h.Platform), Releases: make([]Verdict, 0, len(es))}
	for _, e := range es {
		v := judge(e, caps, h, s.BlobDamaged)
		if v.Installable && rep.Offered == nil {
			rep.Offered = &v.Version
		}
		rep.Releases = append(rep.Releases, v)
	}
	rep.Summary = summary(rep)
	return rep, nil
}

func summary(rep *CompatReport) string {
	if rep.Offered != nil {
		return fmt.Sprintf("Kandev %s on %s is offered %s %s", rep.Kandev, rep.Platform, rep.ID, *rep.Offered)
	}
	first := rep.Releases[0]
	return fmt.Sprintf("no release of %s is installable on Kandev %s on %s, so its host-aware index leaves it out; the newest, %s: %s",
		rep.ID, rep.Kandev, rep.Platform, first.Version, first.Reasons[0].Message)
}

// kandevEntries are the releases of the listed plugin or canvas id, newest first.
func (s *Service) kandevEntries(ctx context.Context, id string) ([]*relEntry, error) {
	it, ok := s.Catalog().Item(id)
	if !ok {
		return nil, refuse(ErrNotFound, nil, "no listed plugin %q", truncateQuote(id))
	}
	if it.Kind == "extension" {
		return nil, refuse(ErrNotFound, nil, "%s is a Curupira extension: host compatibility is for Kandev plugins and canvases", id)
	}
	t, err := s.currentTable(ctx)
	if err != nil {
		return nil, err
	}
	es := t.byID[id]
	if len(es) == 0 {
		return nil, refuse(ErrNotFound, nil, "no release of %q is stored", id)
	}
	return es, nil
}

// currentTable is the release table of the documents in force.
func (s *Service) currentTable(ctx context.Context) (*relTable, error) {
	docs := s.docs.Load()
	if docs == nil {
		return nil, refuse(ErrNotFound, nil, "the index is being built; retry shortly")
	}
	s.host.mu.Lock()
	gen, t := s.host.gen, s.host.table
	s.host.mu.Unlock()
	if gen == docs && t != nil {
		return t, nil
	}
	s.host.build.Lock()
	defer s.host.build.Unlock()
	return s.hostTable(ctx, docs)
}

// UpgradeReport is GET /api/v1/plugins/{id}/upgrade: the release a host with From
// installed should move to, never an older or equal one.
type UpgradeReport struct {
	ID       string `json:"id"`
	From     string `json:"from"`
	Kandev   string `json:"kandev"`
	Platform string `json:"platform"`
	// Upgrade is the newest installable release newer than From, or "none".
	Upgrade string   `json:"upgrade"`
	Release *Verdict `json:"release"` // Upgrade's verdict; nil for "none"
	Why     string   `json:"why,omitempty"`
	// Skipped are the releases newer than From that the host cannot install, newest first.
	Skipped []Verdict `json:"skipped"`
	// Changelog are the release notes of the versions after From up to Upgrade, newest
	// first (the changes the upgrade brings); empty for "none".
	Changelog []ChangelogEntry `json:"changelog"`
}

// ChangelogEntry is one version's rendered release notes.
type ChangelogEntry struct {
	Version   string `json:"version"`
	NotesHTML string `json:"notes_html"`
}

// Upgrade answers which release a host that has from installed may upgrade id to.
func (s *Service) Upgrade(ctx context.Context, id, from string, h Host) (*UpgradeReport, error) {
	fv, err := version.Parse(from)
	if err != nil {
		return nil, refuseOne(ErrBadQuery, "upgrade.from", "from", "the installed version %q is not a SemVer version: %v; give the version the host has installed, such as 1.2.0", truncateQuote(from), err)
	}
	es, err := s.kandevEntries(ctx, id)
	if err != nil {
		return nil, err
	}
	rep := &UpgradeReport{ID: id, From: fv.String(), Kandev: h.Kandev, Platform: h.Platform, Upgrade: "none",
		Skipped: []Verdict{}, Changelog: []ChangelogEntry{}}
	var between []string // versions after From up to Upgrade, newest first
	for _, e := range es {
		ev, err := version.Parse(e.rel.Version)
		if err != nil || ev.Compare(fv) <= 0 {
			continue // never backwards, never sideways, never a version hosts cannot order
		}
		v := judge(e, s.caps(), h, s.BlobDamaged)
		if v.Installable {
			rep.Upgrade, rep.Release = v.Version, &v
			between = append(between, v.Version)
			break
		}
		rep.Skipped = append(rep.Skipped, v)
	}
	newest, published := newestOrderable(es)
	rep.Why = upgradeWhy(rep, fv, newest, published)
	if rep.Release == nil {
		between = nil // no upgrade: nothing between
	} else {
		between = append(between, notesBelow(es, rep.Upgrade, fv)...)
	}
	if rep.Changelog, err = s.changelog(ctx, id, between); err != nil {
		return nil, err
	}
	return rep, nil
}

// notesBelow are the versions of es (newest first) below target and above from.
func notesBelow(es []*relEntry, target string, from version.V) []string {
	var out []string
	for _, e := range es {
		ev, err := version.Parse(e.rel.Version)
		if err == nil && ev.Compare(from) > 0 && version.Compare(e.rel.Version, target) < 0 {
			out = append(out, e.rel.Version)
		}
	}
	return out
}

// newestOrderable is the newest version among es (newest first) that hosts can order,
// yanked or not; false when there is none.
func newestOrderable(es []*relEntry) (version.V, bool) {
	for _, e := range es {
		if v, err := version.Parse(e.rel.Version); err == nil {
			return v, true
		}
	}
	return version.V{}, false
}

// upgradeWhy says why rep has no upgrade ("" when it has one); newest is the newest
// published version hosts can order, by SemVer (a prerelease of a higher version is newer).
func upgradeWhy(rep *UpgradeReport, from, newest version.V, published bool) string {
	switch {
	case rep.Release != nil:
		return ""
	case len(rep.Skipped) == 0 && !published:
		return fmt.Sprintf("%s is newer than every published version of %s (none is in the version grammar); nothing to upgrade to (%s)", rep.From, rep.ID, ReasonUnpublished)
	case len(rep.Skipped) == 0 && from.Compare(newest) > 0:
		return fmt.Sprintf("%s is newer than every published version of %s (the newest is %s); nothing to upgrade to (%s)", rep.From, rep.ID, newest, ReasonUnpublished)
	case len(rep.Skipped) == 0:
		return fmt.Sprintf("%s is the newest published version of %s (%s)", rep.From, rep.ID, ReasonInstalledNewer)
	}
	return fmt.Sprintf("%d newer release(s) of %s, none installable on Kandev %s on %s; the newest, %s: %s",
		len(rep.Skipped), rep.ID, rep.Kandev, rep.Platform, rep.Skipped[0].Version, rep.Skipped[0].Reasons[0].Message)
}

// changelog is the release notes of versions (newest first), at most store.MaxNotesVersions.
func (s *Service) changelog(ctx context.Context, id string, versions []string) ([]ChangelogEntry, error) {
	notes, err := s.store.ReleaseNotes(ctx, id, versions)
	if err != nil {
		return nil, err
	}
	out := []ChangelogEntry{}
	for _, v := range versions {
		if html, ok := notes[v]; ok {
			out = append(out, ChangelogEntry{Version: v, NotesHTML: string(html)})
		}
	}
	return out, nil
}

// MaxCompatReason bounds a curation's reason (it is shown on pages and in the API).
const MaxCompatReason = 1000

// SetCompat narrows the host range of id@ver (admin only): hosts newer than maxKandev are
// no longer offered it. It can only narrow: the manifest's min_kandev_version stays the
// lower bound, and a maximum below it is refused (compat.max_kandev.below_min). Audited;
// the serial moves, so every host-aware document is rebuilt.
func (s *Service) SetCompat(ctx context.Context, a Actor, id, ver, maxKandev, reason string) (*store.Curation, error) {
	if !a.Admin {
		return nil, refuse(ErrForbidden, nil, "%s may not curate compatibility: only an admin may", a.Name)
	}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	c, err := s.setCompat(ctx, a.Name, id, ver, maxKandev, reason, false)
	if err != nil {
		return nil, err
	}
	s.afterChange("compat "+id+"@"+ver, id)
	return c, nil
}

// SetCompatOffline is SetCompat for `registry compat set`, with the server stopped: the
// same checks and audit (actor, "offline": true), no rebuild (the next start builds).
func (s *Service) SetCompatOffline(ctx context.Context, actor, id, ver, maxKandev, reason string) (*store.Curation, error) {
	return s.setCompat(ctx, actor, id, ver, maxKandev, reason, true)
}

func (s *Service) setCompat(ctx context.Context, actor, id, ver, maxKandev, reason string, offline bool) (*store.Curation, error) {
	mv, err := checkCuration(maxKandev, reason)
	if err != nil {
		return nil, err
	}
	r, err := s.storedRelease(ctx, id, ver)
	if err != nil {
		return nil, err
	}
	if err := s.checkNarrows(ctx, r, mv); err != nil {
		return nil, err
	}
	c := store.Curation{PackageID: id, Version: ver, MaxKandev: mv.String(), Reason: reason, SetBy: actor, SetAt: s.now().Truncate(time.Second)}
	detail := map[string]any{"max_kandev": c.MaxKandev, "reason": reason}
	if offline {
		detail["offline"] = true
	}
	audit := store.AuditEntry{Actor: actor, Action: "compat_set", Target: id + "@" + ver, Outcome: "ok", Detail: detail}
	if err := s.store.SetCompat(ctx, c, audit); err != nil {
		return nil, fmt.Errorf("ingest: compat %s@%s: %w", id, ver, err)
	}
	return &c, nil
}

// ClearCompat removes the curation of id@ver (admin only), audited; it reports whether
// there was one.
func (s *Service) ClearCompat(ctx context.Context, a Actor, id, ver string) (bool, error) {
	if !a.Admin {
		return false, refuse(ErrForbidden, nil, "%s may not curate compatibility: only an admin may", a.Name)
	}
	if _, err := s.storedRelease(ctx, id, ver); err != nil {
		return false, err
	}
	audit := store.AuditEntry{Actor: a.Name, Action: "compat_clear", Target: id + "@" + ver, Outcome: "ok"}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	had, err := s.store.ClearCompat(ctx, id, ver, audit)
	if err != nil {
		return false, fmt.Errorf("ingest: clear compat %s@%s: %w", id, ver, err)
	}
	if had {
		s.afterChange("compat clear "+id+"@"+ver, id)
	}
	return had, nil
}

// checkCuration checks a curation's fields before any lookup.
func checkCuration(maxKandev, reason string) (version.V, error) {
	mv, err := version.Parse(maxKandev)
	if err != nil {
		return mv, refuseOne(ErrInvalid, "compat.max_kandev.format", "max_kandev", "max_kandev %q is not a SemVer version: %v; give the newest Kandev version the release works on, such as 0.93.4", truncateQuote(maxKandev), err)
	}
	if p := CurationReasonProblem(reason); p != "" {
		return mv, refuseOne(ErrInvalid, "compat.reason", "reason", "%s", p)
	}
	return mv, nil
}

// CurationReasonProblem says what is wrong with a curation's reason, or "".
func CurationReasonProblem(reason string) string {
	switch {
	case reason == "":
		return "reason is empty; say why hosts newer than max_kandev must not get the release (it is shown to them)"
	case len(reason) > MaxCompatReason:
		return fmt.Sprintf("reason is %d bytes, at most %d; shorten it to one line", len(reason), MaxCompatReason)
	}
	if p := manifest.TextProblem(reason, false); p != "" {
		return fmt.Sprintf("reason (%d bytes) holds %s: send one line of plain text", len(reason), p)
	}
	return ""
}

func (s *Service) storedRelease(ctx context.Context, id, ver string) (*store.Release, error) {
	r, err := s.store.Release(ctx, id, ver)
	if err != nil {
		return nil, refuse(ErrNotFound, nil, "%s@%s is not published", truncateQuote(id), truncateQuote(ver))
	}
	if r.Kind == "extension" {
		return nil, refuseOne(ErrInvalid, "compat.kind", "", "%s is a Curupira extension: host compatibility is curated for Kandev plugins and canvases only", id)
	}
	return r, nil
}

// checkNarrows refuses a maximum below the manifest's min_kandev_version: the range would
// be empty, which is a mistake (yank the release to withdraw it from every host).
func (s *Service) checkNarrows(ctx context.Context, r *store.Release, mv version.V) error {
	c, err := s.storedCard(ctx, r)
	if err != nil {
		return err
	}
	e := newRelEntry(r, c, nil)
	if e.minSet && !e.minBad && mv.Compare(e.min) < 0 {
		return refuseOne(ErrInvalid, "compat.max_kandev.below_min", "max_kandev",
			"max_kandev %s is below the manifest's min_kandev_version %q of %s@%s: no host would be offered it; give a version at or above %s, or yank the release to withdraw it",
			mv, c.MinKandevVersion, r.PackageID, r.Version, e.min)
	}
	caps := s.caps()
	if row, ok := caps.lowestInstalling(c.APIVersion, c.Kind == "canvas"); ok && mv.Compare(caps.Hosts[row].from) < 0 {
		return refuseOne(ErrInvalid, "compat.max_kandev.no_host", "max_kandev",
			"max_kandev %s is below Kandev %s, the first host version that installs %s@%s (api_version %d, capability row from %s): no host would be offered it, a hidden yank; give a version at or above %s, or yank the release to withdraw it from every host",
			mv, caps.Hosts[row].From, r.PackageID, r.Version, c.APIVersion, caps.Hosts[row].From, caps.Hosts[row].From)
	}
	return nil
}
