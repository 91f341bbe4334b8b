// Package crash is the crash-safety test of the registry: it SIGKILLs `registry serve` at
// random moments during concurrent publishes, restarts it on the same data directory, and
// checks that nothing acknowledged is lost and nothing half-written is listed.
//
// CRASH_SEED=N replays a run's choices (how long each round runs before its kill, which
// acknowledged release is re-sent); the scheduler's timing is not replayable, so a replay
// kills at the same moments, not necessarily between the same two instructions.
package crash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pack"
	"github.com/pluginyard/registry/store"
)

const (
	adminToken = "crash-test-admin-token"
	rounds     = 50
	perRound   = 4 // concurrent publishes of new versions each round, plus one repeat
)

var ids = []string{"crash-alpha", "crash-beta", "crash-gamma"}

// ack is what the server acknowledged (201, or 200 for a repeat) for one id@version:
// the bytes it was sent.
type ack struct {
	sha  string
	size int64
}

func TestKillDuringPublishes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and restarts it 50 times")
	}
	seed := crashSeed(t)
	t.Logf("seed %d (replay with CRASH_SEED=%d)", seed, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("failed with seed %d: replay with CRASH_SEED=%d go test ./test/crash/", seed, seed)
		}
	})
	bin := buildRegistry(t)
	dir := t.TempDir()
	writeList(t, dir)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	acked := map[string]ack{} // id@version → every publish the server acknowledged
	attempted := 0
	for r := range rounds {
		p := start(t, bin, dir)
		check(t, p.url, dir, acked, seed)
		got := publishRound(t, p, r, rng, acked)
		attempted += perRound
		for k, v := range got {
			acked[k] = v
		}
		checkAcked(t, dir, acked, got, seed)
		if r%10 == 0 {
			plantLeftovers(t, dir, r) // as a kill between a blob's rename and its row would
		}
	}
	p := start(t, bin, dir)
	check(t, p.url, dir, acked, seed)
	p.kill(t)
	checkStore(t, dir)
	t.Logf("%d new versions attempted, %d acknowledged before a kill", attempted, len(acked))
}

// crashSeed is CRASH_SEED, else a random seed.
func crashSeed(t *testing.T) uint64 {
	t.Helper()
	v := os.Getenv("CRASH_SEED")
	if v == "" {
		return rand.Uint64()
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("CRASH_SEED=%q: expected a whole number such as 42, as printed by a failed run", v)
	}
	return seed
}

// checkAcked opens the data directory of the killed registry: every acknowledged release
// has its row, with the digest and size of the bytes sent, and its blob file of that size;
// the blobs acknowledged in the round just killed (fresh) are re-hashed. Older ones were
// re-hashed after their own round, and are downloaded whole after every restart.
func checkAcked(t *testing.T, dir string, acked, fresh map[string]ack, seed uint64) {
	t.Helper()
	ctx := context.Background()
	checkLog(t, filepath.Join(dir, "data"), seed) // before store.Open, which would backfill what is missing
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, k := range slices.Sorted(maps.Keys(acked)) {
		a := acked[k]
		id, version, _ := strings.Cut(k, "@")
		rel, err := st.Release(ctx, id, version)
		if err != nil || rel.SHA256 != a.sha || rel.Size != a.size {
			t.Fatalf("seed %d: acknowledged %s (%d bytes, sha256 %s) after a kill: row %+v, %v", seed, k, a.size, a.sha, rel, err)
		}
		fi, err := os.Stat(st.Blobs.Path(a.sha))
		if err != nil || fi.Size() != a.size {
			t.Fatalf("seed %d: acknowledged %s: blob file %v, want %d bytes", seed, k, err, a.size)
		}
		if _, ok := fresh[k]; !ok {
			continue
		}
		data, err := st.Blobs.ReadAll(a.sha)
		if sum := sha256.Sum256(data); err != nil || hex.EncodeToString(sum[:]) != a.sha {
			t.Fatalf("seed %d: acknowledged %s: blob does not hash to %s after a kill (%v)", seed, k, a.sha, err)
		}
	}
}

