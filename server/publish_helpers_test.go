package server_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/verify"
)

// fileNameOf is the name a package must be uploaded under, read from its manifest.
func fileNameOf(t *testing.T, data []byte) string {
	t.Helper()
	rep, err := verify.Package(context.Background(), bytes.NewReader(data), verify.Options{})
	if err != nil || rep.ID == "" || rep.Version == "" {
		t.Fatalf("fileNameOf: %v (id %q, version %q)", err, rep.ID, rep.Version)
	}
	return ingest.PackageFileName(rep.ID, rep.Version)
}

// newPublishEnv starts a registry like newEnv with its pipeline configured by adjust, and
// logs into log (discarded when nil).
func newPublishEnv(t *testing.T, adjust func(*ingest.Config), log *slog.Logger) *env {
	t.Helper()
	return startEnv(t, "", adjust, log)
}

// logBuffer collects log lines, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// spoolFiles lists what is left in the upload spool (DATA/spool, made on the first upload)
// and in the blob folder's temporary area.
func spoolFiles(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{filepath.Join(e.dir, "data", ingest.SpoolDir), filepath.Join(e.dir, "data", "blobs", "tmp")} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) && dir != filepath.Join(e.dir, "data", "blobs", "tmp") {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			out = append(out, filepath.Join(filepath.Base(dir), en.Name()))
		}
	}
	return out
}
