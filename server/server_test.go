package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

type published struct {
	ID, Version, Kind, SHA256 string
	Size                      int64
	PackageURL                string `json:"package_url"`
}

type apiErr struct {
	Error    string
	Problems []struct{ Rule, Path, Message, Severity string }
}

type kandevIndex struct {
	SchemaVersion int   `json:"schema_version"`
	Serial        int64 `json:"serial"`
	Plugins       []struct {
		ID            string   `json:"id"`
		Version       string   `json:"version"`
		Categories    []string `json:"categories"`
		PackageURL    string   `json:"package_url"`
		PackageSHA256 string   `json:"package_sha256"`
		IconURL       *string  `json:"icon_url"`
	} `json:"plugins"`
}

func (e *env) index() kandevIndex {
	e.t.Helper()
	r := e.get("/index.json")
	if r.Status != http.StatusOK {
		e.t.Fatalf("index.json: %d %s", r.Status, r.Body)
	}
	var doc kandevIndex
	r.json(e.t, &doc)
	return doc
}

func TestPublishIndexDownloadPage(t *testing.T) {
	e := newEnv(t, "")
	data := pkg(t, "acme-hello", "1.0.0", "Says hello")
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data)
	if r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	var pub published
	r.json(t, &pub)
	sum := sha256.Sum256(data)
	if pub.ID != "acme-hello" || pub.Version != "1.0.0" || pub.SHA256 != hex.EncodeToString(sum[:]) || pub.Size != int64(len(data)) {
		t.Fatalf("publish body = %+v", pub)
	}

	doc := e.index()
	if doc.SchemaVersion != 1 || len(doc.Plugins) != 1 || doc.Plugins[0].ID != "acme-hello" || doc.Plugins[0].PackageSHA256 != pub.SHA256 {
		t.Fatalf("index = %+v", doc)
	}
	if doc.Plugins[0].PackageURL != pub.PackageURL || !strings.HasPrefix(pub.PackageURL, e.srv.URL+"/packages/acme-hello/") {
		t.Fatalf("package_url %q vs %q", doc.Plugins[0].PackageURL, pub.PackageURL)
	}
	if probs := index.CheckKandev(e.get("/index.json").Body); len(probs) > 0 {
		t.Errorf("host-side checks: %v", probs)
	}

	dl := e.get(strings.TrimPrefix(pub.PackageURL, e.srv.URL))
	got := sha256.Sum256(dl.Body)
	if dl.Status != http.StatusOK || !bytes.Equal(dl.Body, data) || hex.EncodeToString(got[:]) != pub.SHA256 {
		t.Fatalf("download: %d, %d bytes", dl.Status, len(dl.Body))
	}
	if dl.Header.Get("ETag") != `"`+pub.SHA256+`"` || dl.Header.Get("Content-Length") == "" {
		t.Errorf("download headers: %v", dl.Header)
	}
	part := e.get(strings.TrimPrefix(pub.PackageURL, e.srv.URL), "Range", "bytes=0-9")
	if part.Status != http.StatusPartialContent || !bytes.Equal(part.Body, data[:10]) {
		t.Errorf("range: %d %d bytes", part.Status, len(part.Body))
	}

	page := e.get("/")
	if page.Status != http.StatusOK || !bytes.Contains(page.Body, []byte("Says hello")) {
		t.Errorf("home page: %d, plugin not shown", page.Status)
	}
	detail := e.get("/plugins/acme-hello")
	if detail.Status != http.StatusOK || !bytes.Contains(detail.Body, []byte(pub.SHA256)) {
		t.Errorf("plugin page: %d, sha256 not shown", detail.Status)
	}
	api := e.get("/api/v1/plugins?q=hello")
	var list struct {
		Total   int
		Plugins []struct{ ID string }
	}
	api.json(t, &list)
	if list.Total != 1 || list.Plugins[0].ID != "acme-hello" {
		t.Errorf("search = %+v", list)
	}
}

