package replicas

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// readyTimeout bounds a replica's start: migrations, the first index build, on 2 shared
// cores.
const readyTimeout = 90 * time.Second

// Replica is one running `registry serve`.
type Replica struct {
	Index int
	URL   string // http://127.0.0.1:PORT, this replica's own address
	Data  string // its local data directory

	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
}

// startReplica runs replica i on a free port and waits for /readyz 200; a port taken
// between choosing and binding it is chosen again.
func (c *Cluster) startReplica(i int) (*Replica, error) {
	var last error
	for range 3 {
		r, err := c.tryStart(i)
		if err == nil {
			return r, nil
		}
		last = err
		if !bytes.Contains([]byte(err.Error()), []byte("address already in use")) {
			break
		}
	}
	return nil, last
}

func (c *Cluster) tryStart(i int) (*Replica, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	r := &Replica{Index: i, URL: "http://" + addr, Data: c.dataDir(i), stderr: &lockedBuffer{}, done: make(chan struct{})}
	if err := os.MkdirAll(r.Data, 0o750); err != nil {
		return nil, fmt.Errorf("replicas: %w", err)
	}
	r.cmd = exec.Command(c.bin, c.serveArgs(i, addr)...)
	r.cmd.Env = c.Env()
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, r.stderr
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("replicas: start replica %d: %w", i, err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	if err := r.waitReady(); err != nil {
		_ = r.Kill()
		return nil, fmt.Errorf("replicas: replica %d: %w\nstderr:\n%s%s", i, err, r.Stderr(), missingFlag(r.Stderr()))
	}
	return r, nil
}

// waitReady polls /readyz until it answers 200, the process exits or readyTimeout passes.
func (r *Replica) waitReady() error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			return fmt.Errorf("registry serve exited before it was ready (%v)", r.cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		res, err := client.Get(r.URL + "/readyz")
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("no 200 from %s/readyz in %s", r.URL, readyTimeout)
}

// Kill sends SIGKILL and waits until the process is gone.
func (r *Replica) Kill() error {
	if r.Exited() {
		return nil
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("replicas: kill replica %d: %w", r.Index, err)
	}
	<-r.done
	return nil
}

// Stop sends SIGTERM and waits for a graceful exit, at most 10 s, then kills.
func (r *Replica) stop() error {
	if r.Exited() {
		return nil
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("replicas: stop replica %d: %w", r.Index, err)
	}
	select {
	case <-r.done:
		return nil
	case <-time.After(10 * time.Second):
		return r.Kill()
	}
}

// Stop stops the replica gracefully (SIGTERM).
func (r *Replica) Stop() error { return r.stop() }

// Exited says whether the process has ended (killed, stopped or crashed).
func (r *Replica) Exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Pid is the process id, to tell a replica from a restarted one.
func (r *Replica) Pid() int { return r.cmd.Process.Pid }

// Stderr is what the replica wrote to stderr so far.
func (r *Replica) Stderr() string { return r.stderr.String() }

// lockedBuffer collects a process's output written from its own goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freeAddr is a loopback address free when asked.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("replicas: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
