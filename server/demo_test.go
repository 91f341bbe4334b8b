package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// newDemoEnv starts a registry listing the repository's plugins.yaml with every example
// published, as `registry serve --demo` does.
func newDemoEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	list, err := os.ReadFile("../plugins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), list, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)
	for _, name := range examples.Names() {
		var buf bytes.Buffer
		if err := examples.Pack(name, &buf); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Publish(context.Background(), ingest.PublishInput{Package: &buf, Actor: ingest.Actor{Name: "demo", Admin: true}}); err != nil {
			t.Fatalf("publish example %s: %v", name, err)
		}
	}
	return e
}

var (
	timestamps = regexp.MustCompile(`"(generated_at|updated_at|integrated_time)":"[^"]+"`)
	hostPort   = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
)

// normalize removes what differs between runs: times and the test server's address.
func normalize(doc []byte) []byte {
	doc = timestamps.ReplaceAll(doc, []byte(`"$1":"2026-01-01T00:00:00Z"`))
	return hostPort.ReplaceAll(doc, []byte("https://registry.example"))
}

func TestDemoIndexGolden(t *testing.T) {
	e := newDemoEnv(t)
	for _, tt := range []struct{ path, golden string }{
		{"/index.json", "demo-index.golden.json"},
		{"/curupira/index.json", "demo-curupira.golden.json"},
	} {
		r := e.get(tt.path)
		if tt.path == "/index.json" {
			if probs := index.CheckKandev(r.Body); len(probs) > 0 {
				t.Errorf("host-side checks on the demo index: %v", probs)
			}
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, normalize(r.Body), "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		golden := filepath.Join("testdata", tt.golden)
		if *update {
			if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./server -run Golden -update)", err)
		}
		if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
			t.Errorf("%s differs from %s (-want +got):\n%s", tt.path, golden, diff)
		}
	}
}

func TestIconsFromInsideThePackage(t *testing.T) {
	e := newDemoEnv(t)
	var doc struct {
		Plugins []struct {
			ID      string  `json:"id"`
			IconURL *string `json:"icon_url"`
		} `json:"plugins"`
	}
	e.get("/index.json").json(t, &doc)
	types := map[string]string{".svg": "image/svg+xml", ".png": "image/png"}
	seen := 0
	for _, p := range doc.Plugins {
		if p.IconURL == nil {
			continue
		}
		seen++
		r := e.get(strings.TrimPrefix(*p.IconURL, e.srv.URL))
		ext := filepath.Ext(*p.IconURL)
		if r.Status != 200 || r.Header.Get("Content-Type") != types[ext] || r.Header.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.Contains(r.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s icon: %d %v", p.ID, r.Status, r.Header)
		}
		if ext == ".svg" && !strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("%s: SVG icon served without a sandboxing CSP: %v", p.ID, r.Header)
		}
	}
	if seen == 0 {
		t.Fatal("no demo plugin has an icon_url")
	}
}
