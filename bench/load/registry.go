package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

const adminToken = "load-admin-token"

// registry is the in-process registry under load.
type registry struct {
	url       string
	ids       []string
	packages  []string // package URLs from index.json
	index     []byte   // the uncompressed index.json
	entries   int
	setupTime time.Duration
	stop      func()
}

var words = []string{"issues", "deploy", "metrics", "search", "canvas", "review", "tickets", "agent", "notes", "stats"}

// startRegistry publishes n plugins through the real pipeline (verify, store, rebuild)
// and serves them on a loopback port with the rate limits off.
func startRegistry(ctx context.Context, dir string, n int) (*registry, error) {
	start := time.Now()
	reg := &registry{}
	for i := range n {
		reg.ids = append(reg.ids, fmt.Sprintf("load-%s-%04d", words[i%len(words)], i))
	}
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, listOf(reg.ids), 0o644); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		return nil, fmt.Errorf("load: plugins.yaml: %v %v", err, probs)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("load: listen: %w", err)
	}
	reg.url = "http://" + ln.Addr().String()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := ingest.New(st, l, ingest.Config{PublicURL: reg.url, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	if err := svc.Rebuild(ctx); err != nil {
		return nil, err
	}
	if err := publishAll(ctx, svc, reg.ids); err != nil {
		return nil, err
	}
	srv := server.New(server.Config{PublicURL: reg.url, AdminSecret: adminToken,
		RateLimits: server.RateLimits{Auth: -1, Publish: -1, Search: -1}}, svc, log)
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { _ = srv.Serve(sctx, ln); close(done) }()
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	go svc.Run(runCtx, time.Second)
	reg.stop = func() { cancel(); <-done; stopRun(); _ = st.Close() }
	reg.setupTime = time.Since(start)
	if err := reg.loadIndex(); err != nil {
		reg.stop()
		return nil, err
	}
	return reg, nil
}

func listOf(ids []string) []byte {
	var b bytes.Buffer
	b.WriteString("plugins:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "  - id: %s\n    repo: load/%s\n    owners: [load]\n", id, id)
	}
	return b.Bytes()
}

// publishAll publishes 1.0.0 of every id as the admin, through ingest.Publish.
func publishAll(ctx context.Context, svc *ingest.Service, ids []string) error {
	admin := ingest.Actor{Name: "load", Admin: true}
	for i, id := range ids {
		data, err := packageOf(id, "1.0.0", words[i%len(words)])
		if err != nil {
			return err
		}
		if _, err := svc.Publish(ctx, ingest.PublishInput{Package: bytes.NewReader(data), FileName: id + "-1.0.0.tar.gz", Actor: admin}); err != nil {
			return fmt.Errorf("load: publish %s: %w", id, err)
		}
	}
	return nil
}

// packageOf is a small valid managed plugin.
func packageOf(id, version, word string) ([]byte, error) {
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: " + strings.ToUpper(word[:1]) + word[1:] + " " + id[len(id)-4:] +
		"\ndescription: Load-test plugin about " + word + " for the registry benchmark\nauthor: Load Test\ncategories: [tools]\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: bytes.Repeat([]byte("#!/bin/sh\necho "+word+"\n"), 200), Mode: 0o755},
		"README.md":                 {Data: []byte("# " + id + "\n\nA load-test plugin about " + word + ".\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		return nil, fmt.Errorf("load: pack %s: %w", id, err)
	}
	return buf.Bytes(), nil
}

// loadIndex fetches index.json once: the bytes nginx will serve and the download URLs.
func (r *registry) loadIndex() error {
	res, err := http.Get(r.url + "/index.json")
	if err != nil {
		return fmt.Errorf("load: index.json: %w", err)
	}
	defer res.Body.Close()
	if r.index, err = io.ReadAll(res.Body); err != nil {
		return fmt.Errorf("load: index.json: %w", err)
	}
	var doc struct {
		Plugins []struct {
			PackageURL string `json:"package_url"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(r.index, &doc); err != nil {
		return fmt.Errorf("load: index.json: %w", err)
	}
	for _, p := range doc.Plugins {
		r.packages = append(r.packages, p.PackageURL)
	}
	r.entries = len(doc.Plugins)
	if r.entries == 0 {
		return fmt.Errorf("load: index.json lists nothing")
	}
	return nil
}
