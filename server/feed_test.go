package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// packageDoc is GET /api/v1/index/{id}.json as a client reads it.
type packageDoc struct {
	ID       string        `json:"id"`
	Releases []releaseLine `json:"releases"`
	State    struct {
		Deprecated *struct {
			Reason      string `json:"reason"`
			Replacement string `json:"replacement"`
		} `json:"deprecated"`
		Yanked []struct {
			Version string `json:"version"`
			Reason  string `json:"reason"`
		} `json:"yanked"`
		Curated []struct {
			Version   string `json:"version"`
			MaxKandev string `json:"max_kandev"`
			Reason    string `json:"reason"`
		} `json:"curated"`
	} `json:"state"`
}

type releaseLine struct {
	Version          string   `json:"version"`
	Kind             string   `json:"kind"`
	PackageURL       string   `json:"package_url"`
	PackageSHA256    string   `json:"package_sha256"`
	Size             int64    `json:"size"`
	APIVersion       int      `json:"api_version"`
	MinKandevVersion string   `json:"min_kandev_version"`
	Platforms        []string `json:"platforms"`
}

// feedPage is GET /api/v1/changes as a client reads it.
type feedPage struct {
	Serial        int64  `json:"serial"`
	CompleteSince int64  `json:"complete_since"`
	Since         int64  `json:"since"`
	Error         string `json:"error"`
	Changes       []struct {
		Serial   int64  `json:"serial"`
		Change   string `json:"change"`
		Package  string `json:"package"`
		Version  string `json:"version"`
		IndexURL string `json:"index_url"`
	} `json:"changes"`
	Next *string `json:"next"`
}

func (e *env) publishVersion(id, version string) []byte {
	e.t.Helper()
	data := pkg(e.t, id, version, "Says hello")
	if r := e.publish(adminToken, id+"-"+version+".tar.gz", data); r.Status != http.StatusCreated {
		e.t.Fatalf("publish %s@%s: %d %s", id, version, r.Status, r.Body)
	}
	return data
}

