package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
)

func logRecords(tb testing.TB, s *store.Store) []translog.Record {
	tb.Helper()
	ctx := context.Background()
	n, err := s.LogSize(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	texts, err := s.RecordTexts(ctx, 0, n)
	if err != nil {
		tb.Fatal(err)
	}
	var out []translog.Record
	for i, text := range texts {
		r, err := translog.ParseRecord(text)
		if err != nil {
			tb.Fatalf("record %d: %v", i, err)
		}
		out = append(out, r)
	}
	return out
}

func mustInsert(tb testing.TB, s *store.Store, rel *store.Release) {
	tb.Helper()
	if _, err := s.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "a", Action: "publish", Target: rel.PackageID}); err != nil {
		tb.Fatal(err)
	}
}

func TestLogRecordsEveryEvent(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	one := mustRelease(t, s, "acme", "1.0.0", []byte("one"))
	two := mustRelease(t, s, "acme", "1.1.0", []byte("two"))
	two.Signature = []byte(`{"type":"sigstore","san":"https://github.com/acme/x/.github/workflows/release.yml@refs/tags/v1.1.0"}`)
	mustInsert(t, s, one)
	mustInsert(t, s, two)
	audit := store.AuditEntry{Actor: "a", Action: "yank", Target: "acme@1.0.0"}
	steps := []error{
		s.SetYanked(ctx, "acme", "1.0.0", true, "broken", audit),
		s.SetYanked(ctx, "acme", "1.0.0", false, "", audit),
		s.Deprecate(ctx, "acme", "use acme2", "acme2", audit),
		s.Deprecate(ctx, "acme", "", "", audit),
		s.SetYanked(ctx, "acme", "1.1.0", true, "delisted", store.AuditEntry{Actor: "cli", Action: "yank", Detail: map[string]any{"delist": true}}),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []translog.Record{
		{Kind: translog.KindPublish, ID: "acme", Version: "1.0.0", SHA256: one.SHA256, Signer: translog.Unsigned},
		{Kind: translog.KindPublish, ID: "acme", Version: "1.1.0", SHA256: two.SHA256, Signer: "https://github.com/acme/x/.github/workflows/release.yml@refs/tags/v1.1.0"},
		{Kind: translog.KindYank, ID: "acme", Version: "1.0.0", SHA256: one.SHA256},
		{Kind: translog.KindUnyank, ID: "acme", Version: "1.0.0", SHA256: one.SHA256},
		{Kind: translog.KindDeprecate, ID: "acme"},
		{Kind: translog.KindUndeprecate, ID: "acme"},
		{Kind: translog.KindDelist, ID: "acme", Version: "1.1.0", SHA256: two.SHA256},
	}
	got := logRecords(t, s)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(translog.Record{}, "Time")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	for i, r := range got {
		if r.Time.IsZero() {
			t.Errorf("record %d has no time", i)
		}
	}
	idx, err := s.LogIndexes(ctx, "acme")
	if diff := cmp.Diff(map[string]int64{"1.0.0": 0, "1.1.0": 1}, idx); err != nil || diff != "" {
		t.Errorf("LogIndexes (-want +got):\n%s %v", diff, err)
	}
}

func TestLogAppendsOnlyWithTheWrite(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	rel := mustRelease(t, s, "acme", "1.0.0", []byte("one"))
	mustInsert(t, s, rel)
	// Each write fails after (or before) its log append; none may leave a record.
	failing := map[string]func() error{
		"conflicting publish": func() error {
			_, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("other")), store.AuditEntry{Actor: "a", Action: "publish"})
			return err
		},
		"audit fails after the append": func() error {
			bad := store.AuditEntry{Actor: "a", Action: "publish", Detail: map[string]any{"x": func() {}}}
			_, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "2.0.0", []byte("two")), bad)
			return err
		},
		"release row refused": func() error {
			r := mustRelease(t, s, "acme", "3.0.0", []byte("three"))
			r.Kind = "not-a-kind"
			_, err := s.InsertRelease(ctx, r, store.AuditEntry{Actor: "a", Action: "publish"})
			return err
		},
		"yank of a missing version": func() error {
			return s.SetYanked(ctx, "acme", "9.9.9", true, "x", store.AuditEntry{Actor: "a", Action: "yank"})
		},
		"yank whose audit fails": func() error {
			return s.SetYanked(ctx, "acme", "1.0.0", true, "x", store.AuditEntry{Actor: "a", Action: "yank", Detail: map[string]any{"x": func() {}}})
		},
		"deprecate whose audit fails": func() error {
			return s.Deprecate(ctx, "acme", "old", "", store.AuditEntry{Actor: "a", Action: "deprecate", Detail: map[string]any{"x": func() {}}})
		},
	}
	for name, write := range failing {
		t.Run(name, func(t *testing.T) {
			if err := write(); err == nil {
				t.Fatal("the write succeeded; the test needs it to fail")
			}
			if n, err := s.LogSize(ctx); err != nil || n != 1 {
				t.Errorf("log size %d, %v after a failed write; want 1", n, err)
			}
		})
	}
}

