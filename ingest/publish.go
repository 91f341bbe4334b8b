package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
	"github.com/pluginyard/registry/verify/signature"
)

// PublishInput is one package to publish.
type PublishInput struct {
	Package  io.Reader // the .tar.gz bytes
	FileName string    // "<file id>-<version>.tar.gz" (see PackageFileName): required, authorised before the package is read
	Bundle   []byte    // an optional detached Sigstore bundle (JSON)
	Actor    Actor
}

// PublishResult is an accepted (or idempotently re-accepted) release.
type PublishResult struct {
	Release    *store.Release
	Created    bool // false when identical bytes were already published
	PackageURL string
	Report     *verify.Report
}

// PublishUpload verifies the spooled package of u, checks it against the list and its
// signing policy, and commits it. Nothing is stored unless every check passes, and the
// index documents are built with the release before it is committed: a release they
// could not hold is refused (index.size), never accepted and left out. It runs at low
// CPU priority (RunLowPriority): requests being served go first.
func (s *Service) PublishUpload(ctx context.Context, u *Upload, bundle []byte) (res *PublishResult, err error) {
	RunLowPriority(func() { res, err = s.publishUpload(ctx, u, bundle) })
	return res, err
}

func (s *Service) publishUpload(ctx context.Context, u *Upload, bundle []byte) (*PublishResult, error) {
	c, err := s.check(ctx, u, bundle)
	target := targetOf(c.rep, u.name)
	if err != nil {
		s.auditPublish(ctx, u.actor, target, err, nil)
		s.observePublish(nil, err)
		return nil, err
	}
	res, err := s.commit(ctx, u, c)
	s.auditPublish(context.WithoutCancel(ctx), u.actor, target, err, res)
	s.observePublish(res, err)
	return res, err
}

// checked is a package that passed every check, with what was learnt on the way.
type checked struct {
	rep *verify.Report
	sig *signature.Result
}

// check verifies the spooled package, then authorises it and checks its signatures.
func (s *Service) check(ctx context.Context, u *Upload, bundle []byte) (checked, error) {
	f, err := u.reopen()
	if err != nil {
		return checked{}, err
	}
	rep, err := verify.Package(ctx, f, verify.Options{FileName: u.name, Plugin: s.cfg.Plugin, Canvas: s.cfg.Canvas})
	if err != nil {
		return checked{}, fmt.Errorf("ingest: read package: %w", err)
	}
	c := checked{rep: rep}
	if err := s.screenContent(ctx, rep); err != nil {
		return c, err
	}
	if !rep.OK() {
		return c, refuse(ErrInvalid, rep.Problems, "the package is invalid: %d problem(s)", len(rep.Problems.Errors()))
	}
	if err := u.matches(rep); err != nil {
		return c, err
	}
	lst, err := s.authorize(u.actor, rep)
	if err != nil {
		return c, err
	}
	sig, probs := s.checkSignatures(ctx, rep, lst, bundle, u.f.Name())
	if probs.HasErrors() {
		return c, refuse(ErrInvalid, probs, "the package's signature was refused: %s", probs.Errors()[0].Message)
	}
	rep.Problems = append(rep.Problems, probs...)
	c.sig = sig
	return c, nil
}

// matches checks that the package is one its file name was authorised for (verify
// compared file ids and versions; two ids can share a file id, and a name can split into
// more than one listed id and version).
func (u *Upload) matches(rep *verify.Report) error {
	if u.targets == nil {
		return nil
	}
	var names []string
	for _, t := range u.targets {
		switch {
		case rep.ID == t.ID && rep.Version == t.Version && (rep.Kind == "extension") == t.Extension && t.Allowed:
			return nil
		case rep.ID == t.ID && rep.Version == t.Version && (rep.Kind == "extension") == t.Extension:
			return forbidden(u.actor, []target{t})
		case t.Allowed:
			names = append(names, describe([]target{t})[0]+"@"+t.Version)
		}
	}
	return refuseOne(ErrInvalid, "publish.filename", "", "the file name %q names %s, but the package is %s %s@%s: upload it under %q",
		u.name, strings.Join(names, " or "), rep.Kind, rep.ID, rep.Version, PackageFileName(rep.ID, rep.Version))
}

