package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/server"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

const adminToken = "test-admin-token"

const testList = `plugins:
  - id: acme-hello
    repo: acme/kandev-plugin-hello
    categories: [tools]
    featured: true
    owners: [acme]
  - id: acme-other
    repo: acme/kandev-plugin-other
    owners: [someone-else]
`

// env is a running registry on a temporary data directory.
type env struct {
	t    *testing.T
	dir  string
	st   *store.Store
	svc  *ingest.Service
	srv  *httptest.Server
	list string
}

// newEnv starts a registry on dir (a fresh temporary one when "").
func newEnv(t *testing.T, dir string) *env {
	t.Helper()
	return startEnv(t, dir, nil, nil)
}

// startEnv starts a registry on dir (a fresh temporary one when ""), writing testList as its
// plugins.yaml unless dir has one, with its pipeline configured by adjust (when not nil) and
// logging into log (discarded when nil).
func startEnv(t *testing.T, dir string, adjust func(*ingest.Config), log *slog.Logger) *env {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx := context.Background()
	listPath := filepath.Join(dir, "plugins.yaml")
	if _, err := os.Stat(listPath); err != nil {
		if err := os.WriteFile(listPath, []byte(testList), 0o644); err != nil {
			t.Fatal(err)
		}
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
	e := &env{t: t, dir: dir, st: st, list: listPath}
	e.srv = httptest.NewUnstartedServer(nil)
	publicURL := "http://" + e.srv.Listener.Addr().String()
	cfg := ingest.Config{PublicURL: publicURL, Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}
	if adjust != nil {
		adjust(&cfg)
	}
	e.svc = ingest.New(st, l, cfg, log)
	t.Cleanup(e.svc.Close)
	if err := e.svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = server.New(server.Config{PublicURL: publicURL, AdminSecret: adminToken, MaxBodyBytes: 2 << 20}, e.svc, e.st, log)
	e.srv.Start()
	t.Cleanup(e.close)
	return e
}

func (e *env) close() {
	if e.srv != nil {
		e.srv.Close()
		e.svc.Close() // a stopped process: the last good documents are written
		_ = e.st.Close()
		e.srv = nil
	}
}

// pkg builds a valid managed plugin package.
func pkg(t *testing.T, id, version, description string) []byte {
	t.Helper()
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: " + description +
		"\nauthor: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\necho hello\n"), Mode: 0o755},
		"README.md":                 {Data: []byte("# Hello\n\nSays hello.\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

func (e *env) do(req *http.Request) response {
	e.t.Helper()
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: body}
}

func (e *env) get(path string, header ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(req)
}

func (e *env) post(path, token string, body any) response {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.do(req)
}

func (e *env) publish(token, fileName string, data []byte) response {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("package", fileName)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/packages", &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.do(req)
}

func (e *env) routes() []*echo.Route {
	return e.srv.Config.Handler.(*server.Server).Routes()
}
