package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

const lastGoodList = `plugins:
  - id: acme-hello
    repo: acme/kandev-plugin-hello
    owners: [acme]
  - id: acme-broken
    repo: acme/kandev-plugin-broken
    owners: [acme]
`

var admin = Actor{Name: "admin", Admin: true}

// MustService opens a Service over a store in dir with the test list and cfg.
func MustService(tb testing.TB, st *store.Store, cfg Config) *Service {
	tb.Helper()
	l, probs := index.ParseList([]byte(lastGoodList))
	if probs.HasErrors() {
		tb.Fatalf("list: %v", probs)
	}
	cfg.PublicURL = "http://registry.test"
	cfg.Plugin, cfg.Canvas = verify.PluginLimits(), verify.CanvasLimits()
	svc := New(st, l, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	tb.Cleanup(svc.Close)
	return svc
}

func MustStore(tb testing.TB, dir string) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

func helloPackage(tb testing.TB, version, description string) []byte {
	tb.Helper()
	return idPackage(tb, "acme-hello", version, description)
}

// idPackage is helloPackage's package with another id.
func idPackage(tb testing.TB, id, version, description string) []byte {
	tb.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: " + description +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func mustPublish(tb testing.TB, svc *Service, version, description string) {
	tb.Helper()
	_, err := svc.Publish(context.Background(), PublishInput{Package: bytes.NewReader(helloPackage(tb, version, description)),
		FileName: "acme-hello-" + version + ".tar.gz", Actor: admin})
	if err != nil {
		tb.Fatalf("publish acme-hello@%s: %v", version, err)
	}
}

// insertStored stores id@1.0.0 with manifest as is, as data written by an older registry
// can be: no publish check runs.
func insertStored(tb testing.TB, st *store.Store, id, manifest string) {
	tb.Helper()
	sha, err := st.Blobs.Put([]byte(id))
	if err != nil {
		tb.Fatal(err)
	}
	rel := &store.Release{PackageID: id, Version: "1.0.0", Kind: "plugin", SHA256: sha, Size: int64(len(id)),
		Manifest: []byte(manifest), PublishedBy: "old-registry"}
	if _, err := st.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "test", Action: "publish", Target: id + "@1.0.0", Outcome: "ok"}); err != nil {
		tb.Fatal(err)
	}
}

// insertBroken stores a listed release whose manifest no longer parses: no rebuild can
// include it.
func insertBroken(tb testing.TB, st *store.Store) {
	insertStored(tb, st, "acme-broken", "id: [unclosed")
}

