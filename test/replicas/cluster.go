// Package replicas runs several `registry serve` processes as one registry, as an operator
// runs them behind a load balancer: one PostgreSQL database, one S3 bucket, a local data
// directory each, the same plugins.yaml, admin token, public URL and log key. Its tests are
// the multi-replica and fault acceptance tests of issue #16; bench/replicas measures the
// same set-ups.
//
// The backends are real: PostgreSQL from storetest.StartPostgres, the bucket from
// s3test.StartS3 behind a loopback TCP proxy the tests can cut. Without their binaries the
// tests skip, except with CI=true, where they fail.
package replicas

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// AdminToken is REGISTRY_ADMIN_TOKEN of every replica.
const AdminToken = "replicas-test-admin-token-0123456789"

// PublicURL is the --public-url every replica of a cluster shares: the load balancer's
// address. Documents carry it, so replicas with different ones could never serve the same
// bytes; requests go to each replica's own address (Replica.URL).
const PublicURL = "http://registry.replicas.test"

// Build builds ./cmd/registry into dir and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "registry")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/pluginyard/registry/cmd/registry")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("replicas: go build ./cmd/registry: %w\n%s", err, out)
	}
	return bin, nil
}

// Plugin is one plugins.yaml entry.
type Plugin struct {
	ID, Repo, Owner string
}

// Options describe a cluster.
type Options struct {
	Replicas int
	// Embedded runs the default: SQLite and a blob folder in the (single) replica's data
	// directory, no --database or --blobs flag at all.
	Embedded bool
	// FolderBlobs shares a file: blob folder instead of the S3 bucket (with PostgreSQL):
	// the benchmark's way to tell the bucket's cost from the database's.
	FolderBlobs bool
	Plugins     []Plugin
	// OIDCIssuer turns trusted publishing on with this issuer; "" turns it off.
	OIDCIssuer string
	// Serial starts the replicas one after the other instead of all at once.
	Serial bool
}

// Cluster is the replicas and the backends they share.
type Cluster struct {
	tb      testing.TB
	bin     string
	dir     string
	opts    Options
	plugins string // plugins.yaml path
	logKey  string // the log key file every replica signs with

	DatabaseURL string    // --database ("" when embedded)
	BlobsURL    string    // --blobs ("" when embedded)
	PG          *Postgres // nil when embedded
	Bucket      *Bucket   // nil when embedded or with FolderBlobs
	Replicas    []*Replica

	mu sync.Mutex
}

