package docs_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/test/internal/oidctest"
)

// registryBin is the CLI the documents' commands run, built by TestMain from ../../cmd/registry.
var registryBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "docs-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	registryBin = filepath.Join(dir, "registry")
	build := exec.Command("go", "build", "-o", registryBin, "./cmd/registry")
	build.Dir, build.Stdout, build.Stderr = filepath.Join("..", ".."), os.Stderr, os.Stderr
	code := 2
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the registry CLI:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// The list the documents' registry runs with: the ids and repositories the samples name.
const sessionPlugins = `plugins:
  - id: acme-stats
    repo: acme/kandev-stats
    kind: plugin
    categories: [analytics]
    owners: [acme]
  - id: my-plugin
    repo: acme/my-plugin
    kind: plugin
    owners: [acme]
`

const sessionAdmin = "docs-test-admin-token-0123456789abcdef"

// session is the world the documents' commands run in: a work directory (the reader's
// current directory), a running registry on a data directory, a local OIDC issuer it
// trusts, and a GitHub API that has no releases.
type session struct {
	work, data, plugins string
	url                 string
	issuer              *oidctest.Issuer
	github              *httptest.Server
	serve               *exec.Cmd
	log                 *syncBuffer
	env                 map[string]string // set for every command
	ids                 []string          // token ids created, replaced by <id>
	shownAs             map[string]string // more of this session's values, as the documents show them
	logKey              string            // the verifier key `registry log key` printed
}

func newSession(t *testing.T) *session {
	t.Helper()
	root := t.TempDir()
	s := &session{work: filepath.Join(root, "work"), data: filepath.Join(root, "data"), log: &syncBuffer{}, issuer: oidctest.New(t),
		shownAs: map[string]string{}}
	s.plugins = filepath.Join(s.work, "plugins.yaml")
	mustWrite(t, s.plugins, sessionPlugins)
	s.github = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message": "Not Found"}`, http.StatusNotFound)
	}))
	t.Cleanup(s.github.Close)
	addr := freeAddr(t)
	s.url = "http://" + addr
	s.env = map[string]string{"REGISTRY_DATA": s.data, "REGISTRY_PLUGINS": s.plugins, "REGISTRY_PUBLIC_URL": s.url,
		"REGISTRY_OIDC_ISSUER": s.issuer.URL, "REGISTRY_GITHUB_API": s.github.URL, "REGISTRY_ADMIN_TOKEN": sessionAdmin,
		"REGISTRY_SYNC_INTERVAL": "0", "REGISTRY_SCRUB_INTERVAL": "0", "REGISTRY_SYNC_DOWNLOAD_HOSTS": "127.0.0.1"}
	s.serve = s.command(context.Background(), "serve", "--addr", addr)
	s.serve.Stdout, s.serve.Stderr = s.log, s.log
	if err := s.serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.serve.Process.Signal(os.Interrupt)
		_ = s.serve.Wait()
		if t.Failed() {
			t.Logf("registry serve log:\n%s", s.log.String())
		}
	})
	waitHealthy(t, s.url, s.serve)
	return s
}

// command is the registry CLI with args, run in the work directory with the session's env.
func (s *session) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, registryBin, args...)
	cmd.Dir = s.work
	cmd.Env = os.Environ()
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// must runs a setup command that is not itself shown in the documents.
func (s *session) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := s.command(context.Background(), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("registry %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHealthy(t *testing.T, url string, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && cmd.ProcessState == nil {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("registry serve did not answer %s/healthz", url)
}

// setVersion rewrites the version line of the manifest in dir.
func setVersion(t *testing.T, dir, version string) {
	t.Helper()
	path := filepath.Join(dir, "manifest.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	found := false
	for i, l := range lines {
		if strings.HasPrefix(l, "version:") {
			lines[i], found = "version: \""+version+"\"", true
		}
	}
	if !found {
		t.Fatalf("%s has no version: line", path)
	}
	mustWrite(t, path, strings.Join(lines, "\n"))
}

// breakPackage rewrites the package at src into dst with two faults the refusal sample
// shows: server/plugin-linux-amd64 changed after checksums.txt was written, and
// server/plugin-linux-arm64 (named by runtime.executables) removed with its checksum line.
func breakPackage(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		switch h.Name {
		case "server/plugin-linux-arm64":
			continue
		case "server/plugin-linux-amd64":
			data = append(data, []byte("# edited after pack\n")...)
		case "checksums.txt":
			var kept []string
			for _, l := range strings.SplitAfter(string(data), "\n") {
				if !strings.HasSuffix(strings.TrimSpace(l), "server/plugin-linux-arm64") {
					kept = append(kept, l)
				}
			}
			data = []byte(strings.Join(kept, ""))
		}
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// postPackage uploads a package to POST /api/v1/packages and returns the status and body.
func (s *session) postPackage(t *testing.T, token, path string) (int, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, err := mw.CreateFormFile("package", filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(data)
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, s.url+"/api/v1/packages", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// exchangeOIDC trades an identity token of repo for an upload token, as a release job
// does; the first exchange pins the repository's ids (what `registry pin show` shows).
func (s *session) exchangeOIDC(t *testing.T, repo string) {
	t.Helper()
	raw, err := s.issuer.Sign(s.issuer.Claims(s.url, oidctest.Job{Repository: repo, RepositoryID: "4242", OwnerID: "77",
		WorkflowRef: repo + "/.github/workflows/release.yml@refs/tags/v1.2.0", Ref: "refs/tags/v1.2.0", RefType: "tag",
		SHA: "4f0c1e9d2b7a8c3e5f6a7b8c9d0e1f2a3b4c5d6e", EventName: "push", RunID: "1001"}))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"token": raw})
	resp, err := http.Post(s.url+"/api/v1/auth/oidc", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("OIDC exchange for %s: HTTP %d: %s", repo, resp.StatusCode, b)
	}
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer collects a process's output written from its own goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
