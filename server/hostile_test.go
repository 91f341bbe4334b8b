package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The hostile-input suite: every attack of issue #13 (and the archive, manifest and HTTP
// attacks covered elsewhere) through the real HTTP server. Each case asserts the status and
// the rule id, that nothing was stored, that the index still lists everyone else's release,
// and that the server stays healthy.

// tarEntry is one entry of a hand-built archive; Raw, when set, is written as is (for
// headers archive/tar would refuse to write).
type tarEntry struct {
	hdr  *tar.Header
	body string
}

func regular(name, body string) tarEntry {
	return tarEntry{hdr: &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body: body}
}

func executable(name, body string) tarEntry {
	e := regular(name, body)
	e.hdr.Mode = 0o755
	return e
}

// buildPackage writes entries as a .tar.gz; trailer is appended after the end-of-archive
// marker (inside the gzip stream).
func buildPackage(t *testing.T, entries []tarEntry, trailer []byte) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, e := range entries {
		if err := tw.WriteHeader(e.hdr); err != nil {
			t.Fatalf("header %q: %v", e.hdr.Name, err)
		}
		if e.hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tb.Write(trailer)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(tb.Bytes())
	_ = zw.Close()
	return gz.Bytes()
}

// manifestYAML is a valid managed plugin manifest for id@version with extra top-level YAML.
func manifestYAML(id, version, extra string) string {
	return "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Hello\ndescription: Says hello\n" +
		"author: Acme\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n" + extra
}

// withManifest builds a package around a manifest text, with the launcher and a README.
// checksums.txt is added last, listing every other regular file, so that only the attack
// under test can be wrong.
func withManifest(t *testing.T, manifest string, more ...tarEntry) []byte {
	t.Helper()
	entries := []tarEntry{regular("manifest.yaml", manifest), executable("server/plugin-linux-amd64", "#!/bin/sh\necho hello\n"),
		regular("README.md", "# Hello\n")}
	return buildPackage(t, withChecksums(append(entries, more...)), nil)
}

// withChecksums appends a checksums.txt over the regular files of entries.
func withChecksums(entries []tarEntry) []tarEntry {
	var lines []string
	for _, e := range entries {
		if e.hdr.Typeflag == tar.TypeReg {
			sum := sha256.Sum256([]byte(e.body))
			lines = append(lines, hex.EncodeToString(sum[:])+"  "+e.hdr.Name)
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return append(entries, regular("checksums.txt", strings.Join(lines, "\n")+"\n"))
}

// hostileCase is one attack: a request and what the registry must answer.
type hostileCase struct {
	name   string
	token  string // adminToken when empty
	file   string // upload file name; "acme-hello-1.0.0.tar.gz" when empty
	pkg    func(t *testing.T) []byte
	status int
	rule   string // the rule id the refusal must carry ("" for refusals without problems)
	// maxBody bounds the response size (the problem list is capped).
	maxBody int
	// says is a text the refusal must contain (e.g. the suggested fix), when set.
	says string
}

// runHostile publishes each case into a registry that already holds acme-other@1.0.0, and
// checks that the refusal stored nothing and harmed no one else.
func runHostile(t *testing.T, cases []hostileCase) { runHostileIn(t, newEnv(t, ""), cases) }

// runHostileIn is runHostile on a registry the caller configured.
func runHostileIn(t *testing.T, e *env, cases []hostileCase) {
	if r := e.publish(adminToken, "acme-other-1.0.0.tar.gz", pkg(t, "acme-other", "1.0.0", "the bystander")); r.Status != http.StatusCreated {
		t.Fatalf("baseline publish: %d %s", r.Status, r.Body)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			blobs := blobCount(t, e)
			token, file := tc.token, tc.file
			switch token {
			case "":
				token = adminToken
			case "stranger": // a publisher token whose publisher does not own acme-hello
				token = e.token("someone-else")
			}
			if file == "" {
				file = "acme-hello-1.0.0.tar.gz"
			}
			r := e.publish(token, file, tc.pkg(t))
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %.600s", r.Status, tc.status, r.Body)
			}
			if tc.rule != "" && !hasRule(t, r, tc.rule) {
				t.Errorf("refusal lacks rule %s: %.600s", tc.rule, r.Body)
			}
			if tc.says != "" && !strings.Contains(string(r.Body), tc.says) {
				t.Errorf("refusal does not say %s: %.600s", tc.says, r.Body)
			}
			limit := tc.maxBody
			if limit == 0 {
				limit = 256 << 10
			}
			if len(r.Body) > limit {
				t.Errorf("response is %d bytes, limit %d", len(r.Body), limit)
			}
			e.assertUnharmed(t, blobs)
		})
	}
}

// assertUnharmed checks that nothing new was stored for acme-hello, the bystander is still
// in the index, and the server is healthy and ready.
func (e *env) assertUnharmed(t *testing.T, blobsBefore int) {
	t.Helper()
	if got := blobCount(t, e); got != blobsBefore {
		t.Errorf("blob folder holds %d blobs, had %d: a refused publish stored bytes", got, blobsBefore)
	}
	if r := e.get("/api/v1/plugins/acme-hello"); r.Status != http.StatusNotFound {
		t.Errorf("acme-hello is visible after a refusal: %d %.300s", r.Status, r.Body)
	}
	var doc struct {
		Plugins []struct{ ID, Version string }
	}
	r := e.get("/index.json")
	if r.Status != http.StatusOK {
		t.Fatalf("index.json: %d", r.Status)
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Plugins) != 1 || doc.Plugins[0].ID != "acme-other" {
		t.Errorf("index.json lists %+v, want only the bystander acme-other", doc.Plugins)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := e.get(p); r.Status != http.StatusOK {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
}

func blobCount(t *testing.T, e *env) int {
	t.Helper()
	n := 0
	err := filepath.Walk(filepath.Join(e.dir, "data", "blobs"), func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() && !strings.HasPrefix(info.Name(), ".") && !strings.Contains(p, string(filepath.Separator)+"tmp") {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawPublish posts a hand-made multipart body.
func (e *env) rawPublish(token, contentType string, body []byte) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/packages", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	return e.do(req)
}

// multipartBody builds a multipart body with the given (field, file name, content) parts in order.
func multipartBody(t *testing.T, parts ...[3]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		w, err := mw.CreateFormFile(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(p[2]))
	}
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}
