package replicas_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/pluginyard/registry/test/replicas"
)

// registryBin is ./cmd/registry, built once by TestMain.
var registryBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "replicas-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := 2
	if registryBin, err = replicas.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// Every test's plugins: published with the admin token, or by the publisher "acme".
var testPlugins = []replicas.Plugin{
	{ID: "replica-alpha", Repo: "acme/replica-alpha", Owner: "acme"},
	{ID: "replica-beta", Repo: "acme/replica-beta", Owner: "acme"},
	{ID: "replica-gamma", Repo: "acme/replica-gamma", Owner: "acme"},
}

// startThree starts three replicas on PostgreSQL and the shared bucket.
func startThree(t *testing.T, opts replicas.Options) *replicas.Cluster {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("starts PostgreSQL, an S3 server and three registry processes (with CI=true it runs even with -short)")
	}
	opts.Replicas = 3
	if opts.Plugins == nil {
		opts.Plugins = testPlugins
	}
	return replicas.Start(t, registryBin, opts)
}

// mustPackage is replicas.NewPackage or the test's end.
func mustPackage(t *testing.T, id, version string, variant, payload int) replicas.Package {
	t.Helper()
	p, err := replicas.NewPackage(id, version, variant, payload)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustPublish publishes pkg on the replica at base with the admin token and expects 201.
func mustPublish(t *testing.T, base string, pkg replicas.Package) {
	t.Helper()
	a, err := replicas.Publish(base, replicas.AdminToken, pkg)
	if err != nil {
		t.Fatalf("publish %s@%s on %s: %v", pkg.ID, pkg.Version, base, err)
	}
	if a.Status != 201 {
		t.Fatalf("publish %s@%s on %s: %s, want 201", pkg.ID, pkg.Version, base, a)
	}
}

// eventually polls check every 20 ms until it returns nil or within passes; it returns how
// long that took, or the last error.
func eventually(within time.Duration, check func() error) (time.Duration, error) {
	start := time.Now()
	for {
		err := check()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Since(start) > within {
			return time.Since(start), err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hasRule says whether a refusal carries rule.
func hasRule(a replicas.Answer, rule string) bool { return slices.Contains(a.Rules(), rule) }
