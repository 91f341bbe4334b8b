package ingest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
)

// Report limits: a reason is a paragraph or two, a body holds one report with room for
// JSON escaping, a resolution is a line or two shown on the package page.
const (
	MaxReportReason = 4 << 10 // bytes of a report's reason
	MaxReportBody   = 8 << 10 // bytes of a report request's body (JSON or form)
	MaxResolution   = 1 << 10 // bytes of a resolution text
)

// ReportKinds are what a report may say a package is; ReportActions what resolving one
// may record as done about it.
var (
	ReportKinds   = []string{"malicious", "broken", "other"}
	ReportActions = []string{"none", "yanked", "quarantined", "deprecated"}
)

// ReportKeyFile is the reporter-hash key's file in the data directory.
//
// Reporters are stored as HMAC-SHA256(key, address), not as a bare hash: the IPv4 space is
// 2^32 addresses, which a laptop hashes through in minutes, so SHA-256(address) is the
// address for anyone holding the database. The key is a file beside the database rather
// than a row in it, so a leaked database or backup holds hashes nobody can reverse;
// `registry backup` copies only the database, and a registry restored without the file
// starts a new key (old hashes then no longer match new reports, which costs only the
// one-open-report-per-reporter check across the restore).
const ReportKeyFile = "reporter.key"

// ReportInput is one report as submitted: Reporter is the client's address as the server
// keys it for rate limits (an IPv6 address by its /64); only its keyed hash is stored.
type ReportInput struct {
	PackageID, Version, Kind, Reason string
	Reporter                         string
}

// SubmitReport checks and stores a report. A package with no published release is 404
// report.package.unknown; bad fields are 422 with every problem (report.kind,
// report.reason.*); a version not published is 404 report.version.unknown; a second open
// report of the same package, version and kind from the same address is 409
// report.duplicate. It is audited as action "report" by actor "anonymous".
func (s *Service) SubmitReport(ctx context.Context, in ReportInput) (*store.Report, error) {
	if _, err := s.store.Package(ctx, in.PackageID); errors.Is(err, store.ErrNotFound) {
		return nil, refuseOne(ErrNotFound, "report.package.unknown", "id", "no published package has the id %q: report a package from its page or by the id its page shows", quoteShort(in.PackageID))
	} else if err != nil {
		return nil, fmt.Errorf("ingest: report %s: %w", in.PackageID, err)
	}
	if probs := reportProblems(in); len(probs) > 0 {
		return nil, &Refusal{Kind: ErrInvalid, Message: "the report was not filed: " + probs[0].Message, Problems: probs}
	}
	if in.Version != "" {
		if _, err := s.store.Release(ctx, in.PackageID, in.Version); errors.Is(err, store.ErrNotFound) {
			return nil, refuseOne(ErrNotFound, "report.version.unknown", "version", "%s has no published version %q: leave the version empty to report the whole package", in.PackageID, quoteShort(in.Version))
		} else if err != nil {
			return nil, fmt.Errorf("ingest: report %s: %w", in.PackageID, err)
		}
	}
	key, err := s.reporterKey()
	if err != nil {
		return nil, err
	}
	r := &store.Report{PackageID: in.PackageID, Version: in.Version, Kind: in.Kind, Reason: in.Reason, ReporterHash: HashReporter(key, in.Reporter)}
	audit := store.AuditEntry{Actor: "anonymous", Action: "report", Target: store.TargetName(in.PackageID, in.Version), Outcome: "ok",
		Detail: map[string]any{"kind": in.Kind, "reporter_hash": r.ReporterHash}}
	err = s.store.AddReport(ctx, r, audit)
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil, refuseOne(ErrConflict, "report.duplicate", "", "this address already has an open %s report of %s: it was not filed again; an admin will resolve the first one", in.Kind, store.TargetName(in.PackageID, in.Version))
	case errors.Is(err, store.ErrNotFound):
		return nil, refuseOne(ErrNotFound, "report.package.unknown", "id", "no published package has the id %q", quoteShort(in.PackageID))
	case err != nil:
		return nil, fmt.Errorf("ingest: report %s: %w", in.PackageID, err)
	}
	return r, nil
}

