package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/pluginyard/registry/translog"
)

// TestLogKeyVerifiesServedCheckpoint: the key `registry log key` prints verifies the
// checkpoint `registry serve` signed after its demo publishes committed.
func TestLogKeyVerifiesServedCheckpoint(t *testing.T) {
	addr := freeAddr(t)
	data := t.TempDir()
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADDR": addr, "REGISTRY_DATA": data, "REGISTRY_PLUGINS": "../../plugins.yaml"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, c, []string{"--demo"}) }()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	}()
	var body []byte
	for i := 0; i < 100; i++ {
		res, err := http.Get("http://" + addr + "/log/checkpoint")
		if err == nil {
			body, _ = io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	kc, out, kerr := testCLI(nil)
	if code := cmdLog(context.Background(), kc, []string{"key", "--data", data}); code != exitOK {
		t.Fatalf("log key exit %d: %s", code, kerr)
	}
	v, err := note.NewVerifier(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("printed key %q: %v", out, err)
	}
	cp, err := translog.OpenCheckpoint(body, v)
	if err != nil {
		t.Fatalf("served checkpoint %q does not verify with the printed key: %v", body, err)
	}
	if cp.Size < 4 || cp.Origin != translog.KeyName("http://"+addr) {
		t.Errorf("checkpoint size %d origin %q; want the demo's publishes, origin %q", cp.Size, cp.Origin, translog.KeyName("http://"+addr))
	}
	fi, err := os.Stat(filepath.Join(data, translog.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v; want mode 0600", fi, err)
	}
	if strings.Contains(out.String(), "PRIVATE") {
		t.Error("log key printed the private key")
	}
}

func TestLogKeyWithoutKey(t *testing.T) {
	dir := t.TempDir()
	c, out, errOut := testCLI(nil)
	if code := cmdLog(context.Background(), c, []string{"key", "--data", dir}); code != exitInvalid {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitInvalid, errOut)
	}
	if !strings.Contains(errOut.String(), "start `registry serve --data "+dir+"` once, or pass --public-url") || out.String() != "" {
		t.Errorf("stderr %q stdout %q", errOut, out)
	}
	c, out, errOut = testCLI(map[string]string{"REGISTRY_PUBLIC_URL": "https://plugins.example.com"})
	if code := cmdLog(context.Background(), c, []string{"key", "--data", dir}); code != exitOK {
		t.Fatalf("with a public URL: exit %d: %s", code, errOut)
	}
	k, err := translog.LoadKey(dir, "", "unused/log")
	if err != nil || strings.TrimSpace(out.String()) != k.VerifierKey || !strings.HasPrefix(k.VerifierKey, "plugins.example.com/log+") {
		t.Errorf("printed %q; the stored key is %v, %v", out, k, err)
	}
}

func TestLogKeyGivenAndServeRefusesABadOne(t *testing.T) {
	skey, vkey, err := note.GenerateKey(nil, "given.example/log")
	if err != nil {
		t.Fatal(err)
	}
	c, out, errOut := testCLI(map[string]string{"REGISTRY_LOG_KEY": skey})
	if code := cmdLog(context.Background(), c, []string{"key", "--data", t.TempDir()}); code != exitOK || strings.TrimSpace(out.String()) != vkey {
		t.Errorf("exit %d, printed %q, want %q; stderr %s", code, out, vkey, errOut)
	}
	list := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(list, []byte("plugins: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, errOut = testCLI(nil)
	args := []string{"--data", t.TempDir(), "--plugins", list, "--addr", freeAddr(t), "--log-key", filepath.Join(t.TempDir(), "absent.key")}
	if code := cmdServe(context.Background(), c, args); code == exitOK || !strings.Contains(errOut.String(), "--log-key") {
		t.Errorf("serve with a missing --log-key file: exit %d, stderr %s", code, errOut)
	}
}

func TestLogUnknownSubcommand(t *testing.T) {
	c, _, errOut := testCLI(nil)
	if code := cmdLog(context.Background(), c, []string{"frobnicate"}); code != exitUsage || !strings.Contains(errOut.String(), `unknown subcommand "frobnicate"`) {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}