func (e *env) mustPost(path string, body any) {
	e.t.Helper()
	if r := e.post(path, adminToken, body); r.Status != http.StatusOK {
		e.t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func TestPackageDocument(t *testing.T) {
	e := newEnv(t, "")
	one := e.publishVersion("acme-hello", "1.0.0")
	first := e.get("/api/v1/index/acme-hello.json")
	two := e.publishVersion("acme-hello", "1.1.0")
	e.mustPost("/api/v1/plugins/acme-hello/versions/1.0.0/yank", map[string]string{"reason": "broken build"})
	e.mustPost("/api/v1/plugins/acme-hello/deprecate", map[string]string{"reason": "use acme-other", "replacement": "acme-other"})
	if c := e.post("/api/v1/admin/compat/acme-hello/versions/1.1.0", adminToken, map[string]string{"max_kandev": "0.95.0", "reason": "breaks on 0.96"}); c.Status != http.StatusOK {
		t.Fatalf("curation: %d %s", c.Status, c.Body)
	}

	r := e.get("/api/v1/index/acme-hello.json")
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("package document: %d %s, Cache-Control %q (caches must revalidate)", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
	}
	var doc packageDoc
	r.json(t, &doc)
	line := func(v string, data []byte) releaseLine {
		return releaseLine{Version: v, Kind: "plugin", PackageURL: e.srv.URL + "/packages/acme-hello/acme-hello-" + v + ".tar.gz",
			PackageSHA256: sha(data), Size: int64(len(data)), APIVersion: 2, Platforms: []string{"linux-amd64"}}
	}
	if diff := cmp.Diff([]releaseLine{line("1.0.0", one), line("1.1.0", two)}, doc.Releases); diff != "" || doc.ID != "acme-hello" {
		t.Errorf("releases of %q (-want +got):\n%s", doc.ID, diff)
	}
	if len(doc.State.Yanked) != 1 || doc.State.Yanked[0].Version != "1.0.0" || doc.State.Yanked[0].Reason != "broken build" {
		t.Errorf("yanked = %+v, want 1.0.0 with its reason", doc.State.Yanked)
	}
	if d := doc.State.Deprecated; d == nil || d.Reason != "use acme-other" || d.Replacement != "acme-other" {
		t.Errorf("deprecated = %+v", d)
	}
	if c := doc.State.Curated; len(c) != 1 || c[0].Version != "1.1.0" || c[0].MaxKandev != "0.95.0" || c[0].Reason != "breaks on 0.96" {
		t.Errorf("curated = %+v, want 1.1.0 up to Kandev 0.95.0 with its reason", c)
	}

	// One line per release, and a release's line is the same bytes after a yank and a
	// newer publish: a mirror keeps lines it has.
	lines := strings.Split(string(r.Body), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[1], `{"version":"1.0.0"`) || !strings.HasPrefix(lines[2], `{"version":"1.1.0"`) {
		t.Fatalf("not one release per line:\n%s", r.Body)
	}
	if firstLines := strings.Split(string(first.Body), "\n"); strings.TrimSuffix(firstLines[1], ",") != strings.TrimSuffix(lines[1], ",") {
		t.Errorf("the line of 1.0.0 changed:\n%s\n%s", firstLines[1], lines[1])
	}

	etag := r.Header.Get("ETag")
	if etag == "" || strings.HasPrefix(etag, "W/") || etag == first.Header.Get("ETag") {
		t.Errorf("ETag %q (before the changes %q): want a strong ETag that changed", etag, first.Header.Get("ETag"))
	}
	if again := e.get("/api/v1/index/acme-hello.json"); again.Header.Get("ETag") != etag || !bytes.Equal(again.Body, r.Body) {
		t.Errorf("the same state gave other bytes or another ETag")
	}
	if nm := e.get("/api/v1/index/acme-hello.json", "If-None-Match", etag); nm.Status != http.StatusNotModified || len(nm.Body) != 0 {
		t.Errorf("If-None-Match: %d with %d bytes, want 304 and none", nm.Status, len(nm.Body))
	}
	if old := e.get("/api/v1/index/acme-hello.json", "If-None-Match", first.Header.Get("ETag")); old.Status != http.StatusOK {
		t.Errorf("If-None-Match with an old ETag: %d, want 200", old.Status)
	}
	head := e.do(mustRequest(t, http.MethodHead, e.srv.URL+"/api/v1/index/acme-hello.json"))
	if head.Status != http.StatusOK || len(head.Body) != 0 || head.Header.Get("ETag") != etag || head.Header.Get("Content-Length") != fmt.Sprint(len(r.Body)) {
		t.Errorf("HEAD: %d, %d bytes, ETag %q, length %q", head.Status, len(head.Body), head.Header.Get("ETag"), head.Header.Get("Content-Length"))
	}
}

func TestPackageDocumentGzip(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4"} {
		e.publishVersion("acme-hello", v)
	}
	plain := e.get("/api/v1/index/acme-hello.json", "Accept-Encoding", "identity")
	if len(plain.Body) < 1024 {
		t.Fatalf("document of 5 releases is %d bytes; the test needs one over the gzip threshold", len(plain.Body))
	}
	gz := e.get("/api/v1/index/acme-hello.json", "Accept-Encoding", "gzip")
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") == plain.Header.Get("ETag") {
		t.Fatalf("gzip answer: encoding %q, ETag %q (plain %q)", gz.Header.Get("Content-Encoding"), gz.Header.Get("ETag"), plain.Header.Get("ETag"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(body, plain.Body) {
		t.Errorf("gunzipped answer differs from the plain one (%v)", err)
	}
	if nm := e.get("/api/v1/index/acme-hello.json", "Accept-Encoding", "gzip", "If-None-Match", gz.Header.Get("ETag")); nm.Status != http.StatusNotModified {
		t.Errorf("If-None-Match on the gzip ETag: %d", nm.Status)
	}
}

func TestPackageDocumentNotFound(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	e.publishVersion("acme-other", "1.0.0")
	if r := e.get("/api/v1/index/acme-other.json"); r.Status != http.StatusOK {
		t.Fatalf("acme-other while listed: %d", r.Status)
	}
	l, probs := index.ParseList([]byte("plugins:\n  - id: acme-hello\n    repo: acme/kandev-plugin-hello\n    owners: [acme]\n  - id: acme-third\n    repo: acme/third\n"))
	if l == nil || probs.HasErrors() {
		t.Fatal(probs)
	}
	if err := e.svc.SetList(context.Background(), l, "test"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/api/v1/index/nope.json",          // never heard of
		"/api/v1/index/acme-other.json",    // published, then delisted
		"/api/v1/index/acme-third.json",    // listed, nothing published
		"/api/v1/index/acme-hello",         // no .json
		"/api/v1/index/.json",              // no id
		"/api/v1/index/acme-hello.json.gz", // another name
		"/api/v1/index/%2e%2e%2findex.json",
	} {
		r := e.get(path)
		var body struct{ Error string }
		if r.Status != http.StatusNotFound || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %s, want a 404 JSON problem", path, r.Status, r.Header.Get("Content-Type"))
			continue
		}
		r.json(t, &body)
		if body.Error == "" {
			t.Errorf("GET %s: 404 without a message", path)
		}
	}
	if r := e.get("/api/v1/index/acme-hello.json"); r.Status != http.StatusOK {
		t.Errorf("the listed package: %d", r.Status)
	}
}

// TestChangesFeed: each kind of change appears under the serial it bumped to, with its
// package, version and the URL of the document to refetch.
func TestChangesFeed(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	e.publishVersion("acme-hello", "1.1.0")
	e.mustPost("/api/v1/plugins/acme-hello/versions/1.1.0/yank", map[string]string{"reason": "broken"})
	e.mustPost("/api/v1/plugins/acme-hello/versions/1.1.0/unyank", nil)
	e.mustPost("/api/v1/plugins/acme-hello/deprecate", map[string]string{"reason": "old"})
	e.mustPost("/api/v1/plugins/acme-hello/deprecate", map[string]string{"reason": ""})
	e.publishVersion("acme-other", "0.1.0")
	if err := e.svc.SetList(context.Background(), e.svc.List(), "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.YankAll(context.Background(), "acme-other", "delisted", func(v string) store.AuditEntry {
		return store.AuditEntry{Actor: "t", Action: "yank", Target: "acme-other@" + v, Outcome: "ok"}
	}); err != nil {
		t.Fatal(err)
	}
	doc := e.srv.URL + "/api/v1/index/"
	want := []string{
		"1 publish acme-hello 1.0.0 " + doc + "acme-hello.json",
		"2 publish acme-hello 1.1.0 " + doc + "acme-hello.json",
		"3 yank acme-hello 1.1.0 " + doc + "acme-hello.json",
		"4 unyank acme-hello 1.1.0 " + doc + "acme-hello.json",
		"5 deprecate acme-hello  " + doc + "acme-hello.json",
		"6 undeprecate acme-hello  " + doc + "acme-hello.json",
		"7 publish acme-other 0.1.0 " + doc + "acme-other.json",
		"8 list   ",
		"9 yank_all acme-other  " + doc + "acme-other.json",
	}
	var page feedPage
	e.get("/api/v1/changes?since=0").json(t, &page)
	if diff := cmp.Diff(want, describeChanges(page)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if page.Serial != 9 || page.CompleteSince != 0 || page.Next != nil {
		t.Errorf("serial %d, complete_since %d, next %v; want 9, 0, null", page.Serial, page.CompleteSince, page.Next)
	}
	var idx struct{ Serial int64 }
	e.get("/index.json").json(t, &idx)
	if idx.Serial != page.Serial-1 { // the yank_all went to the store directly, without a rebuild
		t.Errorf("index.json serial %d, feed serial %d", idx.Serial, page.Serial)
	}
}

func describeChanges(p feedPage) []string {
	out := []string{}
	for _, c := range p.Changes {
		out = append(out, fmt.Sprintf("%d %s %s %s %s", c.Serial, c.Change, c.Package, c.Version, c.IndexURL))
	}
	return out
}

// TestChangesPaging follows next from since=0 at several limits: every change once, in
// order, pages of exactly limit until the last, next null on the last, and an empty page at
// the current serial.
func TestChangesPaging(t *testing.T) {
	e := newEnv(t, "")
	for _, v := range []string{"1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5"} {
		e.publishVersion("acme-hello", v)
	}
	for _, tt := range []struct {
		limit int
		sizes []int
	}{{1, []int{1, 1, 1, 1, 1, 1}}, {2, []int{2, 2, 2}}, {3, []int{3, 3}}, {4, []int{4, 2}}, {6, []int{6}}, {1000, []int{6}}} {
		next := fmt.Sprintf("%s/api/v1/changes?since=0&limit=%d", e.srv.URL, tt.limit)
		var sizes []int
		var serials []int64
		for next != "" && len(sizes) < 10 {
			var p feedPage
			r := e.get(strings.TrimPrefix(next, e.srv.URL))
			r.json(t, &p)
			sizes = append(sizes, len(p.Changes))
			for _, c := range p.Changes {
				serials = append(serials, c.Serial)
			}
			next = ""
			if p.Next != nil {
				next = *p.Next
			}
		}
		if diff := cmp.Diff(tt.sizes, sizes); diff != "" {
			t.Errorf("limit %d: page sizes (-want +got):\n%s", tt.limit, diff)
		}
		if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6}, serials); diff != "" {
			t.Errorf("limit %d: serials (-want +got):\n%s", tt.limit, diff)
		}
	}
	var p feedPage
	e.get("/api/v1/changes?since=6").json(t, &p)
	if len(p.Changes) != 0 || p.Next != nil || p.Serial != 6 || p.Since != 6 {
		t.Errorf("at the current serial: %+v, want no changes, next null, serial 6", p)
	}
	var def feedPage
	e.get("/api/v1/changes").json(t, &def)
	if len(def.Changes) != 6 || def.Since != 0 {
		t.Errorf("no parameters: %d changes since %d, want all 6 since 0", len(def.Changes), def.Since)
	}
}

