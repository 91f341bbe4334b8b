package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
)

// openS3End opens a store on a fresh PostgreSQL database with its blobs in a fresh bucket
// of a real S3 server.
func openS3End(tb testing.TB) copyEnd {
	tb.Helper()
	t, ok := tb.(*testing.T)
	if !ok {
		tb.Fatal("openS3End needs a *testing.T (SetEnv)")
	}
	srv := s3test.Start(tb)
	srv.SetEnv(t)
	b, err := s3blob.Open(context.Background(), srv.URL("registry"))
	if err != nil {
		tb.Fatal(err)
	}
	e := copyEnd{url: "", dir: tb.TempDir(), blobs: b}
	pg := openPostgresEnd(tb)
	e.url, e.st = pg.url, pg.st
	return e
}

func mustCopy(tb testing.TB, from, to copyEnd, opt store.CopyOptions) *store.CopyReport {
	tb.Helper()
	rep, err := store.Copy(context.Background(), from.end(), to.end(), opt)
	if err != nil {
		tb.Fatalf("Copy: %v", err)
	}
	return rep
}

// assertSameTables compares every table the copy takes, row for row, and fails on a table
// of the source's schema that the seed left empty: a table no row tests is a table whose
// copy nobody checked.
func assertSameTables(tb testing.TB, from, to copyEnd) {
	tb.Helper()
	src, dst := rawDB(tb, from.url), rawDB(tb, to.url)
	for _, table := range tablesOf(tb, src, !strings.HasPrefix(from.url, "sqlite:")) {
		if _, derived := store.CopyDerived[table]; derived {
			continue
		}
		want := dumpTable(tb, src, table)
		if len(want) == 0 {
			tb.Errorf("table %s: the seed gives it no row, so its copy is untested: add one to seedCatalogue (or list it in store.CopyDerived, saying why it is derived)", table)
			continue
		}
		if diff := cmp.Diff(want, dumpTable(tb, dst, table)); diff != "" {
			tb.Errorf("table %s differs after the copy (-source +destination):\n%s", table, diff)
		}
	}
}

