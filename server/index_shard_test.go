package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
)

// Shards are served as /index.json is: a strong ETag answering If-None-Match with 304,
// gzip under its own ETag, HEAD without a body; an unknown shard is a 404 naming the
// shards; and the home page and /docs list every shard URL to add while index.json is
// partial.
func TestIndexShardsServedLikeTheIndex(t *testing.T) {
	const limit = 2 << 10
	e := newPublishEnv(t, func(c *ingest.Config) { c.MaxIndexBytes = limit }, nil)
	long := strings.Repeat("a fine plugin ", 70)
	for _, id := range []string{"acme-hello", "acme-other"} {
		if r := e.publish(adminToken, id+"-1.0.0.tar.gz", pkg(t, id, "1.0.0", long)); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", id, r.Status, r.Body)
		}
	}
	ids, cats := e.svc.Documents().ShardURLs()
	if !e.svc.Documents().Partial() || len(ids) == 0 {
		t.Fatalf("index.json is not partial under %d bytes (%d id shards)", limit, len(ids))
	}
	path := strings.TrimPrefix(ids[0], e.srv.URL)
	r := e.get(path, "Accept-Encoding", "identity")
	etag := r.Header.Get("ETag")
	if r.Status != http.StatusOK || etag == "" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: %d, ETag %q, type %q", path, r.Status, etag, r.Header.Get("Content-Type"))
	}
	if r := e.get(path, "Accept-Encoding", "identity", "If-None-Match", etag); r.Status != http.StatusNotModified {
		t.Errorf("%s with If-None-Match: %d, want 304", path, r.Status)
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	gz := e.doRaw(req)
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
	if err != nil {
		t.Fatalf("gzip %s: %v (%s)", path, err, gz.Header.Get("Content-Encoding"))
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, r.Body) || gz.Header.Get("ETag") != strings.TrimSuffix(etag, `"`)+`-gzip"` {
		t.Errorf("gzip %s: ETag %q, %d bytes unzipped, want the body and its -gzip ETag", path, gz.Header.Get("ETag"), len(plain))
	}
	head, _ := http.NewRequest(http.MethodHead, e.srv.URL+path, nil)
	if h := e.doRaw(head); h.Status != http.StatusOK || len(h.Body) != 0 || h.Header.Get("ETag") != etag {
		t.Errorf("HEAD %s: %d, %d body bytes, ETag %q", path, h.Status, len(h.Body), h.Header.Get("ETag"))
	}
	if r := e.get("/index/nope.json"); r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "id shards") {
		t.Errorf("unknown shard: %d %s", r.Status, r.Body)
	}
	var list struct {
		Shards         []string `json:"shards"`
		CategoryShards []string `json:"category_shards"`
	}
	e.get("/index/shards.json").json(t, &list)
	if strings.Join(list.Shards, " ") != strings.Join(ids, " ") || strings.Join(list.CategoryShards, " ") != strings.Join(cats, " ") {
		t.Errorf("/index/shards.json names %v and %v, want the id shards %v and the category shards %v", list.Shards, list.CategoryShards, ids, cats)
	}
	for _, page := range []string{"/docs", "/"} {
		body := string(e.get(page).Body)
		for _, u := range append(ids, cats...) {
			if !strings.Contains(body, u) {
				t.Errorf("%s does not list the source %s", page, u)
			}
		}
	}
}
