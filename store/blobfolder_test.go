//go:build unix

package store_test

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/blobtest"
)

// A spool folder on another file system than the blobs (rename(2) fails with EXDEV) is
// copied in instead.
func TestFolderPutFromAnotherFileSystem(t *testing.T) {
	blobs := t.TempDir()
	spool := otherFileSystem(t, blobs)
	f, err := store.OpenFolder(blobs)
	if err != nil {
		t.Fatal(err)
	}
	data := blobtest.Bytes(100_000, 70)
	src, err := os.CreateTemp(spool, "spool-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(src.Name())
	if _, err := src.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	sha := blobtest.SHA(data)
	if err := f.Put(context.Background(), sha, int64(len(data)), src.Name()); err != nil {
		t.Fatal(err)
	}
	if err := f.Check(context.Background(), sha, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(blobs + "/tmp"); len(left) != 0 {
		t.Errorf("the copy left %d files in the temporary area", len(left))
	}
}

// otherFileSystem returns a new folder on another device than dir (/dev/shm), or skips.
func otherFileSystem(t *testing.T, dir string) string {
	t.Helper()
	other, err := os.MkdirTemp("/dev/shm", "blobtest-*")
	if err != nil {
		t.Skipf("no second file system to spool on: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(other) })
	if device(t, other) == device(t, dir) {
		t.Skip("/dev/shm is on the same file system as the test's temporary folder")
	}
	return other
}

func device(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no device numbers on this platform")
	}
	return uint64(sys.Dev) //nolint:unconvert // Dev is uint64 on linux, int32 elsewhere
}
