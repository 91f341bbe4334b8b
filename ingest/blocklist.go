package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// maxBlockReason bounds a blocklist reason (the store's CHECK says the same): it is shown
// to the author whose publish it refuses.
const maxBlockReason = 500

// screenContent runs right after verify: the entry's scan_allow turns the findings it
// names into warnings, and a package whose sha256, or any of whose files' sha256, is on
// the blocklist gets a scan.blocklist.* error. The blocklist cannot be allowed.
func (s *Service) screenContent(ctx context.Context, rep *verify.Report) error {
	rep.Problems = allowScans(rep.Problems, s.scanAllows(rep))
	blocked, err := s.blocked(ctx, rep)
	if err != nil {
		return err
	}
	rep.Problems = append(rep.Problems, blocked...)
	return nil
}

// scanAllows returns the scan_allow of the list entry the package is published as.
func (s *Service) scanAllows(rep *verify.Report) []index.ScanAllow {
	l := s.List()
	if l == nil {
		return nil
	}
	if rep.Kind == verify.KindExtension {
		if e, ok := l.Extension(rep.ID); ok {
			return e.ScanAllow
		}
		return nil
	}
	if e, ok := l.Plugin(rep.ID); ok {
		return e.ScanAllow
	}
	return nil // unlisted: authorize refuses it
}

// allowScans downgrades the scan findings allows names to warnings, saying so.
func allowScans(probs problem.List, allows []index.ScanAllow) problem.List {
	if len(allows) == 0 {
		return probs
	}
	for i, p := range probs {
		if p.Severity == problem.Error && strings.HasPrefix(p.Rule, "scan.") && index.Allows(allows, p.File, p.Rule) {
			probs[i].Severity = problem.Warning
			probs[i].Message = "allowed by the plugins.yaml entry's scan_allow: " + p.Message
		}
	}
	return probs
}

// blocked looks the package's digest and its files' digests up in the blocklist.
func (s *Service) blocked(ctx context.Context, rep *verify.Report) (problem.List, error) {
	shas := make([]string, 0, len(rep.Digests)+1)
	if rep.SHA256 != "" {
		shas = append(shas, rep.SHA256)
	}
	files := make([]string, 0, len(rep.Digests))
	for name, sha := range rep.Digests {
		shas = append(shas, sha)
		files = append(files, name)
	}
	// Files of equal content (empty files, copies) share a digest: ask for each one once.
	slices.Sort(shas)
	found, err := s.store.BlockedAmong(ctx, slices.Compact(shas))
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var out problem.List
	if b, ok := found[rep.SHA256]; ok {
		out = append(out, problem.Problem{Rule: "scan.blocklist.package", Severity: problem.Error,
			Message: fmt.Sprintf("the package's sha256 %s is on this registry's blocklist (%s); it is refused under any id and version. Ask the registry's admins if the block is wrong", b.SHA256, b.Reason)})
	}
	sort.Strings(files)
	for _, name := range files {
		if b, ok := found[rep.Digests[name]]; ok {
			out = append(out, problem.Problem{Rule: "scan.blocklist.file", File: name, Severity: problem.Error,
				Message: fmt.Sprintf("the file's sha256 %s is on this registry's blocklist (%s); remove or rebuild the file, or ask the registry's admins if the block is wrong", b.SHA256, b.Reason)})
		}
	}
	return out, nil
}

// CheckBlock normalises a blocklist digest (lowercase hex) and reason (trimmed) and checks
// them.
func CheckBlock(sha, reason string) (string, string, error) {
	sha = strings.ToLower(strings.TrimSpace(sha))
	if len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		return "", "", refuse(ErrInvalid, nil, "the sha256 %q is not 64 hexadecimal digits (%d characters); give the digest `sha256sum` prints for the package or the file", truncateQuote(sha), len(sha))
	}
	reason = strings.TrimSpace(reason)
	switch n := utf8.RuneCountInString(reason); {
	case n == 0:
		return "", "", refuse(ErrInvalid, nil, "a reason is required; it is shown to the author whose publish the entry refuses (e.g. \"known credential stealer, advisory 2026-11\")")
	case n > maxBlockReason:
		return "", "", refuse(ErrInvalid, nil, "the reason is %d characters; at most %d are allowed", n, maxBlockReason)
	}
	return sha, reason, nil
}

// AddBlock puts sha on the blocklist with reason, audited as actor's blocklist.add; it
// reports whether sha was new (a second add replaces the reason). `registry blocklist add`
// calls it with the store the server uses; a running server reads the blocklist at every
// publish, so the entry is in force at once.
func AddBlock(ctx context.Context, st BlockStore, actor, sha, reason string) (*store.Block, bool, error) {
	sha, reason, err := CheckBlock(sha, reason)
	if err != nil {
		return nil, false, err
	}
	b := store.Block{SHA256: sha, Reason: reason, AddedBy: actor}
	audit := store.AuditEntry{Actor: actor, Action: "blocklist.add", Target: sha, Outcome: "ok", Detail: map[string]any{"reason": b.Reason}}
	added, err := st.AddBlock(ctx, b, audit)
	if err != nil {
		return nil, false, fmt.Errorf("ingest: blocklist add: %w", err)
	}
	return &b, added, nil
}

// RemoveBlock takes sha off the blocklist, audited as actor's blocklist.remove;
// ErrNotFound when it is not on it.
func RemoveBlock(ctx context.Context, st BlockStore, actor, sha string) error {
	norm := strings.ToLower(strings.TrimSpace(sha))
	audit := store.AuditEntry{Actor: actor, Action: "blocklist.remove", Target: norm, Outcome: "ok"}
	err := st.RemoveBlock(ctx, norm, audit)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(ErrNotFound, nil, "%q is not on the blocklist (registry blocklist list shows it)", truncateQuote(sha))
	}
	if err != nil {
		return fmt.Errorf("ingest: blocklist remove: %w", err)
	}
	return nil
}

// Blocklist returns every blocklist entry (admin only).
func (s *Service) Blocklist(ctx context.Context, a Actor) ([]store.Block, error) {
	if !a.Admin {
		return nil, refuse(ErrForbidden, nil, "%s may not read the blocklist: only an admin may", a.Name)
	}
	return s.store.Blocks(ctx)
}

// BlockAdd is AddBlock for an admin of the API.
func (s *Service) BlockAdd(ctx context.Context, a Actor, sha, reason string) (*store.Block, bool, error) {
	if !a.Admin {
		return nil, false, refuse(ErrForbidden, nil, "%s may not change the blocklist: only an admin may", a.Name)
	}
	return AddBlock(ctx, s.store, a.Name, sha, reason)
}

// BlockRemove is RemoveBlock for an admin of the API.
func (s *Service) BlockRemove(ctx context.Context, a Actor, sha string) error {
	if !a.Admin {
		return refuse(ErrForbidden, nil, "%s may not change the blocklist: only an admin may", a.Name)
	}
	return RemoveBlock(ctx, s.store, a.Name, sha)
}
