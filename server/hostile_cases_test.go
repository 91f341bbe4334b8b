package server_test

import (
	"archive/tar"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// TestHostileManifests: manifest attacks of issue #13 through HTTP.
func TestHostileManifests(t *testing.T) {
	bel := strings.Repeat(`\a`, 400<<10) // 400 Ki BEL characters from 800 KiB of escapes
	runHostile(t, []hostileCase{
		{name: "index poisoning: control-character description reused through aliases", status: http.StatusUnprocessableEntity,
			rule: "manifest.field.characters", pkg: func(t *testing.T) []byte {
				m := "id: acme-hello\napi_version: 2\nversion: \"1.0.0\"\ndescription: &d \"" + bel + "\"\ndisplay_name: *d\nauthor: *d\n" +
					"categories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
				return withManifest(t, m)
			}},
		{name: "index poisoning: an ordinary 900 KiB description", status: http.StatusUnprocessableEntity, rule: "manifest.field.length",
			pkg: func(t *testing.T) []byte {
				m := strings.Replace(manifestYAML("acme-hello", "1.0.0", ""), "description: Says hello", "description: "+strings.Repeat("hello world ", 75<<10), 1)
				return withManifest(t, m)
			}},
		{name: "YAML merge-key bomb", status: http.StatusUnprocessableEntity, rule: "manifest.yaml.budget", maxBody: 64 << 10,
			pkg: func(t *testing.T) []byte { return withManifest(t, mergeBomb(1000, 10000)) }},
		{name: "merge-key bomb with a token that may not publish the id", token: "stranger", status: http.StatusForbidden,
			rule: "publish.forbidden", maxBody: 4 << 10,
			pkg: func(t *testing.T) []byte { return withManifest(t, mergeBomb(1000, 10000)) }},
		{name: "second YAML document", status: http.StatusUnprocessableEntity, rule: "manifest.yaml.documents",
			pkg: func(t *testing.T) []byte {
				return withManifest(t, manifestYAML("acme-hello", "1.0.0", "")+"---\nid: something-else\n")
			}},
		{name: "alias to an alias cycle", status: http.StatusUnprocessableEntity, rule: "manifest.yaml.budget",
			pkg: func(t *testing.T) []byte {
				return withManifest(t, manifestYAML("acme-hello", "1.0.0", "a: &a [*a, *a]\n"))
			}},
	})
}

// mergeBomb is a manifest with keys keys merged merges times through `<<`.
func mergeBomb(keys, merges int) string {
	var b strings.Builder
	b.WriteString(manifestYAML("acme-hello", "1.0.0", "base: &base\n"))
	for i := range keys {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	b.WriteString("bombs:\n")
	for i := range merges {
		fmt.Fprintf(&b, "  b%d: {<<: *base}\n", i)
	}
	return b.String()
}

// TestHostileVersions: every non-SemVer form is refused with the nearest valid version,
// from the file name before the package is read, or from the manifest.
func TestHostileVersions(t *testing.T) {
	var cases []hostileCase
	for _, v := range []string{"v1.0.0", "1.0.0+build", "1.0.0.0", "01.0.0", "1.0.0?x#y", `1.0.0";evil="`, "1.0.0-\u202e", "1.0.0\x1b"} {
		status, rule := http.StatusUnprocessableEntity, "publish.filename"
		if strings.ContainsRune(v, 0x1b) { // a control character in a part header is a malformed request
			status, rule = http.StatusBadRequest, ""
		}
		cases = append(cases,
			hostileCase{name: "file name " + strconv.Quote(v), file: "acme-hello-" + v + ".tar.gz", status: status,
				rule: rule, says: map[bool]string{true: `did you mean \"acme-hello-1.0.0.tar.gz\"?`}[rule != ""], pkg: func(t *testing.T) []byte { return withManifest(t, manifestYAML("acme-hello", "1.0.0", "")) }},
			hostileCase{name: "manifest " + strconv.Quote(v), status: http.StatusUnprocessableEntity, rule: "manifest.version.semver", says: `use \"1.0.0\"`,
				pkg: func(t *testing.T) []byte {
					return withManifest(t, strings.Replace(manifestYAML("acme-hello", "1.0.0", ""), `version: "1.0.0"`, "version: "+strconv.Quote(v), 1))
				}})
	}
	runHostile(t, cases)
}

// TestHostileArchives: archive attacks through HTTP.
func TestHostileArchives(t *testing.T) {
	m := manifestYAML("acme-hello", "1.0.0", "")
	launcher := "#!/bin/sh\necho hello\n"
	runHostile(t, []hostileCase{
		{name: "path traversal", status: http.StatusUnprocessableEntity, rule: "archive.path.dotdot",
			pkg: func(t *testing.T) []byte { return withManifest(t, m, regular("../evil", "x")) }},
		{name: "symlink", status: http.StatusUnprocessableEntity, rule: "archive.symlink",
			pkg: func(t *testing.T) []byte {
				return withManifest(t, m, tarEntry{hdr: &tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}})
			}},
		{name: "200k symlinks draw a capped problem list", status: http.StatusUnprocessableEntity, rule: "archive.symlink",
			pkg: func(t *testing.T) []byte {
				more := make([]tarEntry, 0, 200000)
				for i := range 200000 {
					more = append(more, tarEntry{hdr: &tar.Header{Name: "l" + strconv.Itoa(i), Typeflag: tar.TypeSymlink, Linkname: "x", Mode: 0o777}})
				}
				return withManifest(t, m, more...)
			}},
		{name: "global PAX header renames the next entry for GNU tar", status: http.StatusUnprocessableEntity, rule: "archive.pax.global",
			pkg: func(t *testing.T) []byte {
				return buildPackage(t, []tarEntry{regular("manifest.yaml", m), executable("server/plugin-linux-amd64", launcher),
					{hdr: &tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"path": "server/plugin-linux-amd64"}}},
					regular("evil.bin", "#!/bin/sh\nrm -rf ~\n")}, nil)
			}},
		{name: "unknown PAX key", status: http.StatusUnprocessableEntity, rule: "archive.pax.key",
			pkg: func(t *testing.T) []byte {
				e := regular("README.md", "# Hello\n")
				e.hdr.PAXRecords = map[string]string{"SCHILY.xattr.user.evil": "1"}
				e.hdr.Format = tar.FormatPAX
				return buildPackage(t, []tarEntry{regular("manifest.yaml", m), executable("server/plugin-linux-amd64", launcher), e}, nil)
			}},
		{name: "entries after the end-of-archive marker", status: http.StatusUnprocessableEntity, rule: "archive.trailing_data",
			pkg: func(t *testing.T) []byte {
				extra := buildTarOnly(t, []tarEntry{executable("server/plugin-linux-amd64", "#!/bin/sh\necho evil\n")})
				return buildPackage(t, []tarEntry{regular("manifest.yaml", m), executable("server/plugin-linux-amd64", launcher)}, extra)
			}},
		{name: "manifest.yaml and MANIFEST.YAML", status: http.StatusUnprocessableEntity, rule: "archive.name.collision",
			pkg: func(t *testing.T) []byte { return withManifest(t, m, regular("MANIFEST.YAML", "id: evil\n")) }},
		{name: "NFC and NFD twins", status: http.StatusUnprocessableEntity, rule: "archive.name.collision",
			pkg: func(t *testing.T) []byte {
				return withManifest(t, m, regular("docs/caf\u00e9.md", "one"), regular("docs/cafe\u0301.md", "two"))
			}},
	})
}