// listing is what the curated list says of one package id, whatever its kind.
type listing struct {
	Kind    string // plugin | canvas (plugins only; "" when unspecified)
	Repo    string
	Owners  []string
	Signing *index.Signing
}

// listed looks id up among the list's extensions (extension true) or plugins.
func (s *Service) listed(id string, extension bool) (listing, bool) {
	l := s.List()
	if extension {
		e, ok := l.Extension(id)
		if !ok {
			return listing{}, false
		}
		return listing{Repo: e.Repo, Owners: e.Owners, Signing: e.Signing}, true
	}
	e, ok := l.Plugin(id)
	if !ok {
		return listing{}, false
	}
	return listing{Kind: e.Kind, Repo: e.Repo, Owners: e.Owners, Signing: e.Signing}, true
}

// authorize checks that the id is listed (for its kind) and that the actor may publish it,
// and returns what the list says of it (one read of the list, so a reload in between
// cannot mix two versions of an entry).
func (s *Service) authorize(a Actor, rep *verify.Report) (listing, error) {
	isExt := rep.Kind == "extension"
	lst, ok := s.listed(rep.ID, isExt)
	switch {
	case !ok && isExt:
		return lst, refuseOne(ErrForbidden, "publish.unlisted", "", "extension %q is not listed in this registry's plugins.yaml: add an entry under extensions: with name: %s and repo: owner/name, then reload (POST /api/v1/admin/reload or SIGHUP)", rep.ID, rep.ID)
	case !ok:
		return lst, refuseOne(ErrForbidden, "publish.unlisted", "", "plugin %q is not listed in this registry's plugins.yaml: add an entry under plugins: with id: %s and repo: owner/name, then reload (POST /api/v1/admin/reload or SIGHUP)", rep.ID, rep.ID)
	case lst.Kind != "" && lst.Kind != rep.Kind:
		return lst, refuse(ErrInvalid, problem.List{{Rule: "registry.kind", Path: "kind", Severity: problem.Error,
			Message: fmt.Sprintf("plugins.yaml lists %q as a %s but the package is a %s; fix the kind in plugins.yaml or the manifest's distribution block", rep.ID, lst.Kind, rep.Kind)}},
			"kind mismatch for %q", rep.ID)
	}
	if !mayPublish(a, rep.ID, lst.Owners) {
		return lst, refuseOne(ErrForbidden, "publish.forbidden", "", "%s may not publish %q: a publisher token needs its publisher in the entry's owners, an upload token needs the id in its scope", a.Name, rep.ID)
	}
	return lst, nil
}

func mayPublish(a Actor, id string, owners []string) bool {
	switch {
	case a.Admin:
		return true
	case a.Publisher != "":
		return slices.Contains(owners, a.Publisher)
	default:
		return slices.Contains(a.Scope, id)
	}
}

// commit stores a checked package and returns once the documents in force show it. Under
// rebuildMu: the version and file-id checks and the candidate entry against the store as it
// is, then the blobs (durable) and the row. The documents are then rebuilt with it, in one
// build with the publishes committed meanwhile (buildQueue). Identical bytes already
// published are accepted again, different bytes are a conflict.
func (s *Service) commit(ctx context.Context, u *Upload, c checked) (*PublishResult, error) {
	res, ticket, err := s.commitRow(ctx, u, c)
	if err == nil && ticket > 0 {
		s.builds.wait(ticket, s.buildQueued)
	}
	return res, err
}