func gunzip(tb testing.TB, b []byte) []byte {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// A start whose rebuild is refused serves the bytes of the last successful rebuild, which
// an earlier process persisted, and its catalog agrees with them.
func TestServeLastGoodAfterRefusedRebuild(t *testing.T) {
	ctx := context.Background()
	st := MustStore(t, t.TempDir())
	first := MustService(t, st, Config{})
	mustPublish(t, first, "1.0.0", "Says hello")
	good := first.Documents()
	first.Close() // a restart: the last good documents are written by then

	// The same data, under a cap no index fits: what a restart sees after a poisoned publish.
	svc := MustService(t, st, Config{MaxIndexBytes: 64})
	cause := svc.Rebuild(ctx)
	if cause == nil {
		t.Fatal("rebuild under a 64-byte cap succeeded")
	}
	fb, err := svc.ServeLastGood(ctx, cause)
	if err != nil {
		t.Fatal(err)
	}
	want := &Fallback{Source: SourceLastGood, Serial: good.Serial, GeneratedAt: good.Kandev.LastModified, Entries: 1,
		Suspects: []string{"acme-hello@1.0.0 (206-byte manifest)"}}
	if diff := cmp.Diff(want, fb, cmpopts.IgnoreFields(Fallback{}, "Cause", "At"), cmpopts.IgnoreUnexported(Fallback{})); diff != "" {
		t.Errorf("fallback (-want +got):\n%s", diff)
	}
	docs := svc.Documents()
	for name, pair := range map[string][2]Document{"kandev": {good.Kandev, docs.Kandev}, "curupira": {good.Curupira, docs.Curupira}} {
		w, g := pair[0], pair[1]
		if !bytes.Equal(w.Body.Bytes(), g.Body.Bytes()) || w.ETag != g.ETag || !w.LastModified.Equal(g.LastModified) {
			t.Errorf("%s: served %q (ETag %s), want the last good %q (ETag %s)", name, g.Body.Bytes(), g.ETag, w.Body.Bytes(), w.ETag)
		}
		if !bytes.Equal(gunzip(t, g.Gzip()), w.Body.Bytes()) {
			t.Errorf("%s: gzip bytes do not decompress to the body", name)
		}
	}
	r := svc.LastRefusal()
	if r == nil || !strings.Contains(r.Reason, "64-byte host cap") || !strings.Contains(r.Reason, "serving the last good documents") {
		t.Errorf("refusal = %+v, want the cap and what is served instead", r)
	}
	if it, ok := svc.Catalog().Item("acme-hello"); !ok || it.Latest.Version != "1.0.0" {
		t.Errorf("catalog does not list the served acme-hello@1.0.0: %+v", svc.Catalog().Items())
	}
	if _, ok := svc.Catalog().PackageIDForFile("acme-hello"); !ok {
		t.Error("the served release is not downloadable through the catalog")
	}
}

// With no successful rebuild ever, the fallback is an empty index a host accepts.
func TestServeLastGoodWithoutOneServesAnEmptyIndex(t *testing.T) {
	ctx := context.Background()
	svc := MustService(t, MustStore(t, t.TempDir()), Config{MaxIndexBytes: 64})
	cause := svc.Rebuild(ctx)
	if cause == nil {
		t.Fatal("rebuild under a 64-byte cap succeeded")
	}
	fb, err := svc.ServeLastGood(ctx, cause)
	if err != nil {
		t.Fatal(err)
	}
	if fb.Source != SourceEmpty || !strings.Contains(fb.Describe(), "empty index") {
		t.Errorf("fallback = %+v (%s), want an empty index", fb, fb.Describe())
	}
	docs := svc.Documents()
	if probs := index.CheckKandev(docs.Kandev.Body.Bytes()); probs.HasErrors() {
		t.Errorf("empty index.json is not valid for a host: %v\n%s", probs, docs.Kandev.Body.Bytes())
	}
	if probs := index.CheckCurupira(docs.Curupira.Body.Bytes()); probs.HasErrors() {
		t.Errorf("empty curupira index is not valid for a host: %v\n%s", probs, docs.Curupira.Body.Bytes())
	}
	if !strings.Contains(string(docs.Kandev.Body.Bytes()), `"plugins":[]`) {
		t.Errorf("empty index lists plugins: %s", docs.Kandev.Body.Bytes())
	}
}

// An unparsable stored manifest fails the rebuild at start; once the operator yanks that
// release, the next rebuild succeeds and ends the fallback.
func TestFallbackEndsWithTheNextSuccessfulRebuild(t *testing.T) {
	ctx := context.Background()
	st := MustStore(t, t.TempDir())
	mustPublish(t, MustService(t, st, Config{}), "1.0.0", "Says hello")
	insertBroken(t, st)
	insertStored(t, st, "acme-unlisted", "id: acme-unlisted\ndescription: "+strings.Repeat("x", 4096)+"\n") // not listed: not a suspect
	svc := MustService(t, st, Config{})
	cause := svc.Rebuild(ctx)
	if cause == nil || !strings.Contains(cause.Error(), "no longer parses") {
		t.Fatalf("rebuild with a broken stored manifest: %v", cause)
	}
	fb, err := svc.ServeLastGood(ctx, cause)
	if err != nil {
		t.Fatal(err)
	}
	wantSuspects := []string{"acme-broken@1.0.0 (its stored manifest no longer parses)", "acme-hello@1.0.0 (206-byte manifest)"}
	if diff := cmp.Diff(wantSuspects, fb.Suspects); diff != "" {
		t.Errorf("suspects (-want +got):\n%s", diff)
	}
	if r := svc.LastRefusal(); r == nil || !strings.Contains(r.Reason, "no longer parses") || !strings.Contains(r.Reason, "acme-broken@1.0.0") {
		t.Errorf("refusal = %+v, want the rebuild's error", r)
	}
	if err := st.SetYanked(ctx, "acme-broken", "1.0.0", true, "poisoned", store.AuditEntry{Actor: "cli", Action: "yank"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if fb, r := svc.Fallback(), svc.LastRefusal(); fb != nil || r != nil {
		t.Errorf("after a successful rebuild: fallback %+v, refusal %+v; want neither", fb, r)
	}
}

// A rebuild at start that fails because the storage did (a full disk: here an injected
// ENOSPC under the error SQLite's commit gives) blames no release and says the cause is the
// storage; it is retried in the background, and once space is back the index is built
// without a publish or a restart.
func TestStorageFailureAtStartIsRetried(t *testing.T) {
	ctx := context.Background()
	st := MustStore(t, t.TempDir())
	first := MustService(t, st, Config{})
	mustPublish(t, first, "1.0.0", "Says hello")
	first.Close()

	svc := MustService(t, st, Config{})
	svc.retry.base = time.Millisecond
	var full atomic.Bool
	full.Store(true)
	diskFull := fmt.Errorf("store: commit: %w", &fs.PathError{Op: "write", Path: "registry.db-wal", Err: syscall.ENOSPC})
	svc.failRebuild = func() error {
		if full.Load() {
			return diskFull
		}
		return nil
	}
	cause := svc.Rebuild(ctx)
	if !errors.Is(cause, syscall.ENOSPC) {
		t.Fatalf("rebuild on a full disk: %v", cause)
	}
	fb, err := svc.ServeLastGood(ctx, cause)
	if err != nil {
		t.Fatal(err)
	}
	if !fb.Storage || len(fb.Suspects) != 0 || !strings.Contains(fb.Cause, "because the storage did, not for a release") {
		t.Errorf("fallback = %+v, want the storage named as the cause and no suspect", fb)
	}
	if r := svc.LastRefusal(); r == nil || strings.Contains(r.Reason, "releases to look at") || !strings.Contains(r.Reason, "no space left on device") {
		t.Errorf("refusal = %+v, want the storage error and no release to look at", r)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if p := svc.PendingRebuild(); p != nil && p.Attempts >= 2 {
			break
		}
	}
	if p := svc.PendingRebuild(); p == nil || p.Attempts < 2 || svc.Fallback() == nil {
		t.Fatalf("while the disk is full: pending %+v, fallback %+v; want retries and the fallback still served", p, svc.Fallback())
	}
	full.Store(false) // space is freed
	for deadline := time.Now().Add(10 * time.Second); svc.Fallback() != nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	if fb, r, p := svc.Fallback(), svc.LastRefusal(), svc.PendingRebuild(); fb != nil || r != nil || p != nil {
		t.Fatalf("after space was freed: fallback %+v, refusal %+v, pending %+v; want the index rebuilt", fb, r, p)
	}
	if it, ok := svc.Catalog().Item("acme-hello"); !ok || it.Latest.Version != "1.0.0" {
		t.Errorf("the rebuilt catalog does not list acme-hello@1.0.0: %+v", svc.Catalog().Items())
	}
}

// Each successful rebuild replaces the persisted documents, leaving only the files its
// record names; a damaged body is never served.
func TestLastGoodIsReplacedAndChecked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := MustStore(t, dir)
	svc := MustService(t, st, Config{})
	mustPublish(t, svc, "1.0.0", "Says hello")
	mustPublish(t, svc, "1.1.0", "Says hello again")
	svc.persist.wait()
	files, _ := filepath.Glob(filepath.Join(dir, "index", "last-good", "*"))
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	want := []string{"curupira-" + strings.Trim(svc.Documents().Curupira.ETag, `"`) + ".json", "documents.json",
		"kandev-" + strings.Trim(svc.Documents().Kandev.ETag, `"`) + ".json"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("last-good files (-want +got):\n%s", diff)
	}

	kandev := filepath.Join(dir, "index", "last-good", want[2])
	body, err := os.ReadFile(kandev)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kandev, bytes.Replace(body, []byte("1.1.0"), []byte("6.6.6"), 1), 0o640); err != nil {
		t.Fatal(err)
	}
	restarted := MustService(t, st, Config{MaxIndexBytes: 64})
	fb, err := restarted.ServeLastGood(ctx, errors.New("refused"))
	if err != nil {
		t.Fatal(err)
	}
	if fb.Source != SourceEmpty || bytes.Contains(restarted.Documents().Kandev.Body.Bytes(), []byte("6.6.6")) || !strings.Contains(fb.Describe(), "damaged on disk") {
		t.Errorf("a damaged last good document was served: %+v %s", fb, restarted.Documents().Kandev.Body.Bytes())
	}
}

// BenchmarkKeepLastGood measures what persisting the documents adds to every successful
// rebuild (two bodies and the record, each fsynced), at document sizes up to the 5 MiB cap.
func BenchmarkKeepLastGood(b *testing.B) {
	for _, kib := range []int{16, 256, 1024, 5120} {
		b.Run(fmt.Sprintf("%dKiB", kib), func(b *testing.B) {
			svc := MustService(b, MustStore(b, b.TempDir()), Config{})
			var docs [2]Document // alternate, so that every write has a new ETag, as after a publish
			for i := range docs {
				body := bytes.Repeat([]byte{byte('a' + i)}, kib<<10)
				docs[i] = newDocument(body, time.Now())
			}
			b.SetBytes(2 * int64(kib<<10))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := docs[i%2]
				if err := svc.writeLastGood(&Documents{Kandev: d, Curupira: d, Serial: int64(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
