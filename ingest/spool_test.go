package ingest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

const testSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>`

// TestSpoolIsLocal: uploads are spooled in DATA/spool, this replica's own folder, not in
// the blob store (a bucket has no temporary area), and CleanSpool empties it.
func TestSpoolIsLocal(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	f, err := s.SpoolFile("upload-*")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if got, want := filepath.Dir(f.Name()), filepath.Join(s.store.Dir(), SpoolDir); got != want {
		t.Errorf("spool file in %s, want %s", got, want)
	}
	if err := s.CleanSpool(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CleanSpool left %s: %v", f.Name(), err)
	}
}

// failingInsert is a store whose InsertRelease fails while fail is set.
type failingInsert struct {
	*store.Store
	fail bool
}

func (f *failingInsert) InsertRelease(ctx context.Context, rel *store.Release, audit store.AuditEntry) (*store.Release, error) {
	if f.fail {
		return nil, errors.New("database gone")
	}
	return f.Store.InsertRelease(ctx, rel, audit)
}

// TestFailedPublishKeepsSharedBlobs: a publish that fails after its blobs were stored
// removes the blobs it created, never one another release already uses (two versions
// shipping the same icon share its blob).
func TestFailedPublishKeepsSharedBlobs(t *testing.T) {
	st := &failingInsert{Store: mustStore(t)}
	s := New(st, publishList(), Config{PublicURL: "http://r.example", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		Blobs: st.Blobs.Folder()}, discard()) // not a *store.Store: its folder is named
	t.Cleanup(s.Close)
	ctx := context.Background()
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(iconPlugin(t, "1.0.0")), FileName: PackageFileName("acme-hello", "1.0.0"), Actor: anAdmin})
	if err != nil {
		t.Fatal(err)
	}
	icon := first.Release.IconSHA256
	st.fail = true
	second := iconPlugin(t, "1.1.0")
	if _, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(second), FileName: PackageFileName("acme-hello", "1.1.0"), Actor: anAdmin}); err == nil {
		t.Fatal("the publish succeeded without its row")
	}
	if err := s.blobs.Stat(ctx, icon, int64(len(testSVG))); err != nil {
		t.Errorf("the failed publish removed 1.0.0's icon blob: %v", err)
	}
	if err := s.blobs.Stat(ctx, sha256Hex(second), int64(len(second))); !errors.Is(err, store.ErrBlobMissing) {
		t.Errorf("the failed publish left its package blob: %v", err)
	}
}

// iconPlugin is acme-hello@version shipping testSVG as its icon.
func iconPlugin(t *testing.T, version string) []byte {
	t.Helper()
	manifest := "id: acme-hello\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Says hello" +
		"\nauthor: Acme\ncategories: [tools]\nicon: assets/icon.svg\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	var buf bytes.Buffer
	if err := pack.FS(fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"assets/icon.svg":           {Data: []byte(testSVG)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
