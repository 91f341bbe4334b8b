package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// BenchmarkPages serves every page of the demo data plus a plugin whose README.md is 1 MiB
// of "[a](" (13 s of CPU per view when pages rendered Markdown). The README was rendered
// once, at publish; a view copies the stored HTML.
func BenchmarkPages(b *testing.B) {
	url := newBenchRegistry(b)
	for _, path := range []string{"/plugins/huge-readme", "/plugins/slack-relay", "/", "/?q=task", "/categories/tools",
		"/publishers/demo", "/extensions/curupira-github-issues", "/docs"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				res, err := http.Get(url + path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d", path, res.StatusCode)
				}
				b.SetBytes(n)
			}
		})
	}
}

// newBenchRegistry serves the demo list with every example published and huge-readme.
func newBenchRegistry(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	list, err := os.ReadFile("../plugins.yaml")
	if err != nil {
		b.Fatal(err)
	}
	list = bytes.Replace(list, []byte("plugins:\n"), []byte("plugins:\n  - id: huge-readme\n    repo: acme/huge-readme\n    owners: [acme]\n\n"), 1)
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, list, 0o644); err != nil {
		b.Fatal(err)
	}
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		b.Fatalf("list: %v %v", err, probs)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	publicURL := "http://" + srv.Listener.Addr().String()
	svc := ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	if err := svc.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 4 << 20,
		RateLimits: server.RateLimits{Search: -1}}, svc, st, log) // a benchmark searches more than a client may
	srv.Start()
	b.Cleanup(srv.Close)
	for _, name := range examples.Names() {
		var buf bytes.Buffer
		if err := examples.Pack(name, &buf); err != nil {
			b.Fatal(err)
		}
		benchPublish(b, srv.URL, "", buf.Bytes())
	}
	benchPublish(b, srv.URL, "huge-readme-1.0.0.tar.gz", hugeReadmePlugin(b))
	return srv.URL
}

func hugeReadmePlugin(b *testing.B) []byte {
	manifest := "id: huge-readme\napi_version: 2\nversion: \"1.0.0\"\ndisplay_name: Huge README\ndescription: A README of 1 MiB of link openers\n" +
		"author: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
		"README.md":                 {Data: []byte(strings.Repeat("[a](", 1<<18))}, // 1 MiB
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchPublish uploads a package through the API; fileName "" takes it from the manifest.
func benchPublish(b *testing.B, url, fileName string, data []byte) {
	b.Helper()
	if fileName == "" {
		rep, err := verify.Package(context.Background(), bytes.NewReader(data), verify.Options{})
		if err != nil {
			b.Fatal(err)
		}
		fileName = ingest.FileID(rep.ID) + "-" + rep.Version + ".tar.gz"
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("package", fileName)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, url+"/api/v1/packages", &body)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		b.Fatalf("publish %s: %d %s", fileName, res.StatusCode, msg)
	}
}