func copiedNames(rep *store.CopyReport) []string {
	var out []string
	for _, t := range rep.Tables {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func TestCopyEveryTable(t *testing.T) {
	from, to := openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 12, 2048)
	rep := mustCopy(t, from, to, store.CopyOptions{BatchRows: 5})
	assertSameTables(t, from, to)
	var want []string
	for _, table := range tablesOf(t, rawDB(t, from.url), false) {
		if _, derived := store.CopyDerived[table]; !derived {
			want = append(want, table)
		}
	}
	if diff := cmp.Diff(want, copiedNames(rep)); diff != "" {
		t.Errorf("tables copied (-schema +report):\n%s", diff)
	}
	if rep.Blobs != 13 || rep.BlobsCopied != 13 || rep.BlobsSkipped != 0 {
		t.Errorf("blobs %d, copied %d, skipped %d; want 13 (12 packages and a preview) copied", rep.Blobs, rep.BlobsCopied, rep.BlobsSkipped)
	}
	assertBlobsRead(t, from, to)
}

// TestCopyBetweenDirectoriesNamedLikeURIs: the copy reads and writes the database files
// inside data directories whose names mean something in a SQLite URI.
func TestCopyBetweenDirectoriesNamedLikeURIs(t *testing.T) {
	base := t.TempDir()
	end := func(name string) copyEnd {
		dir := filepath.Join(base, name)
		return openEnd(t, copyEnd{url: "sqlite:" + filepath.Join(dir, store.DBFile), dir: dir})
	}
	from, to := end("from#1"), end("to%41")
	seedCatalogue(t, from, 3, 256)
	mustCopy(t, from, to, store.CopyOptions{})
	assertSameTables(t, from, to)
	if names, _ := filepath.Glob(filepath.Join(base, "*")); len(names) != 2 {
		t.Errorf("%s holds %q, want the two data directories alone", base, names)
	}
}

// assertBlobsRead reads every release's package from the destination's blob store.
func assertBlobsRead(tb testing.TB, from, to copyEnd) {
	tb.Helper()
	ctx := context.Background()
	rels, err := from.st.AllReleases(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range rels {
		b, err := to.blobs.Open(ctx, r.SHA256, r.Size)
		if err != nil {
			tb.Fatalf("%s@%s: %v", r.PackageID, r.Version, err)
		}
		_ = b.Close()
	}
}

// TestCopyAgainIsIdempotent: a second copy into a verified copy inserts nothing, puts no
// blob, and verifies.
func TestCopyAgainIsIdempotent(t *testing.T) {
	from, to := openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 6, 512)
	mustCopy(t, from, to, store.CopyOptions{})
	rep := mustCopy(t, from, to, store.CopyOptions{BatchRows: 4})
	for _, tr := range rep.Tables {
		if tr.Inserted != 0 {
			t.Errorf("table %s: the second copy inserted %d rows", tr.Name, tr.Inserted)
		}
	}
	if rep.BlobsCopied != 0 || rep.BlobsSkipped != rep.Blobs {
		t.Errorf("second copy: %d blobs copied, %d skipped of %d; want all skipped", rep.BlobsCopied, rep.BlobsSkipped, rep.Blobs)
	}
	assertSameTables(t, from, to)
}

// interruptAt runs a copy cancelled at the first progress report matching stop, and
// returns the rows it had committed by then and its error.
func interruptAt(t *testing.T, from, to copyEnd, stop func(store.CopyProgress) bool) (int64, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := false
	var rows int64
	_, err := store.Copy(ctx, from.end(), to.end(), store.CopyOptions{BatchRows: 3, BlobWorkers: 1, Progress: func(p store.CopyProgress) {
		if !stopped && stop(p) {
			stopped, rows = true, p.Rows
			cancel()
		}
	}})
	if !stopped {
		t.Fatal("the copy ended before the point the test interrupts it at")
	}
	return rows, err
}

// TestCopyResumes interrupts a copy in its blob phase and in the middle of a table (after
// some batches of releases committed), and checks that running it again finishes it: the
// second run is a resume, inserts only the rest, and gives the same verified copy.
func TestCopyResumes(t *testing.T) {
	cases := map[string]func(store.CopyProgress) bool{
		"blobs":    func(p store.CopyProgress) bool { return p.Phase == "blobs" && p.Blobs == 4 },
		"releases": func(p store.CopyProgress) bool { return p.Phase == "rows" && p.Table == "releases" },
		"meta":     func(p store.CopyProgress) bool { return p.Phase == "rows" && p.Table == "meta" },
	}
	for name, stop := range cases {
		t.Run(name, func(t *testing.T) {
			from, to := openSQLiteEnd(t), openSQLiteEnd(t)
			seedCatalogue(t, from, 15, 1024)
			committed, err := interruptAt(t, from, to, stop)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted copy: %v, want context.Canceled", err)
			}
			var reread int64
			rep := mustCopy(t, from, to, store.CopyOptions{BatchRows: 3, Progress: func(p store.CopyProgress) {
				if p.Phase == "rows" {
					reread = p.Rows
				}
			}})
			if !rep.Resumed {
				t.Error("the second run did not resume the first")
			}
			var total int64
			for _, tr := range rep.Tables {
				total += tr.Rows
			}
			if committed+reread != total {
				t.Errorf("the first run committed %d rows, the resumed one copied %d, of %d: it did not start from the checkpoints", committed, reread, total)
			}
			assertSameTables(t, from, to)
			assertBlobsRead(t, from, to)
			assertNoCheckpoint(t, to)
		})
	}
}

func assertNoCheckpoint(tb testing.TB, e copyEnd) {
	tb.Helper()
	var n int
	if err := rawDB(tb, e.url).QueryRow("SELECT count(*) FROM meta WHERE key LIKE 'migrate:%'").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	if n != 0 {
		tb.Errorf("%d checkpoint rows left in meta after a verified copy", n)
	}
}

