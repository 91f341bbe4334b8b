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
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing/fstest"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

const adminToken = "load-admin-token"

// registry is the registry under load: the real `registry serve` binary in its own process,
// as nginx is in its own, so that neither shares a Go runtime with the load generator.
type registry struct {
	url       string
	pid       int
	ids       []string
	packages  []string // package URLs from index.json
	index     []byte   // the uncompressed index.json
	gzipIndex []byte   // index.json as sent to a client with Accept-Encoding: gzip
	entries   int
	setupTime time.Duration
	stop      func()
}

var words = []string{"issues", "deploy", "metrics", "search", "canvas", "review", "tickets", "agent", "notes", "stats"}

// startRegistry publishes n plugins through the real pipeline (verify, store, rebuild) into
// a data directory, then serves it with `bin serve` on a loopback port, rate limits off.
func startRegistry(ctx context.Context, bin, dir string, n int) (*registry, error) {
	start := time.Now()
	reg := &registry{}
	for i := range n {
		reg.ids = append(reg.ids, fmt.Sprintf("load-%s-%04d", words[i%len(words)], i))
	}
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, listOf(reg.ids), 0o644); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	reg.url = "http://" + addr
	if err := seed(ctx, dir, listPath, reg.url, reg.ids); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--data", filepath.Join(dir, "data"), "--plugins", listPath, "--addr", addr,
		"--public-url", reg.url, "--rate-auth", "0", "--rate-publish", "0", "--rate-search", "0", "--log-format", "json",
		"--sync-interval", "0")
	cmd.Env = append(os.Environ(), "REGISTRY_ADMIN_TOKEN="+adminToken)
	cmd.Stdout, cmd.Stderr = nil, nil // /dev/null: its request log is formatted and written, then dropped
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("load: start %s: %w", bin, err)
	}
	reg.pid = cmd.Process.Pid
	reg.stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	if err := waitReady(ctx, reg.url); err != nil {
		reg.stop()
		return nil, err
	}
	reg.setupTime = time.Since(start)
	if err := reg.loadIndex(); err != nil {
		reg.stop()
		return nil, err
	}
	return reg, nil
}

// seed publishes every id into the data directory with the registry's own pipeline.
func seed(ctx context.Context, dir, listPath, publicURL string, ids []string) error {
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		return fmt.Errorf("load: plugins.yaml: %v %v", err, probs)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		return err
	}
	defer st.Close()
	log := slog.New(slog.DiscardHandler)
	svc := ingest.New(st, l, ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, log)
	if err := svc.Rebuild(ctx); err != nil {
		return err
	}
	return publishAll(ctx, svc, ids)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("load: listen: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady polls /readyz for up to 30 s.
func waitReady(ctx context.Context, base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("load: the registry at %s did not become ready", base)
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
	return r.loadGzipIndex()
}

// loadGzipIndex fetches index.json's gzip representation once, as the registry sends it:
// the bytes nginx's gzip_static will serve as index.json.gz.
func (r *registry) loadGzipIndex() error {
	req, err := http.NewRequest(http.MethodGet, r.url+"/index.json", nil)
	if err != nil {
		return fmt.Errorf("load: index.json gzip: %w", err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		return fmt.Errorf("load: index.json gzip: %w", err)
	}
	defer res.Body.Close()
	if enc := res.Header.Get("Content-Encoding"); enc != "gzip" {
		return fmt.Errorf("load: index.json with Accept-Encoding: gzip came back with Content-Encoding %q", enc)
	}
	if r.gzipIndex, err = io.ReadAll(res.Body); err != nil {
		return fmt.Errorf("load: index.json gzip: %w", err)
	}
	return nil
}
