package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

func mustReportable(tb testing.TB, s *store.Store, id string) {
	tb.Helper()
	if _, err := s.InsertRelease(context.Background(), mustRelease(tb, s, id, "1.0.0", []byte(id)), store.AuditEntry{Actor: "t", Action: "publish"}); err != nil {
		tb.Fatal(err)
	}
}

func hashOf(c byte) string { return strings.Repeat(string(c), 64) }

func TestReportsAddListResolve(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	mustReportable(t, s, "acme")
	mustReportable(t, s, "other")
	first := &store.Report{PackageID: "acme", Version: "1.0.0", Kind: "malicious", Reason: "steals tokens", ReporterHash: hashOf('a')}
	second := &store.Report{PackageID: "other", Kind: "broken", Reason: "crashes", ReporterHash: hashOf('b')}
	for _, r := range []*store.Report{first, second} {
		if err := s.AddReport(ctx, r, store.AuditEntry{Actor: "anonymous", Action: "report", Target: r.PackageID}); err != nil {
			t.Fatal(err)
		}
	}
	if first.ID == 0 || second.ID <= first.ID || first.CreatedAt.IsZero() {
		t.Fatalf("ids %d, %d; created %v", first.ID, second.ID, first.CreatedAt)
	}
	res := store.Resolution{By: "cli", Text: "confirmed", Action: "yanked"}
	got, err := s.ResolveReport(ctx, first.ID, res, store.AuditEntry{Actor: "cli", Action: "report_resolve", Target: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Resolution == nil || got.Resolution.Text != "confirmed" || got.Resolution.Action != "yanked" || got.Resolution.At.IsZero() {
		t.Fatalf("resolved = %+v", got.Resolution)
	}
	ids := func(q store.ReportQuery) []int64 {
		rs, err := s.Reports(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for name, tt := range map[string]struct {
		q    store.ReportQuery
		want []int64
	}{
		"all newest first": {store.ReportQuery{}, []int64{second.ID, first.ID}},
		"open only":        {store.ReportQuery{OpenOnly: true}, []int64{second.ID}},
		"one package":      {store.ReportQuery{PackageID: "acme"}, []int64{first.ID}},
		"actioned":         {store.ReportQuery{Actioned: true}, []int64{first.ID}},
		"limit":            {store.ReportQuery{Limit: 1}, []int64{second.ID}},
	} {
		if diff := cmp.Diff(tt.want, ids(tt.q)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	log, err := s.AuditLog(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if log[0].Action != "report_resolve" || log[0].Detail["report"] != float64(first.ID) {
		t.Errorf("newest audit entry = %+v, want report_resolve of report %d", log[0], first.ID)
	}
}

func TestReportRefusals(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	mustReportable(t, s, "acme")
	if err := s.AddReport(ctx, &store.Report{PackageID: "nobody", Kind: "other", Reason: "x", ReporterHash: hashOf('a')}, store.AuditEntry{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("report of an unknown package: %v, want ErrNotFound", err)
	}
	r := &store.Report{PackageID: "acme", Kind: "broken", Reason: "x", ReporterHash: hashOf('a')}
	if err := s.AddReport(ctx, r, store.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	dup := *r
	if err := s.AddReport(ctx, &dup, store.AuditEntry{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("same reporter, package and kind while open: %v, want ErrConflict", err)
	}
	otherKind := store.Report{PackageID: "acme", Kind: "malicious", Reason: "x", ReporterHash: hashOf('a')}
	if err := s.AddReport(ctx, &otherKind, store.AuditEntry{}); err != nil {
		t.Errorf("another kind by the same reporter: %v", err)
	}
	if _, err := s.ResolveReport(ctx, 999, store.Resolution{By: "a", Text: "t", Action: "none"}, store.AuditEntry{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("resolve unknown: %v, want ErrNotFound", err)
	}
	if _, err := s.ResolveReport(ctx, r.ID, store.Resolution{By: "a", Text: "first", Action: "none"}, store.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResolveReport(ctx, r.ID, store.Resolution{By: "a", Text: "second", Action: "yanked"}, store.AuditEntry{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("resolve twice: %v, want ErrConflict", err)
	}
	if got, err := s.Report(ctx, r.ID); err != nil || got.Resolution.Text != "first" {
		t.Errorf("after a second resolve: %+v, %v; the first resolution stays", got, err)
	}
	again := *r
	if err := s.AddReport(ctx, &again, store.AuditEntry{}); err != nil {
		t.Errorf("same reporter once the first is resolved: %v", err)
	}
	if err := s.AddReport(ctx, &store.Report{PackageID: "acme", Kind: "spam", Reason: "x", ReporterHash: hashOf('c')}, store.AuditEntry{}); err == nil {
		t.Error("a kind outside the CHECK was stored")
	}
}
