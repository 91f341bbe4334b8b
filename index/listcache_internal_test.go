package index

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// cacheList is a list with every kind of field the cache must keep, and a warning.
const cacheList = `plugins:
  - id: cache-alpha
    repo: acme/cache-alpha
    kind: canvas
    categories: [tools, not-a-known-category]
    featured: true
    official: true
    previews:
      - url: https://example.com/a.png
        alt: A preview
    signing:
      required: true
      sigstore:
        workflow: .github/workflows/release.yml
      ed25519_keys: [11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=]
    owners: [acme]
    scan_allow:
      - path: testdata/key.pem
        rule: scan.private_key
  - id: cache-beta
    repo: acme/cache-beta
    owners: []
extensions:
  - name: "@acme/cache-gamma"
    repo: acme/cache-gamma
    owners: [acme]
`

func withBuildID(t *testing.T, id string) {
	t.Helper()
	prev := buildID
	buildID = func() string { return id }
	t.Cleanup(func() { buildID = prev })
}

func writeList(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The cached form is what LoadList makes of the same file, warnings and their file
// included; the second load is served from the cache.
func TestListCacheKeepsWhatLoadListMakes(t *testing.T) {
	withBuildID(t, "build-1")
	dir := t.TempDir()
	path := writeList(t, dir, "plugins.yaml", cacheList)
	want, wantProbs, err := LoadList(path)
	if err != nil || wantProbs.HasErrors() || len(wantProbs) == 0 {
		t.Fatalf("fixture: err %v, problems %v (want warnings only)", err, wantProbs)
	}
	c := ListCache{Dir: filepath.Join(dir, "cache")}
	for i, wantCached := range []bool{false, true} {
		got, err := c.Load(path)
		if err != nil || got.WriteErr != nil {
			t.Fatalf("load %d: %v, write %v", i, err, got.WriteErr)
		}
		if got.Cached != wantCached {
			t.Errorf("load %d: cached %v, want %v", i, got.Cached, wantCached)
		}
		if !reflect.DeepEqual(got.List, want) || !reflect.DeepEqual(got.Problems, wantProbs) {
			t.Errorf("load %d:\n got %+v %v\nwant %+v %v", i, got.List, got.Problems, want, wantProbs)
		}
	}
	// The same bytes at another path: the problems name the file given.
	other := writeList(t, dir, "other.yaml", cacheList)
	got, err := c.Load(other)
	if err != nil || !got.Cached {
		t.Fatalf("other path: err %v, cached %v", err, got.Cached)
	}
	for _, p := range got.Problems {
		if p.File != other {
			t.Errorf("problem %s in %q, want %q", p.Rule, p.File, other)
		}
	}
}

// Any change to the bytes, or another program, parses again; so does a damaged file.
func TestListCacheParsesAgainOnAnyChange(t *testing.T) {
	withBuildID(t, "build-1")
	dir := t.TempDir()
	path := writeList(t, dir, "plugins.yaml", cacheList)
	c := ListCache{Dir: filepath.Join(dir, "cache")}
	if _, err := c.Load(path); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(cacheList, "featured: true", "featured: false", 1)
	writeList(t, dir, "plugins.yaml", changed)
	got, err := c.Load(path)
	if err != nil || got.Cached {
		t.Fatalf("changed bytes: err %v, cached %v", err, got.Cached)
	}
	if got.List.Plugins[0].Featured {
		t.Errorf("changed bytes: the list before the change was returned")
	}

	withBuildID(t, "build-2")
	if got, err := c.Load(path); err != nil || got.Cached {
		t.Fatalf("another build: err %v, cached %v", err, got.Cached)
	}
	if got, err := c.Load(path); err != nil || !got.Cached {
		t.Fatalf("the same build again: err %v, cached %v", err, got.Cached)
	}

	file := filepath.Join(c.Dir, listCacheFile)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = c.Load(path)
	if err != nil || got.Cached || got.List == nil || len(got.List.Plugins) != 2 {
		t.Fatalf("damaged cache: err %v, cached %v, list %+v", err, got.Cached, got.List)
	}
}

// A refused list is never cached: each load reports its errors again.
func TestListCacheKeepsNoRefusedList(t *testing.T) {
	withBuildID(t, "build-1")
	dir := t.TempDir()
	bad := strings.Replace(cacheList, "kind: canvas", "kind: gadget", 1)
	path := writeList(t, dir, "plugins.yaml", bad)
	c := ListCache{Dir: filepath.Join(dir, "cache")}
	for i := range 2 {
		got, err := c.Load(path)
		if err != nil || got.Cached || !got.Problems.HasErrors() {
			t.Fatalf("load %d: err %v, cached %v, problems %v", i, err, got.Cached, got.Problems)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Dir, listCacheFile)); !os.IsNotExist(err) {
		t.Errorf("a refused list left a cache file (stat: %v)", err)
	}
}

// Without a build ID (not an ELF executable) or a directory, nothing is cached.
func TestListCacheNeedsABuildID(t *testing.T) {
	withBuildID(t, "")
	dir := t.TempDir()
	path := writeList(t, dir, "plugins.yaml", cacheList)
	c := ListCache{Dir: filepath.Join(dir, "cache")}
	for range 2 {
		if got, err := c.Load(path); err != nil || got.Cached {
			t.Fatalf("err %v, cached %v", err, got.Cached)
		}
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("a cache was written without a build ID (stat: %v)", err)
	}
}

// The test binary is an ELF executable with a Go build ID.
func TestExecutableBuildID(t *testing.T) {
	if id := executableBuildID(); len(id) < 16 || !strings.Contains(id, "Go") {
		t.Errorf("build ID %q", id)
	}
}
