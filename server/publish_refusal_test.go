package server_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/pluginyard/registry/ingest"
)

// mergeKeyBomb is a manifest whose YAML merge keys expand to 1000×1000 nodes.
func mergeKeyBomb() string {
	var b strings.Builder
	b.WriteString(manifestYAML("acme-hello", "1.0.0", "base: &base\n"))
	for i := range 1000 {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	b.WriteString("bombs:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  b%d: {<<: *base}\n", i)
	}
	return b.String()
}

// A token that may not publish the id is refused from the file name alone: the same small
// 403 whatever the package holds, and the package is never read.
func TestForbiddenPublishIsRefusedBeforeThePackageIsRead(t *testing.T) {
	e := newEnv(t, "")
	stranger := e.token("globex") // acme-hello's owners are [acme]
	huge := make([]byte, 1500<<10)
	_, _ = rand.Read(huge)
	tests := []struct {
		name, token, file string
		data              []byte
		status            int
		rule              string
	}{
		{"merge-key bomb, not an owner", stranger, "acme-hello-1.0.0.tar.gz", withManifest(t, mergeKeyBomb()), http.StatusForbidden, "publish.forbidden"},
		{"1.5 MB of noise, not an owner", stranger, "acme-hello-1.0.0.tar.gz", huge, http.StatusForbidden, "publish.forbidden"},
		{"merge-key bomb, unlisted id", adminToken, "evil-1.0.0.tar.gz", withManifest(t, mergeKeyBomb()), http.StatusForbidden, "publish.unlisted"},
		{"no file name", adminToken, "", pkg(t, "acme-hello", "1.0.0", "x"), http.StatusUnprocessableEntity, "publish.filename"},
		{"name without a version", adminToken, "acme-hello.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"), http.StatusUnprocessableEntity, "publish.filename"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blobs := blobCount(t, e)
			r := e.publish(tt.token, tt.file, tt.data)
			if r.Status != tt.status || !hasRule(t, r, tt.rule) {
				t.Fatalf("status %d, want %d with rule %s: %.500s", r.Status, tt.status, tt.rule, r.Body)
			}
			var body apiErr
			r.json(t, &body)
			if len(r.Body) > 2048 || len(body.Problems) != 1 {
				t.Errorf("refusal is %d bytes with %d problems, want one problem in a small body (verification must not run)", len(r.Body), len(body.Problems))
			}
			if blobCount(t, e) != blobs || len(spoolFiles(t, e)) != 0 {
				t.Errorf("the refusal left files: %d blobs (had %d), spool %v", blobCount(t, e), blobs, spoolFiles(t, e))
			}
		})
	}
}

// A publish that would make index.json exceed the host limit lands: index.json stays
// within the limit, partial, and both entries are reachable through the id shards.
func TestPublishOverTheIndexLimitLands(t *testing.T) {
	bystander := pkg(t, "acme-other", "1.0.0", "the bystander")
	measure := newEnv(t, "")
	measure.publish(adminToken, "acme-other-1.0.0.tar.gz", bystander)
	limit := len(measure.get("/index.json").Body) + 500 // room for the bystander, not for a long entry more
	e := newPublishEnv(t, func(c *ingest.Config) { c.MaxIndexBytes = limit }, nil)
	if r := e.publish(adminToken, "acme-other-1.0.0.tar.gz", bystander); r.Status != http.StatusCreated {
		t.Fatalf("baseline publish: %d %s", r.Status, r.Body)
	}
	long := strings.Repeat("a fine plugin ", 70) // 980 characters, within the 1024 field limit
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", long))
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d, want 201: %s", r.Status, r.Body)
	}
	if r := e.get("/api/v1/plugins/acme-hello/versions/1.0.0"); r.Status != http.StatusOK {
		t.Errorf("the release is not visible: %d", r.Status)
	}
	for _, id := range []string{"acme-hello", "acme-other"} {
		assertReachable(t, e, id, limit)
	}
}

