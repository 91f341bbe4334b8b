package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
)

// lookupJSON is the body of GET /log/lookup/{id}@{version}.
type lookupJSON struct {
	Index      int64            `json:"index"`
	Record     translog.Record  `json:"record"`
	Leaf       string           `json:"leaf"`
	TreeSize   int64            `json:"tree_size"`
	RootHash   tlog.Hash        `json:"root_hash"`
	Proof      tlog.RecordProof `json:"proof"`
	Checkpoint string           `json:"checkpoint"`
}

func TestLogLookupProofVerifiesWithServedKey(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		if r := e.publish(adminToken, "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "Says hello")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", v, r.Status, r.Body)
		}
	}
	if r := e.post("/api/v1/plugins/acme-hello/versions/1.0.0/yank", adminToken, map[string]string{"reason": "broken"}); r.Status != http.StatusOK {
		t.Fatalf("yank: %d %s", r.Status, r.Body)
	}
	keyRes := e.get("/log/key")
	v, err := note.NewVerifier(strings.TrimSpace(string(keyRes.Body)))
	if err != nil {
		t.Fatalf("/log/key %q: %v", keyRes.Body, err)
	}
	r := e.get("/log/lookup/acme-hello@1.1.0")
	if r.Status != http.StatusOK {
		t.Fatalf("lookup: %d %s", r.Status, r.Body)
	}
	var l lookupJSON
	r.json(t, &l)
	cp, err := translog.OpenCheckpoint([]byte(l.Checkpoint), v)
	if err != nil {
		t.Fatalf("checkpoint: %v\n%s", err, l.Checkpoint)
	}
	if cp.Size != 4 || cp.Size != l.TreeSize || cp.Hash != l.RootHash {
		t.Errorf("checkpoint size %d hash %v; lookup says %d %v; want 4 records (3 publishes, 1 yank)", cp.Size, cp.Hash, l.TreeSize, l.RootHash)
	}
	if err := tlog.CheckRecord(l.Proof, cp.Size, cp.Hash, l.Index, tlog.RecordHash([]byte(l.Leaf))); err != nil {
		t.Errorf("inclusion proof: %v", err)
	}
	rec, err := translog.ParseRecord([]byte(l.Leaf))
	if err != nil || rec != l.Record || rec.Version != "1.1.0" || rec.Kind != translog.KindPublish || l.Index != 1 {
		t.Errorf("record %+v (index %d), leaf %q: %v", l.Record, l.Index, l.Leaf, err)
	}
	var ver struct {
		SHA256 string `json:"sha256"`
		Log    *struct {
			Index     int64  `json:"index"`
			LookupURL string `json:"lookup_url"`
		} `json:"log"`
	}
	e.get("/api/v1/plugins/acme-hello/versions/1.1.0").json(t, &ver)
	if ver.Log == nil || ver.Log.Index != 1 || ver.Log.LookupURL != e.srv.URL+"/log/lookup/acme-hello@1.1.0" || ver.SHA256 != rec.SHA256 {
		t.Errorf("API version log = %+v, sha256 %s; want index 1 and the lookup URL", ver.Log, ver.SHA256)
	}
	checkpoint := e.get("/log/checkpoint")
	if string(checkpoint.Body) != l.Checkpoint || !strings.HasPrefix(checkpoint.Header.Get("Content-Type"), "text/plain") ||
		checkpoint.Header.Get("Cache-Control") != "public, max-age=10" {
		t.Errorf("/log/checkpoint = %q %v", checkpoint.Body, checkpoint.Header)
	}
}

func TestLogPluginShowAndPage(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if r := e.publish(adminToken, "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "Says hello")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", v, r.Status, r.Body)
		}
	}
	var show struct {
		Versions []struct {
			Version string          `json:"version"`
			Log     json.RawMessage `json:"log"`
		} `json:"versions"`
	}
	e.get("/api/v1/plugins/acme-hello").json(t, &show)
	got := map[string]string{}
	for _, v := range show.Versions {
		got[v.Version] = string(v.Log)
	}
	for v, idx := range map[string]string{"1.0.0": "0", "1.1.0": "1"} {
		want := `{"index":` + idx + `,"lookup_url":"` + e.srv.URL + `/log/lookup/acme-hello@` + v + `"}`
		if got[v] != want {
			t.Errorf("version %s log = %s, want %s", v, got[v], want)
		}
	}
	page := string(e.get("/plugins/acme-hello").Body)
	for _, want := range []string{`data-testid="log-entry"`, "recorded in the log at #1", `href="/log/lookup/acme-hello@1.1.0"`} {
		if !strings.Contains(page, want) {
			t.Errorf("plugin page lacks %q", want)
		}
	}
}