func TestChangesRefusesHostileParameters(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	for _, tt := range []struct{ query, param string }{
		{"since=-1", "since"},
		{"since=abc", "since"},
		{"since=", "since"},
		{"since=1e3", "since"},
		{"since=0x10", "since"},
		{"since=%201", "since"},
		{"since=99999999999999999999", "since"},
		{"since=2", "since"}, // after the current serial
		{"limit=0", "limit"},
		{"limit=-5", "limit"},
		{"limit=1001", "limit"},
		{"limit=ten", "limit"},
		{"since=0&limit=" + strings.Repeat("9", 300), "limit"},
	} {
		r := e.get("/api/v1/changes?" + tt.query)
		var body struct{ Error string }
		r.json(t, &body)
		if r.Status != http.StatusBadRequest || !strings.HasPrefix(body.Error, tt.param+"=") {
			t.Errorf("?%s: %d %q, want 400 naming %s", tt.query, r.Status, body.Error, tt.param)
		}
		if len(body.Error) > 400 {
			t.Errorf("?%s: the message echoes %d bytes", tt.query, len(body.Error))
		}
	}
}

// TestChangesBeforeCompleteSince: a database whose feed began at serial 2 cannot say what
// changed before: a since below 2 is 410 with the serials a client needs, 2 and above work.
func TestChangesBeforeCompleteSince(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir)
	e.publishVersion("acme-hello", "1.0.0")
	e.publishVersion("acme-hello", "1.0.1")
	e.publishVersion("acme-hello", "1.0.2")
	e.close()
	db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(dir, "data", store.DBFile)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE meta SET value = '2' WHERE key = 'changes_complete_since'"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	e = newEnv(t, dir)
	for _, since := range []int{0, 1} {
		r := e.get(fmt.Sprintf("/api/v1/changes?since=%d", since))
		var p feedPage
		r.json(t, &p)
		if r.Status != http.StatusGone || p.CompleteSince != 2 || p.Serial != 3 || !strings.Contains(p.Error, fmt.Sprintf("since=%d is before serial 2", since)) {
			t.Errorf("since=%d: %d %+v, want 410 with complete_since 2 and serial 3", since, r.Status, p)
		}
	}
	var p feedPage
	if r := e.get("/api/v1/changes?since=2"); r.Status != http.StatusOK {
		t.Fatalf("since=2: %d", r.Status)
	} else {
		r.json(t, &p)
	}
	if len(p.Changes) != 1 || p.Changes[0].Serial != 3 || p.CompleteSince != 2 {
		t.Errorf("since=2: %+v, want the change at 3", p)
	}
}

