package ingest

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/pluginyard/registry/store"
)

// Blobs are verified, not trusted: a release whose package blob is missing, truncated or
// re-hashes to another sha256 leaves the index documents until it is repaired (by
// re-publishing the identical bytes, or restoring the file and letting the next scrub pass
// see it), and is reported at /readyz and GET /api/v1/admin/blobs. Damage is found by the
// size check of every download, by the start-up check of every listed release's blob, and
// by the background scrub, which re-hashes every blob once per scrub interval.

// blobHealth is the set of blobs known to be damaged.
type blobHealth struct {
	mu  sync.Mutex
	bad map[string]store.BlobProblem // sha256 → what is wrong
}

// Damaged returns the damaged blobs, ordered by sha256.
func (s *Service) Damaged() []store.BlobProblem {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	out := make([]store.BlobProblem, 0, len(s.health.bad))
	for _, p := range s.health.bad {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SHA256 < out[j].SHA256 })
	return out
}

// BlobDamaged reports whether blob sha is known to be damaged (it is not served).
func (s *Service) BlobDamaged(sha string) bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	_, bad := s.health.bad[sha]
	return bad
}

// setDamage records (p.Kind != "") or clears the state of one blob and reports whether it
// changed.
func (s *Service) setDamage(sha string, p store.BlobProblem) bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	old, had := s.health.bad[sha]
	if p.Kind == "" {
		delete(s.health.bad, sha)
		return had
	}
	if had && old.Kind == p.Kind {
		return false // keep the first, fuller record (a download knows only one use)
	}
	if s.health.bad == nil {
		s.health.bad = map[string]store.BlobProblem{}
	}
	s.health.bad[sha] = p
	return true
}

// ReportBlob tells the service what a check of blob sha found (err nil: it is whole). A
// change takes the release out of (or back into) the index documents at once.
func (s *Service) ReportBlob(sha string, size int64, uses []store.BlobUse, err error) {
	p := problemOf(store.BlobRecord{SHA256: sha, Size: size, Uses: uses}, err)
	if !s.setDamage(sha, p) {
		return
	}
	if p.Kind != "" {
		s.log.Error("blob damaged: its releases leave the index until repaired (re-publish the identical bytes or restore the file)",
			"sha256", sha, "state", p.Kind, "releases", usesText(uses), "err", err)
	} else {
		s.log.Info("blob repaired: its releases are back in the index", "sha256", sha)
	}
	s.rebuildForHealth(packagesOf(uses))
}

// rebuildForHealth brings blob health changes to the documents: the packages ids (those
// using the blobs) are re-read and re-encoded; nil ids rebuilds everything. Damage can take
// many releases out at once (a lost blob folder): the shrink guard is for list mistakes,
// and listing packages nobody can download is worse than listing fewer.
func (s *Service) rebuildForHealth(ids []string) {
	s.refreshPackages("blob health change", ids, true)
}

// packagesOf are the packages of the package and icon uses (previews are in no package's
// release rows: a full rebuild, nil, brings them).
func packagesOf(uses []store.BlobUse) []string {
	ids := []string{}
	for _, u := range uses {
		if u.Role == "preview" {
			return nil
		}
		ids = append(ids, u.PackageID)
	}
	return ids
}

func usesText(uses []store.BlobUse) []string {
	out := make([]string, 0, len(uses))
	for _, u := range uses {
		out = append(out, u.String())
	}
	return out
}

// CheckBlobsExist checks, without re-hashing, that the blob of every release has its file
// at its recorded size; serve runs it at start so that a lost blob folder is reported (and
// its releases leave the index) before the first request. It stats every recorded blob
// (one scan, store.RecordedBlobs) and reads what uses the damaged ones only
// (store.BlobUsesOf): a damaged blob nothing uses (a second copy of a preview, recorded by
// earlier versions) is no damage.
func (s *Service) CheckBlobsExist(ctx context.Context) error {
	recs, err := s.store.RecordedBlobs(ctx)
	if err != nil {
		return err
	}
	errs := make([]error, len(recs))
	var damaged []string
	for i, r := range recs {
		if errs[i] = s.blobs.Stat(ctx, r.SHA256, r.Size); errs[i] != nil {
			damaged = append(damaged, r.SHA256)
		}
	}
	uses, err := s.store.BlobUsesOf(ctx, damaged) // they name the damage in /readyz and the log
	if err != nil {
		return err
	}
	changed := false
	for i, r := range recs {
		if errs[i] != nil {
			if r.Uses = uses[r.SHA256]; len(r.Uses) == 0 {
				errs[i] = nil // unused: nothing to leave the index, nothing to report
			}
		}
		changed = s.setDamage(r.SHA256, problemOf(r, errs[i])) || changed
	}
	if changed {
		s.log.Error("blobs damaged at start; their releases are left out of the index", "damaged", len(s.Damaged()))
		s.rebuildForHealth(nil)
	}
	return nil
}