func TestPublishRefusals(t *testing.T) {
	e := newEnv(t, "")
	good := pkg(t, "acme-hello", "1.0.0", "Says hello")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", good); r.Status != http.StatusCreated {
		t.Fatalf("first publish: %d %s", r.Status, r.Body)
	}
	tests := []struct {
		name   string
		token  string
		file   string
		data   []byte
		status int
		rule   string
	}{
		{"identical bytes again", adminToken, "acme-hello-1.0.0.tar.gz", good, http.StatusOK, ""},
		{"different bytes same version", adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "Changed"), http.StatusConflict, ""},
		{"no token", "", "acme-hello-1.0.1.tar.gz", pkg(t, "acme-hello", "1.0.1", "x"), http.StatusUnauthorized, ""},
		{"bad token", "nope", "acme-hello-1.0.1.tar.gz", pkg(t, "acme-hello", "1.0.1", "x"), http.StatusUnauthorized, ""},
		{"not listed", adminToken, "evil-1.0.0.tar.gz", pkg(t, "evil", "1.0.0", "x"), http.StatusForbidden, ""},
		{"not a package", adminToken, "x.tar.gz", []byte("this is not gzip"), http.StatusUnprocessableEntity, ""},
		{"file name mismatch", adminToken, "acme-hello-9.9.9.tar.gz", pkg(t, "acme-hello", "1.0.2", "x"), http.StatusUnprocessableEntity, "package.filename"},
		{"over body limit", adminToken, "acme-hello-1.0.3.tar.gz", bytes.Repeat([]byte{1}, 3<<20), http.StatusRequestEntityTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.publish(tt.token, tt.file, tt.data)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if r.Status >= 400 {
				var body apiErr
				r.json(t, &body)
				if body.Error == "" {
					t.Errorf("no error message: %s", r.Body)
				}
				if tt.rule != "" && !slices.ContainsFunc(body.Problems, func(p struct{ Rule, Path, Message, Severity string }) bool { return p.Rule == tt.rule }) {
					t.Errorf("problems %+v lack rule %s", body.Problems, tt.rule)
				}
			}
		})
	}
	if doc := e.index(); len(doc.Plugins) != 1 || doc.Plugins[0].Version != "1.0.0" {
		t.Errorf("index changed by refused publishes: %+v", doc)
	}
}

func TestPublisherTokenScope(t *testing.T) {
	e := newEnv(t, "")
	secret, _, err := ingest.CreateToken(context.Background(), e.st, ingest.TokenSpec{Kind: "publisher", Publisher: "acme"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if r := e.publish(secret, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("owner publish: %d %s", r.Status, r.Body)
	}
	if r := e.publish(secret, "acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "x")); r.Status != http.StatusForbidden {
		t.Fatalf("non-owner publish: %d %s", r.Status, r.Body)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir)
	data := pkg(t, "acme-hello", "1.0.0", "Survives restarts")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	before := e.index()
	e.close()

	e2 := newEnv(t, dir)
	after := e2.index()
	if len(after.Plugins) != 1 || after.Plugins[0].PackageSHA256 != before.Plugins[0].PackageSHA256 || after.Serial != before.Serial {
		t.Fatalf("after restart: %+v, before: %+v", after, before)
	}
	dl := e2.get(strings.TrimPrefix(after.Plugins[0].PackageURL, e2.srv.URL))
	if dl.Status != http.StatusOK || !bytes.Equal(dl.Body, data) {
		t.Fatalf("package bytes lost: %d, %d bytes", dl.Status, len(dl.Body))
	}
	if r := e2.publish(adminToken, "acme-hello-1.0.0.tar.gz", data); r.Status != http.StatusOK {
		t.Errorf("idempotent after restart: %d %s", r.Status, r.Body)
	}
}

func TestIndexCaching(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d", r.Status)
	}
	r := e.get("/index.json")
	etag := r.Header.Get("ETag")
	if etag == "" || r.Header.Get("Last-Modified") == "" || r.Header.Get("Cache-Control") != "public, max-age=60" ||
		r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("headers: %v", r.Header)
	}
	if nm := e.get("/index.json", "If-None-Match", etag); nm.Status != http.StatusNotModified || len(nm.Body) != 0 {
		t.Errorf("If-None-Match: %d", nm.Status)
	}
	if nm := e.get("/index.json", "If-Modified-Since", r.Header.Get("Last-Modified")); nm.Status != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %d", nm.Status)
	}
	gz := e.get("/index.json", "Accept-Encoding", "gzip")
	if gz.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", gz.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, r.Body) {
		t.Error("gzip body differs from plain body")
	}
	// A change gives a new ETag and a higher serial.
	if p := e.publish(adminToken, "acme-hello-1.1.0.tar.gz", pkg(t, "acme-hello", "1.1.0", "x")); p.Status != http.StatusCreated {
		t.Fatalf("publish 1.1.0: %d", p.Status)
	}
	if again := e.get("/index.json", "If-None-Match", etag); again.Status != http.StatusOK {
		t.Errorf("stale ETag still matched after a change: %d", again.Status)
	}
}