// TestStaticFeedPages: /api/v1/changes/<since>.json answers as an export's file does.
func TestStaticFeedPages(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	e.publishVersion("acme-hello", "1.0.1")
	var p feedPage
	r := e.get("/api/v1/changes/0.json")
	r.json(t, &p)
	if r.Status != http.StatusOK || len(p.Changes) != 2 || p.Serial != 2 || p.Next != nil || p.Since != 0 {
		t.Errorf("page 0: %d %+v", r.Status, p)
	}
	for _, path := range []string{"/api/v1/changes/1000.json", "/api/v1/changes/1.json", "/api/v1/changes/-1000.json", "/api/v1/changes/0", "/api/v1/changes/x.json"} {
		if r := e.get(path); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.Status)
		}
	}
}

func mustRequest(t *testing.T, method, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestListing: the listing names every listed package with a release, at the serial it was
// read, under a strong ETag, and follows publishes and delistings.
func TestListing(t *testing.T) {
	e := newEnv(t, "")
	type listing struct {
		Serial        int64 `json:"serial"`
		CompleteSince int64 `json:"complete_since"`
		Packages      []struct{ ID, URL string }
	}
	read := func() (listing, response) {
		t.Helper()
		r := e.get("/api/v1/index.json")
		var l listing
		r.json(t, &l)
		return l, r
	}
	ids := func(l listing) string {
		var out []string
		for _, p := range l.Packages {
			if p.URL != e.srv.URL+"/api/v1/index/"+p.ID+".json" {
				t.Errorf("%s: url %s", p.ID, p.URL)
			}
			out = append(out, p.ID)
		}
		return fmt.Sprintf("%d %v", l.Serial, out)
	}
	if l, _ := read(); ids(l) != "0 []" || l.Packages == nil {
		t.Errorf("empty registry: %s (packages %v), want serial 0 and an empty list", ids(l), l.Packages)
	}
	e.publishVersion("acme-hello", "1.0.0")
	l, r := read()
	if ids(l) != "1 [acme-hello]" {
		t.Errorf("after a publish: %s", ids(l))
	}
	if nm := e.get("/api/v1/index.json", "If-None-Match", r.Header.Get("ETag")); nm.Status != http.StatusNotModified || r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("If-None-Match: %d, Cache-Control %q", nm.Status, r.Header.Get("Cache-Control"))
	}
	e.publishVersion("acme-other", "1.0.0")
	if l, _ := read(); ids(l) != "2 [acme-hello acme-other]" {
		t.Errorf("after a second package: %s", ids(l))
	}
	lst, probs := index.ParseList([]byte("plugins:\n  - id: acme-other\n    repo: acme/kandev-plugin-other\n"))
	if lst == nil || probs.HasErrors() {
		t.Fatal(probs)
	}
	if err := e.svc.SetList(context.Background(), lst, "test"); err != nil {
		t.Fatal(err)
	}
	if l, r2 := read(); ids(l) != "3 [acme-other]" || r2.Header.Get("ETag") == r.Header.Get("ETag") {
		t.Errorf("after delisting acme-hello: %s", ids(l))
	}
}
