package store_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/migrations"
	"github.com/pluginyard/registry/store"
)

func TestReleaseKeepsRenderedREADMEAndFacts(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	rel := mustRelease(t, s, "acme", "1.0.0", []byte("one"))
	rel.README, rel.READMEHTML = []byte("# Hi"), []byte("<h3>Hi</h3>\n")
	rel.Facts = &store.Facts{Checksums: &store.ChecksumFacts{Files: 7}}
	bare := mustRelease(t, s, "bare", "1.0.0", []byte("two"))
	for _, r := range []*store.Release{rel, bare} {
		if _, err := s.InsertRelease(ctx, r, store.AuditEntry{Actor: "a", Action: "publish", Target: r.PackageID}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.AllReleases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		ID    string
		HTML  string
		Facts *store.Facts
	}
	var got []view
	for _, r := range all {
		html, err := s.READMEHTML(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.READMEHTML != nil {
			t.Errorf("AllReleases loaded %s's README HTML (%d bytes): the catalog must not hold it", r.PackageID, len(r.READMEHTML))
		}
		got = append(got, view{r.PackageID, string(html), r.Facts})
	}
	want := []view{{"acme", "<h3>Hi</h3>\n", &store.Facts{Checksums: &store.ChecksumFacts{Files: 7}}}, {"bare", "", nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AllReleases (-want +got):\n%s", diff)
	}
	one, err := s.Release(ctx, "acme", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if one.READMEHTML != nil || one.Facts == nil || one.Facts.Checksums.Files != 7 {
		t.Errorf("Release: html %q (want none: downloads do not need it), facts %+v", one.READMEHTML, one.Facts)
	}
}

// TestMigrationRendersExistingREADMEs opens a database made by the migrations before 0003,
// holding a release with a README, and checks the store rendered it once, at open.
func TestMigrationRendersExistingREADMEs(t *testing.T) {
	sqliteOnly(t, "SQLite migration 0003 on an old database file")
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`)
	for i, name := range []string{"0001_initial.sql", "0002_sync.sql"} {
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, string(body))
		mustExec(t, db, `INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00Z')`, i+1, name)
	}
	sha := strings.Repeat("a", 64)
	mustExec(t, db, `INSERT INTO blobs VALUES (?, 3, '2026-01-01T00:00:00Z')`, sha)
	mustExec(t, db, `INSERT INTO packages (id, kind, created_at) VALUES ('old', 'plugin', '2026-01-01T00:00:00Z')`)
	mustExec(t, db, `INSERT INTO releases (package_id, version, kind, sha256, size, manifest, readme, published_by, created_at)
		VALUES ('old', '1.0.0', 'plugin', ?, 3, ?, ?, 'test', '2026-01-01T00:00:00Z')`, sha, []byte("id: old"), []byte("# Old\n\n<script>x</script>\n\n**bold**"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.AllReleases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("%d releases, want 1", len(all))
	}
	html, err := s.READMEHTML(ctx, all[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := "<h3>Old</h3>\n\n<p><strong>bold</strong></p>\n"
	if diff := cmp.Diff(want, string(html)); diff != "" {
		t.Errorf("rendered README (-want +got):\n%s", diff)
	}
	if all[0].Facts != nil {
		t.Errorf("facts %+v for a release published before they were recorded, want nil", all[0].Facts)
	}
}

func mustExec(tb testing.TB, db *sql.DB, q string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}