// Client mistakes in the multipart body answer 400 and log no error.
func TestMalformedMultipartAnswers400(t *testing.T) {
	var logs logBuffer
	e := newPublishEnv(t, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	ct, full := multipartBody(t, [3]string{"package", "acme-hello-1.0.0.tar.gz", string(pkg(t, "acme-hello", "1.0.0", "x"))})
	boundary := ct[strings.Index(ct, "boundary=")+len("boundary="):]
	tests := []struct {
		name string
		body []byte
	}{
		{"truncated inside the package", full[:len(full)/2]},
		{"truncated before the closing boundary", full[:len(full)-len(boundary)-8]},
		{"malformed part header", []byte("--" + boundary + "\r\nContent-Disposition form-data; name=\"package\"\r\n\r\nxx\r\n--" + boundary + "--\r\n")},
		{"header line without an end", []byte("--" + boundary + "\r\n" + strings.Repeat("X", 200))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.rawPublish(adminToken, ct, tt.body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.Status, r.Body)
			}
		})
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("client mistakes logged errors:\n%s", logs.String())
	}
	e.assertUnharmedEmpty(t)
}

// A request that answers an error stored nothing, whatever the order of its parts; one that
// stored a release answers success.
func TestPartsAfterThePackageAreReadBeforePublishing(t *testing.T) {
	e := newEnv(t, "")
	good := string(pkg(t, "acme-hello", "1.0.0", "x"))
	tests := []struct {
		name   string
		parts  [][3]string
		status int
		rule   string
	}{
		{"bundle after the package is checked", [][3]string{{"package", "acme-hello-1.0.0.tar.gz", good}, {"bundle", "b.json", "{}"}},
			http.StatusUnprocessableEntity, "signature.root.missing"},
		{"oversized bundle after the package", [][3]string{{"package", "acme-hello-1.0.0.tar.gz", good}, {"bundle", "b.json", strings.Repeat("x", 1<<20+1)}},
			http.StatusRequestEntityTooLarge, ""},
		{"second package part", [][3]string{{"package", "acme-hello-1.0.0.tar.gz", good}, {"package", "acme-hello-1.0.0.tar.gz", good}},
			http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := multipartBody(t, tt.parts...)
			r := e.rawPublish(adminToken, ct, body)
			if r.Status != tt.status || (tt.rule != "" && !hasRule(t, r, tt.rule)) {
				t.Fatalf("status %d, want %d (rule %q): %.400s", r.Status, tt.status, tt.rule, r.Body)
			}
			if r := e.get("/api/v1/plugins/acme-hello/versions/1.0.0"); r.Status != http.StatusNotFound {
				t.Errorf("an error answer stored the release: %d", r.Status)
			}
		})
	}
	ct, body := multipartBody(t, [3]string{"note", "n.txt", "ci run 42"}, [3]string{"package", "acme-hello-1.0.0.tar.gz", good}, [3]string{"other", "o", "x"})
	if r := e.rawPublish(adminToken, ct, body); r.Status != http.StatusCreated {
		t.Fatalf("package between other parts: %d %s", r.Status, r.Body)
	}
}

// enospc fails every write with a full disk.
type enospc struct{}

func (enospc) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A full disk answers 507 with a clear message and leaves no blob and no spool file.
func TestFullDiskAnswers507(t *testing.T) {
	e := newPublishEnv(t, func(c *ingest.Config) { c.WrapWriter = func(io.Writer) io.Writer { return enospc{} } }, nil)
	r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x"))
	if r.Status != http.StatusInsufficientStorage || !bytes.Contains(r.Body, []byte("storage is full")) {
		t.Fatalf("status %d, want 507 saying the storage is full: %s", r.Status, r.Body)
	}
	e.assertUnharmedEmpty(t)
}

// assertUnharmedEmpty checks a registry without releases: nothing stored, nothing spooled,
// still healthy.
func (e *env) assertUnharmedEmpty(t *testing.T) {
	t.Helper()
	if n := blobCount(t, e); n != 0 {
		t.Errorf("%d blobs stored", n)
	}
	if left := spoolFiles(t, e); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
	if r := e.get("/api/v1/plugins/acme-hello"); r.Status != http.StatusNotFound {
		t.Errorf("acme-hello is visible: %d", r.Status)
	}
	for _, p := range []string{"/healthz", "/readyz", "/index.json"} {
		if r := e.get(p); r.Status != http.StatusOK {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
}