// commitRow is commit's part under rebuildMu; a created release is queued for the build
// and its ticket returned; a release already stored returns the last ticket handed out (0
// when nothing was queued).
func (s *Service) commitRow(ctx context.Context, u *Upload, c checked) (*PublishResult, uint64, error) {
	rep := c.rep
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	if err := s.publishRefusal(rep.ID, rep.Version); err != nil { // quarantine.go; under rebuildMu, as quarantines change
		return nil, 0, err
	}
	if old, err := s.store.Release(ctx, rep.ID, rep.Version); err == nil {
		if old.SHA256 == rep.SHA256 {
			if err := s.repairBlob(ctx, u, old); err != nil {
				return nil, 0, err
			}
		}
		res, err := s.existing(old, rep)
		return res, s.builds.last(), err // the same bytes may be another publish's, still being built
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, 0, err
	}
	rel, err := s.newRelease(c, u.actor)
	if err != nil {
		return nil, 0, err
	}
	if ic := rep.Icon; ic != nil {
		rel.IconSHA256, rel.IconExt, rel.IconType, rel.IconSize = ic.SHA256, strings.TrimPrefix(ic.Ext, "."), ic.ContentType, int64(len(ic.Data))
	}
	rel.CreatedAt = s.now().Truncate(time.Second)
	what := "publishing " + rep.ID + "@" + rep.Version
	err = s.checkCandidate(ctx, what, rep.ID, func(st *pkgState) error {
		if err := refuseArchived(st.pkg, rep.ID, rep.Version); err != nil { // archive.go
			return err
		}
		if err := s.checkNewRelease(ctx, st.rels, rep); err != nil {
			return err
		}
		st.rels = append(st.rels, rel)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	saved, err := s.storeRelease(ctx, u, rel, rep.Icon)
	if err != nil || saved != rel {
		res, err := s.existingOr(saved, rep, err)
		return res, 0, err
	}
	ticket := s.builds.add(rep.ID, "publish "+rep.ID+"@"+rep.Version)
	return &PublishResult{Release: saved, Created: true, PackageURL: s.PackageURL(rep.ID, rep.Version), Report: rep}, ticket, nil
}

// checkNewRelease refuses a version equal to a stored one of the package (rels, a legacy
// "v1.0.0" for "1.0.0"), and a file id already used by another package's releases.
func (s *Service) checkNewRelease(ctx context.Context, rels []*store.Release, rep *verify.Report) error {
	for _, r := range rels {
		if sameVersion(r.Version, rep.Version) {
			return refuseOne(ErrConflict, "publish.version.exists", "version",
				"%s is already published as version %q, the same version as %q: published versions are immutable; bump the version and publish again", rep.ID, r.Version, rep.Version)
		}
	}
	fileID := FileID(rep.ID)
	other, err := s.fileIDOwner(ctx, fileID, rep.ID)
	if err != nil {
		return err
	}
	if other != "" {
		return refuseOne(ErrConflict, "publish.file_id.collision", "id",
			"%q would be downloaded from /packages/%s/, the URL of the already published %q (two ids with one file id): rename the package", rep.ID, fileID, other)
	}
	return nil
}

// fileIDOwner is a package other than id whose releases are downloaded under fileID, or
// "".
func (s *Service) fileIDOwner(ctx context.Context, fileID, id string) (string, error) {
	ids, err := s.store.FileIDCandidates(ctx, fileID)
	if err != nil {
		return "", err
	}
	for _, other := range ids {
		if other != id && FileID(other) == fileID {
			return other, nil
		}
	}
	return "", nil
}

// storeRelease makes the package (and icon) blobs durable, then inserts the row. On any
// failure the blobs it created are removed, so a refused or failed publish stores nothing.
// It returns the existing release, and ErrConflict, when another writer got there first.
func (s *Service) storeRelease(ctx context.Context, u *Upload, rel *store.Release, icon *verify.Asset) (*store.Release, error) {
	var created []string
	undo := func() {
		for _, sha := range created {
			// Not the request's context: a publish cut short must not leave its blob.
			if err := s.blobs.Remove(context.WithoutCancel(ctx), sha); err != nil {
				s.log.Error("orphan blob left after a failed publish", "sha256", sha, "err", err)
			}
		}
	}
	put := func(path, sha string, size int64, what string) error {
		// Only a blob this publish created is undone: one already there may be another
		// release's (the same icon, the same bytes under another version).
		serr := s.blobs.Stat(ctx, sha, size)
		fresh := errors.Is(serr, store.ErrBlobMissing)
		if errors.Is(serr, store.ErrBlobCorrupt) { // damaged: these verified bytes replace it
			if err := s.blobs.Remove(ctx, sha); err != nil {
				return storageErr("replace the damaged "+what+" blob", err)
			}
		}
		if err := s.blobs.Put(ctx, sha, size, path); err != nil {
			return storageErr("store the "+what, err)
		}
		if fresh {
			created = append(created, sha)
		}
		return nil
	}
	var iconPath string
	if icon != nil {
		p, err := s.spoolIcon(icon.Data)
		if err != nil {
			return nil, err
		}
		defer os.Remove(p) // a no-op once a blob folder renamed it in
		iconPath = p
	}
	if err := put(u.f.Name(), rel.SHA256, rel.Size, "package"); err != nil {
		undo()
		return nil, err
	}
	if iconPath != "" {
		if err := put(iconPath, rel.IconSHA256, rel.IconSize, "icon"); err != nil {
			undo()
			return nil, err
		}
	}
	audit := store.AuditEntry{Actor: rel.PublishedBy, Action: "publish", Target: rel.PackageID + "@" + rel.Version, Outcome: "ok",
		Detail: map[string]any{"sha256": rel.SHA256, "size": rel.Size, "warnings": rel.Warnings.Rules()}}
	saved, err := s.store.InsertRelease(ctx, rel, audit)
	if errors.Is(err, store.ErrConflict) && saved != nil && saved.SHA256 == rel.SHA256 {
		return saved, err // the same bytes: the blob is the other writer's too
	}
	if err != nil {
		undo()
		return saved, storageErr("record the release", err)
	}
	return saved, nil
}

// spoolIcon writes icon bytes to a spool file, through the same writer seam as uploads.
func (s *Service) spoolIcon(data []byte) (string, error) {
	f, err := s.SpoolFile("icon-*")
	if err != nil {
		return "", storageErr("store the icon", err)
	}
	_, werr := s.spoolWriter(f).Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		var we *spoolWriteError
		if errors.As(err, &we) {
			err = we.err
		}
		return "", storageErr("store the icon", err)
	}
	return f.Name(), nil
}

func (s *Service) existingOr(saved *store.Release, rep *verify.Report, err error) (*PublishResult, error) {
	if errors.Is(err, store.ErrConflict) && saved != nil {
		return s.existing(saved, rep)
	}
	return nil, err
}

func (s *Service) existing(old *store.Release, rep *verify.Report) (*PublishResult, error) {
	if old.SHA256 == rep.SHA256 {
		return &PublishResult{Release: old, PackageURL: s.PackageURL(old.PackageID, old.Version), Report: rep}, nil
	}
	return nil, refuseOne(ErrConflict, "publish.version.exists", "version", "%s@%s is already published with different bytes (sha256 %s); published versions are immutable: bump the version and publish again",
		rep.ID, rep.Version, old.SHA256)
}

func (s *Service) newRelease(c checked, a Actor) (*store.Release, error) {
	rep := c.rep
	rel := &store.Release{PackageID: rep.ID, Version: rep.Version, Kind: rep.Kind, SHA256: rep.SHA256, Size: rep.Size,
		Manifest: rep.ManifestRaw, Warnings: rep.Problems.Warnings(), PublishedBy: a.Name, Facts: &store.Facts{}}
	if err := setCard(rel, rep); err != nil {
		return nil, err
	}
	if rep.Checksums != nil { // present and, since the package passed, verified
		lines, _ := verify.ParseChecksums(rep.Checksums)
		rel.Facts.Checksums = &store.ChecksumFacts{Files: len(lines)}
	}
	if err := rel.SetREADME(rep.README); err != nil {
		return nil, err
	}
	if err := rel.SetChangelog(rep.Changelog); err != nil {
		return nil, err
	}
	if c.sig != nil {
		b, err := json.Marshal(c.sig)
		if err != nil {
			return nil, fmt.Errorf("ingest: signature: %w", err)
		}
		rel.Signature = b
	}
	return rel, nil
}

func (s *Service) auditPublish(ctx context.Context, a Actor, target string, err error, res *PublishResult) {
	if err == nil {
		if res != nil && !res.Created {
			s.log.Info("publish repeated", "target", target)
		}
		return // accepted publishes are audited with their row
	}
	e := store.AuditEntry{Actor: a.Name, Action: "publish", Target: target, Outcome: "error", Detail: map[string]any{"error": err.Error()}}
	var r *Refusal
	if errors.As(err, &r) {
		e.Outcome = "refused"
		e.Detail = map[string]any{"reason": r.Message, "rules": r.Problems.Rules()}
	}
	s.audit(ctx, e)
}

func targetOf(rep *verify.Report, fileName string) string {
	if rep != nil && rep.ID != "" {
		return rep.ID + "@" + rep.Version
	}
	return fileName
}

// FileID is the form of a package id used in file names and URL paths (see
// extension.FileID; plugin ids are unchanged).
func FileID(id string) string { return extension.FileID(id) }