func TestLogTiles(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	hashTile := e.get("/log/tile/8/0/000.p/1")
	if hashTile.Status != http.StatusOK || len(hashTile.Body) != tlog.HashSize || hashTile.Header.Get("Cache-Control") != "public, max-age=10" {
		t.Fatalf("partial tile: %d %q %v", hashTile.Status, hashTile.Body, hashTile.Header)
	}
	data := e.get("/log/tile/8/data/000.p/1")
	rec, err := translog.ParseRecord([]byte(strings.TrimSuffix(string(data.Body), "\n")))
	if data.Status != http.StatusOK || err != nil || rec.ID != "acme-hello" {
		t.Errorf("data tile: %d %q %v", data.Status, data.Body, err)
	}
	if tlog.RecordHash([]byte(strings.TrimSuffix(string(data.Body), "\n"))) != tlog.Hash(hashTile.Body) {
		t.Error("the data tile's leaf does not hash to the hash tile's entry")
	}
	for path, want := range map[string]int{
		"/log/tile/8/0/000":            http.StatusNotFound, // a full tile the tree does not hold yet
		"/log/tile/8/0/000.p/2":        http.StatusNotFound,
		"/log/tile/4/0/000.p/1":        http.StatusNotFound, // another height
		"/log/tile/8/x/000":            http.StatusNotFound,
		"/log/lookup/acme-hello@9.9.9": http.StatusNotFound,
		"/log/lookup/acme-hello":       http.StatusBadRequest,
		"/log/lookup/acme-hello@":      http.StatusBadRequest, // no version
		"/log/lookup/@acme":            http.StatusBadRequest, // a scope, no version
	} {
		if r := e.get(path); r.Status != want {
			t.Errorf("GET %s = %d %s, want %d", path, r.Status, r.Body, want)
		}
	}
}

// httpTiles reads tiles over HTTP, as a client of /log/tile/ does.
type httpTiles struct{ e *env }

func (h httpTiles) Height() int { return translog.TileHeight }

func (h httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		r := h.e.get("/log/" + t.Path())
		if r.Status != http.StatusOK {
			return nil, fmt.Errorf("GET /log/%s: %d %s", t.Path(), r.Status, r.Body)
		}
		out[i] = r.Body
	}
	return out, nil
}

func (h httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

func TestLogFullTileIsImmutableAndVerifies(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Says hello")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	for i := range 299 { // 300 records: one full tile and a partial one
		reason := ""
		if i%2 == 0 {
			reason = "old"
		}
		if err := e.st.Deprecate(context.Background(), "acme-hello", reason, "", store.AuditEntry{Actor: "test", Action: "deprecate"}); err != nil {
			t.Fatal(err)
		}
	}
	full := e.get("/log/tile/8/0/000")
	if full.Status != http.StatusOK || len(full.Body) != 256*tlog.HashSize || full.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("full tile: %d, %d bytes, %v", full.Status, len(full.Body), full.Header)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(e.get("/log/key").Body)))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := translog.OpenCheckpoint(e.get("/log/checkpoint").Body, v)
	if err != nil || cp.Size != 300 {
		t.Fatalf("checkpoint of %d records, %v; want 300", cp.Size, err)
	}
	hr := tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Hash}, httpTiles{e})
	if h, err := tlog.TreeHash(cp.Size, hr); err != nil || h != cp.Hash {
		t.Errorf("tree hash from served tiles = %v, %v; want the checkpoint's %v", h, err, cp.Hash)
	}
	data := e.get("/log/tile/8/data/000")
	leaves := strings.SplitAfter(string(data.Body), "\n\n") // each leaf ends in a newline; a blank line follows it
	if leaves[len(leaves)-1] == "" {
		leaves = leaves[:len(leaves)-1]
	}
	if len(leaves) != 256 {
		t.Fatalf("full data tile holds %d leaves, want 256", len(leaves))
	}
	p, err := tlog.ProveRecord(cp.Size, 255, hr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckRecord(p, cp.Size, cp.Hash, 255, tlog.RecordHash([]byte(strings.TrimSuffix(leaves[255], "\n")))); err != nil {
		t.Errorf("leaf 255 of the data tile: %v", err)
	}
}
