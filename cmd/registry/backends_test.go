package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/s3blob"
	"github.com/pluginyard/registry/s3blob/s3test"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// TestBackendFlagErrors: a malformed --database, --blobs or --blobs-redirect is refused
// before anything is opened, naming the flag, the value and the fix, on serve and on a
// command that opens a store.
func TestBackendFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		cmd  func(context.Context, *cli, []string) int
		args []string
		want []string
	}{
		{"serve: unknown database scheme", cmdServe, []string{"--database", "mysql://db/registry"},
			[]string{`--database "mysql://db/registry"`, "want sqlite:PATH", "postgres://"}},
		{"serve: sqlite without a file", cmdServe, []string{"--database", "sqlite:"},
			[]string{`--database "sqlite:" names no file`, "write sqlite:PATH"}},
		{"serve: password kept out of the message", cmdServe, []string{"--database", "mongodb://u:hunter2@db/x"},
			[]string{`--database "mongodb://u:REDACTED@db/x"`}},
		{"serve: unknown blobs scheme", cmdServe, []string{"--blobs", "gs://bucket"},
			[]string{`--blobs "gs://bucket"`, "want file:PATH", "s3://BUCKET?endpoint="}},
		{"serve: blobs folder without a path", cmdServe, []string{"--blobs", "file:"},
			[]string{`--blobs "file:" names no folder`, "write file:PATH"}},
		{"serve: credentials in the bucket URL", cmdServe, []string{"--blobs", "s3://key:secret@my-bucket?endpoint=127.0.0.1:9000"},
			[]string{"--blobs", "credentials in the URL", "AWS_ACCESS_KEY_ID"}},
		{"serve: redirect from a folder", cmdServe, []string{"--blobs-redirect"},
			[]string{"--blobs-redirect needs an S3 blob store", "--blobs s3://"}},
		{"fsck: unknown database scheme", cmdFsck, []string{"--database", "mysql://db/registry"},
			[]string{`--database "mysql://db/registry"`, "want sqlite:PATH"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			if _, err := store.Open(context.Background(), data); err != nil { // fsck needs a registry there
				t.Fatal(err)
			}
			c, _, errOut := testCLI(nil)
			args := append([]string{"--data", data, "--plugins", "../../plugins.yaml"}, tt.args...)
			if tt.name[:4] == "fsck" {
				args = append([]string{"--data", data}, tt.args...)
			}
			// A flag let through would start serve: the deadline stops it, so the test fails
			// instead of hanging.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if code := tt.cmd(ctx, c, args); code != exitUsage {
				t.Fatalf("exit = %d, want %d; stderr: %s", code, exitUsage, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr does not name %q:\n%s", w, errOut)
				}
			}
			if strings.Contains(errOut.String(), "hunter2") {
				t.Errorf("stderr shows the password:\n%s", errOut)
			}
		})
	}
}

// TestServeDemoKeepsTheEmbeddedLayout: without --database and --blobs, serve --demo keeps
// everything in --data as before: the SQLite file and the blob folder, one file per blob;
// and it empties the upload spool a crash left.
func TestServeDemoKeepsTheEmbeddedLayout(t *testing.T) {
	data := t.TempDir()
	leftover := filepath.Join(data, ingest.SpoolDir, "upload-123") // a crash mid-upload
	if err := os.MkdirAll(filepath.Dir(leftover), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leftover, []byte("half a package"), 0o640); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := serveDemo(t, data)
	idx := demoGet(t, addr, "/index.json")
	stop()
	var doc struct {
		Plugins []struct {
			PackageSHA256 string `json:"package_sha256"`
		}
	}
	if err := json.Unmarshal(idx, &doc); err != nil || len(doc.Plugins) < 4 {
		t.Fatalf("demo index.json: %d plugins, %v; want the 4 examples", len(doc.Plugins), err)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("serve left the spool file of an interrupted upload: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, store.DBFile)); err != nil {
		t.Errorf("no SQLite file in --data: %v", err)
	}
	for _, p := range doc.Plugins {
		if _, err := os.Stat(filepath.Join(data, "blobs", p.PackageSHA256[:2], p.PackageSHA256)); err != nil {
			t.Errorf("package blob not in DATA/blobs: %v", err)
		}
	}
}

// TestServeOnPostgresAndS3 starts `serve --demo --database postgres://… --blobs s3://…
// --blobs-redirect` against real servers: the demo is published into them, index.json
// lists it, and a download is a 302 to the bucket whose bytes are package_sha256's.
func TestServeOnPostgresAndS3(t *testing.T) {
	dsn := storetest.CreateDatabase(t, storetest.StartPostgres(t))
	s3 := s3test.Start(t)
	s3.SetEnv(t)
	addr, errOut, stop := serveWith(t, "--demo", "--data", t.TempDir(), "--plugins", "../../plugins.yaml",
		"--database", dsn, "--blobs", s3.URL("registry"), "--blobs-redirect")
	defer stop()
	var doc struct {
		Plugins []struct {
			PackageURL    string `json:"package_url"`
			PackageSHA256 string `json:"package_sha256"`
		}
	}
	if err := json.Unmarshal(demoGet(t, addr, "/index.json"), &doc); err != nil || len(doc.Plugins) < 4 {
		t.Fatalf("index.json: %d plugins, %v; want the 4 examples; stderr: %s", len(doc.Plugins), err, errOut)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(doc.Plugins[0].PackageURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://"+s3.Endpoint+"/") {
		t.Fatalf("download: %d to %q; want 302 to the bucket at %s", res.StatusCode, loc, s3.Endpoint)
	}
	got, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	body, err := io.ReadAll(got.Body)
	if err != nil || shaHex(body) != doc.Plugins[0].PackageSHA256 {
		t.Errorf("the pre-signed URL gave %d bytes (%v) hashing to %s, want package_sha256 %s", len(body), err, shaHex(body), doc.Plugins[0].PackageSHA256)
	}
}

// TestFsckChecksTheBucket: `registry fsck --blobs s3://…` re-hashes the blobs in the
// bucket, not the data directory's folder: the demo published there checks clean, and an
// object removed behind the registry's back is reported missing with its release.
func TestFsckChecksTheBucket(t *testing.T) {
	s3 := s3test.Start(t)
	s3.SetEnv(t)
	data, bucket := t.TempDir(), s3.URL("")
	_, _, stop := serveWith(t, "--demo", "--data", data, "--plugins", "../../plugins.yaml", "--blobs", bucket)
	stop()
	fsck := func() (int, string) {
		c, out, errOut := testCLI(nil)
		code := cmdFsck(context.Background(), c, []string{"--data", data, "--blobs", bucket})
		return code, out.String() + errOut.String()
	}
	if code, out := fsck(); code != exitOK || !strings.Contains(out, "every one matches") {
		t.Fatalf("fsck of the demo's bucket: exit %d:\n%s", code, out)
	}
	objs := s3.Client().ListObjects(context.Background(), s3.Bucket, minio.ListObjectsOptions{Recursive: true})
	first := <-objs
	if first.Err != nil || first.Key == "" {
		t.Fatalf("no object in the bucket: %v", first.Err)
	}
	if err := s3.Client().RemoveObject(context.Background(), s3.Bucket, first.Key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, out := fsck(); code != exitInvalid || !strings.Contains(out, "missing") || !strings.Contains(out, path.Base(first.Key)) {
		t.Errorf("fsck after removing %s: exit %d:\n%s\nwant 1 naming it missing", first.Key, code, out)
	}
}

// serveWith runs serve with args (and a free --addr) until stop, once it answers /healthz.
func serveWith(t *testing.T, args ...string) (addr string, errOut *syncBuffer, stop func()) {
	t.Helper()
	addr = freeAddr(t)
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cmdServe(ctx, c, append([]string{"--addr", addr}, args...)) }()
	waitHealthy(t, addr, done, errOut)
	return addr, errOut, func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit = %d; stderr: %s", code, errOut)
		}
	}
}