// buildTarOnly is an uncompressed tar stream of entries, end marker included.
func buildTarOnly(t *testing.T, entries []tarEntry) []byte {
	t.Helper()
	gz := buildPackage(t, entries, nil)
	return gunzip(t, gz)
}

// TestHostileIndexSize: a publish that would push index.json over the host limit lands:
// index.json stays within the limit, says it is partial, and the entry is reachable
// through its id shard; no publish is refused for the catalogue's size.
func TestHostileIndexSize(t *testing.T) {
	const limit = 2 << 10
	e := newPublishEnv(t, func(c *ingest.Config) { c.MaxIndexBytes = limit }, nil)
	if r := e.publish(adminToken, "acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "the bystander")); r.Status != http.StatusCreated {
		t.Fatalf("baseline publish: %d %s", r.Status, r.Body)
	}
	long := strings.Repeat("A description within the field limit. ", 25)
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", withManifest(t, strings.Replace(manifestYAML("acme-hello", "1.0.0", ""), "description: Says hello", "description: "+long, 1)))
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d, want 201: %.600s", r.Status, r.Body)
	}
	for _, id := range []string{"acme-hello", "acme-other"} {
		assertReachable(t, e, id, limit)
	}
}

// assertReachable checks the size policy's promise for id: index.json is within limit;
// when it is partial, every id shard it names answers within the limit too, and id is in
// exactly one of them (in full unless the shard holds it alone: under these tests' tiny
// limits one entry may need its compact form); when it is not, id is in it.
func assertReachable(t *testing.T, e *env, id string, limit int) {
	t.Helper()
	type doc struct {
		Plugins []struct {
			ID          string `json:"id"`
			Description string `json:"description"`
		} `json:"plugins"`
		Partial *index.Partial `json:"partial"`
	}
	r := e.get("/index.json")
	var main doc
	r.json(t, &main)
	if r.Status != http.StatusOK || len(r.Body) > limit {
		t.Fatalf("/index.json: %d, %d bytes, limit %d", r.Status, len(r.Body), limit)
	}
	if main.Partial == nil {
		for _, p := range main.Plugins {
			if p.ID == id {
				return
			}
		}
		t.Fatalf("%s is not in the full index.json: %s", id, r.Body)
	}
	found := 0
	for _, u := range main.Partial.Shards {
		path := strings.TrimPrefix(u, e.srv.URL)
		sr := e.get(path)
		var shard doc
		sr.json(t, &shard)
		if sr.Status != http.StatusOK || len(sr.Body) > limit || (shard.Partial != nil && len(shard.Plugins) > 1) {
			t.Fatalf("%s: %d, %d bytes (limit %d), partial %+v", path, sr.Status, len(sr.Body), limit, shard.Partial)
		}
		for _, p := range shard.Plugins {
			if p.ID == id {
				found++
				if len(shard.Plugins) > 1 && strings.HasSuffix(p.Description, index.Ellipsis) {
					t.Errorf("%s: %s is compact (%q); id shards hold entries in full", path, id, p.Description)
				}
			}
		}
	}
	if found != 1 {
		t.Errorf("%s is in %d of the id shards %v, want exactly 1", id, found, main.Partial.Shards)
	}
}

