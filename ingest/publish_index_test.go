package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
)

// setLimit puts a host limit in force, as --index-max-bytes would, and rebuilds.
func setLimit(t *testing.T, s *Service, limit, descriptionMax int) {
	t.Helper()
	s.cfg.MaxIndexBytes, s.cfg.Policy.Limit, s.cfg.Policy.DescriptionMax = limit, limit, descriptionMax
	if err := s.ForceRebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestPublishRefusesAVersionEqualToAStoredOne(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	ctx := context.Background()
	legacy := &store.Release{PackageID: "acme-other", Version: "v1.0.0", Kind: "plugin", SHA256: strings.Repeat("ab", 32), Size: 1,
		Manifest: []byte("id: acme-other\napi_version: 2\nversion: v1.0.0\n")}
	if _, err := s.store.InsertRelease(ctx, legacy, store.AuditEntry{Actor: "t", Action: "publish"}); err != nil {
		t.Fatal(err)
	}
	publishOK(t, s, "acme-hello", "1.0.0", "first")
	tests := []struct{ name, id, version, description string }{
		{"legacy v1.0.0 stored", "acme-other", "1.0.0", "x"},
		{"same version, other bytes", "acme-hello", "1.0.0", "second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, tt.id, tt.version, tt.description)),
				FileName: PackageFileName(tt.id, tt.version), Actor: anAdmin})
			if !errors.Is(err, ErrConflict) || ruleOf(err) != "publish.version.exists" {
				t.Fatalf("err = %v (rule %q), want 409 publish.version.exists", err, ruleOf(err))
			}
		})
	}
	if rels, _ := s.store.Releases(ctx, "acme-other"); len(rels) != 1 {
		t.Errorf("acme-other has %d releases, want the legacy one only", len(rels))
	}
}

func TestPublishRefusesAFileIDAnotherPackageUses(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	ctx := context.Background()
	other := &store.Release{PackageID: "@acme/hello", Version: "1.0.0", Kind: "extension", SHA256: strings.Repeat("cd", 32), Size: 1,
		Manifest: []byte("name = \"@acme/hello\"\n")}
	if _, err := s.store.InsertRelease(ctx, other, store.AuditEntry{Actor: "t", Action: "publish"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "2.0.0", "x")),
		FileName: "acme-hello-2.0.0.tar.gz", Actor: anAdmin})
	if !errors.Is(err, ErrConflict) || ruleOf(err) != "publish.file_id.collision" {
		t.Fatalf("err = %v (rule %q), want 409 publish.file_id.collision", err, ruleOf(err))
	}
}

// A client that goes away right after the commit must not leave the index stale: the
// rebuild runs on the Service's context.
func TestRebuildAfterCommitOutlivesTheRequest(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.afterCommit = cancel
	_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.0.0", "x")),
		FileName: "acme-hello-1.0.0.tar.gz", Actor: anAdmin})
	if err != nil {
		t.Fatalf("a publish that stored its release answered %v", err)
	}
	if v := indexed(s, "acme-hello"); v != "1.0.0" {
		t.Errorf("index lists acme-hello at %q, want 1.0.0", v)
	}
}

// A rebuild that fails after a commit is reported and retried until the index shows it.
func TestFailedRebuildIsRetried(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	s.retry.base = time.Millisecond
	fails := 3
	failing := make(chan struct{}) // closed when the failures are used up
	s.failRebuild = func() error {
		if fails == 0 {
			return nil
		}
		if fails--; fails == 0 {
			defer close(failing)
		}
		return errors.New("disk hiccup")
	}
	publishOK(t, s, "acme-hello", "1.0.0", "x")
	if p, r := s.PendingRebuild(), s.LastRefusal(); p == nil && r == nil {
		t.Error("a failed rebuild was not reported")
	} else if r != nil && !strings.Contains(r.Reason, "acme-hello@1.0.0") {
		t.Errorf("refusal %q does not name the change", r.Reason)
	}
	<-failing
	deadline := time.Now().Add(10 * time.Second)
	for s.PendingRebuild() != nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p := s.PendingRebuild(); p != nil {
		t.Fatalf("still pending: %+v", p)
	}
	if v := indexed(s, "acme-hello"); v != "1.0.0" || s.LastRefusal() != nil {
		t.Errorf("after the retry: index lists %q, refusal %+v", v, s.LastRefusal())
	}
}

// A list whose build is refused is not put in force: the previous list, catalog and
// documents stay; ForceRebuild then puts it in force.
func TestSetListInForceOnlyAfterItsBuild(t *testing.T) {
	l := publishList()
	s := newPublishService(t, l, Config{})
	for _, e := range l.Plugins {
		publishOK(t, s, e.ID, "1.0.0", "x")
	}
	before := s.Documents()
	small := &index.List{Plugins: l.Plugins[:1]}
	err := s.SetList(context.Background(), small, "admin")
	if ruleOf(err) != "index.shrink" || !strings.Contains(err.Error(), "shrink") {
		t.Fatalf("SetList = %v, want the shrink guard's refusal", err)
	}
	if s.List() != l || s.Documents() != before || len(s.Catalog().Items()) != len(l.Plugins) {
		t.Errorf("a refused list was put in force: %d plugins listed, %d items", len(s.List().Plugins), len(s.Catalog().Items()))
	}
	if err := s.ForceRebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.List() != small || len(s.Catalog().Items()) != 1 {
		t.Errorf("after ForceRebuild: %d plugins listed, %d items, want 1", len(s.List().Plugins), len(s.Catalog().Items()))
	}
}

