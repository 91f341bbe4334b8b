package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

var okAudit = store.AuditEntry{Actor: "t", Action: "test", Outcome: "ok"}

// step is one write of the store and the change it must record (Kind "" for none).
type step struct {
	name string
	do   func(context.Context, *store.Store) error
	want store.Change
}

func changeSteps(t *testing.T, s *store.Store) []step {
	stars := 3
	return []step{
		{"publish", func(ctx context.Context, s *store.Store) error {
			_, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("one")), okAudit)
			return err
		}, store.Change{PackageID: "acme", Kind: store.ChangePublish, Version: "1.0.0"}},
		{"publish conflict", func(ctx context.Context, s *store.Store) error {
			_, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("one")), okAudit)
			if err == nil {
				t.Error("a second publish of acme@1.0.0 was accepted")
			}
			return nil
		}, store.Change{}},
		{"publish again", func(ctx context.Context, s *store.Store) error {
			_, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.1.0", []byte("two")), okAudit)
			return err
		}, store.Change{PackageID: "acme", Kind: store.ChangePublish, Version: "1.1.0"}},
		{"yank", func(ctx context.Context, s *store.Store) error {
			return s.SetYanked(ctx, "acme", "1.1.0", true, "broken", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeYank, Version: "1.1.0"}},
		{"unyank", func(ctx context.Context, s *store.Store) error {
			return s.SetYanked(ctx, "acme", "1.1.0", false, "", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeUnyank, Version: "1.1.0"}},
		{"deprecate", func(ctx context.Context, s *store.Store) error {
			return s.Deprecate(ctx, "acme", "use acme-two", "acme-two", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeDeprecate}},
		{"undeprecate", func(ctx context.Context, s *store.Store) error {
			return s.Deprecate(ctx, "acme", "", "", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeUndeprecate}},
		{"stats", func(ctx context.Context, s *store.Store) error {
			return s.SetRepoStats(ctx, "acme", &stars, nil)
		}, store.Change{PackageID: "acme", Kind: store.ChangeStats}},
		{"same stats", func(ctx context.Context, s *store.Store) error {
			return s.SetRepoStats(ctx, "acme", &stars, nil)
		}, store.Change{}},
		{"failed yank all", func(ctx context.Context, s *store.Store) error {
			_, err := s.YankAll(ctx, "acme", "gone", func(string) store.AuditEntry {
				return store.AuditEntry{Actor: "t", Action: "yank", Outcome: "bogus"} // the audit CHECK refuses it
			})
			if err == nil {
				t.Error("YankAll with a refused audit entry succeeded")
			}
			return nil
		}, store.Change{}},
		{"yank all", func(ctx context.Context, s *store.Store) error {
			_, err := s.YankAll(ctx, "acme", "gone", func(string) store.AuditEntry { return okAudit })
			return err
		}, store.Change{PackageID: "acme", Kind: store.ChangeYankAll}},
		{"yank all of nothing", func(ctx context.Context, s *store.Store) error {
			_, err := s.YankAll(ctx, "acme", "gone", func(string) store.AuditEntry { return okAudit })
			return err
		}, store.Change{}},
		{"list reload", func(ctx context.Context, s *store.Store) error {
			return s.BumpSerial(ctx)
		}, store.Change{Kind: store.ChangeList}},
	}
}

// TestEveryBumpRecordsOneChange runs every write that bumps the serial, and some that must
// not: after each, the serial is the last change's, the feed holds exactly one change per
// bump, and a write that changed nothing (or failed) recorded nothing.
func TestEveryBumpRecordsOneChange(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	var want []store.Change
	for _, st := range changeSteps(t, s) {
		if err := st.do(ctx, s); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.want.Kind != "" {
			st.want.Serial = int64(len(want) + 1)
			want = append(want, st.want)
		}
		serial, err := s.Serial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		page, err := s.Changes(ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if serial != int64(len(want)) || page.Serial != serial {
			t.Errorf("after %s: serial %d (page says %d), want %d: one bump per recorded change", st.name, serial, page.Serial, len(want))
		}
		if diff := cmp.Diff(want, page.Changes, cmpopts.IgnoreFields(store.Change{}, "At"), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("after %s, changes (-want +got):\n%s", st.name, diff)
		}
	}
	page, err := s.Changes(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range page.Changes {
		if time.Since(c.At) > time.Hour || c.At.IsZero() {
			t.Errorf("change %d is stamped %v, not now", c.Serial, c.At)
		}
	}
	if page.CompleteSince != 0 || page.More {
		t.Errorf("a new database: complete since %d, more %v; want 0, false", page.CompleteSince, page.More)
	}
}

// TestChangesPaging: a page holds at most limit changes after since, says whether more
// follow, and is empty at the current serial.
func TestChangesPaging(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	for range 5 {
		if err := s.BumpSerial(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		since   int64
		limit   int
		serials []int64
		more    bool
	}{
		{0, 2, []int64{1, 2}, true},
		{2, 2, []int64{3, 4}, true},
		{3, 2, []int64{4, 5}, false}, // exactly the rest
		{4, 2, []int64{5}, false},    // the last page
		{5, 2, nil, false},           // at the current serial
		{9, 2, nil, false},           // past it
		{0, 5, []int64{1, 2, 3, 4, 5}, false},
		{0, 4, []int64{1, 2, 3, 4}, true},
	}
	for _, tt := range tests {
		page, err := s.Changes(ctx, tt.since, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, c := range page.Changes {
			got = append(got, c.Serial)
		}
		if diff := cmp.Diff(tt.serials, got); diff != "" || page.More != tt.more || page.Serial != 5 {
			t.Errorf("Changes(%d, %d): serials (-want +got):\n%s more %v (want %v), serial %d (want 5)", tt.since, tt.limit, diff, page.More, tt.more, page.Serial)
		}
	}
}
