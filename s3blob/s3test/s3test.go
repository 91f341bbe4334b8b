// Package s3test starts a throwaway S3 server for tests: versitygw (pinned at v1.8.0,
// installed by .ci/run) with its posix backend in a temporary folder, on a free loopback
// port. Without the binary the test is skipped; with CI=true it fails instead.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/pluginyard/registry/s3blob"
)

// Install is how to get the server binary the tests need.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// readyTimeout bounds how long a started server may take to answer.
const readyTimeout = 30 * time.Second

// Server is a running versitygw with one bucket. Stop and Start let a fault test take it
// away and bring it back on the same address with the same objects.
type Server struct {
	Endpoint  string // 127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Bucket    string

	bin, root, logPath string

	mu sync.Mutex
	p  *proc // the running process, nil while stopped
}

// StartS3 starts a server for the test, stopped at its end, and returns where it listens,
// its credentials and the name of an empty bucket in it.
func StartS3(tb testing.TB) (endpoint, accessKey, secretKey, bucket string) {
	tb.Helper()
	s := Start(tb)
	return s.Endpoint, s.AccessKey, s.SecretKey, s.Bucket
}

// Start is StartS3 returning the server's handle.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := binary(tb)
	dir := tb.TempDir()
	s := &Server{
		AccessKey: "test-" + randomHex(tb, 6),
		SecretKey: randomHex(tb, 20),
		Bucket:    "blobs-" + randomHex(tb, 4),
		bin:       bin,
		root:      filepath.Join(dir, "root"),
		logPath:   filepath.Join(dir, "versitygw.log"),
	}
	if err := os.MkdirAll(s.root, 0o750); err != nil {
		tb.Fatal(err)
	}
	if err := s.startOnFreePort(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Stop() })
	if err := s.Client().MakeBucket(context.Background(), s.Bucket, minio.MakeBucketOptions{}); err != nil {
		tb.Fatalf("s3test: create bucket %s: %v", s.Bucket, err)
	}
	return s
}

// binary finds versitygw on PATH or in GOPATH/bin, where go install puts it.
func binary(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	for _, dir := range filepath.SplitList(build.Default.GOPATH) {
		p := filepath.Join(dir, "bin", "versitygw")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	msg := "s3test: versitygw not found on PATH or in GOPATH/bin: install it with " + Install
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + " (with CI=true the S3 tests must run; .ci/run installs it)")
	} else {
		tb.Skip(msg)
	}
	return ""
}

// startOnFreePort picks a free loopback port and starts the server there; a port taken
// between picking and binding is picked again.
func (s *Server) startOnFreePort() error {
	var err error
	for range 3 {
		var port string
		if port, err = freePort(); err != nil {
			return err
		}
		s.Endpoint = net.JoinHostPort("127.0.0.1", port)
		if err = s.Start(); err == nil {
			return nil
		}
	}
	return err
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("s3test: free port: %w", err)
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// proc is one run of the server process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, once done is closed
}

// Start starts the server (again) on its address and waits until it answers.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		return nil
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("s3test: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "--access", s.AccessKey, "--secret", s.SecretKey,
		"--port", s.Endpoint, "--quiet", "posix", s.root)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	p := &proc{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that started the child exits,
		// not the process, and the runtime ends threads (a locked goroutine returning,
		// as ingest's low-priority publishes do): this goroutine keeps its own thread
		// until the child has exited.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("s3test: start %s: %w", s.bin, err)
	}
	if err := s.waitReady(p); err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		return err
	}
	s.p = p
	return nil
}

// waitReady polls until the server answers an authenticated request.
func (s *Server) waitReady(p *proc) error {
	c := s.Client()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("s3test: versitygw on %s exited (%v): %s", s.Endpoint, p.err, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("s3test: versitygw on %s not answering after %s: %v: %s", s.Endpoint, readyTimeout, err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	data, _ := os.ReadFile(s.logPath)
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(bytes.TrimSpace(data))
}

// Stop kills the server at once (SIGKILL: no graceful end, as a crash or a cut network
// does) and waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	s.p = nil
	if p == nil {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("s3test: stop versitygw: %w", err)
	}
	<-p.done
	return nil
}

// URL is the blob URL of the server's bucket (s3blob's grammar), with prefix when not "".
func (s *Server) URL(prefix string) string {
	cfg := s3blob.Config{Bucket: s.Bucket, Endpoint: s.Endpoint, Region: "us-east-1", Prefix: prefix}
	return cfg.String()
}

// Env is the environment a registry process needs to reach the server's bucket.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// SetEnv sets the server's credentials in the test's environment (for s3blob.Open).
func (s *Server) SetEnv(t *testing.T) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Client is a plain S3 client of the server, for a test to look behind the blob store
// (write a damaged object, list what is there).
func (s *Server) Client() *minio.Client {
	c, err := minio.New(s.Endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:     "us-east-1",
		MaxRetries: 1,
	})
	if err != nil {
		panic(fmt.Sprintf("s3test: client of %s: %v", s.Endpoint, err)) // only a malformed endpoint fails
	}
	return c
}

// NewBucket creates another empty bucket and returns its name.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := "blobs-" + randomHex(tb, 4)
	if err := s.Client().MakeBucket(context.Background(), name, minio.MakeBucketOptions{}); err != nil {
		tb.Fatalf("s3test: create bucket %s: %v", name, err)
	}
	return name
}

func randomHex(tb testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}
