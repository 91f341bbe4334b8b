package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// Blobs are verified, not trusted: a damaged package blob is never served as the package,
// its release leaves index.json until repaired, /readyz and the admin API name it, and
// re-publishing the identical bytes repairs it. Each kind of damage is found by the path
// that can find it: a flipped byte by the scrub's re-hash, a truncated blob by the size
// check of a download, a deleted one by the start-up check.
func TestDamagedBlobsLeaveTheIndexUntilRepaired(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, path string)
		find   func(t *testing.T, e *env)
		state  string
	}{
		{"a flipped byte, found by the scrub", flipByte, func(t *testing.T, e *env) {
			if err := e.svc.ScrubOnce(context.Background(), 0); err != nil {
				t.Fatal(err)
			}
		}, "corrupt"},
		{"a truncated blob, found by a download", truncate, func(t *testing.T, e *env) {
			if r := e.get("/packages/acme-hello/acme-hello-1.1.0.tar.gz"); r.Status != http.StatusServiceUnavailable {
				t.Fatalf("download of a truncated blob: %d, want 503", r.Status)
			}
		}, "corrupt"},
		{"a truncated blob, found at start", truncate, func(t *testing.T, e *env) {
			if err := e.svc.CheckBlobsExist(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, "corrupt"},
		{"a deleted blob, found at start", remove, func(t *testing.T, e *env) {
			if err := e.svc.CheckBlobsExist(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, "missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.mustPublish("acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "the bystander"))
			e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
			v110 := pkg(t, "acme-hello", "1.1.0", "x")
			e.mustPublish("acme-hello-1.1.0.tar.gz", v110)
			rel, err := e.st.Release(context.Background(), "acme-hello", "1.1.0")
			if err != nil {
				t.Fatal(err)
			}
			tt.damage(t, e.st.Blobs.Path(rel.SHA256))
			tt.find(t, e)

			if got := indexVersions(t, e); got["acme-hello"] != "1.0.0" || got["acme-other"] != "1.0.0" {
				t.Errorf("index.json after damage: %v, want acme-hello back at 1.0.0 and the bystander kept", got)
			}
			var ready struct {
				Status string
				Checks map[string]string
			}
			e.get("/readyz").json(t, &ready)
			if ready.Status != "degraded" || !strings.Contains(ready.Checks["blobs"], "acme-hello@1.1.0") {
				t.Errorf("readyz: %+v, want degraded naming acme-hello@1.1.0", ready)
			}
			var admin struct {
				Damaged []struct {
					Kind, SHA256 string
				}
			}
			e.getAuth("/api/v1/admin/blobs").json(t, &admin)
			if len(admin.Damaged) != 1 || admin.Damaged[0].SHA256 != rel.SHA256 || admin.Damaged[0].Kind != tt.state {
				t.Errorf("admin blobs: %+v, want %s %s", admin.Damaged, tt.state, rel.SHA256)
			}
			if r := e.get("/packages/acme-hello/acme-hello-1.1.0.tar.gz"); r.Status == http.StatusOK && !bytes.Equal(r.Body, v110) {
				t.Error("the damaged blob was served as the package")
			}

			if r := e.publish(adminToken, "acme-hello-1.1.0.tar.gz", v110); r.Status != http.StatusOK {
				t.Fatalf("re-publish of the identical bytes: %d %s, want 200", r.Status, r.Body)
			}
			if got := indexVersions(t, e); got["acme-hello"] != "1.1.0" {
				t.Errorf("index.json after repair: %v, want acme-hello 1.1.0", got)
			}
			if r := e.get("/packages/acme-hello/acme-hello-1.1.0.tar.gz"); r.Status != http.StatusOK || !bytes.Equal(r.Body, v110) {
				t.Errorf("download after repair: %d, %d bytes", r.Status, len(r.Body))
			}
			e.get("/readyz").json(t, &ready)
			if ready.Status != "ok" {
				t.Errorf("readyz after repair: %+v", ready)
			}
		})
	}
}

func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string) {
	t.Helper()
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func indexVersions(t *testing.T, e *env) map[string]string {
	t.Helper()
	var doc struct {
		Plugins []struct{ ID, Version string } `json:"plugins"`
	}
	e.get("/index.json").json(t, &doc)
	out := map[string]string{}
	for _, p := range doc.Plugins {
		out[p.ID] = p.Version
	}
	return out
}

func (e *env) getAuth(path string) response {
	e.t.Helper()
	return e.get(path, "Authorization", "Bearer "+adminToken)
}

// The start-up check stats every recorded blob, and a missing one that nothing uses (the
// later copy of a preview URL that has one) is no damage: nothing leaves the index,
// /readyz stays ok and the admin API lists nothing.
func TestStartCheckPassesOverUnusedBlobs(t *testing.T) {
	e := newEnv(t, "")
	e.mustPublish("acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
	ctx := context.Background()
	const url = "https://example.com/old.png"
	inUse := []byte("the preview copy in use")
	sha, err := e.st.Blobs.Put(inUse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.RecordPreviewFetched(ctx, url, sha, "image/png", int64(len(inUse))); err != nil {
		t.Fatal(err)
	}
	// A blob row nothing uses, its file gone: what earlier versions left when a preview was
	// fetched twice (RecordPreviewFetched no longer records a copy the URL does not take).
	db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(e.st.Dir(), store.DBFile)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "INSERT INTO blobs (sha256, size, created_at) VALUES (?, 12, '2026-01-01T00:00:00Z')", strings.Repeat("0f", 32)); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CheckBlobsExist(ctx); err != nil {
		t.Fatal(err)
	}
	var ready struct{ Status string }
	e.get("/readyz").json(t, &ready)
	var admin struct{ Damaged []struct{ SHA256 string } }
	e.getAuth("/api/v1/admin/blobs").json(t, &admin)
	if ready.Status != "ok" || len(admin.Damaged) != 0 {
		t.Errorf("after the start check: readyz %q, damaged %+v; want ok and none (the missing blob is unused)", ready.Status, admin.Damaged)
	}
	if got := indexVersions(t, e); got["acme-hello"] != "1.0.0" {
		t.Errorf("index.json: %v, want acme-hello 1.0.0", got)
	}
}
