package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// damage changes a blob file in place the ways a disk or an operator does.
var damage = map[string]func(tb testing.TB, path string){
	"flip": func(tb testing.TB, path string) {
		tb.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		data[len(data)/2] ^= 0x01
		mustWrite(tb, path, data)
	},
	"truncate": func(tb testing.TB, path string) {
		tb.Helper()
		if err := os.Truncate(path, 3); err != nil {
			tb.Fatal(err)
		}
	},
	"delete": func(tb testing.TB, path string) {
		tb.Helper()
		if err := os.Remove(path); err != nil {
			tb.Fatal(err)
		}
	},
}

func mustWrite(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.WriteFile(path, data, 0o640); err != nil {
		tb.Fatal(err)
	}
}

func TestOpenVerifiedChecksTheRecordedSize(t *testing.T) {
	data := []byte("the exact bytes of a package")
	tests := []struct {
		name    string
		damage  string
		size    int64
		wantErr error
	}{
		{"whole", "", int64(len(data)), nil},
		{"recorded size differs", "", int64(len(data)) + 1, store.ErrBlobCorrupt},
		{"truncated", "truncate", int64(len(data)), store.ErrBlobCorrupt},
		{"deleted", "delete", int64(len(data)), store.ErrBlobMissing},
		// Same size: only a re-hash (Check) can tell.
		{"flipped byte", "flip", int64(len(data)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustOpen(t)
			sha, err := s.Blobs.Put(data)
			if err != nil {
				t.Fatal(err)
			}
			if tt.damage != "" {
				damage[tt.damage](t, s.Blobs.Path(sha))
			}
			f, err := s.Blobs.OpenVerified(sha, tt.size)
			if f != nil {
				_ = f.Close()
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("OpenVerified err = %v, want %v", err, tt.wantErr)
			}
			if serr := s.Blobs.StatVerified(sha, tt.size); !errors.Is(serr, tt.wantErr) || (tt.wantErr == nil && serr != nil) {
				t.Fatalf("StatVerified err = %v, want %v (as OpenVerified)", serr, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), sha) {
				t.Errorf("error %q does not name the sha256", err)
			}
		})
	}
}

func TestCheckRehashes(t *testing.T) {
	data := []byte("the exact bytes of a package")
	for name, wantErr := range map[string]error{"": nil, "flip": store.ErrBlobCorrupt, "truncate": store.ErrBlobCorrupt, "delete": store.ErrBlobMissing} {
		t.Run(name, func(t *testing.T) {
			s := MustOpen(t)
			sha, err := s.Blobs.Put(data)
			if err != nil {
				t.Fatal(err)
			}
			if name != "" {
				damage[name](t, s.Blobs.Path(sha))
			}
			if err := s.Blobs.Check(sha, int64(len(data))); !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
				t.Fatalf("Check err = %v, want %v", err, wantErr)
			}
		})
	}
}

// mustPublished records a release of id@version with package bytes and an optional icon.
func mustPublished(tb testing.TB, s *store.Store, id, version string, data, icon []byte) *store.Release {
	tb.Helper()
	rel := mustRelease(tb, s, id, version, data)
	if icon != nil {
		sha, err := s.Blobs.Put(icon)
		if err != nil {
			tb.Fatal(err)
		}
		rel.IconSHA256, rel.IconExt, rel.IconType, rel.IconSize = sha, "png", "image/png", int64(len(icon))
	}
	if _, err := s.InsertRelease(context.Background(), rel, store.AuditEntry{Actor: "t", Action: "publish"}); err != nil {
		tb.Fatal(err)
	}
	return rel
}