// reportProblems is every problem of a report's fields.
func reportProblems(in ReportInput) problem.List {
	var out problem.List
	if !slices.Contains(ReportKinds, in.Kind) {
		out.Errorf("report.kind", "kind", "kind is %q: expected one of %s", quoteShort(in.Kind), strings.Join(ReportKinds, ", "))
	}
	switch reason := strings.TrimSpace(in.Reason); {
	case reason == "":
		out.Errorf("report.reason.missing", "reason", "reason is empty: say what is wrong (what the package does, which version, how to see it)")
	case len(in.Reason) > MaxReportReason:
		out.Errorf("report.reason.length", "reason", "reason is %d bytes: the limit is %d (4 KiB); shorten it and link to details instead", len(in.Reason), MaxReportReason)
	default:
		if p := manifest.TextProblem(in.Reason, true); p != "" {
			out.Errorf("report.reason.text", "reason", "reason holds %s: write plain text (newlines and tabs are fine)", p)
		}
	}
	return out
}

// quoteShort shortens s for quoting in a message: a refused value may be kilobytes long.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// HashReporter is the stored form of a reporter's address: hex HMAC-SHA256 under key, with
// a label so the key could never be confused with another use of it.
func HashReporter(key []byte, addr string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("registry report reporter\x00" + addr))
	return hex.EncodeToString(m.Sum(nil))
}

// reporterKey is the data directory's reporter key, read (or made) by the first report and
// kept: a report costs no file read.
func (s *Service) reporterKey() ([]byte, error) {
	if len(s.cfg.ReporterKey) > 0 {
		return s.cfg.ReporterKey, nil
	}
	if k := s.reportKey.Load(); k != nil {
		return *k, nil
	}
	k, err := LoadReportKey(s.store.Dir())
	if err != nil {
		return nil, err // not kept: the next report tries again
	}
	s.reportKey.Store(&k)
	return k, nil
}

// LoadReportKey reads dir/ReportKeyFile, creating it (32 random bytes, hex, mode 0600) on
// first use. The file is written whole under a temporary name and linked into place, so a
// crash leaves no half key and of two processes the second reads the first one's key.
func LoadReportKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, ReportKeyFile)
	key, err := readReportKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("ingest: report key: %w", err)
	}
	f, err := os.CreateTemp(dir, ReportKeyFile+".tmp*")
	if err != nil {
		return nil, storageErr("create the report key", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	if err := errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close()); err != nil {
		return nil, storageErr("write the report key", err)
	}
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, storageErr("install the report key", err)
	}
	return readReportKey(path)
}

// ReadReportKey reads a reporter key file an operator made (serve --reporter-key), which
// must exist: replicas given the same file hash reporters alike, where a key made per
// replica would not.
func ReadReportKey(path string) ([]byte, error) {
	key, err := readReportKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reporter key %s does not exist: make one with `openssl rand -hex 32 > %s` (mode 0600) and give every replica that file", path, path)
	}
	return key, err
}

func readReportKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("ingest: report key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("ingest: report key %s: want at least 16 bytes as hex (delete the file to start a new key)", path)
	}
	return key, nil
}

