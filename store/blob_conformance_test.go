package store_test

import (
	"os"
	"testing"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/blobtest"
)

// TestFolderConformance runs the blob contract's suite on the local folder.
func TestFolderConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blobtest.Harness {
		f, err := store.OpenFolder(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return blobtest.Harness{
			Blobs: f,
			Overwrite: func(tb testing.TB, sha string, data []byte) {
				tb.Helper()
				if err := os.WriteFile(f.Path(sha), data, 0o640); err != nil {
					tb.Fatal(err)
				}
			},
		}
	})
}
