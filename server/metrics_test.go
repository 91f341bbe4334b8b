package server_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newEnvWith starts a registry like newEnv, with cfg (PublicURL and AdminSecret filled in),
// its Metrics also observing the pipeline, logs into log, and the index built only when
// rebuild is set.
func newEnvWith(t *testing.T, cfg server.Config, log *slog.Logger, rebuild bool) *env {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	listPath := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(listPath, []byte(testList), 0o644); err != nil {
		t.Fatal(err)
	}
	l, probs, err := index.LoadList(listPath)
	if err != nil || probs.HasErrors() {
		t.Fatalf("list: %v %v", err, probs)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Metrics == nil {
		cfg.Metrics = server.NewMetrics()
	}
	e := &env{t: t, dir: dir, st: st, list: listPath}
	e.srv = httptest.NewUnstartedServer(nil)
	cfg.PublicURL = "http://" + e.srv.Listener.Addr().String()
	cfg.AdminSecret = adminToken
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 2 << 20
	}
	e.svc = ingest.New(st, l, ingest.Config{PublicURL: cfg.PublicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits(),
		Observer: cfg.Metrics}, log)
	t.Cleanup(e.svc.Close) // its background writes end before the test data is removed
	if rebuild {
		if err := e.svc.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.Config.Handler = server.New(cfg, e.svc, e.st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

// metricLines returns the sample lines of /metrics that start with one of the prefixes.
func (e *env) metricLines(prefixes ...string) []string {
	e.t.Helper()
	r := e.get("/metrics")
	if r.Status != http.StatusOK {
		e.t.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		for _, p := range prefixes {
			if strings.HasPrefix(sc.Text(), p) {
				out = append(out, sc.Text())
			}
		}
	}
	return out
}

func TestMetricsCountRequestsPublishesIndexAndDownloads(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, true)
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusOK {
		t.Fatalf("republish: %d %s", r.Status, r.Body)
	}
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Other bytes")); r.Status != http.StatusConflict {
		t.Fatalf("conflicting publish: %d %s", r.Status, r.Body)
	}
	if r := e.publish(adminToken, "nobody-else-1.0.0.tar.gz", pkg(t, "nobody-else", "1.0.0", "Unlisted")); r.Status != http.StatusForbidden {
		t.Fatalf("unlisted publish: %d %s", r.Status, r.Body)
	}
	if r := e.publish(adminToken, "acme-hello-v1.x.tar.gz", pkg(t, "acme-hello", "v1.x!", "Bad version")); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid publish: %d %s", r.Status, r.Body)
	}
	var refusal apiErr
	e.publish(adminToken, "acme-hello-v1.x.tar.gz", pkg(t, "acme-hello", "v1.x!", "Bad version")).json(t, &refusal)
	for range 2 {
		if r := e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz"); r.Status != http.StatusOK {
			t.Fatalf("download: %d", r.Status)
		}
	}
	e.get("/packages/acme-hello/acme-hello-1.0.0.tar.gz", "Range", "bytes=0-9") // a resumed download, not counted
	e.get("/index.json")
	e.get("/no/such/page/../x")
	e.get("/plugins/acme-hello%3Cscript%3E")

	got := e.metricLines("registry_http_requests_total{", "registry_publishes_total{", "registry_publish_refusals_by_rule_total{",
		"registry_downloads_total{", "registry_index_entries ", "registry_index_builds_total{")
	want := []string{
		`registry_downloads_total{kind="plugin"} 2`,
		`registry_http_requests_total{method="GET",route="/*",status="404"} 1`,
		`registry_http_requests_total{method="GET",route="/index.json",status="200"} 1`,
		`registry_http_requests_total{method="GET",route="/packages/:id/:file",status="200"} 2`,
		`registry_http_requests_total{method="GET",route="/packages/:id/:file",status="206"} 1`,
		`registry_http_requests_total{method="GET",route="/plugins/:id",status="404"} 1`,
		`registry_http_requests_total{method="POST",route="/api/v1/packages",status="200"} 1`,
		`registry_http_requests_total{method="POST",route="/api/v1/packages",status="201"} 1`,
		`registry_http_requests_total{method="POST",route="/api/v1/packages",status="403"} 1`,
		`registry_http_requests_total{method="POST",route="/api/v1/packages",status="409"} 1`,
		`registry_http_requests_total{method="POST",route="/api/v1/packages",status="422"} 2`,
		`registry_index_builds_total{result="ok"} 2`,
		`registry_index_entries 1`,
		`registry_publish_refusals_by_rule_total{outcome="conflict",rule="publish.version.exists"} 1`,
		`registry_publish_refusals_by_rule_total{outcome="forbidden",rule="publish.unlisted"} 1`,
	}
	for _, rule := range rulesOf(refusal) {
		want = append(want, `registry_publish_refusals_by_rule_total{outcome="invalid",rule="`+rule+`"} 2`)
	}
	want = append(want,
		`registry_publishes_total{outcome="conflict"} 1`,
		`registry_publishes_total{outcome="created"} 1`,
		`registry_publishes_total{outcome="forbidden"} 1`,
		`registry_publishes_total{outcome="invalid"} 2`,
		`registry_publishes_total{outcome="repeated"} 1`,
	)
	if len(rulesOf(refusal)) == 0 {
		t.Fatalf("the invalid package was refused without rule ids: %+v", refusal)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	for _, name := range []string{"registry_http_request_duration_seconds_bucket{route=\"/index.json\"", "registry_index_build_duration_seconds_count 2",
		"registry_index_size_bytes ", "go_goroutines ", "process_"} {
		if len(e.metricLines(name)) == 0 {
			t.Errorf("/metrics has no %s sample", name)
		}
	}
}