// Yank, unyank and deprecate are never refused for the catalogue's size: under a limit
// the full document does not fit, each lands and the document stays within the limit.
func TestYankAndDeprecateLandWhateverTheSize(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	ctx := context.Background()
	publishOK(t, s, "acme-hello", "1.0.0", "x")
	publishOK(t, s, "acme-hello", "1.1.0", strings.Repeat("long text ", 60))
	if err := s.Yank(ctx, anAdmin, "acme-hello", "1.1.0", true, "too long"); err != nil {
		t.Fatal(err)
	}
	limit := len(s.Documents().Kandev.Body.Bytes()) + 400 // under the full document with 1.1.0, over a compact one
	setLimit(t, s, limit, 0)
	if err := s.Yank(ctx, anAdmin, "acme-hello", "1.1.0", false, ""); err != nil {
		t.Fatalf("unyank = %v", err)
	}
	if v := indexed(s, "acme-hello"); v != "1.1.0" || len(s.Documents().Kandev.Body.Bytes()) > limit {
		t.Errorf("after unyank: index lists %q in %d bytes (limit %d)", v, len(s.Documents().Kandev.Body.Bytes()), limit)
	}
	if err := s.Deprecate(ctx, anAdmin, "acme-hello", strings.Repeat("use something else ", 20), ""); err != nil {
		t.Fatalf("deprecate = %v", err)
	}
	if p, _ := s.store.Package(ctx, "acme-hello"); p == nil || p.DeprecatedReason == "" {
		t.Errorf("the deprecation was not committed: %+v", p)
	}
	if n := len(s.Documents().Kandev.Body.Bytes()); n > limit {
		t.Errorf("index.json is %d bytes after the deprecation, over the %d limit", n, limit)
	}
}

// failOn fails the nth write through it (counting from 1) with err.
type failOn struct {
	n   *int
	at  int
	err error
	w   io.Writer
}

func (f failOn) Write(p []byte) (int, error) {
	if *f.n++; *f.n == f.at {
		return 0, f.err
	}
	return f.w.Write(p)
}

// A full disk after the package blob is in place (the icon write) answers ErrStorageFull
// and leaves no blob and no temporary file.
func TestFullDiskLeavesNoOrphanBlob(t *testing.T) {
	var writes int
	s := newPublishService(t, publishList(), Config{})
	s.cfg.WrapWriter = func(w io.Writer) io.Writer { return failOn{n: &writes, at: -1, err: syscall.ENOSPC, w: w} }
	data := pluginWithIcon(t)
	// Count the writes of a successful spool, then fail the first icon write.
	u, err := s.BeginUpload(anAdmin, "acme-hello-1.0.0.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.ReadFrom(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	_ = u.Close()
	spoolWrites := writes
	writes = 0
	s.cfg.WrapWriter = func(w io.Writer) io.Writer {
		return failOn{n: &writes, at: spoolWrites + 1, err: fmt.Errorf("write icon: %w", syscall.ENOSPC), w: w}
	}
	_, err = s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(data), FileName: "acme-hello-1.0.0.tar.gz", Actor: anAdmin})
	var se *StorageError
	if !errors.Is(err, ErrStorageFull) || !errors.As(err, &se) || !strings.Contains(se.Op, "icon") {
		t.Fatalf("err = %v, want a StorageError on the icon", err)
	}
	if files := blobFiles(t, s.db()); len(files) != 0 {
		t.Errorf("a failed publish left %v", files)
	}
	if _, err := s.store.Release(context.Background(), "acme-hello", "1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("release stored: %v", err)
	}
}

// pluginWithIcon is acme-hello@1.0.0 with a PNG icon.
func pluginWithIcon(t *testing.T) []byte {
	t.Helper()
	var icon bytes.Buffer
	if err := png.Encode(&icon, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	manifest := "id: acme-hello\napi_version: 2\nversion: \"1.0.0\"\ndisplay_name: Hello\ndescription: x\nauthor: Acme\nicon: icon.png\n" +
		"categories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"icon.png":                  {Data: icon.Bytes()},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cancelOnWrite cancels a context at its first write: the icon spool is the last write
// before the row is inserted, so the insert fails after both blobs are in place.
type cancelOnWrite struct {
	cancel context.CancelFunc
	w      io.Writer
}

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return c.w.Write(p)
}

// A publish whose row cannot be inserted removes the blobs it put in place.
func TestFailedInsertLeavesNoOrphanBlob(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	data := pluginWithIcon(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := s.BeginUpload(anAdmin, "acme-hello-1.0.0.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := u.ReadFrom(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	s.cfg.WrapWriter = func(w io.Writer) io.Writer { return cancelOnWrite{cancel: cancel, w: w} }
	if _, err := s.PublishUpload(ctx, u, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the insert's context.Canceled", err)
	}
	_ = u.Close()
	if files := blobFiles(t, s.db()); len(files) != 0 {
		t.Errorf("a failed insert left %v", files)
	}
}