// waitHealthy waits for serve on addr to answer /healthz.
func waitHealthy(t *testing.T, addr string, done chan int, errOut *syncBuffer) {
	t.Helper()
	for i := 0; ; i++ {
		if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			return
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d; stderr: %s", code, errOut)
		case <-time.After(100 * time.Millisecond):
		}
		if i == 300 {
			t.Fatalf("serve did not answer in 30 s; stderr: %s", errOut)
		}
	}
}

func shaHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestServeSweepsOnlyWhatNoReplicaCanOwn: at start serve removes a blob no release
// records from the embedded default's folder (only this process writes there), but keeps
// a young one in a bucket replicas may share (another replica's publish in flight).
func TestServeSweepsOnlyWhatNoReplicaCanOwn(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	st, err := store.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := st.Blobs.Put([]byte("left by a crash between the blob and its row"))
	_ = st.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, _, stop := serveWith(t, "--data", data, "--plugins", "../../plugins.yaml", "--sync-interval", "0")
	stop()
	if _, err := os.Stat(filepath.Join(data, "blobs", orphan[:2], orphan)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the embedded default kept an unrecorded blob: %v", err)
	}

	s3 := s3test.Start(t)
	s3.SetEnv(t)
	bucket, err := s3blob.Open(ctx, s3.URL(""))
	if err != nil {
		t.Fatal(err)
	}
	inFlight := []byte("another replica's publish, row not yet committed")
	sha, err := bucket.PutBytes(ctx, inFlight)
	if err != nil {
		t.Fatal(err)
	}
	_, _, stop = serveWith(t, "--data", t.TempDir(), "--plugins", "../../plugins.yaml", "--sync-interval", "0", "--blobs", s3.URL(""))
	stop()
	if err := bucket.Stat(ctx, sha, int64(len(inFlight))); err != nil {
		t.Errorf("serve removed a young unrecorded blob from the shared bucket: %v", err)
	}
}

// TestRowCommandsLeaveTheBucketAlone: a command that only reads and writes rows (token
// list) runs with --blobs naming a bucket that cannot be reached, which it never reads;
// fsck, which reads every blob, is refused with --blobs named.
func TestRowCommandsLeaveTheBucketAlone(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	unreachable := "s3://registry?endpoint=127.0.0.1:1&insecure=1"
	c, _, errOut := testCLI(map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"})
	if code := cmdToken(ctx, c, []string{"list", "--data", dir, "--blobs", unreachable}); code != exitOK {
		t.Fatalf("token list with an unreachable bucket: exit %d, %s", code, errOut)
	}
	c, _, errOut = testCLI(map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"})
	if code := cmdFsck(ctx, c, []string{"--data", dir, "--blobs", unreachable}); code != exitUsage || !strings.Contains(errOut.String(), "--blobs") {
		t.Fatalf("fsck with an unreachable bucket: exit %d, %s; want %d naming --blobs", code, errOut, exitUsage)
	}
}
