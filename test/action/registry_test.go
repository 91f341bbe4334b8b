package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// registryBin is the registry CLI built by TestMain, for the local registry and to make
// the package; the Action's steps build their own, as they do on a runner.
var registryBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "action-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	registryBin = filepath.Join(dir, "registry")
	build := exec.Command("go", "build", "-o", registryBin, "./cmd/registry")
	build.Dir, build.Stdout, build.Stderr = repoRoot, os.Stderr, os.Stderr
	code := 2
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the registry CLI:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// registry is a `registry serve` process on a free loopback port.
type registry struct {
	url, admin, data string
	cmd              *exec.Cmd
	log              *syncBuffer
}

const adminToken = "action-test-admin-token-0123456789"

// startRegistry runs `registry serve` with plugins.yaml text and trusted publishing
// against the issuer at issuerURL; it is stopped (SIGINT) when the test ends.
func startRegistry(t *testing.T, pluginsYAML, issuerURL string) *registry {
	t.Helper()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins.yaml")
	mustWrite(t, plugins, pluginsYAML)
	addr := freeAddr(t)
	r := &registry{url: "http://" + addr, admin: adminToken, data: filepath.Join(dir, "data"), log: &syncBuffer{}}
	r.cmd = exec.Command(registryBin, "serve", "--addr", addr, "--data", r.data,
		"--plugins", plugins, "--public-url", r.url, "--oidc-issuer", issuerURL,
		"--sync-interval", "0", "--scrub-interval", "0")
	r.cmd.Env = append(os.Environ(), "REGISTRY_ADMIN_TOKEN="+adminToken)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(os.Interrupt)
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("registry serve log:\n%s", r.log.String())
		}
	})
	r.waitReady(t)
	return r
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

// waitReady polls /healthz until the registry answers (the start opens SQLite and
// builds the index first).
func (r *registry) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(r.url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if r.cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("registry serve did not answer /healthz at %s:\n%s", r.url, r.log.String())
}

// getJSON decodes GET path (with the admin token) into v.
func (r *registry) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, r.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
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

var secretRE = regexp.MustCompile(`\bpyr_[A-Za-z0-9_-]+`)

// publisherToken creates a publisher token with `registry token create`, as an operator
// does beside the running registry.
func (r *registry) publisherToken(t *testing.T, publisher string) string {
	t.Helper()
	out, err := exec.Command(registryBin, "token", "create", "--publisher", publisher, "--data", r.data).CombinedOutput()
	if err != nil {
		t.Fatalf("registry token create: %v\n%s", err, out)
	}
	sec := secretRE.FindString(string(out))
	if sec == "" {
		t.Fatalf("registry token create printed no token:\n%s", out)
	}
	return sec
}