// Reports lists reports for an admin, newest first: only the open ones when openOnly, only
// packageID's when it is not empty, at most limit (0 for the store's ceiling, 500).
func (s *Service) Reports(ctx context.Context, openOnly bool, packageID string, limit int) ([]store.Report, error) {
	rs, err := s.store.Reports(ctx, store.ReportQuery{OpenOnly: openOnly, PackageID: packageID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("ingest: reports: %w", err)
	}
	return rs, nil
}

// ActionedReports are the resolved reports of id that led to an action, newest first and
// at most five: what its page shows.
func (s *Service) ActionedReports(ctx context.Context, id string) ([]store.Report, error) {
	rs, err := s.store.Reports(ctx, store.ReportQuery{PackageID: id, Actioned: true, Limit: 5})
	if err != nil {
		return nil, fmt.Errorf("ingest: reports of %s: %w", id, err)
	}
	return rs, nil
}

// ResolveReport resolves report id for an admin (see the package function).
func (s *Service) ResolveReport(ctx context.Context, a Actor, id int64, text, action string) (*store.Report, error) {
	if !a.Admin {
		return nil, refuse(ErrForbidden, nil, "%s may not resolve reports: only an admin may", a.Name)
	}
	return ResolveReport(ctx, s.store, a.Name, id, text, action)
}

// ResolveReport closes report id with a resolution text and the action taken (one of
// ReportActions; the action itself is taken with its own command: yank, deprecate,
// quarantine). A bad text or action is 422 with every problem (report.resolution.*,
// report.action), an unknown id 404 report.unknown, a resolved one 409 report.resolved.
// It is audited as "report_resolve" by actor.
func ResolveReport(ctx context.Context, st ReportStore, actor string, id int64, text, action string) (*store.Report, error) {
	if probs := resolutionProblems(text, action); len(probs) > 0 {
		return nil, &Refusal{Kind: ErrInvalid, Message: "report " + fmt.Sprint(id) + " was not resolved: " + probs[0].Message, Problems: probs}
	}
	res := store.Resolution{By: actor, Text: text, Action: action}
	audit := store.AuditEntry{Actor: actor, Action: "report_resolve", Outcome: "ok", Detail: map[string]any{"resolution": text, "action": action}}
	if r, err := st.Report(ctx, id); err == nil {
		audit.Target = store.TargetName(r.PackageID, r.Version)
	}
	r, err := st.ResolveReport(ctx, id, res, audit)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, refuseOne(ErrNotFound, "report.unknown", "id", "no report has the id %d (see `registry reports list`)", id)
	case errors.Is(err, store.ErrConflict):
		return nil, refuseOne(ErrConflict, "report.resolved", "id", "report %d is already resolved: a resolution is kept as first written", id)
	case err != nil:
		return nil, fmt.Errorf("ingest: resolve report %d: %w", id, err)
	}
	return r, nil
}

func resolutionProblems(text, action string) problem.List {
	var out problem.List
	switch {
	case strings.TrimSpace(text) == "":
		out.Errorf("report.resolution.missing", "resolution", "resolution is empty: say what was found and done; it is shown on the package page when it led to an action")
	case len(text) > MaxResolution:
		out.Errorf("report.resolution.length", "resolution", "resolution is %d bytes: the limit is %d (1 KiB); shorten it", len(text), MaxResolution)
	default:
		if p := manifest.TextProblem(text, false); p != "" {
			out.Errorf("report.resolution.text", "resolution", "resolution holds %s: write one line of plain text", p)
		}
	}
	if !slices.Contains(ReportActions, action) {
		out.Errorf("report.action", "action", "action is %q: expected one of %s", quoteShort(action), strings.Join(ReportActions, ", "))
	}
	return out
}

// RefuseReportBody is the refusal of a report request whose body is over MaxReportBody.
func RefuseReportBody() *Refusal {
	return refuseOne(ErrTooLarge, "report.body.size", "", "the report's body is over %d bytes (8 KiB), the limit for one report: shorten the reason (at most %d bytes)", MaxReportBody, MaxReportReason)
}

// RefuseReportJSON is the refusal of an API report whose body is not a JSON object.
func RefuseReportJSON(err error) *Refusal {
	return refuseOne(ErrBadQuery, "report.body.json", "", "the report's body is not the JSON object expected (%v): send Content-Type: application/json and {\"kind\": …, \"reason\": …, \"version\"?: …}", err)
}

// RefuseReportOrigin is the refusal of a report a browser sent from another site's page.
func RefuseReportOrigin() *Refusal {
	return refuseOne(ErrForbidden, "report.origin", "", "the report came from a page of another site: report a package from its page on this registry, or with the API from a program")
}