// TestCopyRefusesConflict: a destination that holds its own data under keys the source
// has is refused with the table and key named, and nothing of it is overwritten.
func TestCopyRefusesConflict(t *testing.T) {
	from, to := openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 5, 256)
	seedCatalogue(t, to, 5, 300) // same ids and versions, other bytes
	before := dumpTable(t, rawDB(t, to.url), "releases")
	_, err := store.Copy(context.Background(), from.end(), to.end(), store.CopyOptions{})
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("Copy into a registry with other data: %v, want a ConflictError", err)
	}
	if !strings.Contains(err.Error(), store.RuleCopyConflict) || ce.Table == "" || ce.Key == "" || ce.Column == "" {
		t.Errorf("refusal %q does not name its rule, table, key and column", err)
	}
	if diff := cmp.Diff(before, dumpTable(t, rawDB(t, to.url), "releases")); diff != "" {
		t.Errorf("the refused copy changed the destination's releases:\n%s", diff)
	}
}

// TestCopyRefusesAnotherSource: a destination holding an unfinished copy of one source is
// refused as the destination of another.
func TestCopyRefusesAnotherSource(t *testing.T) {
	a, b, to := openSQLiteEnd(t), openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, a, 6, 256)
	seedCatalogue(t, b, 6, 256)
	if _, err := interruptAt(t, a, to, func(p store.CopyProgress) bool { return p.Phase == "rows" }); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v", err)
	}
	_, err := store.Copy(context.Background(), b.end(), to.end(), store.CopyOptions{})
	if err == nil || !strings.Contains(err.Error(), "unfinished copy of") {
		t.Fatalf("Copy of another source into an unfinished copy: %v, want a refusal", err)
	}
}

// TestOpenRefusesUnfinishedCopy: a destination a copy was interrupted in is refused by
// OpenURL and Open (what serve and every command writing through the store open it with),
// naming the source and the fix, before anything writes to it; the copy run again still
// resumes and finishes it, and the verified copy opens.
func TestOpenRefusesUnfinishedCopy(t *testing.T) {
	for name, openTo := range map[string]func(testing.TB) copyEnd{"sqlite": openSQLiteEnd, "postgres": openPostgresEnd} {
		t.Run(name, func(t *testing.T) {
			from, to := openSQLiteEnd(t), openTo(t)
			seedCatalogue(t, from, 9, 256)
			if _, err := interruptAt(t, from, to, func(p store.CopyProgress) bool { return p.Phase == "rows" && p.Table == "releases" }); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted copy: %v", err)
			}
			source := "sqlite:" + filepath.Join(from.dir, store.DBFile)
			opens := map[string]func() (*store.Store, error){
				"OpenURL": func() (*store.Store, error) { return store.OpenURL(context.Background(), to.url, to.dir) },
			}
			if name == "sqlite" {
				opens["Open"] = func() (*store.Store, error) { return store.Open(context.Background(), to.dir) }
			}
			for how, open := range opens {
				st, err := open()
				if err == nil {
					_ = st.Close()
					t.Fatalf("%s opened an unfinished copy", how)
				}
				var unfinished *store.UnfinishedCopyError
				if !errors.As(err, &unfinished) || unfinished.Source != source {
					t.Fatalf("%s: %v, want an UnfinishedCopyError naming %s", how, err, source)
				}
				want := store.RuleUnfinishedCopy + ": this database is an unfinished copy of " + source + " made by `registry migrate`; run the same migrate command again to finish it"
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %q does not say %q", how, err, want)
				}
			}
			rep := mustCopy(t, from, to, store.CopyOptions{BatchRows: 3})
			if !rep.Resumed {
				t.Error("the copy run after the refused opens did not resume")
			}
			assertSameTables(t, from, to)
			assertNoCheckpoint(t, to)
			st, err := store.OpenURL(context.Background(), to.url, to.dir)
			if err != nil {
				t.Fatalf("open the verified copy: %v", err)
			}
			_ = st.Close()
		})
	}
}