func TestLogIsAppendOnly(t *testing.T) {
	sqliteOnly(t, "the database file opened beside the store; TestLogAppendOnlyOnEveryBackend covers PostgreSQL")
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, mustRelease(t, s, "acme", "1.0.0", []byte("one")))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"UPDATE log_records SET sha256 = '" + strings.Repeat("0", 64) + "'",
		"DELETE FROM log_records",
		"UPDATE log_hashes SET hash = zeroblob(32)",
		"DELETE FROM log_hashes",
	} {
		if _, err := db.ExecContext(ctx, q); err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
}

func TestLogBackfillsReleasesStoredBeforeIt(t *testing.T) {
	sqliteOnly(t, "a database from before SQLite migration 0007; the PostgreSQL schema had the log from its start")
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	one := mustRelease(t, s, "acme", "1.0.0", []byte("one"))
	mustInsert(t, s, one)
	mustInsert(t, s, mustRelease(t, s, "acme", "1.1.0", []byte("two")))
	if err := s.SetYanked(ctx, "acme", "1.0.0", true, "x", store.AuditEntry{Actor: "a", Action: "yank"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Deprecate(ctx, "acme", "old", "", store.AuditEntry{Actor: "a", Action: "deprecate"}); err != nil {
		t.Fatal(err)
	}
	before := logRecords(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Make the database look as it did before migration 0007 had any record.
	db, err := sql.Open("sqlite", filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TRIGGER log_records_append_only_delete", "DROP TRIGGER log_hashes_append_only_delete",
		"DELETE FROM log_records", "DELETE FROM log_hashes", "DELETE FROM log_checkpoints"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	_ = db.Close()
	s, err = store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := logRecords(t, s)
	if diff := cmp.Diff(before, got, cmpopts.IgnoreFields(translog.Record{}, "Time")); diff != "" {
		t.Errorf("backfilled log (-as written +backfilled):\n%s", diff)
	}
	if !got[0].Time.Equal(one.CreatedAt) {
		t.Errorf("backfilled publish time %v, want the release's %v", got[0].Time, one.CreatedAt)
	}
}

func TestLogServesVerifiableProofs(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	key, err := translog.LoadKey(t.TempDir(), "", "test.example/log")
	if err != nil {
		t.Fatal(err)
	}
	lg := translog.New(s, key)
	var grew int
	s.OnLogAppend(func() { grew++ })
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		mustInsert(t, s, mustRelease(t, s, "acme", v, []byte(v)))
	}
	if grew != 3 {
		t.Errorf("append hook ran %d times for 3 publishes", grew)
	}
	l, err := lg.Lookup(ctx, "acme", "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckRecord(l.Proof, l.Checkpoint.Size, l.Checkpoint.Hash, l.Index, tlog.RecordHash(l.Text)); err != nil {
		t.Errorf("inclusion proof: %v", err)
	}
	if _, err := translog.OpenCheckpoint(l.Checkpoint.Note, key.Verifier); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
	saved, err := s.LatestCheckpoint(ctx)
	if err != nil || string(saved) != string(l.Checkpoint.Note) {
		t.Errorf("saved checkpoint %q, %v", saved, err)
	}
	if _, err := lg.Lookup(ctx, "acme", "9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("lookup of a missing version: %v, want ErrNotFound", err)
	}
}

func TestLogRefusesDamage(t *testing.T) {
	sqliteOnly(t, "drops SQLite's append-only triggers in the database file")
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		mustInsert(t, s, mustRelease(t, s, "acme", v, []byte(v)))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dup := `INSERT INTO log_records (idx, kind, package_id, version, sha256, body, created_at)
		SELECT 3, kind, package_id, version, sha256, body, created_at FROM log_records WHERE idx = 0`
	if _, err := db.ExecContext(ctx, dup); err == nil {
		t.Error("a second publish record for acme@1.0.0 was stored")
	}
	for _, q := range []string{"DROP TRIGGER log_records_append_only_delete", "DROP TRIGGER log_hashes_append_only_delete",
		"DELETE FROM log_records WHERE idx = 1", "DELETE FROM log_hashes WHERE idx = 0"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	_ = db.Close()
	raw, err := store.Open(ctx, dir) // backfill re-adds acme@1.1.0's publish record at the end
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.RecordTexts(ctx, 0, 3); err == nil {
		t.Error("RecordTexts read across the gap at record 1")
	}
	if _, err := raw.ReadHashes(ctx, []int64{0}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadHashes of a deleted hash: %v, want ErrNotFound", err)
	}
}

// TestLogAppendOnlyOnEveryBackend: on either database the schema itself refuses to change
// or remove a log record or hash, whoever asks.
func TestLogAppendOnlyOnEveryBackend(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	if _, err := s.InsertRelease(ctx, mustRelease(t, s, "acme", "1.0.0", []byte("one")), store.AuditEntry{Actor: "a", Action: "publish", Target: "acme@1.0.0", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE log_records SET sha256 = '" + strings.Repeat("0", 64) + "'",
		"DELETE FROM log_records",
		"UPDATE log_hashes SET idx = idx + 100",
		"DELETE FROM log_hashes",
	} {
		if _, err := store.RawDB(s).ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only trigger to refuse it", q, err)
		}
	}
	if n := mustLogSize(t, s); n != 1 {
		t.Errorf("log size %d after the refused statements, want 1", n)
	}
}
