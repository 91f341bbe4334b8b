package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/store"
)

// syncBuffer is a bytes.Buffer safe for a server goroutine and a test to share.
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

func testCLI(env map[string]string) (*cli, *syncBuffer, *syncBuffer) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	return &cli{stdout: out, stderr: errOut, getenv: func(k string) string { return env[k] }}, out, errOut
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(list, []byte("plugins: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("plugins:\n  - id: BAD ID\n    repo: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing plugins.yaml", []string{"--plugins", filepath.Join(dir, "absent.yaml")}, exitInvalid, "--plugins"},
		{"invalid plugins.yaml", []string{"--plugins", broken}, exitInvalid, broken + ": 2 errors; run `registry lint " + broken + "` for details:"},
		{"port in use", []string{"--plugins", list, "--addr", busy.Addr().String()}, exitInvalid, "--addr " + busy.Addr().String() + ": the port is in use by another process"},
		// The list is checked beside the start's other steps: its refusal is still the error.
		{"invalid plugins.yaml, port in use", []string{"--plugins", broken, "--addr", busy.Addr().String()}, exitInvalid, broken + ": 2 errors"},
		{"address of another machine", []string{"--plugins", list, "--addr", "192.0.2.1:8080"}, exitInvalid, "--addr 192.0.2.1:8080: cannot listen on this address"},
		{"unwritable data dir", []string{"--plugins", list, "--data", filepath.Join(notADir, "data")}, exitUsage, "--data"},
		{"bad public url", []string{"--plugins", list, "--public-url", "ftp://x"}, exitUsage, "--public-url"},
		{"bad addr", []string{"--plugins", list, "--addr", "nonsense"}, exitUsage, "--addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, errOut := testCLI(nil)
			args := append([]string{"--data", filepath.Join(t.TempDir(), "data")}, tt.args...)
			if code := cmdServe(context.Background(), c, args); code != tt.code {
				t.Fatalf("exit = %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr does not name %q:\n%s", tt.want, errOut)
			}
		})
	}
}

func TestServeDemoIsPopulated(t *testing.T) {
	addr := freeAddr(t)
	data := t.TempDir()
	c, out, errOut := testCLI(map[string]string{"REGISTRY_ADDR": addr, "REGISTRY_DATA": data, "REGISTRY_PLUGINS": "../../plugins.yaml"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, c, []string{"--demo", "--log-format", "json"}) }()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	}()
	var res *http.Response
	var err error
	for i := 0; i < 100; i++ {
		if res, err = http.Get("http://" + addr + "/index.json"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("server did not start: %v; stderr: %s", err, errOut)
	}
	defer res.Body.Close()
	var doc struct {
		Plugins []struct{ ID string } `json:"plugins"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Plugins) < 4 {
		t.Errorf("demo index has %d plugins, want the 4 examples; stdout: %s stderr: %s", len(doc.Plugins), out, errOut)
	}
	if !strings.Contains(out.String(), "Admin token") {
		t.Errorf("first start did not print the admin token once: %s", out)
	}
	cres, err := http.Get("http://" + addr + "/curupira/index.json")
	if err != nil {
		t.Fatal(err)
	}
	defer cres.Body.Close()
	var cdoc struct {
		Extensions []struct{ Name string } `json:"extensions"`
	}
	if err := json.NewDecoder(cres.Body).Decode(&cdoc); err != nil || len(cdoc.Extensions) != 1 {
		t.Errorf("curupira index: %+v %v", cdoc, err)
	}
}

// TestServeRefusesBlobsWithoutTheirDatabase: a data directory whose registry.db is gone
// but whose blobs are there is refused before anything is created or removed; a new
// database would record none of the blobs, and the start-up sweep would remove them all.
func TestServeRefusesBlobsWithoutTheirDatabase(t *testing.T) {
	data := mustDemoStore(t)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(data, store.DBFile+suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	blobs, err := store.OpenBlobs(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := blobs.List()
	if err != nil || len(before) == 0 {
		t.Fatalf("blobs before: %v, %v", before, err)
	}
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret-of-at-least-32-characters"})
	args := []string{"--data", data, "--plugins", "../../plugins.yaml", "--addr", freeAddr(t), "--oidc-issuer", "off", "--sync-interval", "0"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a start not refused ends here
	defer cancel()
	if code := cmdServe(ctx, c, args); code != exitInvalid {
		t.Fatalf("exit = %d, want %d; stderr: %s", code, exitInvalid, errOut)
	}
	want := fmt.Sprintf("no registry database at %s, but %s holds %d blobs", filepath.Join(data, store.DBFile), filepath.Join(data, "blobs"), len(before))
	if !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "registry restore --data "+data) {
		t.Errorf("stderr does not say %q and the fix:\n%s", want, errOut)
	}
	after, err := blobs.List()
	if err != nil || len(after) != len(before) {
		t.Errorf("blobs after the refused start: %d (%v), want the %d there before", len(after), err, len(before))
	}
	if _, err := os.Stat(filepath.Join(data, store.DBFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused start made a database: %v", err)
	}
}

// TestServeOnPortZero: with --addr HOST:0 and no --public-url, the public URL, the
// documents' URLs and the transparency log's name carry the port the system chose, not 0.
func TestServeOnPortZero(t *testing.T) {
	data := t.TempDir()
	c, out, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret-of-at-least-32-characters"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		done <- cmdServe(ctx, c, []string{"--addr", "127.0.0.1:0", "--data", data, "--plugins", "../../plugins.yaml", "--sync-interval", "0", "--oidc-issuer", "off"})
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit %d; stderr:\n%s", code, errOut)
		}
	}()
	awaitServing(t, out, errOut, done)
	var public, listening string
	if _, err := fmt.Sscanf(out.String()[strings.Index(out.String(), "registry serving"):], "registry serving %s (listening on %s", &public, &listening); err != nil {
		t.Fatalf("serving line: %v\n%s", err, out)
	}
	listening = strings.TrimSuffix(listening, ",")
	if public != "http://"+listening || strings.HasSuffix(public, ":0") {
		t.Fatalf("public URL %s while listening on %s", public, listening)
	}
	res, err := http.Get(public + "/index.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct{ Source struct{ URL string } }
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil || doc.Source.URL != public+"/index.json" {
		t.Errorf("index.json source url %q (%v), want %s/index.json", doc.Source.URL, err, public)
	}
	key, err := os.ReadFile(filepath.Join(data, "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	if name := strings.TrimPrefix(public, "http://") + "/log"; !strings.Contains(string(key), name) {
		t.Errorf("log key %q does not name %s", key, name)
	}
}

// awaitServing waits until serve, running with out and errOut and sending its exit code to
// done, has printed its "registry serving" line. When serve exits first, its code is put
// back in done for the test's own wait.
func awaitServing(t *testing.T, out, errOut *syncBuffer, done chan int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(out.String(), "registry serving") {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited with %d; stderr:\n%s", code, errOut)
		case <-deadline:
			t.Fatalf("not serving after 30 s; stderr:\n%s", errOut)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
