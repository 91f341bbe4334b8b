package ingest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

var anAdmin = Actor{Name: "admin", Admin: true}

// publishList lists acme-hello (owned by acme), acme-other and three fillers, all plugins.
func publishList() *index.List {
	l := &index.List{}
	for _, id := range []string{"acme-hello", "acme-other", "filler-a", "filler-b", "filler-c"} {
		l.Plugins = append(l.Plugins, index.Entry{ID: id, Repo: "acme/" + id, Kind: index.KindPlugin, Owners: []string{"acme"}})
	}
	return l
}

// newPublishService is a Service over a fresh store with l, its index built.
func newPublishService(t *testing.T, l *index.List, cfg Config) *Service {
	t.Helper()
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://r.example"
	}
	cfg.Plugin, cfg.Canvas = verify.PluginLimits(), verify.CanvasLimits()
	s := New(mustStore(t), l, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(s.Close)
	if err := s.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustStoreB(b *testing.B) *store.Store {
	b.Helper()
	st, err := store.Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// plugin builds a valid managed plugin package.
func plugin(t *testing.T, id, version, description string) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: " + description +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// extensionPkg is the example Curupira extension curupira-github-issues@1.0.0.
func extensionPkg(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := examples.Pack("curupira-github-issues", &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func publishOK(t *testing.T, s *Service, id, version, description string) *PublishResult {
	t.Helper()
	res, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, id, version, description)),
		FileName: PackageFileName(id, version), Actor: anAdmin})
	if err != nil {
		t.Fatalf("publish %s@%s: %v", id, version, err)
	}
	return res
}

// ruleOf is the rule of a refusal's first problem, "" when err is not a refusal.
func ruleOf(err error) string {
	if r, ok := err.(*Refusal); ok && len(r.Problems) > 0 {
		return r.Problems[0].Rule
	}
	return ""
}

// blobFiles lists the files under the blob folder, temporary ones included.
func blobFiles(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	root := filepath.Join(st.Dir(), "blobs")
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && !strings.HasPrefix(info.Name(), ".") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// indexed reports the version index.json lists for id ("" when absent).
func indexed(s *Service, id string) string {
	it, ok := s.Catalog().Item(id)
	if !ok || !bytes.Contains(s.Documents().Kandev.Body.Bytes(), []byte(`"id":"`+id+`"`)) {
		return ""
	}
	return it.Latest.Version
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
