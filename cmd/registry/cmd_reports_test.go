package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// mustReport files a report of hello-managed in dir directly in the store.
func mustReport(t *testing.T, dir, kind, reason string) int64 {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &store.Report{PackageID: "hello-managed", Kind: kind, Reason: reason, ReporterHash: strings.Repeat("ab", 32)}
	if err := st.AddReport(context.Background(), r, store.AuditEntry{Actor: "anonymous", Action: "report", Target: r.PackageID}); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func TestReportsListAndResolve(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	id := mustReport(t, dir, "malicious", "line one\nline two\tposts tokens")
	c, out, errOut := testCLI(nil)
	if code := cmdReports(ctx, c, []string{"list", "--open", "--data", dir}); code != exitOK {
		t.Fatalf("list: %d %s", code, errOut)
	}
	for _, want := range []string{fmt.Sprint(id), "hello-managed", "malicious", "abababababab", "open", "line one line two posts tokens"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	c, out, errOut = testCLI(nil)
	if code := cmdReports(ctx, c, []string{"resolve", fmt.Sprint(id), "--resolution", "confirmed", "--action", "quarantined", "--data", dir}); code != exitOK {
		t.Fatalf("resolve: %d %s", code, errOut)
	}
	if !strings.Contains(out.String(), "quarantined; shown on the page of hello-managed") {
		t.Errorf("resolve printed %q", out)
	}
	c, out, errOut = testCLI(nil)
	if code := cmdReports(ctx, c, []string{"list", "--open", "--data", dir}); code != exitOK || strings.Contains(out.String(), "hello-managed") {
		t.Errorf("open reports after resolving: %d %s %s", code, out, errOut)
	}
	c, out, _ = testCLI(nil)
	if code := cmdReports(ctx, c, []string{"list", "--json", "--data", dir}); code != exitOK {
		t.Fatalf("list --json: %d", code)
	}
	var rs []store.Report
	if err := json.Unmarshal([]byte(out.String()), &rs); err != nil || len(rs) != 1 || rs[0].Resolution == nil ||
		rs[0].Resolution.Action != "quarantined" || rs[0].Resolution.By != "cli" {
		t.Errorf("list --json = %s (%v)", out, err)
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := st.AuditLog(ctx, 1, 0)
	if err != nil || log[0].Action != "report_resolve" || log[0].Actor != "cli" || log[0].Target != "hello-managed" {
		t.Errorf("audit = %+v, %v", log, err)
	}
}

func TestReportsResolveRefusals(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	id := fmt.Sprint(mustReport(t, dir, "broken", "crashes"))
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr: the rule id for refusals
	}{
		{"unknown action", []string{"resolve", id, "--resolution", "x", "--action", "deleted"}, exitInvalid, "[report.action]"},
		{"two lines", []string{"resolve", id, "--resolution", "a\nb"}, exitInvalid, "[report.resolution.text]"},
		{"unknown report", []string{"resolve", "9999", "--resolution", "x"}, exitInvalid, "[report.unknown]"},
		{"no resolution", []string{"resolve", id}, exitUsage, "--resolution TEXT is required"},
		{"not a number", []string{"resolve", "twelve", "--resolution", "x"}, exitUsage, "not a positive whole number"},
		{"no id", []string{"resolve", "--resolution", "x"}, exitUsage, "expected one report ID"},
		{"unknown action word", []string{"lst"}, exitUsage, "did you mean `list`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, errOut := testCLI(nil)
			if code := cmdReports(ctx, c, append(tt.args, "--data", dir)); code != tt.code || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("code %d, stderr %q; want %d with %q", code, errOut, tt.code, tt.want)
			}
		})
	}
	c, _, errOut := testCLI(nil)
	if code := cmdReports(ctx, c, []string{"resolve", id, "--resolution", "works for us", "--data", dir}); code != exitOK {
		t.Fatalf("resolve: %d %s", code, errOut)
	}
	c, _, errOut = testCLI(nil)
	if code := cmdReports(ctx, c, []string{"resolve", id, "--resolution", "again", "--data", dir}); code != exitInvalid || !strings.Contains(errOut.String(), "[report.resolved]") {
		t.Errorf("resolve twice: %d %q, want 1 with [report.resolved]", code, errOut)
	}
}

func TestRateReportFlag(t *testing.T) {
	if got := (&Config{RateReport: 3}).rateLimits(); got.Report != 3 {
		t.Errorf("--rate-report 3 gives the report class %d", got.Report)
	}
	if got := (&Config{}).rateLimits(); got.Report != -1 {
		t.Errorf("--rate-report 0 gives the report class %d, want off (-1)", got.Report)
	}
}

// TestNewTable: the list commands' tables (quarantine, reports, blocklist) share one
// layout: the header line first, columns two spaces apart.
func TestNewTable(t *testing.T) {
	var b strings.Builder
	tw := newTable(&b, "ID\tPACKAGE\tREASON")
	fmt.Fprintf(tw, "%d\t%s\t%s\n", 12, "acme-hello@1.0.0", "posts tokens")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ID  PACKAGE           REASON\n12  acme-hello@1.0.0  posts tokens\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
}