// TestHostileUploads: request-level attacks on the publish endpoint.
func TestHostileUploads(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "the bystander")); r.Status != http.StatusCreated {
		t.Fatalf("baseline: %d %s", r.Status, r.Body)
	}
	good := pkg(t, "acme-hello", "1.0.0", "x")
	ct, body := multipartBody(t, [3]string{"package", "acme-hello-1.0.0.tar.gz", string(good)})
	for _, tc := range []struct {
		name        string
		contentType string
		body        []byte
		rule        string
	}{
		{"truncated multipart body", ct, body[:len(body)/2], ""},
		{"malformed part header", ct, []byte(strings.Replace(string(body), "Content-Disposition: form-data;", "Content-Disposition form-data", 1)), ""},
		{"no file name", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"package\"\r\n\r\nxx\r\n--b--\r\n"), "publish.filename"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blobs := blobCount(t, e)
			r := e.rawPublish(adminToken, tc.contentType, tc.body)
			if r.Status < 400 || r.Status >= 500 {
				t.Fatalf("status %d, want a 4xx: %s", r.Status, r.Body)
			}
			if tc.rule != "" && !hasRule(t, r, tc.rule) {
				t.Errorf("refusal lacks rule %s: %s", tc.rule, r.Body)
			}
			e.assertUnharmed(t, blobs)
		})
	}
	t.Run("a bundle part after the package part is read before publishing", func(t *testing.T) {
		ct, body := multipartBody(t, [3]string{"package", "acme-hello-1.0.0.tar.gz", string(good)}, [3]string{"bundle", "b.json", "{not json"})
		if r := e.rawPublish(adminToken, ct, body); r.Status < 400 || r.Status >= 500 {
			t.Fatalf("bad bundle after the package: %d %s, want a 4xx", r.Status, r.Body)
		}
		e.assertUnharmed(t, blobCount(t, e))
	})
}

// TestHostileReadmeIsHarmless: a pathological README is accepted, rendered once at publish,
// and the page answers from the stored HTML.
func TestHostileReadmeIsHarmless(t *testing.T) {
	e := newEnv(t, "")
	readme := strings.Repeat("[a](", 256<<10/4)
	data := buildPackage(t, withChecksums([]tarEntry{regular("manifest.yaml", manifestYAML("acme-hello", "1.0.0", "")),
		executable("server/plugin-linux-amd64", "#!/bin/sh\necho hello\n"), regular("README.md", readme)}), nil)
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", data); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %.400s", r.Status, r.Body)
	}
	all, err := e.st.AllReleases(context.Background())
	if err != nil || len(all) != 1 {
		t.Fatalf("releases: %v %d", err, len(all))
	}
	if html, err := e.st.READMEHTML(context.Background(), all[0].ID); err != nil || len(html) == 0 {
		t.Fatalf("the README was not rendered at publish: %v", err)
	}
	for range 3 {
		if r := e.get("/plugins/acme-hello"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "[a](") {
			t.Fatalf("page: %d", r.Status)
		}
	}
}

// TestHostileIconURLs: /icons/ serves icons of listed releases only, as the type sniffed at
// publish; a package's sha256 (public in index.json) is not an icon.
func TestHostileIconURLs(t *testing.T) {
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	rel, err := e.st.Release(context.Background(), "acme-hello", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"svg", "png", "tar.gz", "gz"} {
		if r := e.get("/icons/" + rel.SHA256 + "." + ext); r.Status != http.StatusNotFound {
			t.Errorf("/icons/<package sha>.%s: %d, want 404", ext, r.Status)
		}
	}
}

// TestHostileLegacyVersionEquality: a version equal in precedence to a stored one is a
// conflict, not a second immutable release.
func TestHostileLegacyVersionEquality(t *testing.T) {
	e := newEnv(t, "")
	data := pkg(t, "acme-hello", "1.0.0", "legacy")
	sha, err := e.st.Blobs.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	legacy := &store.Release{PackageID: "acme-hello", Version: "1.0.0+legacy", Kind: "plugin", SHA256: sha, Size: int64(len(data)),
		Manifest: []byte(manifestYAML("acme-hello", "1.0.0", "")), PublishedBy: "test"}
	if _, err := e.st.InsertRelease(context.Background(), legacy, store.AuditEntry{Actor: "test", Action: "publish", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "new"))
	if r.Status != http.StatusConflict || !hasRule(t, r, "publish.version.exists") {
		t.Fatalf("publish of 1.0.0 beside a stored 1.0.0+legacy: %d %s, want 409 publish.version.exists", r.Status, r.Body)
	}
}