// Start starts a cluster of opts.Replicas replicas and waits until every one answers
// /readyz with 200. Everything is stopped and removed when tb ends; a failed test's log
// holds every replica's stderr.
func Start(tb testing.TB, bin string, opts Options) *Cluster {
	tb.Helper()
	c := &Cluster{tb: tb, bin: bin, dir: tb.TempDir(), opts: opts}
	c.writePlugins()
	c.makeLogKey()
	if !opts.Embedded {
		c.PG = StartPostgres(tb)
		c.DatabaseURL = c.PG.CreateDatabase(tb)
		c.BlobsURL = "file:" + filepath.Join(c.dir, "shared-blobs")
		if !opts.FolderBlobs {
			c.Bucket = StartBucket(tb)
			c.BlobsURL = c.Bucket.URL()
		}
	}
	tb.Cleanup(c.stopAll)
	c.Replicas = make([]*Replica, opts.Replicas)
	if opts.Serial {
		for i := range c.Replicas {
			c.Replicas[i] = c.StartReplica(i)
		}
		return c
	}
	var wg sync.WaitGroup
	errs := make([]error, opts.Replicas)
	for i := range c.Replicas {
		wg.Go(func() { c.Replicas[i], errs[i] = c.startReplica(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// writePlugins writes the shared plugins.yaml.
func (c *Cluster) writePlugins() {
	var b strings.Builder
	b.WriteString("plugins:\n")
	for _, p := range c.opts.Plugins {
		fmt.Fprintf(&b, "  - id: %s\n    repo: %s\n    owners: [%s]\n", p.ID, p.Repo, p.Owner)
	}
	c.plugins = filepath.Join(c.dir, "plugins.yaml")
	if err := os.WriteFile(c.plugins, []byte(b.String()), 0o644); err != nil {
		c.tb.Fatal(err)
	}
}

// makeLogKey has `registry log key` create the transparency-log key once; every replica is
// given that file, as a deployment gives its replicas one secret.
func (c *Cluster) makeLogKey() {
	dir := filepath.Join(c.dir, "logkey")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.tb.Fatal(err)
	}
	out, err := exec.Command(c.bin, "log", "key", "--data", dir, "--public-url", PublicURL).CombinedOutput()
	if err != nil {
		c.tb.Fatalf("registry log key: %v\n%s", err, out)
	}
	c.logKey = filepath.Join(dir, "log.key")
	if _, err := os.Stat(c.logKey); err != nil {
		c.tb.Fatalf("registry log key made no %s: %v\n%s", c.logKey, err, out)
	}
}

// StartReplica starts replica i (again, after a kill: on the same data directory).
func (c *Cluster) StartReplica(i int) *Replica {
	c.tb.Helper()
	r, err := c.startReplica(i)
	if err != nil {
		c.tb.Fatal(err)
	}
	c.mu.Lock()
	c.Replicas[i] = r
	c.mu.Unlock()
	return r
}

// serveArgs are the flags of replica i listening on addr.
func (c *Cluster) serveArgs(i int, addr string) []string {
	args := []string{"serve", "--addr", addr, "--data", c.dataDir(i), "--plugins", c.plugins,
		"--public-url", PublicURL, "--log-key", c.logKey, "--oidc-issuer", cmp.Or(c.opts.OIDCIssuer, "off"),
		"--oidc-audience", PublicURL, "--sync-interval", "0", "--scrub-interval", "0",
		"--rate-publish", "0", "--rate-auth", "0", "--rate-search", "0", "--rate-host-build", "0", "--rate-report", "0"}
	if !c.opts.Embedded {
		args = append(args, "--database", c.DatabaseURL, "--blobs", c.BlobsURL)
	}
	return args
}

func (c *Cluster) dataDir(i int) string { return filepath.Join(c.dir, fmt.Sprintf("replica-%d", i)) }

// Env is the environment of every process of the cluster: the admin token and the
// bucket's credentials.
func (c *Cluster) Env() []string {
	env := append(os.Environ(), "REGISTRY_ADMIN_TOKEN="+AdminToken, "REGISTRY_LOG_FORMAT=text")
	if c.Bucket != nil {
		env = append(env, c.Bucket.Env()...)
	}
	return env
}

// CLI runs a registry command against the cluster's database and bucket (as an operator
// runs `registry token create` beside the replicas) and returns its output.
func (c *Cluster) CLI(args ...string) (string, error) {
	full := append([]string(nil), args...)
	full = append(full, "--data", filepath.Join(c.dir, "cli"))
	if !c.opts.Embedded {
		full = append(full, "--database", c.DatabaseURL, "--blobs", c.BlobsURL)
	}
	cmd := exec.Command(c.bin, full...)
	cmd.Env = c.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("registry %s: %w\n%s%s", strings.Join(full, " "), err, out, missingFlag(string(out)))
	}
	return string(out), nil
}

// stopAll stops every replica still running (SIGTERM, then SIGKILL after 10 s) and, when
// the test failed, logs what each wrote to stderr.
func (c *Cluster) stopAll() {
	c.mu.Lock()
	rs := append([]*Replica(nil), c.Replicas...)
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rs {
		if r != nil {
			wg.Go(func() { _ = r.stop() })
		}
	}
	wg.Wait()
	if !c.tb.Failed() {
		return
	}
	for _, r := range rs {
		if r != nil {
			c.tb.Logf("replica %d (%s) stderr, without the request lines of 1xx-4xx answers:\n%s", r.Index, r.URL, worthShowing(r.Stderr()))
		}
	}
}

// missingFlag names the helper whose mechanism is missing when the binary refused one of
// the flags of issue #16, so a failure says what has not landed.
func missingFlag(out string) string {
	for flag, what := range map[string]string{
		"-database": "the --database flag (issue #16, cmd/registry wiring) has not landed",
		"-blobs":    "the --blobs flag (issue #16, cmd/registry wiring) has not landed",
	} {
		if strings.Contains(out, "flag provided but not defined: "+flag) || strings.Contains(out, "unknown flag "+flag) ||
			strings.Contains(out, "flag provided but not defined: -"+flag) {
			return "\nMISSING: " + what
		}
	}
	return ""
}

// shownLines bounds the stderr lines a failed test shows per replica (the last ones).
const shownLines = 150

// worthShowing is a replica's stderr without the access log of answers below 500 (pollers
// make thousands), at most its last shownLines lines.
func worthShowing(stderr string) string {
	var keep []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "msg=request") && !strings.Contains(l, "status=5") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > shownLines {
		keep = append([]string{fmt.Sprintf("[%d earlier lines]", len(keep)-shownLines)}, keep[len(keep)-shownLines:]...)
	}
	return strings.Join(keep, "\n")
}