// TestCopyRefusesMissingSource: a sqlite: source without a database is refused, not
// created empty and copied.
func TestCopyRefusesMissingSource(t *testing.T) {
	to := openSQLiteEnd(t)
	dir := t.TempDir()
	from := store.CopyEnd{Database: "sqlite:" + dir, Blobs: to.blobs}
	_, err := store.Copy(context.Background(), from, to.end(), store.CopyOptions{})
	if err == nil || !strings.Contains(err.Error(), "has no registry database") {
		t.Fatalf("Copy from an empty directory: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
		t.Error("the refused copy created a database at the source")
	}
}

func TestCopyRefusesSameDatabase(t *testing.T) {
	e := openSQLiteEnd(t)
	_, err := store.Copy(context.Background(), e.end(), e.end(), store.CopyOptions{})
	if err == nil || !strings.Contains(err.Error(), "the same database") {
		t.Fatalf("Copy onto itself: %v, want a refusal", err)
	}
}

// TestCopyHidesPassword: a destination URL the copy cannot open (its port is not a number)
// is named in the error without its password.
func TestCopyHidesPassword(t *testing.T) {
	from := openSQLiteEnd(t)
	to := store.CopyEnd{Database: "postgres://reg:s3cret@db.invalid:port/registry", DataDir: t.TempDir(), Blobs: from.blobs}
	_, err := store.Copy(context.Background(), from.end(), to, store.CopyOptions{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Copy to an unparsable URL: %v, want a refusal without the password", err)
	}
}

// dropBlobs is a destination blob store that loses what it is given.
type dropBlobs struct{ store.CopyBlobs }

func (dropBlobs) Put(context.Context, string, int64, string) error { return nil }

// TestCopyVerifiesBlobs: a destination blob store that acknowledges puts and keeps nothing
// fails the verification, naming the blob.
func TestCopyVerifiesBlobs(t *testing.T) {
	from, to := openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 3, 256)
	to.blobs = dropBlobs{to.blobs}
	_, err := store.Copy(context.Background(), from.end(), to.end(), store.CopyOptions{})
	var ve *store.VerifyError
	if !errors.As(err, &ve) || ve.Blob == "" || !strings.Contains(err.Error(), store.RuleCopyVerify) {
		t.Fatalf("Copy into a blob store that drops puts: %v, want a VerifyError naming a blob", err)
	}
}

// TestCopyVerifiesRows: a row lost from the destination, or changed there, after its table
// was copied (here: once the verification began) fails the verification, naming the table.
func TestCopyVerifiesRows(t *testing.T) {
	for name, damage := range map[string]string{
		"lost":    "DELETE FROM tokens",
		"changed": "UPDATE tokens SET note = 'not the source''s'",
	} {
		t.Run(name, func(t *testing.T) {
			from, to := openSQLiteEnd(t), openSQLiteEnd(t)
			seedCatalogue(t, from, 3, 256)
			dst := rawDB(t, to.url)
			done := false
			_, err := store.Copy(context.Background(), from.end(), to.end(), store.CopyOptions{Progress: func(p store.CopyProgress) {
				if p.Phase == "verify rows" && !done {
					done = true
					if _, err := dst.Exec(damage); err != nil {
						t.Error(err)
					}
				}
			}})
			var ve *store.VerifyError
			if !errors.As(err, &ve) || ve.Table != "tokens" || !strings.Contains(err.Error(), store.RuleCopyVerify) {
				t.Fatalf("Copy whose destination's tokens were damaged (%s): %v, want a VerifyError on tokens", damage, err)
			}
		})
	}
}

// TestCopyRefusesUniqueConflict: a destination row under another primary key that holds a
// unique value of a source row (a token's hash) keeps that row out; the copy is refused
// rather than left a row short.
func TestCopyRefusesUniqueConflict(t *testing.T) {
	from, to := openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 3, 256)
	if _, err := interruptAt(t, from, to, func(p store.CopyProgress) bool { return p.Phase == "blobs" }); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v", err)
	}
	if _, err := rawDB(t, to.url).Exec(`INSERT INTO tokens (id, hash, kind, publisher, scope, note, created_at)
		VALUES ('tok_other', ?, 'publisher', 'mallory', '[]', '', '2026-01-01T00:00:00Z')`, hexSum([]byte("token"))); err != nil {
		t.Fatal(err)
	}
	_, err := store.Copy(context.Background(), from.end(), to.end(), store.CopyOptions{})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Table != "tokens" || !strings.Contains(ce.Column, "unique key") {
		t.Fatalf("Copy with a token's hash taken: %v, want a ConflictError on tokens naming a unique key", err)
	}
}

