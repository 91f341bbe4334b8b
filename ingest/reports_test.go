package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// reportService has acme-hello 1.0.0 published.
func reportService(t *testing.T) *Service {
	t.Helper()
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "Says hello")
	return s
}

func rulesOf(err error) []string {
	var r *Refusal
	if !errors.As(err, &r) {
		return nil
	}
	out := []string{}
	for _, p := range r.Problems {
		out = append(out, p.Rule)
	}
	return out
}

func TestSubmitReportRefusals(t *testing.T) {
	s := reportService(t)
	ok := ReportInput{PackageID: "acme-hello", Kind: "broken", Reason: "crashes on start", Reporter: "ip:192.0.2.1"}
	tests := []struct {
		name  string
		edit  func(*ReportInput)
		kind  error
		rules []string
	}{
		{"unknown package", func(in *ReportInput) { in.PackageID = "acme-nobody" }, ErrNotFound, []string{"report.package.unknown"}},
		{"listed, never published", func(in *ReportInput) { in.PackageID = "acme-other" }, ErrNotFound, []string{"report.package.unknown"}},
		{"unknown package comes before its fields", func(in *ReportInput) { in.PackageID, in.Kind = "acme-nobody", "spam" }, ErrNotFound, []string{"report.package.unknown"}},
		{"unknown kind", func(in *ReportInput) { in.Kind = "spam" }, ErrInvalid, []string{"report.kind"}},
		{"empty kind", func(in *ReportInput) { in.Kind = "" }, ErrInvalid, []string{"report.kind"}},
		{"blank reason", func(in *ReportInput) { in.Reason = " \n\t" }, ErrInvalid, []string{"report.reason.missing"}},
		{"reason one byte over", func(in *ReportInput) { in.Reason = strings.Repeat("x", MaxReportReason+1) }, ErrInvalid, []string{"report.reason.length"}},
		{"reason with a bidi override", func(in *ReportInput) { in.Reason = "looks \u202efine" }, ErrInvalid, []string{"report.reason.text"}},
		{"every field problem at once", func(in *ReportInput) { in.Kind, in.Reason = "x", "" }, ErrInvalid, []string{"report.kind", "report.reason.missing"}},
		{"unknown version", func(in *ReportInput) { in.Version = "9.9.9" }, ErrNotFound, []string{"report.version.unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ok
			tt.edit(&in)
			_, err := s.SubmitReport(context.Background(), in)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if diff := cmp.Diff(tt.rules, rulesOf(err)); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
	rs, err := s.Reports(context.Background(), false, "", 0)
	if err != nil || len(rs) != 0 {
		t.Errorf("refused reports were stored: %+v, %v", rs, err)
	}
}

func TestSubmitReportLimitsAreInclusive(t *testing.T) {
	s := reportService(t)
	in := ReportInput{PackageID: "acme-hello", Version: "1.0.0", Kind: "malicious", Reason: strings.Repeat("é", MaxReportReason/2) + "\n\tok", Reporter: "ip:192.0.2.1"}
	in.Reason = in.Reason[:MaxReportReason]
	if _, err := s.SubmitReport(context.Background(), in); err != nil {
		t.Fatalf("a reason of exactly %d bytes with a newline and a tab: %v", MaxReportReason, err)
	}
}

func TestSubmitReportDuplicate(t *testing.T) {
	s := reportService(t)
	ctx := context.Background()
	in := ReportInput{PackageID: "acme-hello", Kind: "broken", Reason: "crashes", Reporter: "ip:192.0.2.1"}
	if _, err := s.SubmitReport(ctx, in); err != nil {
		t.Fatal(err)
	}
	_, err := s.SubmitReport(ctx, in)
	if !errors.Is(err, ErrConflict) || ruleOf(err) != "report.duplicate" {
		t.Errorf("the same report again: %v (%s), want 409 report.duplicate", err, ruleOf(err))
	}
	in.Reporter = "ip:192.0.2.2"
	if _, err := s.SubmitReport(ctx, in); err != nil {
		t.Errorf("the same report from another address: %v", err)
	}
}

// TestReporterIsStoredHashed reads every column of the reports and audit tables: the
// address appears nowhere, the hash is the keyed one, and the key is a 0600 file outside
// the database.
func TestReporterIsStoredHashed(t *testing.T) {
	s := reportService(t)
	addr := "ip:198.51.100.77"
	r, err := s.SubmitReport(context.Background(), ReportInput{PackageID: "acme-hello", Kind: "other", Reason: "odd", Reporter: addr})
	if err != nil {
		t.Fatal(err)
	}
	key, err := LoadReportKey(s.store.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if r.ReporterHash != HashReporter(key, addr) || len(r.ReporterHash) != 64 {
		t.Errorf("reporter hash %q is not the keyed hash of the address", r.ReporterHash)
	}
	if other := HashReporter([]byte("another registry's key"), addr); other == r.ReporterHash {
		t.Error("the hash does not depend on the key")
	}
	if info, err := os.Stat(filepath.Join(s.store.Dir(), ReportKeyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("report key file: %v, %v; want mode 0600", info, err)
	}
	if storetest.OnPostgres() {
		t.Skip("the scan of every column below reads the SQLite file; PostgreSQL stores the same columns by the same statements")
	}
	db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(s.store.Dir(), store.DBFile))+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"reports", "audit"} {
		dump := dumpTable(t, db, table)
		if strings.Contains(dump, "198.51.100.77") {
			t.Errorf("table %s holds the reporter's address:\n%s", table, dump)
		}
		if table == "reports" && !strings.Contains(dump, r.ReporterHash) {
			t.Errorf("table reports lacks the hash %s:\n%s", r.ReporterHash, dump)
		}
		if strings.Contains(dump, fmt.Sprintf("%x", key)) {
			t.Errorf("table %s holds the key", table)
		}
	}
}

// dumpTable is every row of table, every column as text.
func dumpTable(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			b.WriteString(v.String + "|")
		}
		b.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReportKeyIsStable(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadReportKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadReportKey(dir)
	if err != nil || string(a) != string(b) || len(a) != 32 {
		t.Fatalf("second load: %x, %v; want the first key %x", b, err, a)
	}
	if err := os.WriteFile(filepath.Join(dir, ReportKeyFile), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadReportKey(dir); err == nil {
		t.Error("a damaged key file was accepted")
	}
}

func TestResolveReport(t *testing.T) {
	s := reportService(t)
	ctx := context.Background()
	r, err := s.SubmitReport(ctx, ReportInput{PackageID: "acme-hello", Version: "1.0.0", Kind: "malicious", Reason: "exfiltrates", Reporter: "ip:192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		name         string
		actor        Actor
		id           int64
		text, action string
		kind         error
		rules        []string
	}{
		{"not an admin", Actor{Name: "publisher:acme", Publisher: "acme"}, r.ID, "done", "none", ErrForbidden, []string{}},
		{"empty resolution", anAdmin, r.ID, " ", "none", ErrInvalid, []string{"report.resolution.missing"}},
		{"resolution too long", anAdmin, r.ID, strings.Repeat("x", MaxResolution+1), "none", ErrInvalid, []string{"report.resolution.length"}},
		{"resolution on two lines", anAdmin, r.ID, "a\nb", "none", ErrInvalid, []string{"report.resolution.text"}},
		{"unknown action", anAdmin, r.ID, "done", "deleted", ErrInvalid, []string{"report.action"}},
		{"unknown report", anAdmin, r.ID + 100, "done", "none", ErrNotFound, []string{"report.unknown"}},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ResolveReport(ctx, tt.actor, tt.id, tt.text, tt.action)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if diff := cmp.Diff(tt.rules, rulesOf(err)); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
	got, err := s.ResolveReport(ctx, anAdmin, r.ID, "confirmed: 1.0.0 posts tokens to a remote host", "yanked")
	if err != nil {
		t.Fatal(err)
	}
	if got.Resolution == nil || got.Resolution.Action != "yanked" || got.Resolution.By != "admin" {
		t.Fatalf("resolution = %+v", got.Resolution)
	}
	if _, err := s.ResolveReport(ctx, anAdmin, r.ID, "again", "none"); !errors.Is(err, ErrConflict) || ruleOf(err) != "report.resolved" {
		t.Errorf("resolve twice: %v, want 409 report.resolved", err)
	}
	shown, err := s.ActionedReports(ctx, "acme-hello")
	if err != nil || len(shown) != 1 || shown[0].ID != r.ID {
		t.Errorf("actioned reports = %+v, %v", shown, err)
	}
	log, err := s.db().AuditLog(ctx, 1, 0)
	if err != nil || log[0].Action != "report_resolve" || log[0].Target != "acme-hello@1.0.0" || log[0].Actor != "admin" {
		t.Errorf("audit = %+v, %v", log, err)
	}
}

func TestActionedReportsLeaveOutNone(t *testing.T) {
	s := reportService(t)
	ctx := context.Background()
	r, err := s.SubmitReport(ctx, ReportInput{PackageID: "acme-hello", Kind: "broken", Reason: "no", Reporter: "ip:192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResolveReport(ctx, anAdmin, r.ID, "works as designed", "none"); err != nil {
		t.Fatal(err)
	}
	if shown, err := s.ActionedReports(ctx, "acme-hello"); err != nil || len(shown) != 0 {
		t.Errorf("a report resolved with no action is shown: %+v, %v", shown, err)
	}
}

// Replicas given one reporter key (serve --reporter-key) hash a reporter alike, so the one
// open report per reporter and package holds across them: a second service over the same
// store, with the same key, refuses that reporter's second report. No key file is made.
func TestReporterKeyIsShared(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "reporter.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := ReadReportKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	a := newPublishService(t, publishList(), Config{ReporterKey: key})
	publishOK(t, a, "acme-hello", "1.0.0", "Says hello")
	b := New(a.store, publishList(), Config{ReporterKey: key}, discard())
	if err := b.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := ReportInput{PackageID: "acme-hello", Kind: "other", Reason: "odd", Reporter: "ip:198.51.100.77"}
	r, err := a.SubmitReport(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReporterHash != HashReporter(key, in.Reporter) {
		t.Errorf("reporter hash %q is not the hash under the configured key", r.ReporterHash)
	}
	if _, err := b.SubmitReport(context.Background(), in); !slices.Equal(rulesOf(err), []string{"report.duplicate"}) {
		t.Errorf("the same reporter's second open report through another replica: %v, want report.duplicate", err)
	}
	if _, err := os.Stat(filepath.Join(a.store.Dir(), ReportKeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key file was made in the data directory beside the configured key: %v", err)
	}
	if _, err := ReadReportKey(filepath.Join(t.TempDir(), "absent.key")); err == nil || !strings.Contains(err.Error(), "openssl rand -hex 32") {
		t.Errorf("a missing key file: %v, want an error saying how to make one", err)
	}
}
