package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveAuditedDemo serves the demo registry on a fresh data directory and returns its URL, the
// data directory and the verifier key `registry log key` prints.
func serveAuditedDemo(t *testing.T) (url, data, key string) {
	t.Helper()
	addr, data := freeAddr(t), t.TempDir()
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADDR": addr, "REGISTRY_DATA": data, "REGISTRY_PLUGINS": "../../plugins.yaml"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, c, []string{"--demo", "--public-url", "http://" + addr}) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	})
	url = "http://" + addr
	for i := 0; ; i++ {
		res, err := http.Get(url + "/index.json.sig")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 100 {
			t.Fatalf("server did not start: %v; stderr: %s", err, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	kc, out, kerr := testCLI(nil)
	if code := cmdLog(context.Background(), kc, []string{"key", "--data", data}); code != exitOK {
		t.Fatalf("log key: %d %s", code, kerr)
	}
	return url, data, strings.TrimSpace(out.String())
}

func logVerify(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c, out, errOut := testCLI(nil)
	code := cmdLog(context.Background(), c, append([]string{"verify"}, args...))
	return code, out.String(), errOut.String()
}

// TestLogVerifyLiveAndMirror: a live registry and its export verify, with --packages, on a
// first run (no state) and on later ones (consistency with the state), and the state keeps
// what the second needs.
func TestLogVerifyLiveAndMirror(t *testing.T) {
	url, data, key := serveAuditedDemo(t)
	state := filepath.Join(t.TempDir(), "audit.json")
	for run := 1; run <= 2; run++ {
		code, out, errOut := logVerify(t, "--registry", url, "--key", key, "--state", state, "--packages")
		if code != exitOK || !strings.Contains(out, "verified: log") {
			t.Fatalf("run %d: exit %d\nstdout: %s\nstderr: %s", run, code, out, errOut)
		}
		t.Logf("run %d: %s", run, out)
		if run == 1 && !strings.Contains(errOut, "packages: index.json 1/") {
			t.Errorf("no progress on stderr: %s", errOut)
		}
	}
	mirror := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(mirror)))
	defer srv.Close()
	c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": data, "REGISTRY_PLUGINS": "../../plugins.yaml"})
	if code := cmdExport(context.Background(), c, []string{"--out", mirror, "--public-url", srv.URL}); code != exitOK {
		t.Fatalf("export: %d %s", code, errOut)
	}
	for _, st := range []string{state, filepath.Join(t.TempDir(), "mirror.json")} {
		code, out, errOut := logVerify(t, "--registry", srv.URL, "--key", key, "--state", st, "--packages")
		if code != exitOK {
			t.Errorf("mirror with state %s: exit %d\nstdout: %s\nstderr: %s", st, code, out, errOut)
		}
	}
}

func TestLogVerifyUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "--registry URL and --key VERIFIERKEY are required"},
		{[]string{"--registry", "http://x", "--key", "not-a-key"}, "neither a verifier key"},
		{[]string{"--registry", "http://x", "--key", "a+b+c", "extra"}, "expected no argument"},
		{[]string{"--registry", "plugins.example.com", "--key", "a+b+c"}, `--registry "plugins.example.com"`},
	}
	for _, tt := range tests {
		code, _, errOut := logVerify(t, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("log verify %q: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