// plantLeftovers writes an orphan blob and a temporary upload into the blob folder of the
// stopped registry; the next start must remove both.
func plantLeftovers(t *testing.T, dir string, round int) {
	t.Helper()
	sum := sha256.Sum256([]byte("orphan " + strconv.Itoa(round)))
	sha := hex.EncodeToString(sum[:])
	blobs := filepath.Join(dir, "data", "blobs")
	for path, data := range map[string]string{
		filepath.Join(blobs, sha[:2], sha):                         "orphan " + strconv.Itoa(round),
		filepath.Join(blobs, "tmp", "upload-"+strconv.Itoa(round)): "half an upload",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// buildRegistry builds ./cmd/registry once into a temporary directory.
func buildRegistry(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "registry")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pluginyard/registry/cmd/registry").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeList(t *testing.T, dir string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("plugins:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "  - id: %s\n    repo: crash/%s\n    owners: [crash]\n", id, id)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proc is one running `registry serve`.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	done   chan struct{}
}

// start runs the registry on a fresh port and waits until /readyz answers 200.
func start(t *testing.T, bin, dir string) *proc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		p, err := tryStart(bin, dir)
		if err == nil {
			return p
		}
		if attempt == 3 {
			t.Fatalf("registry did not become ready: %v", err)
		}
	}
}

func tryStart(bin, dir string) (*proc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &proc{url: "http://" + addr, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--addr", addr, "--data", filepath.Join(dir, "data"),
		"--plugins", filepath.Join(dir, "plugins.yaml"), "--rate-publish", "0")
	p.cmd.Env = append(os.Environ(), "REGISTRY_ADMIN_TOKEN="+adminToken, "REGISTRY_OIDC_ISSUER=off", "REGISTRY_SYNC_INTERVAL=0")
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, &lockedWriter{w: p.stderr}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return nil, fmt.Errorf("registry exited: %s", p.stderr)
		case <-time.After(10 * time.Millisecond):
		}
		res, err := http.Get(p.url + "/readyz")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return nil, fmt.Errorf("no 200 from /readyz in 30 s: %s", p.stderr)
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// publishRound publishes perRound new versions and repeats one acknowledged release
// concurrently, SIGKILLs the server 0–200 ms after they start, and returns what was
// acknowledged before the kill.
func publishRound(t *testing.T, p *proc, round int, rng *rand.Rand, acked map[string]ack) map[string]ack {
	t.Helper()
	type job struct{ id, version string }
	var jobs []job
	for k := range perRound {
		jobs = append(jobs, job{ids[(round+k)%len(ids)], fmt.Sprintf("1.%d.%d", round, k)})
	}
	if len(acked) > 0 {
		keys := slices.Sorted(maps.Keys(acked))
		id, version, _ := strings.Cut(keys[rng.IntN(len(keys))], "@")
		jobs = append(jobs, job{id, version})
	}
	var (
		mu  sync.Mutex
		got = map[string]ack{}
		wg  sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second}
	datas := make([][]byte, len(jobs))
	for i, j := range jobs {
		datas[i] = packageOf(t, j.id, j.version)
	}
	for i, j := range jobs {
		data := datas[i]
		wg.Go(func() {
			status, err := publish(client, p.url, j.id+"-"+j.version+".tar.gz", data)
			if err != nil {
				return // the server died under it
			}
			if status != http.StatusCreated && status != http.StatusOK {
				t.Errorf("publish %s@%s: status %d", j.id, j.version, status)
				return
			}
			sum := sha256.Sum256(data)
			mu.Lock()
			got[j.id+"@"+j.version] = ack{sha: hex.EncodeToString(sum[:]), size: int64(len(data))}
			mu.Unlock()
		})
	}
	time.Sleep(time.Duration(rng.IntN(201)) * time.Millisecond)
	p.kill(t)
	wg.Wait()
	return got
}

func publish(client *http.Client, base, fileName string, data []byte) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("package", fileName)
	if err != nil {
		return 0, err
	}
	if _, err := fw.Write(data); err != nil {
		return 0, err
	}
	if err := mw.Close(); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/v1/packages", &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return 0, err // a status line without the whole answer is not an acknowledgement
	}
	return res.StatusCode, nil
}

