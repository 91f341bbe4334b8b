package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const adminToken = "scale-admin-token"

// server is one `registry serve` process on a loopback port.
type server struct {
	url       string
	cmd       *exec.Cmd
	done      chan struct{}
	tail      *tailBuffer
	coldStart time.Duration // exec until /readyz answered 200
	ready     string        // the /readyz body at that moment
}

// startServer runs `bin serve` on the data directory and list, rate limits off, and waits
// up to wait for /readyz to answer 200.
func startServer(ctx context.Context, bin, data, list string, wait time.Duration) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := &server{url: "http://" + addr, done: make(chan struct{}), tail: &tailBuffer{max: 64 << 10}}
	s.cmd = exec.Command(bin, "serve", "--data", data, "--plugins", list, "--addr", addr, "--public-url", s.url,
		"--rate-auth", "0", "--rate-publish", "0", "--rate-search", "0", "--log-format", "json",
		"--sync-interval", "0", "--scrub-interval", "0", "--oidc-issuer", "off")
	s.cmd.Env = append(os.Environ(), "REGISTRY_ADMIN_TOKEN="+adminToken)
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, s.tail // its request log: the last 64 KiB are kept for errors
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, wait); err != nil {
		s.stop()
		return nil, err
	}
	s.coldStart = time.Since(start)
	return s, nil
}

func (s *server) waitReady(ctx context.Context, wait time.Duration) error {
	c := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(wait)
	last := ""
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-s.done:
			return fmt.Errorf("registry exited before ready: %s", s.logTail())
		case <-time.After(10 * time.Millisecond):
		}
		res, err := c.Get(s.url + "/readyz")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		last = fmt.Sprintf("%d %s", res.StatusCode, strings.TrimSpace(string(b)))
		if res.StatusCode == http.StatusOK {
			s.ready = string(b)
			return nil
		}
	}
	return fmt.Errorf("registry not ready within %s: last /readyz %.400s; log: %s", wait, last, s.logTail())
}

// readyEntries is the "index.entries" and "status" of the /readyz body at start.
func (s *server) readyEntries() (string, int) {
	var r struct {
		Status string `json:"status"`
		Index  struct {
			Entries int `json:"entries"`
		} `json:"index"`
	}
	_ = json.Unmarshal([]byte(s.ready), &r)
	return r.Status, r.Index.Entries
}

// logTail is the last lines of the server's stderr, for an error message.
func (s *server) logTail() string {
	lines := strings.Split(strings.TrimSpace(s.tail.String()), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// stop sends SIGTERM and waits up to 20 s before SIGKILL.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// procStatus reads one kB field (VmRSS, VmHWM) of the server's /proc status, in bytes.
func (s *server) procStatus(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// dirSize is the total size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
