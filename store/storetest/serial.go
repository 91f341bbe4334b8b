package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/store"
)

// step is one write and the change it must record (Kind "" for none).
type step struct {
	name string
	do   func(context.Context, Backend) error
	want store.Change
}

// refusedAudit is an entry the audit log refuses: the write it goes with must fail whole.
var refusedAudit = store.AuditEntry{Actor: "storetest", Action: "yank", Outcome: "bogus"}

// wantErr is a step whose write must fail, changing nothing.
func wantErr(err error) error {
	if err == nil {
		return errors.New("the write succeeded, want it refused")
	}
	return nil
}

func serialSteps() []step {
	stars := 3
	pushed := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	insert := func(version, data string) func(context.Context, Backend) error {
		return func(ctx context.Context, b Backend) error {
			_, err := b.InsertRelease(ctx, newRelease("acme", version, []byte(data)), publishAudit("acme", version))
			return err
		}
	}
	yankAll := func(audit store.AuditEntry) func(context.Context, Backend) error {
		return func(ctx context.Context, b Backend) error {
			_, err := b.YankAll(ctx, "acme", "gone", func(string) store.AuditEntry { return audit })
			return err
		}
	}
	return []step{
		{"publish", insert("1.0.0", "one"), store.Change{PackageID: "acme", Kind: store.ChangePublish, Version: "1.0.0"}},
		{"publish conflict", func(ctx context.Context, b Backend) error { return wantErr(insert("1.0.0", "other")(ctx, b)) }, store.Change{}},
		{"publish again", insert("1.1.0", "two"), store.Change{PackageID: "acme", Kind: store.ChangePublish, Version: "1.1.0"}},
		{"yank", func(ctx context.Context, b Backend) error {
			return b.SetYanked(ctx, "acme", "1.1.0", true, "broken", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeYank, Version: "1.1.0"}},
		{"yank missing", func(ctx context.Context, b Backend) error {
			return wantErr(b.SetYanked(ctx, "acme", "9.9.9", true, "x", okAudit))
		}, store.Change{}},
		{"unyank", func(ctx context.Context, b Backend) error {
			return b.SetYanked(ctx, "acme", "1.1.0", false, "", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeUnyank, Version: "1.1.0"}},
		{"deprecate", func(ctx context.Context, b Backend) error {
			return b.Deprecate(ctx, "acme", "use acme-two", "acme-two", okAudit)
		}, store.Change{PackageID: "acme", Kind: store.ChangeDeprecate}},
		{"deprecate missing", func(ctx context.Context, b Backend) error {
			return wantErr(b.Deprecate(ctx, "missing", "x", "", okAudit))
		}, store.Change{}},
		{"undeprecate", func(ctx context.Context, b Backend) error { return b.Deprecate(ctx, "acme", "", "", okAudit) },
			store.Change{PackageID: "acme", Kind: store.ChangeUndeprecate}},
		{"stats", func(ctx context.Context, b Backend) error { return b.SetRepoStats(ctx, "acme", &stars, &pushed) },
			store.Change{PackageID: "acme", Kind: store.ChangeStats}},
		{"same stats", func(ctx context.Context, b Backend) error { return b.SetRepoStats(ctx, "acme", &stars, &pushed) }, store.Change{}},
		{"failed yank all", func(ctx context.Context, b Backend) error { return wantErr(yankAll(refusedAudit)(ctx, b)) }, store.Change{}},
		{"yank all", yankAll(okAudit), store.Change{PackageID: "acme", Kind: store.ChangeYankAll}},
		{"yank all of nothing", yankAll(okAudit), store.Change{}},
		{"list reload", func(ctx context.Context, b Backend) error { return b.BumpSerial(ctx) }, store.Change{Kind: store.ChangeList}},
		{"audit only", func(ctx context.Context, b Backend) error { return b.Audit(ctx, okAudit) }, store.Change{}},
		{"token", func(ctx context.Context, b Backend) error {
			return b.CreateToken(ctx, &store.Token{ID: "t", Kind: "admin"}, hash64("t"), okAudit)
		}, store.Change{}},
	}
}

// testSerialEveryChange runs every write that changes what the index shows, and some
// that must not (refused, failed or changing nothing the index shows): after each, the
// serial is one more per change and never less, and the feed holds exactly one change
// per bump, stamped now, under the serial it bumped to.
func testSerialEveryChange(t *testing.T, b Backend) {
	ctx := context.Background()
	if got := mustSerial(t, b); got != 0 {
		t.Fatalf("a new store's serial is %d, want 0", got)
	}
	var want []store.Change
	for _, st := range serialSteps() {
		if err := st.do(ctx, b); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.want.Kind != "" {
			st.want.Serial = int64(len(want) + 1)
			want = append(want, st.want)
		}
		page := allChanges(t, b)
		if serial := mustSerial(t, b); serial != int64(len(want)) || page.Serial != serial {
			t.Errorf("after %s: serial %d (the feed says %d), want %d: one bump per change", st.name, serial, page.Serial, len(want))
		}
		if diff := cmp.Diff(want, page.Changes, cmpopts.IgnoreFields(store.Change{}, "At"), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("after %s, changes (-want +got):\n%s", st.name, diff)
		}
	}
	page := allChanges(t, b)
	for _, c := range page.Changes {
		if time.Since(c.At) > time.Hour || time.Until(c.At) > time.Minute {
			t.Errorf("change %d is stamped %v, want about now", c.Serial, c.At)
		}
	}
	if page.CompleteSince != 0 || page.More {
		t.Errorf("a new store's feed: complete since %d, more %v; want 0, false", page.CompleteSince, page.More)
	}
}

// testSerialConcurrentBumps: racing changes each get their own serial: none is lost or
// given twice, and the feed holds one change for each.
func testSerialConcurrentBumps(t *testing.T, b Backend) {
	ctx := context.Background()
	errs := race(racers, func(i int) error {
		if i%2 == 0 {
			return b.BumpSerial(ctx)
		}
		_, err := b.InsertRelease(ctx, newRelease("acme", versionN(i), []byte(versionN(i))), publishAudit("acme", versionN(i)))
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	page := allChanges(t, b)
	if page.Serial != racers || mustSerial(t, b) != racers {
		t.Errorf("after %d racing changes: serial %d, want %d", racers, page.Serial, racers)
	}
	var serials []int64
	for _, c := range page.Changes {
		serials = append(serials, c.Serial)
	}
	want := make([]int64, racers)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if diff := cmp.Diff(want, serials); diff != "" {
		t.Errorf("feed serials after racing changes (-want +got):\n%s", diff)
	}
}

// testChangesPaging: a page holds at most limit changes after since, in serial order,
// says whether more follow, and is empty at or past the current serial.
func testChangesPaging(t *testing.T, b Backend) {
	ctx := context.Background()
	for range 5 {
		if err := b.BumpSerial(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		since   int64
		limit   int
		serials []int64
		more    bool
	}{
		{0, 2, []int64{1, 2}, true}, {2, 2, []int64{3, 4}, true}, {3, 2, []int64{4, 5}, false},
		{4, 2, []int64{5}, false}, {5, 2, nil, false}, {9, 2, nil, false},
		{0, 5, []int64{1, 2, 3, 4, 5}, false}, {0, 4, []int64{1, 2, 3, 4}, true},
	}
	for _, tt := range tests {
		page, err := b.Changes(ctx, tt.since, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, c := range page.Changes {
			got = append(got, c.Serial)
		}
		if diff := cmp.Diff(tt.serials, got); diff != "" || page.More != tt.more || page.Serial != 5 {
			t.Errorf("Changes(%d, %d): serials (-want +got):\n%s more %v (want %v), serial %d (want 5)",
				tt.since, tt.limit, diff, page.More, tt.more, page.Serial)
		}
	}
}
