// Package tamper checks that `registry log verify` catches a registry that lies: a
// release's bytes swapped in the database, log records dropped or reordered, a forked log,
// an old index replayed, a frozen (expired) index. Each test runs the real binary (serve,
// then log verify) and asserts the rule id and the message the auditor reads.
package tamper

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
	_ "modernc.org/sqlite"

	"github.com/pluginyard/registry/store"
)

const adminToken = "tamper-test-admin-token"

var bin string // the registry binary, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tamper-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bin = filepath.Join(dir, "registry")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/pluginyard/registry/cmd/registry").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// registry is a `registry serve` on a data directory of its own, seeded with the demo.
type registry struct {
	t    *testing.T
	data string
	addr string
	url  string
	key  string // the verifier key `registry log key` prints
	cmd  *exec.Cmd
	logs bytes.Buffer
}

func startRegistry(t *testing.T) *registry {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &registry{t: t, data: t.TempDir(), addr: ln.Addr().String()}
	_ = ln.Close()
	r.url = "http://" + r.addr
	r.start("--demo", "--plugins", "../../plugins.yaml")
	t.Cleanup(r.stop)
	out, err := exec.Command(bin, "log", "key", "--data", r.data).Output()
	if err != nil {
		t.Fatalf("registry log key: %v", err)
	}
	r.key = strings.TrimSpace(string(out))
	return r
}

func (r *registry) start(args ...string) {
	r.t.Helper()
	r.cmd = exec.Command(bin, append([]string{"serve", "--data", r.data, "--addr", r.addr, "--public-url", r.url}, args...)...)
	r.cmd.Env = append(os.Environ(), "REGISTRY_ADMIN_TOKEN="+adminToken)
	r.logs.Reset()
	r.cmd.Stdout, r.cmd.Stderr = &r.logs, &r.logs
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for i := 0; ; i++ {
		res, err := http.Get(r.url + "/index.json.sig")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if i == 200 {
			r.t.Fatalf("registry did not start: %v\n%s", err, r.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *registry) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	_ = r.cmd.Wait()
	r.cmd = nil
}

// restart restarts the registry on its data directory with the demo's list (the demo's
// releases are stored already), after tamper changed the database.
func (r *registry) restart(tamper func(db *sql.DB)) {
	r.t.Helper()
	r.stop()
	db, err := sql.Open("sqlite", filepath.Join(r.data, store.DBFile))
	if err != nil {
		r.t.Fatal(err)
	}
	tamper(db)
	if err := db.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.start("--plugins", filepath.Join(r.data, "demo", "plugins.yaml"))
}

// verify runs `registry log verify` against base with state and returns its exit code
// and stderr.
func (r *registry) verify(base, state string, extra ...string) (int, string) {
	r.t.Helper()
	cmd := exec.Command(bin, append([]string{"log", "verify", "--registry", base, "--key", r.key, "--state", state}, extra...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return code, stderr.String()
}

// mustVerify runs a verification that must pass (it records what the state keeps).
func (r *registry) mustVerify(base, state string) {
	r.t.Helper()
	if code, stderr := r.verify(base, state); code != 0 {
		r.t.Fatalf("log verify before tampering: exit %d\n%s\nserver log:\n%s", code, stderr, r.logs.String())
	}
}

// assertCaught checks that verify exited 1 with the rule id and the message.
func assertCaught(t *testing.T, code int, stderr, rule, message string) {
	t.Helper()
	t.Logf("log verify said:\n%s", stderr)
	if code != 1 || !strings.Contains(stderr, "["+rule+"]") || !strings.Contains(stderr, message) {
		t.Errorf("log verify: exit %d, stderr:\n%s\nwant exit 1 with [%s] and %q", code, stderr, rule, message)
	}
}

func (r *registry) get(path string) []byte {
	r.t.Helper()
	res, err := http.Get(r.url + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		r.t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return b
}

// proxy serves the registry, except for the paths in fake, which it answers itself.
func (r *registry) proxy(fake map[string][]byte) string {
	r.t.Helper()
	u, _ := url.Parse(r.url)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if b, ok := fake[req.URL.Path]; ok {
			_, _ = w.Write(b)
			return
		}
		rp.ServeHTTP(w, req)
	}))
	r.t.Cleanup(srv.Close)
	return srv.URL
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// unlockLog drops the triggers that keep the log append-only, as an attacker with the
// database would.
func unlockLog(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, tr := range []string{"log_records_append_only_update", "log_records_append_only_delete",
		"log_hashes_append_only_update", "log_hashes_append_only_delete"} {
		mustExec(t, db, "DROP TRIGGER "+tr)
	}
}

// rehash recomputes every stored hash from the records as they now are and forgets every
// signed checkpoint, so the registry signs the rewritten log at its next start: a forged
// history that is internally consistent.
func rehash(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query("SELECT body FROM log_records ORDER BY idx")
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	if err := closeRows(rows); err != nil {
		t.Fatal(err)
	}
	var hashes []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = hashes[x]
		}
		return out, nil
	})
	for i, b := range bodies {
		hs, err := tlog.StoredHashes(int64(i), b, reader)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
	}
	mustExec(t, db, "DELETE FROM log_hashes")
	for i, h := range hashes {
		mustExec(t, db, "INSERT INTO log_hashes (idx, hash) VALUES (?, ?)", i, h[:])
	}
	mustExec(t, db, "DELETE FROM log_checkpoints")
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// yankFirst yanks the first plugin the index lists, which raises the serial.
func (r *registry) yankFirst() {
	r.t.Helper()
	var doc struct {
		Plugins []struct{ ID, Version string } `json:"plugins"`
	}
	if err := json.Unmarshal(r.get("/index.json"), &doc); err != nil || len(doc.Plugins) == 0 {
		r.t.Fatalf("index.json: %v %+v", err, doc)
	}
	p := doc.Plugins[0]
	req, _ := http.NewRequest(http.MethodPost, r.url+"/api/v1/plugins/"+p.ID+"/versions/"+p.Version+"/yank", strings.NewReader(`{"reason":"tamper test"}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		r.t.Fatalf("yank %s@%s: %d", p.ID, p.Version, res.StatusCode)
	}
}
