// Package nginx starts Debian's nginx on a loopback port with a minimal configuration, to
// serve fixed files as the baseline of the registry's benchmarks (bench/load, bench/scale).
// Every path is under a temporary prefix; Stop ends nginx and its workers.
package nginx

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// conf is a minimal configuration: static files from root on a loopback port, keep-alive,
// no logging, every path under the temporary prefix; %[3]s is the location's directives.
const conf = `daemon off;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    default_type application/json;
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    server {
        listen %[2]s;
        root %[1]s/www;
        location / { %[3]s}
    }
}
`

// Server is a running nginx.
type Server struct {
	URL, Version string
	cmd          *exec.Cmd
	done         chan struct{}
}

// Options say what nginx serves.
type Options struct {
	// Files are written under the document root (name → bytes), e.g. "index.json" and,
	// for gzip_static, "index.json.gz".
	Files map[string][]byte
	// GzipStatic turns on gzip_static: a request with Accept-Encoding: gzip for NAME gets
	// NAME.gz as it is on disk, never compressed on the fly.
	GzipStatic bool
	// Probe is the path polled until nginx answers 200.
	Probe string
}

// Start serves o.Files with the nginx binary bin, under dir/nginx.
func Start(ctx context.Context, bin, dir string, o Options) (*Server, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("nginx not found (bench/load/run.sh installs it with apt-get): %w", err)
	}
	// nginx started as root serves as an unprivileged worker user: let it traverse dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	prefix := filepath.Join(dir, "nginx")
	for _, d := range []string{"www", "tmp"} {
		if err := os.MkdirAll(filepath.Join(prefix, d), 0o755); err != nil {
			return nil, err
		}
	}
	for name, data := range o.Files {
		if err := os.WriteFile(filepath.Join(prefix, "www", name), data, 0o644); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	location := ""
	if o.GzipStatic {
		location = "gzip_static on; "
	}
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, fmt.Appendf(nil, conf, prefix, addr, location), 0o644); err != nil {
		return nil, err
	}
	out, _ := exec.Command(path, "-v").CombinedOutput()
	s := &Server{URL: "http://" + addr, Version: strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: ")), done: make(chan struct{})}
	s.cmd = exec.Command(path, "-p", prefix, "-e", filepath.Join(prefix, "error.log"), "-c", confPath)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its workers go with it
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, prefix, o.Probe); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, prefix, probe string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			return fmt.Errorf("nginx exited: %s", log)
		case <-time.After(20 * time.Millisecond):
		}
		if res, err := http.Get(s.URL + probe); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("nginx did not answer on %s", s.URL)
}

// Stop ends nginx (SIGQUIT: graceful) and its workers, waiting at most 5 s before SIGKILL.
func (s *Server) Stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}