// TestCopySQLiteToPostgresS3 moves the embedded default to PostgreSQL and S3 on real
// servers, interrupted once, and checks that the registry then inserts new rows with
// fresh ids (the identity sequences were set past the copied ones).
func TestCopySQLiteToPostgresS3(t *testing.T) {
	from, to := openSQLiteEnd(t), openS3End(t)
	seedCatalogue(t, from, 20, 4096)
	if _, err := interruptAt(t, from, to, func(p store.CopyProgress) bool { return p.Phase == "rows" && p.Table == "audit" }); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v", err)
	}
	rep := mustCopy(t, from, to, store.CopyOptions{BatchRows: 7})
	assertSameTables(t, from, to)
	assertBlobsRead(t, from, to)
	for _, seq := range []string{"audit.id", "releases.id", "reports.id", "webhook_events.id", "webhook_deliveries.id"} {
		if !slices.Contains(rep.Sequences, seq) {
			t.Errorf("sequence %s not reset (reset: %v)", seq, rep.Sequences)
		}
	}
	assertFreshIDs(t, from, to)
}

// assertFreshIDs reopens the destination as the registry would and publishes and audits
// once more: each new row's id follows the copied ones.
func assertFreshIDs(t *testing.T, from, to copyEnd) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenURL(ctx, to.url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rels, err := from.st.AllReleases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := rels[len(rels)-1]
	for _, r := range rels {
		last.ID = max(last.ID, r.ID)
	}
	nr := *last
	nr.ID, nr.Version, nr.Manifest = 0, "7.0.0", []byte("id: "+last.PackageID+"\nversion: 7.0.0\n")
	got, err := st.InsertRelease(ctx, &nr, store.AuditEntry{Actor: "after", Action: "publish", Target: nr.PackageID + "@7.0.0", Outcome: "ok"})
	if err != nil {
		t.Fatalf("publish after the copy: %v", err)
	}
	if got.ID <= last.ID {
		t.Errorf("the first release after the copy got id %d, not above the copied %d", got.ID, last.ID)
	}
}

// TestCopyPostgresToSQLite moves a PostgreSQL and S3 registry back to the embedded
// default, interrupted once in its blob phase.
func TestCopyPostgresToSQLite(t *testing.T) {
	from, to := openS3End(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 20, 4096)
	if _, err := interruptAt(t, from, to, func(p store.CopyProgress) bool { return p.Phase == "blobs" && p.Blobs == 5 }); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v", err)
	}
	rep := mustCopy(t, from, to, store.CopyOptions{BatchRows: 7})
	if rep.BlobsSkipped == 0 {
		t.Error("the resumed copy skipped no blob the first run had copied")
	}
	assertSameTables(t, from, to)
	assertBlobsRead(t, from, to)
	assertNoCheckpoint(t, to)
}

// TestCopyRefusesCorruptSourceBlob: a source blob whose bytes are not its digest's (same
// size, so only a re-hash sees it) is not copied: the copy stops naming it and fsck.
func TestCopyRefusesCorruptSourceBlob(t *testing.T) {
	from, to := openSQLiteEnd(t), openSQLiteEnd(t)
	seedCatalogue(t, from, 2, 256)
	rels, err := from.st.AllReleases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	path := from.st.Blobs.Path(rels[0].SHA256)
	if err := os.WriteFile(path, make([]byte, rels[0].Size), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = store.Copy(context.Background(), from.end(), to.end(), store.CopyOptions{})
	if !errors.Is(err, store.ErrBlobCorrupt) || !strings.Contains(err.Error(), rels[0].SHA256) || !strings.Contains(err.Error(), "fsck") {
		t.Fatalf("Copy of a corrupt source blob: %v, want ErrBlobCorrupt naming it and fsck", err)
	}
	if to.blobs.Stat(context.Background(), rels[0].SHA256, rels[0].Size) == nil {
		t.Error("the corrupt blob was put into the destination")
	}
}
