package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeRegistry imitates the registry's publish and OIDC endpoints and the GitHub Actions
// token endpoint, and records what it was sent.
type fakeRegistry struct {
	srv     *httptest.Server
	status  int    // answer of POST /api/v1/packages
	answer  string // its JSON body
	mu      sync.Mutex
	uploads []received
	calls   []string
	bodies  []string // "declared N, read M" per publish
}

// received is one publish request the fake registry got.
type received struct {
	Auth    string
	Fields  []string // form field names in order
	Names   []string // their file names
	Package []byte
	Bundle  []byte
}

const (
	fakeJWT        = "eyJhbGciOiJFUzI1NiJ9.eyJyZXBvc2l0b3J5IjoiYWNtZS9oZWxsbyJ9.c2ln"
	fakeActionsTok = "actions-runtime-token"
	fakeUploadTok  = "pyr_uploadtoken"
)

func newFakeRegistry(t *testing.T, status int, answer string) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{status: status, answer: answer}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/packages", f.publish)
	mux.HandleFunc("POST /api/v1/auth/oidc", f.exchange)
	mux.HandleFunc("GET /actions/token", f.actionsToken)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRegistry) record(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

func (f *fakeRegistry) publish(w http.ResponseWriter, r *http.Request) {
	f.record("publish")
	up := received{Auth: r.Header.Get("Authorization")}
	body := &countingReader{r: r.Body}
	r.Body = io.NopCloser(body)
	defer func() {
		f.mu.Lock()
		f.bodies = append(f.bodies, fmt.Sprintf("declared %d, read %d", r.ContentLength, body.n))
		f.mu.Unlock()
	}()
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(part)
		up.Fields, up.Names = append(up.Fields, part.FormName()), append(up.Names, part.FileName())
		if part.FormName() == "package" {
			up.Package = data
		} else {
			up.Bundle = data
		}
	}
	f.mu.Lock()
	f.uploads = append(f.uploads, up)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.answer)
}

// actionsToken imitates ACTIONS_ID_TOKEN_REQUEST_URL: it wants the runtime token and an
// audience, and answers {"value": jwt}.
func (f *fakeRegistry) actionsToken(w http.ResponseWriter, r *http.Request) {
	f.record("actions-token aud=" + r.URL.Query().Get("audience") + " api-version=" + r.URL.Query().Get("api-version"))
	if r.Header.Get("Authorization") != "bearer "+fakeActionsTok {
		http.Error(w, "bad runtime token", http.StatusUnauthorized)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"value": fakeJWT})
}

func (f *fakeRegistry) exchange(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token string `json:"token"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.record("oidc-exchange token=" + req.Token)
	w.Header().Set("Content-Type", "application/json")
	if req.Token != fakeJWT {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"OIDC token refused: wrong audience"}`)
		return
	}
	_, _ = fmt.Fprintf(w, `{"token":%q,"expires_at":"2026-09-18T06:15:00Z","scope":["hello"]}`, fakeUploadTok)
}

func (f *fakeRegistry) got() ([]received, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.uploads, f.calls
}

func runPublish(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(k string) string { return env[k] }}
	code = cmdPublish(context.Background(), c, args)
	return code, out.String(), errb.String()
}

func writeTestFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	publishCreated  = `{"id":"hello","version":"1.2.0","kind":"plugin","sha256":"5e1f0000000000000000000000000000000000000000000000000000000000aa","size":7,"package_url":"%s/packages/hello/hello-1.2.0.tar.gz","warnings":["warning manifest.yaml: homepage [manifest.homepage] no homepage"]}`
	publishRefusals = `{"error":"the package is invalid: 3 problem(s)","problems":[
		{"rule":"manifest.version","path":"version","file":"manifest.yaml","message":"expected semver, found \"v1\"","severity":"error"},
		{"rule":"checksums.mismatch","path":"","file":"checksums.txt","message":"sha256 of server/plugin differs","severity":"error"},
		{"rule":"manifest.id","path":"id","file":"manifest.yaml","message":"expected lowercase, found \"Hello\"","severity":"error"},
		{"rule":"registry.kind","path":"kind","message":"plugins.yaml lists a canvas","severity":"error"}]}`
)

