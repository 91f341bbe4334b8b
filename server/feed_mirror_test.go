package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// mirror is the tool of docs/sync-for-tools.md: it keeps every listed package's document
// and stays current by reading the change feed after its serial, then fetching only the
// documents of the packages that changed.
type mirror struct {
	t      *testing.T
	base   string // where the registry (or its export) is served
	public string // the registry's public URL, which the documents' URLs start with
	static bool   // read the feed as fixed pages (/api/v1/changes/<since>.json), as from an export
	serial int64
	docs   map[string][]byte // package id → document
	etags  map[string]string
	// fetched counts the documents that came with a body (not 304) in the last sync.
	fetched int
}

func newMirror(t *testing.T, base, public string, static bool) *mirror {
	return &mirror{t: t, base: base, public: public, static: static, docs: map[string][]byte{}, etags: map[string]string{}}
}

// get fetches a URL of the registry from where the mirror reads it.
func (m *mirror) get(u, etag string) (int, []byte) {
	m.t.Helper()
	req, err := http.NewRequest(http.MethodGet, m.base+strings.TrimPrefix(u, m.public), nil)
	if err != nil {
		m.t.Fatal(err)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		m.t.Fatal(err)
	}
	if res.StatusCode == http.StatusOK {
		if tag := res.Header.Get("ETag"); tag != "" {
			m.etags[u] = tag
		}
	}
	return res.StatusCode, body
}

// full is the mirror's first fetch (and its answer to a "list" change or a 410): the
// listing, then every document it names; documents not listed any more are dropped.
func (m *mirror) full() {
	m.t.Helper()
	status, body := m.get(m.public+"/api/v1/index.json", "")
	var lst struct {
		Serial   int64 `json:"serial"`
		Packages []struct{ ID, URL string }
	}
	if status != http.StatusOK || json.Unmarshal(body, &lst) != nil {
		m.t.Fatalf("listing: %d %s", status, body)
	}
	listed := map[string]bool{}
	for _, p := range lst.Packages {
		listed[p.ID] = true
		m.fetch(p.ID, p.URL)
	}
	for id := range m.docs {
		if !listed[id] {
			delete(m.docs, id)
		}
	}
	m.serial = lst.Serial
}

// fetch refreshes one document, conditionally; a 404 means it is not listed any more.
func (m *mirror) fetch(id, u string) {
	m.t.Helper()
	status, body := m.get(u, m.etags[u])
	switch status {
	case http.StatusOK:
		m.docs[id] = body
		m.fetched++
	case http.StatusNotModified:
	case http.StatusNotFound:
		delete(m.docs, id)
	default:
		m.t.Fatalf("document %s: %d %s", u, status, body)
	}
}

// sync reads the feed after the mirror's serial to its end, then fetches what changed.
func (m *mirror) sync() {
	m.t.Helper()
	m.fetched = 0
	next := fmt.Sprintf("%s/api/v1/changes?since=%d", m.public, m.serial)
	if m.static {
		next = fmt.Sprintf("%s/api/v1/changes/%d.json", m.public, m.serial-m.serial%1000)
	}
	changed, relist, serial := map[string]string{}, false, m.serial
	for next != "" {
		status, body := m.get(next, "")
		if status == http.StatusGone {
			m.full()
			return
		}
		var p feedPage
		if status != http.StatusOK || json.Unmarshal(body, &p) != nil {
			m.t.Fatalf("feed %s: %d %s", next, status, body)
		}
		if p.CompleteSince > m.serial {
			m.full()
			return
		}
		for _, c := range p.Changes {
			switch {
			case c.Serial <= m.serial: // a static page starts before the mirror's serial
			case c.Change == "list":
				relist = true
			default:
				changed[c.Package] = c.IndexURL
			}
		}
		serial, next = p.Serial, ""
		if p.Next != nil {
			next = *p.Next
		}
	}
	if relist {
		m.full()
	}
	for id, u := range changed {
		m.fetch(id, u)
	}
	m.serial = max(m.serial, serial)
}