func TestYankHidesFromLatestButKeepsDownload(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if r := e.publish(adminToken, "acme-hello-"+v+".tar.gz", pkg(t, "acme-hello", v, "x")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d", v, r.Status)
		}
	}
	if r := e.post("/api/v1/plugins/acme-hello/versions/1.1.0/yank", adminToken, map[string]string{"reason": "broken"}); r.Status != http.StatusOK {
		t.Fatalf("yank: %d %s", r.Status, r.Body)
	}
	doc := e.index()
	if doc.Plugins[0].Version != "1.0.0" {
		t.Errorf("latest after yank = %s", doc.Plugins[0].Version)
	}
	if dl := e.get("/packages/acme-hello/acme-hello-1.1.0.tar.gz"); dl.Status != http.StatusOK {
		t.Errorf("yanked download: %d", dl.Status)
	}
	var detail struct {
		Versions []struct {
			Version    string
			Yanked     bool
			YankReason string `json:"yank_reason"`
		}
	}
	e.get("/api/v1/plugins/acme-hello").json(t, &detail)
	if len(detail.Versions) != 2 || !detail.Versions[0].Yanked || detail.Versions[0].YankReason != "broken" {
		t.Errorf("versions = %+v", detail.Versions)
	}
	if r := e.post("/api/v1/plugins/acme-hello/versions/1.1.0/yank", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("anonymous yank: %d", r.Status)
	}
	if r := e.post("/api/v1/plugins/acme-hello/versions/1.1.0/unyank", adminToken, nil); r.Status != http.StatusOK {
		t.Fatalf("unyank: %d", r.Status)
	}
	if doc := e.index(); doc.Plugins[0].Version != "1.1.0" {
		t.Errorf("latest after unyank = %s", doc.Plugins[0].Version)
	}
}

func TestAuditAndAdmin(t *testing.T) {
	e := newEnv(t, "")
	e.publish(adminToken, "evil-1.0.0.tar.gz", pkg(t, "evil", "1.0.0", "x"))
	e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
	if r := e.get("/api/v1/admin/audit"); r.Status != http.StatusUnauthorized {
		t.Errorf("anonymous audit: %d", r.Status)
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/admin/audit", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	var body struct {
		Entries []struct{ Action, Target, Outcome string }
	}
	e.do(req).json(t, &body)
	var got []string
	for _, en := range body.Entries {
		got = append(got, en.Action+" "+en.Target+" "+en.Outcome)
	}
	want := []string{"publish acme-hello@1.0.0 ok", "publish evil@1.0.0 refused"}
	if !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

func TestErrorShapesAndHeaders(t *testing.T) {
	e := newEnv(t, "")
	// Machine-readable routes (documents, shards, images, the log) answer errors as JSON too.
	for _, path := range []string{"/api/v1/plugins/nope", "/api/v1/plugins?sort=bogus", "/packages/nope/nope-1.0.0.tar.gz", "/packages/..%2f..%2fetc/passwd",
		"/index/x.json", "/previews/abc.png", "/log/lookup/foo@1.0.0"} {
		r := e.get(path)
		var body apiErr
		if r.Status < 400 || !isJSON(r) || json.Unmarshal(r.Body, &body) != nil || body.Error == "" {
			t.Errorf("%s: %d %s %.200s", path, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	}
	page := e.get("/no/such/page")
	if page.Status != http.StatusNotFound || !bytes.Contains(page.Body, []byte("<html")) {
		t.Errorf("404 page: %d", page.Status)
	}
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") || page.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("security headers: %v", page.Header)
	}
}

// TestOpenAPICoversEveryRoute fails when a route is added without documenting it.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	e := newEnv(t, "")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	e.get("/api/v1/openapi.json").json(t, &doc)
	param := regexp.MustCompile(`:([a-z]+)`)
	for _, rt := range e.routes() {
		if rt.Path == "/*" || rt.Method == "echo_route_not_found" {
			continue
		}
		p := param.ReplaceAllString(rt.Path, "{$1}")
		p = strings.Replace(p, "/extensions/*", "/extensions/{name}", 1)
		p = strings.Replace(strings.Replace(p, "/log/tile/*", "/log/tile/{path}", 1), "/log/lookup/*", "/log/lookup/{ref}", 1)
		ops, ok := doc.Paths[p]
		if !ok {
			t.Errorf("route %s %s missing from openapi.json (as %s)", rt.Method, rt.Path, p)
			continue
		}
		if _, ok := ops[strings.ToLower(rt.Method)]; !ok && (rt.Method != http.MethodHead || ops["get"] == nil) { // HEAD mirrors every GET
			t.Errorf("route %s %s: method missing from openapi.json", rt.Method, p)
		}
	}
}

// TestOpenAPISaysTheSearchWordCap: the search's q parameter names how many words a search
// matches (store.SearchWords), so the document follows the cap.
func TestOpenAPISaysTheSearchWordCap(t *testing.T) {
	e := newEnv(t, "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	e.get("/api/v1/openapi.json").json(t, &doc)
	var op struct {
		Parameters []struct{ Name, Description string } `json:"parameters"`
	}
	if err := json.Unmarshal(doc.Paths["/api/v1/plugins"]["get"], &op); err != nil {
		t.Fatal(err)
	}
	for _, p := range op.Parameters {
		if p.Name == "q" {
			if want := fmt.Sprintf("first %d distinct words", store.SearchWords); !strings.Contains(p.Description, want) {
				t.Errorf("q is described as %q, want it to say %q", p.Description, want)
			}
			return
		}
	}
	t.Error("GET /api/v1/plugins documents no q parameter")
}