func TestPublishAnswers(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		answer     string
		wantCode   int
		wantOut    []string // lines of stdout, %s is the registry URL
		wantErrHas []string
	}{
		{"created", http.StatusCreated, publishCreated, exitOK,
			[]string{"published hello@1.2.0 (plugin, 7 bytes)", "  package: %s/packages/hello/hello-1.2.0.tar.gz",
				"  sha256:  5e1f0000000000000000000000000000000000000000000000000000000000aa", "  page:    %s/plugins/hello"},
			[]string{"warning: warning manifest.yaml: homepage [manifest.homepage] no homepage"}},
		{"already published", http.StatusOK, publishCreated, exitOK,
			[]string{"already published (identical bytes; nothing changed) hello@1.2.0 (plugin, 7 bytes)", "  package: %s/packages/hello/hello-1.2.0.tar.gz",
				"  sha256:  5e1f0000000000000000000000000000000000000000000000000000000000aa", "  page:    %s/plugins/hello"},
			nil},
		{"refused with problems", http.StatusUnprocessableEntity, publishRefusals, exitInvalid, nil,
			[]string{"registry publish: publish refused (HTTP 422): the package is invalid: 3 problem(s)\n" +
				"  kind: error [registry.kind] plugins.yaml lists a canvas\n" +
				"checksums.txt:\n  error [checksums.mismatch] sha256 of server/plugin differs\n" +
				"manifest.yaml:\n  id: error [manifest.id] expected lowercase, found \"Hello\"\n  version: error [manifest.version] expected semver, found \"v1\"\n"}},
		{"bad token", http.StatusUnauthorized, `{"error":"invalid, expired or revoked token"}`, exitInvalid, nil,
			[]string{"publish refused (HTTP 401): invalid, expired or revoked token"}},
		{"server error", http.StatusInternalServerError, `{"error":"Internal Server Error"}`, exitUsage, nil,
			[]string{"publish failed: the registry answered HTTP 500: Internal Server Error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newFakeRegistry(t, tt.status, "")
			reg.answer = strings.ReplaceAll(tt.answer, "%s", reg.srv.URL)
			dir := t.TempDir()
			pkg := writeTestFile(t, dir, "hello-1.2.0.tar.gz", []byte("tarball"))
			code, stdout, stderr := runPublish(map[string]string{"REGISTRY_TOKEN": "pyr_publisher"}, pkg, "--registry", reg.srv.URL+"/")
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.wantCode, stderr)
			}
			var want []string
			for _, l := range tt.wantOut {
				want = append(want, strings.ReplaceAll(l, "%s", reg.srv.URL))
			}
			if diff := cmp.Diff(want, outLines(stdout)); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			for _, s := range tt.wantErrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not contain %q:\n%s", s, stderr)
				}
			}
			uploads, _ := reg.got()
			wantUp := []received{{Auth: "Bearer pyr_publisher", Fields: []string{"package"}, Names: []string{"hello-1.2.0.tar.gz"}, Package: []byte("tarball")}}
			if diff := cmp.Diff(wantUp, uploads); diff != "" {
				t.Errorf("uploads (-want +got):\n%s", diff)
			}
		})
	}
}

func outLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestPublishBundleFirst(t *testing.T) {
	reg := newFakeRegistry(t, http.StatusCreated, "")
	reg.answer = strings.ReplaceAll(publishCreated, "%s", reg.srv.URL)
	dir := t.TempDir()
	pkg := writeTestFile(t, dir, "hello-1.2.0.tar.gz", []byte("tarball"))
	bundle := writeTestFile(t, dir, "attestation.jsonl", []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	env := map[string]string{"REGISTRY_TOKEN": "pyr_publisher", "REGISTRY_URL": reg.srv.URL}
	if code, _, stderr := runPublish(env, "--bundle", bundle, pkg); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	uploads, _ := reg.got()
	want := []received{{Auth: "Bearer pyr_publisher", Fields: []string{"bundle", "package"}, Names: []string{"attestation.jsonl", "hello-1.2.0.tar.gz"},
		Package: []byte("tarball"), Bundle: []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)}}
	if diff := cmp.Diff(want, uploads); diff != "" {
		t.Errorf("uploads (-want +got):\n%s", diff)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestPublishDeclaresItsLength: the upload carries its exact Content-Length, so a registry
// can refuse a body over its limit from the header, before the package is sent.
func TestPublishDeclaresItsLength(t *testing.T) {
	for _, withBundle := range []bool{false, true} {
		reg := newFakeRegistry(t, http.StatusCreated, "")
		reg.answer = strings.ReplaceAll(publishCreated, "%s", reg.srv.URL)
		dir := t.TempDir()
		args := []string{writeTestFile(t, dir, "hello-1.2.0.tar.gz", bytes.Repeat([]byte("t"), 100_000))}
		if withBundle {
			args = append(args, "--bundle", writeTestFile(t, dir, "b.json", []byte(`{"mediaType":"x"}`)))
		}
		env := map[string]string{"REGISTRY_TOKEN": "pyr_publisher", "REGISTRY_URL": reg.srv.URL}
		if code, _, stderr := runPublish(env, args...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		reg.mu.Lock()
		bodies := append([]string(nil), reg.bodies...)
		reg.mu.Unlock()
		var line string
		if len(bodies) == 1 {
			line = bodies[0]
		}
		var declared, read int64
		if _, err := fmt.Sscanf(line, "declared %d, read %d", &declared, &read); err != nil || declared <= 100_000 || declared != read {
			t.Errorf("bundle %v: %q; want a Content-Length equal to the body's length", withBundle, line)
		}
	}
}

func TestPublishGitHubOIDC(t *testing.T) {
	reg := newFakeRegistry(t, http.StatusCreated, "")
	reg.answer = strings.ReplaceAll(publishCreated, "%s", reg.srv.URL)
	pkg := writeTestFile(t, t.TempDir(), "hello-1.2.0.tar.gz", []byte("tarball"))
	env := map[string]string{
		"ACTIONS_ID_TOKEN_REQUEST_URL":   reg.srv.URL + "/actions/token?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": fakeActionsTok,
	}
	code, stdout, stderr := runPublish(env, pkg, "--registry", reg.srv.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	uploads, calls := reg.got()
	wantCalls := []string{"actions-token aud=" + reg.srv.URL + " api-version=2.0", "oidc-exchange token=" + fakeJWT, "publish"}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(uploads) != 1 || uploads[0].Auth != "Bearer "+fakeUploadTok {
		t.Errorf("uploads %+v: want one with the exchanged upload token", uploads)
	}
	if !strings.Contains(stderr, "trusted publishing: upload token for hello (expires 2026-09-18T06:15:00Z)") || !strings.Contains(stdout, "published hello@1.2.0") {
		t.Errorf("stdout %q / stderr %q: want the exchange and the published release reported", stdout, stderr)
	}
}

func TestPublishOIDCRefused(t *testing.T) {
	reg := newFakeRegistry(t, http.StatusCreated, "")
	pkg := writeTestFile(t, t.TempDir(), "hello-1.2.0.tar.gz", []byte("tarball"))
	env := map[string]string{
		"ACTIONS_ID_TOKEN_REQUEST_URL":   reg.srv.URL + "/actions/token?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "wrong",
	}
	code, _, stderr := runPublish(env, pkg, "--registry", reg.srv.URL)
	if code != exitInvalid || !strings.Contains(stderr, "GitHub Actions OIDC token request refused (HTTP 401): bad runtime token") {
		t.Errorf("exit %d, stderr %q: want 1 and the runtime's refusal", code, stderr)
	}
	if uploads, _ := reg.got(); len(uploads) != 0 {
		t.Errorf("uploaded %d packages without a token", len(uploads))
	}
}

func TestPublishUsage(t *testing.T) {
	pkg := writeTestFile(t, t.TempDir(), "hello-1.2.0.tar.gz", []byte("tarball"))
	unreachable := "http://127.0.0.1:1"
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
	}{
		{"no file", map[string]string{"REGISTRY_TOKEN": "t"}, []string{"--registry", unreachable}, "expected one package file, found 0 arguments"},
		{"no registry", map[string]string{"REGISTRY_TOKEN": "t"}, []string{pkg}, `--registry "": expected the registry's absolute http(s) base URL`},
		{"relative registry", map[string]string{"REGISTRY_TOKEN": "t"}, []string{pkg, "--registry", "plugins.example.com"}, "expected the registry's absolute http(s) base URL"},
		{"no credentials", nil, []string{pkg, "--registry", unreachable}, "no credentials: set REGISTRY_TOKEN"},
		{"missing file", map[string]string{"REGISTRY_TOKEN": "t"}, []string{filepath.Join(t.TempDir(), "nope.tar.gz"), "--registry", unreachable}, "no such file"},
		{"registry down", map[string]string{"REGISTRY_TOKEN": "t"}, []string{pkg, "--registry", unreachable}, "publish to 127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runPublish(tt.env, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.wantErr)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	p := &progress{w: &out, total: 100 << 20, nextTick: 1, last: clock, now: func() time.Time { return clock }}
	write := func(mib int) { _, _ = p.Write(make([]byte, mib<<20)) }
	write(5)  // 5%: nothing yet
	write(5)  // 10%
	write(25) // 35%: one line, not three
	clock = clock.Add(progressEvery)
	write(1)  // 36%, but the last line is old
	write(64) // 100%
	want := []string{
		"uploading: 10.0 MiB of 100.0 MiB (10%)",
		"uploading: 35.0 MiB of 100.0 MiB (35%)",
		"uploading: 36.0 MiB of 100.0 MiB (36%)",
		"uploading: 100.0 MiB of 100.0 MiB (100%)",
	}
	if diff := cmp.Diff(want, outLines(out.String())); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	if newProgress(&out, progressMinBytes-1) != io.Discard {
		t.Error("a small file reports progress; want silence")
	}
}
