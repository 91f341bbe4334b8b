package main

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

// nginxConf is a minimal configuration: static files from root on a loopback port,
// keep-alive, no logging, every path under the temporary prefix.
const nginxConf = `daemon off;
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
        location / { }
    }
}
`

type nginx struct {
	url, version string
	cmd          *exec.Cmd
	done         chan struct{}
}

// startNginx serves index under /index.json from disk with the nginx binary bin.
func startNginx(ctx context.Context, bin, dir string, index []byte) (*nginx, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("nginx not found (run.sh installs it with apt-get): %w", err)
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
	if err := os.WriteFile(filepath.Join(prefix, "www", "index.json"), index, 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, prefix, addr), 0o644); err != nil {
		return nil, err
	}
	out, _ := exec.Command(path, "-v").CombinedOutput()
	ng := &nginx{url: "http://" + addr, version: strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: ")), done: make(chan struct{})}
	ng.cmd = exec.Command(path, "-p", prefix, "-e", filepath.Join(prefix, "error.log"), "-c", conf)
	ng.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its workers go with it
	if err := ng.cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	go func() { _ = ng.cmd.Wait(); close(ng.done) }()
	if err := ng.waitReady(ctx, prefix); err != nil {
		ng.stop()
		return nil, err
	}
	return ng, nil
}

func (ng *nginx) waitReady(ctx context.Context, prefix string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ng.done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			return fmt.Errorf("nginx exited: %s", log)
		case <-time.After(20 * time.Millisecond):
		}
		if res, err := http.Get(ng.url + "/index.json"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("nginx did not answer on %s", ng.url)
}

// stop ends nginx (SIGQUIT: graceful) and its workers, waiting at most 5 s before SIGKILL.
func (ng *nginx) stop() {
	_ = syscall.Kill(-ng.cmd.Process.Pid, syscall.SIGQUIT)
	select {
	case <-ng.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-ng.cmd.Process.Pid, syscall.SIGKILL)
		<-ng.done
	}
}