// ScrubOnce re-hashes every recorded blob, pausing pause between blobs, and updates the
// damaged set; it rebuilds once at the end when anything changed.
func (s *Service) ScrubOnce(ctx context.Context, pause time.Duration) error {
	recs, err := s.store.BlobRecords(ctx)
	if err != nil {
		return err
	}
	changed := false
	for i, r := range recs {
		if i > 0 && pause > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(r.Uses) == 0 {
			continue
		}
		err := s.blobs.Check(ctx, r.SHA256, r.Size)
		p := problemOf(r, err)
		if s.setDamage(r.SHA256, p) {
			changed = true
			if p.Kind != "" {
				s.log.Error("scrub: blob damaged; its releases leave the index", "sha256", r.SHA256, "state", p.Kind, "releases", usesText(r.Uses), "err", err)
			}
		}
	}
	if changed {
		s.rebuildForHealth(nil)
	}
	return nil
}

func problemOf(r store.BlobRecord, err error) store.BlobProblem {
	p := store.BlobProblem{SHA256: r.SHA256, Size: r.Size, Uses: r.Uses}
	switch {
	case err == nil:
	case errors.Is(err, store.ErrBlobMissing):
		p.Kind, p.Detail = store.BlobMissing, err.Error()
	case errors.Is(err, store.ErrBlobCorrupt):
		p.Kind, p.Detail = store.BlobCorrupt, err.Error()
	default:
		p.Kind, p.Detail = store.BlobUnreadable, err.Error()
	}
	return p
}

// RunScrub re-hashes every blob once per interval until ctx ends, spreading the work
// evenly over the interval so that the disk sees a bounded rate (one blob every
// interval/blobs), never a burst.
func (s *Service) RunScrub(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	for {
		n, err := s.store.BlobCount(ctx)
		if err != nil {
			s.log.Error("scrub: count blobs", "err", err)
		}
		pause := interval
		if n > 0 {
			pause = interval / time.Duration(n)
		}
		start := time.Now()
		if err := s.ScrubOnce(ctx, pause); err != nil && ctx.Err() == nil {
			s.log.Error("scrub pass failed", "err", err)
		}
		rest := interval - time.Since(start)
		if rest < pause {
			rest = pause
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(rest):
		}
	}
}

// repairBlob puts the verified bytes of an identical re-publish in place of old's package
// blob when that blob is damaged (missing, truncated, or known corrupt): re-publishing the
// same bytes is how an author or operator repairs a release. rebuildMu is held.
func (s *Service) repairBlob(ctx context.Context, u *Upload, old *store.Release) error {
	err := s.blobs.Stat(ctx, old.SHA256, old.Size)
	if err == nil && !s.BlobDamaged(old.SHA256) {
		return nil
	}
	// A put keeps a blob already present, damaged or not: the damaged one goes first.
	if !errors.Is(err, store.ErrBlobMissing) {
		if err := s.blobs.Remove(ctx, old.SHA256); err != nil {
			return storageErr("repair the package blob", err)
		}
	}
	if err := s.blobs.Put(ctx, old.SHA256, old.Size, u.f.Name()); err != nil {
		return storageErr("repair the package blob", err)
	}
	s.log.Info("blob repaired by an identical re-publish", "sha256", old.SHA256, "release", old.PackageID+"@"+old.Version)
	if s.setDamage(old.SHA256, store.BlobProblem{}) {
		if err := s.applyLocked(s.ctx, []string{old.PackageID}); err != nil {
			s.retry.failed(s, "repair "+old.PackageID+"@"+old.Version, err)
		}
	}
	return nil
}
