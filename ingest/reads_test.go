package ingest

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/pluginyard/registry/store"
)

// OpenBlob hands out the blob file itself (so that serving it can use sendfile) and, when
// the blob is refused, a nil reader: a nil *os.File in the interface would not be nil.
func TestOpenBlob(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := &Service{store: st, blobs: st.Blobs.Folder()}
	data := []byte("package bytes")
	sha, err := st.Blobs.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		sha     string
		size    int64
		wantErr error
	}{
		{"recorded size", sha, int64(len(data)), nil},
		{"another size", sha, int64(len(data)) + 1, store.ErrBlobCorrupt},
		{"no file", "0000000000000000000000000000000000000000000000000000000000000000", 1, store.ErrBlobMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.OpenBlob(context.Background(), tt.sha, tt.size)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("OpenBlob err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if r != nil {
					t.Fatalf("OpenBlob refused the blob but returned a non-nil reader %#v", r)
				}
				return
			}
			defer r.Close()
			if _, ok := r.(*os.File); !ok {
				t.Errorf("OpenBlob returned a %T, want the *os.File (sendfile)", r)
			}
			got, err := io.ReadAll(r)
			if err != nil || string(got) != string(data) {
				t.Errorf("read %q, %v; want %q", got, err, data)
			}
		})
	}
}
