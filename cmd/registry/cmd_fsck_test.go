package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// demoRelease returns the published demo release (package and icon blob paths included).
func demoRelease(t *testing.T, dir string) *store.Release {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rel, err := st.Release(context.Background(), "hello-managed", "1.0.0")
	if err != nil || rel.IconSHA256 == "" {
		t.Fatalf("demo release %+v (needs an icon): %v", rel, err)
	}
	return rel
}

func blobPath(dir, sha string) string { return filepath.Join(dir, "blobs", sha[:2], sha) }

// writeBlobFile puts data in the blobs folder of dir under sha, recorded nowhere.
func writeBlobFile(t *testing.T, dir, sha string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(blobPath(dir, sha)), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blobPath(dir, sha), data, 0o640); err != nil {
		t.Fatal(err)
	}
}

func TestFsckCleanStore(t *testing.T) {
	dir := mustDemoStore(t)
	c, out, errOut := testCLI(nil)
	if code := cmdFsck(context.Background(), c, []string{"--data", dir}); code != exitOK {
		t.Fatalf("fsck on a clean store: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out.String(), "2 blobs") || !strings.Contains(out.String(), "every one matches") {
		t.Errorf("stdout = %q", out)
	}
	if !strings.Contains(errOut.String(), "fsck: 2/2 blobs") {
		t.Errorf("no final progress line on stderr: %q", errOut)
	}
}

func TestFsckReportsDamage(t *testing.T) {
	type finding struct{ Kind, SHA256, Releases string }
	const (
		restore  = "Restore a missing or corrupt blob"
		sweep    = "removed by the next `registry serve`"
		harmless = "nothing uses (a second copy of a preview, which earlier versions recorded) is harmless"
	)
	tests := []struct {
		name   string
		advice string // the one advice line the text report gives
		harm   func(t *testing.T, dir string, rel *store.Release) finding
	}{
		{"flipped byte in the package", restore, func(t *testing.T, dir string, rel *store.Release) finding {
			flipByte(t, blobPath(dir, rel.SHA256))
			return finding{store.BlobCorrupt, rel.SHA256, "hello-managed@1.0.0 (package)"}
		}},
		{"truncated package", restore, func(t *testing.T, dir string, rel *store.Release) finding {
			if err := os.Truncate(blobPath(dir, rel.SHA256), rel.Size/2); err != nil {
				t.Fatal(err)
			}
			return finding{store.BlobCorrupt, rel.SHA256, "hello-managed@1.0.0 (package)"}
		}},
		{"deleted package", restore, func(t *testing.T, dir string, rel *store.Release) finding {
			if err := os.Remove(blobPath(dir, rel.SHA256)); err != nil {
				t.Fatal(err)
			}
			return finding{store.BlobMissing, rel.SHA256, "hello-managed@1.0.0 (package)"}
		}},
		{"flipped byte in the icon", restore, func(t *testing.T, dir string, rel *store.Release) finding {
			flipByte(t, blobPath(dir, rel.IconSHA256))
			return finding{store.BlobCorrupt, rel.IconSHA256, "hello-managed@1.0.0 (icon)"}
		}},
		{"orphan file", sweep, func(t *testing.T, dir string, rel *store.Release) finding {
			sha := strings.Repeat("ab", 32)
			writeBlobFile(t, dir, sha, []byte("stray"))
			return finding{store.BlobOrphan, sha, ""}
		}},
		{"recorded blob no release uses", harmless, func(t *testing.T, dir string, rel *store.Release) finding {
			sha := strings.Repeat("cd", 32)
			writeBlobFile(t, dir, sha, []byte("second preview."))
			db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.DBFile))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("INSERT INTO blobs (sha256, size, created_at) VALUES (?, 15, '2026-01-01T00:00:00Z')", sha); err != nil {
				t.Fatal(err)
			}
			return finding{store.BlobOrphan, sha, ""}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mustDemoStore(t)
			want := tt.harm(t, dir, demoRelease(t, dir))
			c, out, errOut := testCLI(nil)
			if code := cmdFsck(context.Background(), c, []string{"--json", "--data", dir}); code != exitInvalid {
				t.Fatalf("fsck: exit %d, want %d\n%s%s", code, exitInvalid, out, errOut)
			}
			var rep fsckReport
			if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
				t.Fatalf("--json output: %v\n%s", err, out)
			}
			var got []finding
			for _, p := range rep.Problems {
				var uses []string
				for _, u := range p.Uses {
					uses = append(uses, u.String())
				}
				got = append(got, finding{p.Kind, p.SHA256, strings.Join(uses, ", ")})
			}
			if diff := cmp.Diff([]finding{want}, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			c, out, _ = testCLI(nil)
			if code := cmdFsck(context.Background(), c, []string{"--data", dir}); code != exitInvalid ||
				!strings.Contains(out.String(), want.Kind+"  ") || !strings.Contains(out.String(), want.SHA256) {
				t.Errorf("text report: exit %d\n%s", code, out)
			}
			for _, a := range []string{restore, sweep, harmless} {
				if got := strings.Contains(out.String(), a); got != (a == tt.advice) {
					t.Errorf("advice %q given: %v, want %v\n%s", a, got, a == tt.advice, out)
				}
			}
		})
	}
}

func TestFsckProgressIsThrottled(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	progress := fsckProgress(&buf, func() time.Time { return clock }, time.Second)
	for i := 1; i <= 10; i++ {
		progress(store.BlobProgress{Done: i, Total: 10, Bytes: int64(i), TotalBytes: 10})
		if i == 5 {
			clock = clock.Add(time.Second)
		}
	}
	want := "fsck: 1/10 blobs, 1 B of 10 B re-hashed\nfsck: 6/10 blobs, 6 B of 10 B re-hashed\nfsck: 10/10 blobs, 10 B of 10 B re-hashed\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
}

func flipByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

// TestFsckReportsADamagedDatabase: a database page overwritten on disk (the file opens,
// and only the queries reading that page would fail) is reported with the fix, exit 1.
func TestFsckReportsADamagedDatabase(t *testing.T) {
	dir := mustDemoStore(t)
	db := filepath.Join(dir, store.DBFile)
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(data) < 8*page {
		t.Fatalf("the database has %d bytes, want pages to damage", len(data))
	}
	last := len(data)/page - 1
	for i := 0; i < 64; i++ {
		data[last*page+i] = 0xff // the page's b-tree header
	}
	if err := os.WriteFile(db, data, 0o640); err != nil {
		t.Fatal(err)
	}
	c, out, errOut := testCLI(nil)
	if code := cmdFsck(context.Background(), c, []string{"--data", dir}); code != exitInvalid {
		t.Fatalf("fsck on a damaged database: exit %d, want %d\n%s%s", code, exitInvalid, out, errOut)
	}
	if !strings.Contains(out.String(), "the database is damaged") || !strings.Contains(out.String(), "registry restore --force SNAPSHOT") {
		t.Errorf("stdout does not report the damage and the fix:\n%s", out)
	}
	c, out, _ = testCLI(nil)
	cmdFsck(context.Background(), c, []string{"--data", dir, "--json"})
	var rep fsckReport
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || len(rep.Database) == 0 {
		t.Errorf("--json database problems %v (%v):\n%s", rep.Database, err, out)
	}
}
