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
	FileName string    // the uploaded file name, checked against the manifest when it is <id>-<version>.tar.gz
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

// Publish runs the whole pipeline. Nothing is stored unless every check passes; a refusal
// is a *Refusal carrying every problem found.
func (s *Service) Publish(ctx context.Context, in PublishInput) (*PublishResult, error) {
	tmp, err := s.store.Blobs.TempFile("upload-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) // a no-op once adopted into the blob store
	c, err := s.check(ctx, in, tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("ingest: spool: %w", cerr)
	}
	target := targetOf(c.rep, in.FileName)
	if err != nil {
		s.auditPublish(ctx, in.Actor, target, err, nil)
		s.observePublish(nil, err)
		return nil, err
	}
	res, err := s.commit(ctx, in, c, tmp.Name())
	s.auditPublish(ctx, in.Actor, target, err, res)
	s.observePublish(res, err)
	return res, err
}

// checked is a package that passed every check, with what was learnt on the way.
type checked struct {
	rep *verify.Report
	sig *signature.Result
}

// check verifies the package while spooling it to tmp, then authorises and checks
// signatures.
func (s *Service) check(ctx context.Context, in PublishInput, tmp *os.File) (checked, error) {
	rep, err := verify.Package(ctx, io.TeeReader(in.Package, tmp), verify.Options{
		FileName: in.FileName, Plugin: s.cfg.Plugin, Canvas: s.cfg.Canvas})
	if err != nil {
		return checked{}, fmt.Errorf("ingest: read package: %w", err)
	}
	c := checked{rep: rep}
	if !rep.OK() {
		return c, refuse(ErrInvalid, rep.Problems, "the package is invalid: %d problem(s)", len(rep.Problems.Errors()))
	}
	lst, err := s.authorize(in.Actor, rep)
	if err != nil {
		return c, err
	}
	sig, probs := s.checkSignatures(ctx, rep, lst, in.Bundle, tmp.Name())
	if probs.HasErrors() {
		return c, refuse(ErrInvalid, probs, "the package's signature was refused: %s", probs.Errors()[0].Message)
	}
	rep.Problems = append(rep.Problems, probs...)
	c.sig = sig
	return c, nil
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
		return lst, refuse(ErrForbidden, nil, "extension %q is not listed in this registry's plugins.yaml: add an entry under extensions: with name: %s and repo: owner/name, then reload (POST /api/v1/admin/reload or SIGHUP)", rep.ID, rep.ID)
	case !ok:
		return lst, refuse(ErrForbidden, nil, "plugin %q is not listed in this registry's plugins.yaml: add an entry under plugins: with id: %s and repo: owner/name, then reload (POST /api/v1/admin/reload or SIGHUP)", rep.ID, rep.ID)
	case lst.Kind != "" && lst.Kind != rep.Kind:
		return lst, refuse(ErrInvalid, problem.List{{Rule: "registry.kind", Path: "kind", Severity: problem.Error,
			Message: fmt.Sprintf("plugins.yaml lists %q as a %s but the package is a %s; fix the kind in plugins.yaml or the manifest's distribution block", rep.ID, lst.Kind, rep.Kind)}},
			"kind mismatch for %q", rep.ID)
	}
	if !mayPublish(a, rep.ID, lst.Owners) {
		return lst, refuse(ErrForbidden, nil, "%s may not publish %q: a publisher token needs its publisher in the entry's owners, an upload token needs the id in its scope", a.Name, rep.ID)
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

// commit stores a checked package: blob first (durable), then the row; identical bytes
// already published are accepted again, different bytes are a conflict.
func (s *Service) commit(ctx context.Context, in PublishInput, c checked, tmpPath string) (*PublishResult, error) {
	rep := c.rep
	if old, err := s.store.Release(ctx, rep.ID, rep.Version); err == nil {
		return s.existing(old, rep)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	rel, err := s.newRelease(c, in.Actor)
	if err != nil {
		return nil, err
	}
	if err := s.store.Blobs.Adopt(tmpPath, rep.SHA256); err != nil {
		return nil, err
	}
	if rep.Icon != nil {
		sha, err := s.store.Blobs.Put(rep.Icon.Data)
		if err != nil {
			return nil, err
		}
		rel.IconSHA256, rel.IconExt, rel.IconType, rel.IconSize = sha, strings.TrimPrefix(rep.Icon.Ext, "."), rep.Icon.ContentType, int64(len(rep.Icon.Data))
	}
	audit := store.AuditEntry{Actor: in.Actor.Name, Action: "publish", Target: rep.ID + "@" + rep.Version, Outcome: "ok",
		Detail: map[string]any{"sha256": rep.SHA256, "size": rep.Size, "warnings": rep.Problems.Rules()}}
	saved, err := s.store.InsertRelease(ctx, rel, audit)
	if errors.Is(err, store.ErrConflict) {
		return s.existing(saved, rep)
	}
	if err != nil {
		return nil, err
	}
	if err := s.Rebuild(ctx); err != nil {
		s.log.Error("rebuild after publish", "id", rep.ID, "err", err)
	}
	return &PublishResult{Release: saved, Created: true, PackageURL: s.PackageURL(rep.ID, rep.Version), Report: rep}, nil
}

func (s *Service) existing(old *store.Release, rep *verify.Report) (*PublishResult, error) {
	if old.SHA256 == rep.SHA256 {
		return &PublishResult{Release: old, PackageURL: s.PackageURL(old.PackageID, old.Version), Report: rep}, nil
	}
	return nil, refuse(ErrConflict, nil, "%s@%s is already published with different bytes (sha256 %s); published versions are immutable: bump the version and publish again",
		rep.ID, rep.Version, old.SHA256)
}

func (s *Service) newRelease(c checked, a Actor) (*store.Release, error) {
	rep := c.rep
	rel := &store.Release{PackageID: rep.ID, Version: rep.Version, Kind: rep.Kind, SHA256: rep.SHA256, Size: rep.Size,
		Manifest: rep.ManifestRaw, README: rep.README, Warnings: rep.Problems.Warnings(), PublishedBy: a.Name}
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
