//go:build unix

package pack_test

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pluginyard/registry/pack"
)

func TestRefusesFIFO(t *testing.T) {
	dir := writeTree(t, map[string]string{"manifest.yaml": "id: x\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("cannot create a FIFO here: %v", err)
	}
	// Opening a FIFO would block: pack must refuse it from the directory listing alone.
	err := pack.Dir(dir, io.Discard)
	if !errors.Is(err, pack.ErrInvalidTree) || !strings.Contains(err.Error(), "pipe is not a regular file") {
		t.Errorf("pack.Dir with a FIFO: %v; want a refusal naming pipe", err)
	}
}
