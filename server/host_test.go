package server_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/server"
)

// hostPkg is a managed plugin of api_version api for linux-amd64, needing min (when set).
func hostPkg(t *testing.T, id, version string, api int, min string) []byte {
	t.Helper()
	m := fmt.Sprintf("id: %s\napi_version: %d\nversion: %q\ndisplay_name: Hello\ndescription: hi\nauthor: Acme\ncategories: [tools]\n", id, api, version)
	if min != "" {
		m += fmt.Sprintf("min_kandev_version: %q\n", min)
	}
	m += "runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(m)},
		"server/plugin-linux-amd64": {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"CHANGELOG.md":              {Data: []byte("## " + version + "\n\n- what " + version + " changed\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// newHostEnv is a registry with acme-hello 1.0.0 (api_version 1) and 2.0.0 (api_version
// 2, Kandev 0.92.0 or newer), and acme-other 1.0.0 (api_version 2 only).
func newHostEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, "")
	for _, p := range []struct {
		id, version string
		api         int
		min         string
	}{{"acme-hello", "1.0.0", 1, ""}, {"acme-hello", "2.0.0", 2, "0.92.0"}, {"acme-other", "1.0.0", 2, "0.92.0"}} {
		if r := e.publish(adminToken, p.id+"-"+p.version+".tar.gz", hostPkg(t, p.id, p.version, p.api, p.min)); r.Status != http.StatusCreated {
			t.Fatalf("publish %s@%s: %d %s", p.id, p.version, r.Status, r.Body)
		}
	}
	return e
}

type hostIndex struct {
	Plugins []struct {
		ID         string   `json:"id"`
		Version    string   `json:"version"`
		APIVersion int      `json:"api_version"`
		Platforms  []string `json:"platforms"`
	} `json:"plugins"`
}

func (h hostIndex) versions() string {
	var out []string
	for _, p := range h.Plugins {
		out = append(out, p.ID+"@"+p.Version)
	}
	return strings.Join(out, " ")
}

// TestHostIndexServedLikeIndexJSON: an unmodified host given the host-aware URL gets a
// schema_version 1 document of what it can install, with /index.json's HTTP behaviour.
func TestHostIndexServedLikeIndexJSON(t *testing.T) {
	e := newHostEnv(t)
	const path = "/kandev/0.91.0/linux-amd64/index.json"
	r := e.get(path, "Accept-Encoding", "identity")
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("ETag") == "" {
		t.Fatalf("GET %s: %d %q etag %q: %s", path, r.Status, r.Header.Get("Content-Type"), r.Header.Get("ETag"), r.Body)
	}
	var doc hostIndex
	r.json(t, &doc)
	if got := doc.versions(); got != "acme-hello@1.0.0" {
		t.Errorf("Kandev 0.91.0 is offered %q, want acme-hello@1.0.0 only (api_version 1)", got)
	}
	if got := e.get("/kandev/0.92.0/linux-amd64/index.json"); !bytes.Contains(got.Body, []byte(`"version":"2.0.0"`)) || !bytes.Contains(got.Body, []byte(`"id":"acme-other"`)) {
		t.Errorf("Kandev 0.92.0: %s", got.Body)
	}
	if r2 := e.get(path, "Accept-Encoding", "identity", "If-None-Match", r.Header.Get("ETag")); r2.Status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", r2.Status)
	}
	gz := e.get(path, "Accept-Encoding", "gzip")
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") == r.Header.Get("ETag") {
		t.Fatalf("gzip: encoding %q etag %q", gz.Header.Get("Content-Encoding"), gz.Header.Get("ETag"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, r.Body) {
		t.Error("the gzip body is not the document")
	}
	if h := e.request(http.MethodHead, path); h.Status != http.StatusOK || len(h.Body) != 0 || h.Header.Get("Content-Length") != fmt.Sprint(len(r.Body)) {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", h.Status, len(h.Body), h.Header.Get("Content-Length"))
	}
}

// TestHostIndexRefusesHostileHosts: malformed versions are 400 and unknown platforms 404,
// as JSON naming the rule, whatever their length.
func TestHostIndexRefusesHostileHosts(t *testing.T) {
	e := newHostEnv(t)
	tests := []struct {
		path   string
		status int
		rule   string
	}{
		{"/kandev/v0.91.0/linux-amd64/index.json", http.StatusBadRequest, "host.version"},
		{"/kandev/0.91/linux-amd64/index.json", http.StatusBadRequest, "host.version"},
		{"/kandev/" + strings.Repeat("9", 4000) + "/linux-amd64/index.json", http.StatusBadRequest, "host.version"},
		{"/kandev/0.91.0/linux_x64/index.json", http.StatusNotFound, "host.platform"},
		{"/kandev/0.91.0/" + strings.Repeat("a-", 2000) + "/index.json", http.StatusNotFound, "host.platform"},
		{"/kandev/0.91.0/%00-amd64/index.json", http.StatusNotFound, "host.platform"},
		{"/api/v1/plugins/acme-hello/compatibility?kandev=0.91.0&platform=", http.StatusBadRequest, "host.platform"},
		{"/api/v1/plugins/acme-hello/compatibility?platform=linux-amd64", http.StatusBadRequest, "host.version"},
		{"/api/v1/plugins/acme-hello/upgrade?from=newest&kandev=0.91.0&platform=linux-amd64", http.StatusBadRequest, "upgrade.from"},
	}
	for _, tt := range tests {
		r := e.get(tt.path, "Accept", "text/html")
		var body struct {
			Error    string `json:"error"`
			Problems []struct {
				Rule string `json:"rule"`
			} `json:"problems"`
		}
		r.json(t, &body)
		if r.Status != tt.status || len(body.Problems) == 0 || body.Problems[0].Rule != tt.rule || len(r.Body) > 2000 {
			t.Errorf("GET %.60s: %d %d bytes %s; want %d with rule %s", tt.path, r.Status, len(r.Body), truncateBody(r.Body), tt.status, tt.rule)
		}
	}
	if r := e.get("/kandev/0.91.0/linux-amd64/index/all.zz.json"); r.Status != http.StatusNotFound {
		t.Errorf("unknown shard: %d", r.Status)
	}
}

func truncateBody(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// TestCompatibilityUpgradeAndCurationAPI: the API says why a plugin is left out, answers
// upgrades forwards only, and an admin's curation narrows the host-aware index.
func TestCompatibilityUpgradeAndCurationAPI(t *testing.T) {
	e := newHostEnv(t)
	var rep struct {
		Offered  *string `json:"offered"`
		Releases []struct {
			Version string `json:"version"`
			Reasons []struct {
				Code string `json:"code"`
			} `json:"reasons"`
		} `json:"releases"`
	}
	e.get("/api/v1/plugins/acme-other/compatibility?kandev=0.91.0&platform=linux-amd64").json(t, &rep)
	if rep.Offered != nil || len(rep.Releases) != 1 || len(rep.Releases[0].Reasons) != 2 ||
		rep.Releases[0].Reasons[0].Code != "api_version" || rep.Releases[0].Reasons[1].Code != "min_kandev_version" {
		t.Errorf("acme-other on 0.91.0: %+v, want left out for api_version and min_kandev_version", rep)
	}
	var up struct {
		Upgrade   string `json:"upgrade"`
		Changelog []struct {
			Version   string `json:"version"`
			NotesHTML string `json:"notes_html"`
		} `json:"changelog"`
	}
	e.get("/api/v1/plugins/acme-hello/upgrade?from=1.0.0&kandev=0.93.0&platform=linux-amd64").json(t, &up)
	if up.Upgrade != "2.0.0" || len(up.Changelog) != 1 || !strings.Contains(up.Changelog[0].NotesHTML, "what 2.0.0 changed") {
		t.Errorf("upgrade from 1.0.0 on 0.93.0: %+v", up)
	}
	e.get("/api/v1/plugins/acme-hello/upgrade?from=2.0.0&kandev=0.93.0&platform=linux-amd64").json(t, &up)
	if up.Upgrade != "none" {
		t.Errorf("upgrade from the newest: %q, want none", up.Upgrade)
	}

	const set = "/api/v1/admin/compat/acme-hello/versions/2.0.0"
	body := map[string]string{"max_kandev": "0.92.5", "reason": "breaks on 0.93"}
	if r := e.post(set, "", body); r.Status != http.StatusUnauthorized {
		t.Errorf("unauthenticated curation: %d", r.Status)
	}
	if r := e.post(set, adminToken, map[string]string{"max_kandev": "0.91.0", "reason": "x"}); r.Status != http.StatusUnprocessableEntity || !bytes.Contains(r.Body, []byte("compat.max_kandev.below_min")) || !bytes.Contains(r.Body, []byte(`"path":"max_kandev"`)) {
		t.Errorf("max below min: %d %s", r.Status, r.Body)
	}
	if r := e.post(set, adminToken, body); r.Status != http.StatusOK {
		t.Fatalf("curation: %d %s", r.Status, r.Body)
	}
	var doc hostIndex
	e.get("/kandev/0.93.0/linux-amd64/index.json").json(t, &doc)
	if got := doc.versions(); !strings.Contains(got, "acme-hello@1.0.0") {
		t.Errorf("0.93.0 after curating 2.0.0 to 0.92.5: %q, want acme-hello@1.0.0", got)
	}
	e.get("/api/v1/plugins/acme-hello/upgrade?from=1.0.0&kandev=0.93.0&platform=linux-amd64").json(t, &up)
	if up.Upgrade != "none" {
		t.Errorf("upgrade to a curated release: %q, want none", up.Upgrade)
	}
	label := e.page("/plugins/acme-hello").Find(`[data-version="2.0.0"] [data-testid="curated-label"]`)
	if label.Length() != 1 || !strings.Contains(label.Text(), "0.92.5") || label.AttrOr("title", "") != "breaks on 0.93" {
		t.Errorf("plugin page: curated label %q (title %q), want Kandev ≤ 0.92.5 with the reason", label.Text(), label.AttrOr("title", ""))
	}
	if r := e.post(set+"/clear", adminToken, nil); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"cleared":true`)) {
		t.Errorf("clear: %d %s", r.Status, r.Body)
	}
	e.get("/kandev/0.93.0/linux-amd64/index.json").json(t, &doc)
	if got := doc.versions(); !strings.Contains(got, "acme-hello@2.0.0") {
		t.Errorf("after clearing: %q", got)
	}
	if n := e.page("/plugins/acme-hello").Find(`[data-testid="curated-label"]`).Length(); n != 0 {
		t.Errorf("plugin page after clearing: %d curated labels", n)
	}
}

// TestHostIndexShardsAreServed: a partial host-aware document names shard URLs under its
// own path, and they answer.
func TestHostIndexShardsAreServed(t *testing.T) {
	e := startEnv(t, "", func(c *ingest.Config) { c.MaxIndexBytes = 1200 }, nil)
	for _, id := range []string{"acme-hello", "acme-other"} {
		if r := e.publish(adminToken, id+"-1.0.0.tar.gz", hostPkg(t, id, "1.0.0", 1, "")); r.Status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", id, r.Status, r.Body)
		}
	}
	var doc struct {
		Partial *struct {
			Shards []string `json:"shards"`
		} `json:"partial"`
	}
	r := e.get("/kandev/0.91.0/linux-amd64/index.json", "Accept-Encoding", "identity")
	r.json(t, &doc)
	if doc.Partial == nil || len(doc.Partial.Shards) == 0 {
		t.Fatalf("not partial at a 1200-byte limit (%d bytes): %s", len(r.Body), r.Body)
	}
	for _, u := range doc.Partial.Shards {
		path := strings.TrimPrefix(u, e.srv.URL)
		if !strings.HasPrefix(path, "/kandev/0.") {
			t.Errorf("shard URL %s is not under the host-aware path", u)
			continue
		}
		if sr := e.get(path, "Accept-Encoding", "identity"); sr.Status != http.StatusOK || len(sr.Body) > 1200 || !bytes.Contains(sr.Body, []byte(`"schema_version":1`)) {
			t.Errorf("GET %s: %d, %d bytes", path, sr.Status, len(sr.Body))
		}
	}
}

// TestHostBuildsAreChargedToTheClient: a host-aware request whose class is not built yet
// spends one of the client's builds; once they are spent it gets 429 with Retry-After and
// rule rate.host_build, while classes already built go on answering it, and other
// clients keep their own budget.
func TestHostBuildsAreChargedToTheClient(t *testing.T) {
	const ip1, ip2 = "203.0.113.1", "203.0.113.2"
	e := newEnvWith(t, server.Config{RateLimits: server.RateLimits{HostBuild: 2, TrustForwarded: true}}, nil, true)
	for _, p := range []struct {
		id, version string
		api         int
		min         string
	}{{"acme-hello", "1.0.0", 1, ""}, {"acme-hello", "2.0.0", 2, "0.92.0"}} {
		if r := e.publish(adminToken, p.id+"-"+p.version+".tar.gz", hostPkg(t, p.id, p.version, p.api, p.min)); r.Status != http.StatusCreated {
			t.Fatalf("publish %s@%s: %d %s", p.id, p.version, r.Status, r.Body)
		}
	}
	calls := []call{
		{http.MethodGet, "/kandev/0.91.0/linux-amd64/index.json", "", ip1, 200}, // a build
		{http.MethodGet, "/kandev/0.92.0/linux-amd64/index.json", "", ip1, 200}, // a build: the budget is spent
		{http.MethodGet, "/kandev/0.95.0/linux-amd64/index.json", "", ip1, 429}, // a third class
		{http.MethodGet, "/kandev/0.91.7/linux-amd64/index.json", "", ip1, 200}, // 0.91.0's class: built, free
		{http.MethodGet, "/kandev/0.92.0/linux-amd64/index.json", "", ip1, 200},
		{http.MethodGet, "/kandev/0.95.0/linux-amd64/index.json", "", ip2, 200}, // another client's budget
		{http.MethodGet, "/kandev/0.96.0/linux-amd64/index.json", "", ip1, 200}, // built by ip2 meanwhile: free
	}
	for i, c := range calls {
		r := e.call(c)
		if r.Status != c.want {
			t.Fatalf("call %d %s (ip %s): status %d, want %d: %s", i, c.path, c.ip, r.Status, c.want, r.Body)
		}
		if c.want == http.StatusTooManyRequests {
			checkTooMany(t, r)
			if !hasRule(t, r, "rate.host_build") {
				t.Errorf("call %d: 429 without rule rate.host_build: %s", i, r.Body)
			}
		}
	}
}