func rulesOf(a apiErr) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range a.Problems {
		if p.Severity == "error" && !seen[p.Rule] {
			seen[p.Rule] = true
			out = append(out, p.Rule)
		}
	}
	return out
}

func TestRequestIDEchoedAndLogged(t *testing.T) {
	logs := &syncBuffer{}
	e := newEnvWith(t, server.Config{}, slog.New(slog.NewJSONHandler(logs, nil)), true)
	tests := []struct {
		name, sent, path string
	}{
		{"client id on a page", "req-abc-123", "/"},
		{"client id on an API error", "req-def-456", "/api/v1/plugins/nope"},
		{"generated id", "", "/index.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.sent != "" {
				hdr = []string{"X-Request-ID", tt.sent}
			}
			r := e.get(tt.path, hdr...)
			id := r.Header.Get("X-Request-ID")
			if id == "" || (tt.sent != "" && id != tt.sent) {
				t.Fatalf("X-Request-ID = %q, sent %q", id, tt.sent)
			}
			if !strings.Contains(logs.String(), `"request_id":"`+id+`"`) {
				t.Errorf("no log line carries request_id %q:\n%s", id, logs.String())
			}
		})
	}
}

func TestReadyzBeforeAndAfterIndexBuild(t *testing.T) {
	e := newEnvWith(t, server.Config{}, nil, false)
	type ready struct {
		Ready  bool
		Checks map[string]string
	}
	var before ready
	r := e.get("/readyz")
	r.json(t, &before)
	if r.Status != http.StatusServiceUnavailable || before.Ready || before.Checks["index"] != "not built" {
		t.Fatalf("before the first build: %d %+v", r.Status, before)
	}
	if r := e.get("/index.json"); r.Status != http.StatusServiceUnavailable {
		t.Errorf("index.json before the first build: %d", r.Status)
	}
	if err := e.svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	var after ready
	r = e.get("/readyz")
	r.json(t, &after)
	want := ready{Ready: true, Checks: map[string]string{"blobs": "ok", "database": "ok", "index": "ok", "plugins_yaml": "ok"}}
	if diff := cmp.Diff(want, after); r.Status != http.StatusOK || diff != "" {
		t.Errorf("after the build: %d (-want +got):\n%s", r.Status, diff)
	}
}