// packageOf is a valid managed plugin whose bytes depend only on id and version (so that
// a repeat is identical), with a 64–512 KiB incompressible payload so that a kill can land
// in the middle of an upload.
func packageOf(t *testing.T, id, version string) []byte {
	t.Helper()
	seed := sha256.Sum256([]byte(id + "@" + version))
	r := rand.New(rand.NewChaCha8(seed))
	payload := make([]byte, 64<<10+r.IntN(448<<10))
	for i := 0; i+8 <= len(payload); i += 8 {
		binary.LittleEndian.PutUint64(payload[i:], r.Uint64())
	}
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndisplay_name: Crash\ndescription: Crash test package\n" +
		"author: Crash\ncategories: [tools]\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: payload, Mode: 0o755},
		"README.md":                 {Data: []byte("# Crash\n\nA crash-test package.\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type version struct {
	Version    string `json:"version"`
	SHA256     string `json:"sha256"`
	Size       int64  `json:"size"`
	Yanked     bool   `json:"yanked"`
	PackageURL string `json:"package_url"`
}

// check verifies, against a freshly started registry: every listed release downloads
// intact; every acknowledged publish is listed with the digest and size of the bytes sent
// (so its download is those bytes); the index's latest versions are the store's; and the
// blob folder holds only listed blobs (the orphans of the previous kill were collected at
// start).
func check(t *testing.T, base, dir string, acked map[string]ack, seed uint64) {
	t.Helper()
	listed := map[string]ack{} // id@version → digest and size
	latest := map[string]string{}
	for _, id := range ids {
		var detail struct {
			Versions []version `json:"versions"`
		}
		status := getJSON(t, base+"/api/v1/plugins/"+id, &detail)
		if status == http.StatusNotFound {
			continue
		}
		if status != http.StatusOK {
			t.Fatalf("GET /api/v1/plugins/%s: %d", id, status)
		}
		for _, v := range detail.Versions {
			checkDownload(t, v)
			listed[id+"@"+v.Version] = ack{sha: v.SHA256, size: v.Size}
			if !v.Yanked && (latest[id] == "" || semverLess(latest[id], v.Version)) {
				latest[id] = v.Version
			}
		}
	}
	for k, a := range acked {
		if listed[k] != a {
			t.Fatalf("seed %d: acknowledged release %s (%d bytes, sha256 %s) is listed as %+v after a kill", seed, k, a.size, a.sha, listed[k])
		}
	}
	checkIndex(t, base, latest)
	checkBlobFolder(t, dir, listed)
	checkLookups(t, base, dir, acked, seed)
}

func checkDownload(t *testing.T, v version) {
	t.Helper()
	res, err := http.Get(v.PackageURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("download %s: %d %v", v.PackageURL, res.StatusCode, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != v.SHA256 || n != v.Size {
		t.Fatalf("download %s: %d bytes sha256 %s, want %d bytes %s", v.PackageURL, n, got, v.Size, v.SHA256)
	}
}

func checkIndex(t *testing.T, base string, latest map[string]string) {
	t.Helper()
	var doc struct {
		Plugins []struct {
			ID      string `json:"id"`
			Version string `json:"version"`
		} `json:"plugins"`
	}
	if status := getJSON(t, base+"/index.json", &doc); status != http.StatusOK {
		t.Fatalf("index.json: %d", status)
	}
	got := map[string]string{}
	for _, p := range doc.Plugins {
		got[p.ID] = p.Version
	}
	if diff := cmp.Diff(latest, got); diff != "" {
		t.Fatalf("index.json latest versions differ from the API's (-api +index):\n%s", diff)
	}
}

func checkBlobFolder(t *testing.T, dir string, listed map[string]ack) {
	t.Helper()
	want := map[string]bool{}
	for _, a := range listed {
		want[a.sha] = true
	}
	root := filepath.Join(dir, "data", "blobs")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "tmp"+string(filepath.Separator)) {
			t.Errorf("temporary file %s survived the restart", rel)
			return nil
		}
		if !want[d.Name()] {
			t.Errorf("orphan blob %s survived the restart", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkStore opens the data directory of the killed registry: no row lacks its blob, and
// after garbage collection the blob folder is exactly the releases' blobs.
func checkStore(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	missing, err := st.MissingBlobs(ctx)
	if err != nil || len(missing) > 0 {
		t.Fatalf("rows without blobs: %v %v", missing, err)
	}
	if _, err := st.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	rels, err := st.AllReleases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range rels {
		want = append(want, r.SHA256)
	}
	files, err := st.Blobs.List()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(files)
	if diff := cmp.Diff(slices.Compact(want), files); diff != "" {
		t.Errorf("blob files vs release rows (-rows +files):\n%s", diff)
	}
	if len(rels) < rounds {
		t.Logf("only %d releases landed in %d rounds", len(rels), rounds)
	}
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return res.StatusCode
}

// semverLess compares the MAJOR.MINOR.PATCH versions this test publishes.
func semverLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