// TestMirrorStaysCurrent runs the tool of docs/sync-for-tools.md against a live registry
// and against its static export: after every round (publish, yank, publish again, a list
// reload) its documents equal a fresh full fetch, and it fetched only the documents of the
// packages that changed.
func TestMirrorStaysCurrent(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	live := newMirror(t, e.srv.URL, e.srv.URL, false)
	paged := newMirror(t, e.srv.URL, e.srv.URL, true) // the same tool on the fixed pages
	live.full()
	paged.full()
	export := newStaticExport(t, e)
	exported := newMirror(t, export.srv.URL, e.srv.URL, true)
	exported.full()

	rounds := []struct {
		name    string
		do      func()
		fetched int
	}{
		{"publish", func() { e.publishVersion("acme-hello", "1.0.0") }, 1},
		{"yank", func() {
			e.mustPost("/api/v1/plugins/acme-hello/versions/1.0.0/yank", map[string]string{"reason": "broken"})
		}, 1},
		{"publish again", func() { e.publishVersion("acme-hello", "1.1.0") }, 1},
		{"publish two packages", func() { e.publishVersion("acme-hello", "1.2.0"); e.publishVersion("acme-other", "0.1.0") }, 2},
		{"deprecate one", func() { e.mustPost("/api/v1/plugins/acme-other/deprecate", map[string]string{"reason": "old"}) }, 1},
		{"nothing", func() {}, 0},
		{"delist one", func() {
			l, probs := index.ParseList([]byte("plugins:\n  - id: acme-hello\n    repo: acme/kandev-plugin-hello\n    owners: [acme]\n"))
			if l == nil || probs.HasErrors() {
				t.Fatal(probs)
			}
			if err := e.svc.SetList(ctx, l, "test"); err != nil {
				t.Fatal(err)
			}
		}, 0},
	}
	for _, r := range rounds {
		r.do()
		fresh := newMirror(t, e.srv.URL, e.srv.URL, false)
		fresh.full()
		for _, m := range []*mirror{live, paged} {
			m.sync()
			if diff := cmp.Diff(stringDocs(fresh.docs), stringDocs(m.docs)); diff != "" {
				t.Errorf("after %s, the mirror (static pages %v) differs from a full fetch (-full +mirror):\n%s", r.name, m.static, diff)
			}
			if m.fetched != r.fetched || m.serial != fresh.serial {
				t.Errorf("after %s (static pages %v): fetched %d documents at serial %d, want %d at %d", r.name, m.static, m.fetched, m.serial, r.fetched, fresh.serial)
			}
		}
		if r.name == "publish again" || r.name == "delist one" {
			export.refresh()
			exported.sync()
			if diff := cmp.Diff(stringDocs(fresh.docs), stringDocs(exported.docs)); diff != "" {
				t.Errorf("after %s, the mirror of the export differs from a full fetch (-full +mirror):\n%s", r.name, diff)
			}
		}
	}
	if _, ok := live.docs["acme-other"]; ok || len(live.docs) != 1 {
		t.Errorf("after the delisting the mirror holds %d documents, acme-other among them: %v", len(live.docs), ok)
	}
}

// staticExport is an export of a registry served as plain files, as a CDN would.
type staticExport struct {
	e   *env
	dir string
	srv *httptest.Server
}

func newStaticExport(t *testing.T, e *env) *staticExport {
	x := &staticExport{e: e, dir: filepath.Join(t.TempDir(), "export")}
	x.refresh()
	x.srv = httptest.NewServer(http.FileServer(http.Dir(x.dir)))
	t.Cleanup(x.srv.Close)
	return x
}

// refresh exports the registry again over the same folder.
func (x *staticExport) refresh() {
	x.e.t.Helper()
	if err := x.e.svc.Export(context.Background(), x.dir, nil); err != nil {
		x.e.t.Fatal(err)
	}
}

func stringDocs(docs map[string][]byte) map[string]string {
	out := map[string]string{}
	for id, d := range docs {
		out[id] = string(d)
	}
	return out
}

// TestExportAnswersAsTheRegistry: every sync file of an export holds the bytes the registry
// answers at the same path, so a tool cannot tell them apart.
func TestExportAnswersAsTheRegistry(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	e.publishVersion("acme-other", "0.1.0")
	e.mustPost("/api/v1/plugins/acme-hello/versions/1.0.0/yank", map[string]string{"reason": "broken"})
	x := newStaticExport(t, e)
	var paths []string
	err := filepath.WalkDir(filepath.Join(x.dir, "api"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(x.dir, path)
		paths = append(paths, "/"+filepath.ToSlash(rel))
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if live := e.get("/"+filepath.ToSlash(rel), "Accept-Encoding", "identity"); live.Status != http.StatusOK || string(live.Body) != string(data) {
			t.Errorf("%s: the export holds\n%s\nthe registry answers %d\n%s", rel, data, live.Status, live.Body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	want := []string{"/api/v1/changes/0.json", "/api/v1/index.json", "/api/v1/index/acme-hello.json", "/api/v1/index/acme-other.json"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("sync files of the export (-want +got):\n%s", diff)
	}
}