func TestCheckBlobsReportsEachProblem(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	flipped := mustPublished(t, s, "flipped", "1.0.0", []byte("package one, a byte will flip"), nil)
	truncated := mustPublished(t, s, "truncated", "1.0.0", []byte("package two, will be cut short"), nil)
	deleted := mustPublished(t, s, "deleted", "2.0.0", []byte("package three, will vanish"), nil)
	iconRel := mustPublished(t, s, "iconic", "1.0.0", []byte("package four, whole"), []byte("\x89PNG\r\n\x1a\n icon bytes"))
	whole := mustPublished(t, s, "whole", "1.0.0", []byte("package five, untouched"), nil)
	orphan, err := s.Blobs.Put([]byte("bytes no release uses"))
	if err != nil {
		t.Fatal(err)
	}
	damage["flip"](t, s.Blobs.Path(flipped.SHA256))
	damage["truncate"](t, s.Blobs.Path(truncated.SHA256))
	damage["delete"](t, s.Blobs.Path(deleted.SHA256))
	damage["flip"](t, s.Blobs.Path(iconRel.IconSHA256))

	var seen []store.BlobProgress
	probs, err := s.CheckBlobs(ctx, func(p store.BlobProgress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ Kind, SHA256, Uses string }
	var gotProbs []got
	for _, p := range probs {
		var uses []string
		for _, u := range p.Uses {
			uses = append(uses, u.String())
		}
		gotProbs = append(gotProbs, got{p.Kind, p.SHA256, strings.Join(uses, ",")})
	}
	want := []got{
		{store.BlobCorrupt, flipped.SHA256, "flipped@1.0.0 (package)"},
		{store.BlobCorrupt, truncated.SHA256, "truncated@1.0.0 (package)"},
		{store.BlobMissing, deleted.SHA256, "deleted@2.0.0 (package)"},
		{store.BlobCorrupt, iconRel.IconSHA256, "iconic@1.0.0 (icon)"},
		{store.BlobOrphan, orphan, ""},
	}
	sortBySHA := cmp.Transformer("sort", func(in []got) map[string]got {
		out := map[string]got{}
		for _, g := range in {
			out[g.SHA256] = g
		}
		return out
	})
	if diff := cmp.Diff(want, gotProbs, sortBySHA); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	for _, p := range probs {
		if p.SHA256 == whole.SHA256 || p.SHA256 == iconRel.SHA256 {
			t.Errorf("a whole blob is reported: %+v", p)
		}
	}
	if len(seen) != 6 || seen[5].Done != 6 || seen[5].Total != 6 || seen[5].Bytes != seen[5].TotalBytes {
		t.Errorf("progress = %+v; want one call per recorded blob (6), ending at all bytes", seen)
	}
}

func TestCheckBlobsCleanStore(t *testing.T) {
	s := MustOpen(t)
	mustPublished(t, s, "a", "1.0.0", []byte("a"), []byte("icon"))
	probs, err := s.CheckBlobs(context.Background(), nil)
	if err != nil || len(probs) != 0 {
		t.Fatalf("clean store: %+v, %v", probs, err)
	}
}

func TestBlobSize(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t)
	icon := []byte("\x89PNG\r\n\x1a\n an icon")
	rel := mustPublished(t, s, "a", "1.0.0", []byte("package a"), icon)
	for sha, want := range map[string]int64{rel.SHA256: rel.Size, rel.IconSHA256: int64(len(icon))} {
		if got, err := s.BlobSize(ctx, sha); err != nil || got != want {
			t.Errorf("BlobSize(%s) = %d, %v; want %d", sha, got, err, want)
		}
	}
	if _, err := s.BlobSize(ctx, strings.Repeat("0", 64)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown blob: %v, want ErrNotFound", err)
	}
}

// TestCheckBlobsRecordedButUnused: a blob row no release uses is an orphan when its file is
// there, and nothing when it is not.
func TestCheckBlobsRecordedButUnused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kept, err := s.Blobs.Put([]byte("recorded, unused, present"))
	if err != nil {
		t.Fatal(err)
	}
	gone := strings.Repeat("cd", 32)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, row := range []struct {
		sha  string
		size int
	}{{kept, 25}, {gone, 7}} {
		if _, err := db.ExecContext(ctx, "INSERT INTO blobs (sha256, size, created_at) VALUES (?, ?, '2026-01-01T00:00:00Z')", row.sha, row.size); err != nil {
			t.Fatal(err)
		}
	}
	probs, err := s.CheckBlobs(ctx, nil)
	if err != nil || len(probs) != 1 || probs[0].Kind != store.BlobOrphan || probs[0].SHA256 != kept {
		t.Fatalf("problems = %+v, %v; want one orphan %s", probs, err, kept)
	}
}
