package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
