package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// mustExportService is a service on a fresh store with the named examples published.
func mustExportService(t *testing.T, names ...string) *Service {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	l, probs, err := index.LoadList("../plugins.yaml")
	if err != nil || probs.HasErrors() {
		t.Fatal(err, probs)
	}
	svc := New(st, l, Config{PublicURL: "https://mirror.example", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, slog.New(slog.DiscardHandler))
	t.Cleanup(svc.Close) // before the store's close and the folder's removal: the last good documents are written in the background
	for _, name := range names {
		var buf bytes.Buffer
		if err := examples.Pack(name, &buf); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Publish(ctx, PublishInput{Package: &buf, Actor: Actor{Name: "t", Admin: true}}); err != nil {
			t.Fatalf("publish %s: %v", name, err)
		}
	}
	return svc
}

// tree maps every file under dir to its sha256.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantTree is what an export of svc must hold: the index documents and every release's
// package and icon, with the store's digests.
func wantTree(t *testing.T, svc *Service) map[string]string {
	t.Helper()
	docs := svc.Documents()
	want := map[string]string{}
	for rel, body := range map[string][]byte{"index.json": docs.Kandev.Body.Bytes(), "curupira/index.json": docs.Curupira.Body.Bytes()} {
		sum := sha256.Sum256(body)
		want[rel] = hex.EncodeToString(sum[:])
	}
	rels, err := svc.store.AllReleases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rels {
		fid := FileID(r.PackageID)
		want["packages/"+fid+"/"+fid+"-"+r.Version+".tar.gz"] = r.SHA256
		if r.IconSHA256 != "" {
			want["icons/"+r.IconSHA256+"."+r.IconExt] = r.IconSHA256
		}
	}
	for rel, body := range wantFeedFiles(t, svc) {
		want[rel] = hexSum(body)
	}
	return want
}

// wantFeedFiles are the sync files an export of svc must hold, each the bytes the registry
// answers at that path: the listing, each listed package's document, and the feed page.
func wantFeedFiles(t *testing.T, svc *Service) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	lst, err := svc.Listing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	if out["api/v1/index.json"], err = FeedJSON(lst); err != nil {
		t.Fatal(err)
	}
	for _, p := range lst.Packages {
		pi, err := svc.PackageIndexByFile(ctx, FileID(p.ID))
		if err != nil {
			t.Fatal(err)
		}
		out["api/v1/index/"+FileID(p.ID)+".json"] = pi.Body
	}
	page, err := svc.StaticFeed(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out["api/v1/changes/0.json"], err = FeedJSON(page); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExportIsASnapshot(t *testing.T) {
	svc := mustExportService(t, "hello-managed", "pr-insights")
	out := filepath.Join(t.TempDir(), "mirror")
	var reported []string
	if err := svc.Export(context.Background(), out, func(path string, _ int64) { reported = append(reported, path) }); err != nil {
		t.Fatal(err)
	}
	stale := map[string]string{"packages/gone/gone-1.0.0.tar.gz": "from an earlier export", "stale.txt": "x"}
	for rel, body := range stale {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(out, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Export(context.Background(), out, nil); err != nil {
		t.Fatal(err)
	}
	want := wantTree(t, svc)
	if len(want) < 9 {
		t.Fatalf("expected two packages with icons, two index documents, two package documents, their listing and a feed page, got %v", want)
	}
	if diff := cmp.Diff(want, tree(t, out)); diff != "" {
		t.Errorf("export (-want +got):\n%s", diff)
	}
	for _, p := range reported {
		if !strings.HasPrefix(p, out+string(filepath.Separator)) {
			t.Errorf("progress reported %s, outside %s", p, out)
		}
	}
	assertNoLeftovers(t, out)
}

// TestExportIsReadableByAll: the mirror's folder is 0755, as the folders inside it, on a
// first export and on one replacing a 0755 mirror.
func TestExportIsReadableByAll(t *testing.T) {
	svc := mustExportService(t, "hello-managed")
	out := filepath.Join(t.TempDir(), "mirror")
	for run := 1; run <= 2; run++ {
		if err := svc.Export(context.Background(), out, nil); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{out, filepath.Join(out, "packages")} {
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o755 {
				t.Errorf("export %d: %s has mode %v, want 0755 (a web server must read the mirror)", run, dir, fi.Mode().Perm())
			}
		}
	}
}

// TestExportThroughASymlink: an export to a symlink replaces the folder it points to,
// twice, and the link stays a link to it.
func TestExportThroughASymlink(t *testing.T) {
	svc := mustExportService(t, "hello-managed")
	base := t.TempDir()
	target := filepath.Join(base, "releases", "current")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "mirror")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	want := wantTree(t, svc)
	for run := 1; run <= 2; run++ {
		var reported []string
		if err := svc.Export(context.Background(), link, func(path string, _ int64) { reported = append(reported, path) }); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("export %d: %s is no longer a symlink: %v %v", run, link, fi.Mode(), err)
		}
		if got, err := os.Readlink(link); err != nil || got != target {
			t.Errorf("export %d: the link points to %q (%v), want %s", run, got, err, target)
		}
		if diff := cmp.Diff(want, tree(t, target)); diff != "" {
			t.Errorf("export %d: the link's folder (-want +got):\n%s", run, diff)
		}
		for _, p := range reported {
			if !strings.HasPrefix(p, link+string(filepath.Separator)) {
				t.Errorf("export %d: progress reported %s, not under the given %s", run, p, link)
			}
		}
		assertNoLeftovers(t, target)
	}
}

// TestFailedExportKeepsThePreviousOne damages a blob after a first export: the second
// export fails its read-back check, and the first is still there, byte for byte.
func TestFailedExportKeepsThePreviousOne(t *testing.T) {
	svc := mustExportService(t, "hello-managed")
	out := filepath.Join(t.TempDir(), "mirror")
	if err := svc.Export(context.Background(), out, nil); err != nil {
		t.Fatal(err)
	}
	before := tree(t, out)
	rels, err := svc.store.AllReleases(context.Background())
	if err != nil || len(rels) != 1 {
		t.Fatal(rels, err)
	}
	blob := svc.db().Blobs.Path(rels[0].SHA256)
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(blob, data, 0o600); err != nil {
		t.Fatal(err)
	}
	err = svc.Export(context.Background(), out, nil)
	if err == nil || !strings.Contains(err.Error(), "want "+rels[0].SHA256) {
		t.Fatalf("export of a damaged blob: %v, want a sha256 mismatch naming %s", err, rels[0].SHA256)
	}
	if diff := cmp.Diff(before, tree(t, out)); diff != "" {
		t.Errorf("a failed export changed the previous one (-before +after):\n%s", diff)
	}
	assertNoLeftovers(t, out)
}

func TestExportRefusesAFolderThatIsNotAnExport(t *testing.T) {
	svc := mustExportService(t)
	out := t.TempDir()
	notes := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := svc.Export(context.Background(), out, nil); err == nil || !strings.Contains(err.Error(), "not an earlier export") {
		t.Fatalf("export over a folder of other files: %v", err)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("the folder's own file is gone: %v", err)
	}
}

func TestVerifySnapshot(t *testing.T) {
	body := []byte("{")
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	tests := []struct {
		name  string
		files map[string]string // written
		list  []exportFile      // expected
		want  string
	}{
		{"document that does not parse", map[string]string{"index.json": "{"}, []exportFile{{rel: "index.json", sha: sha, document: true}}, "index.json: not valid JSON"},
		{"bytes that differ", map[string]string{"p.tar.gz": "{"}, []exportFile{{rel: "p.tar.gz", sha: strings.Repeat("0", 64)}}, "p.tar.gz: 1 bytes with sha256 " + sha},
		{"missing file", nil, []exportFile{{rel: "p.tar.gz", sha: sha}}, "p.tar.gz"},
		{"extra file", map[string]string{"p.tar.gz": "{", "x": "y"}, []exportFile{{rel: "p.tar.gz", sha: sha}}, "x: not part of the snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, body := range tt.files {
				if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := verifySnapshot(root, tt.list)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("verifySnapshot: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// assertNoLeftovers checks that no temporary or old export folder stays beside out.
func assertNoLeftovers(t *testing.T, out string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(out) {
			t.Errorf("left beside the export: %s", e.Name())
		}
	}
}

// TestExportCleansWhatAKilledExportLeft: a new tree never swapped in and a previous export
// moved aside are removed by the next export; a previous export moved aside while the
// mirror is absent (killed between the two renames) is put back first, and an export that
// then fails leaves it in place.
func TestExportCleansWhatAKilledExportLeft(t *testing.T) {
	svc := mustExportService(t, "hello-managed")
	parent := t.TempDir()
	out := filepath.Join(parent, "mirror")
	if err := svc.Export(context.Background(), out, nil); err != nil {
		t.Fatal(err)
	}
	first := tree(t, out)
	for _, stale := range []string{".mirror.new-1", ".mirror.new-2.old", ".other.new-3"} {
		if err := os.MkdirAll(filepath.Join(parent, stale, "packages"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Export(context.Background(), out, nil); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		ents, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		return got
	}
	if diff := cmp.Diff([]string{".other.new-3", "mirror"}, names()); diff != "" {
		t.Errorf("beside the mirror after an export (-want +got):\n%s", diff)
	}

	// Killed between the renames: the mirror is at .mirror.new-4.old, and a new tree beside it.
	if err := os.Rename(out, filepath.Join(parent, ".mirror.new-4.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(parent, ".mirror.new-4"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // this export fails after the clean-up
	if err := svc.Export(ctx, out, nil); err == nil {
		t.Fatal("an export with a cancelled context succeeded")
	}
	if diff := cmp.Diff(first, tree(t, out)); diff != "" {
		t.Errorf("the previous export was not put back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{".other.new-3", "mirror"}, names()); diff != "" {
		t.Errorf("beside the mirror after the put-back (-want +got):\n%s", diff)
	}
}
