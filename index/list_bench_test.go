package index_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pluginyard/registry/index"
)

// benchList is a plugins.yaml of n plugin entries shaped like bench/catalog's (-signed):
// id, repo, kind, one category and one owner each, a required ed25519 signing policy on
// every tenth, plus n/10 extensions.
func benchList(n int) []byte {
	var b bytes.Buffer
	b.WriteString("# benchmark list\nplugins:\n")
	cats := []string{"tools", "connector", "automation", "analytics"}
	for i := range n {
		fmt.Fprintf(&b, "  - id: gen-p-%06d\n    repo: bench/gen-p-%06d\n    kind: plugin\n    categories: [%s]\n    owners: [pub-%02d]\n", i, i, cats[i%4], i%20)
		if i%10 == 0 {
			b.WriteString("    signing:\n      required: true\n      ed25519_keys: [11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=]\n")
		}
	}
	b.WriteString("extensions:\n")
	for i := range n / 10 {
		fmt.Fprintf(&b, "  - name: \"@bench/e-%06d\"\n    repo: bench/e-%06d\n    owners: [pub-%02d]\n", i, i, i%20)
	}
	return b.Bytes()
}

// BenchmarkLoadList measures LoadList (read, parse, check, file-id check) of lists of 1k,
// 10k and 50k plugins; ns/op and allocs/op should grow linearly with the entries.
func BenchmarkLoadList(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		path := filepath.Join(b.TempDir(), "plugins.yaml")
		data := benchList(n)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("plugins=%d/bytes=%d", n, len(data)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l, probs, err := index.LoadList(path)
				if err != nil || len(probs) != 0 || len(l.Plugins) != n {
					b.Fatalf("err %v, problems %v", err, probs)
				}
			}
		})
	}
}

// BenchmarkLoadListCached is BenchmarkLoadList through a ListCache that holds the list: the
// cost of a start or reload with plugins.yaml and the program unchanged.
func BenchmarkLoadListCached(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		dir := b.TempDir()
		path := filepath.Join(dir, "plugins.yaml")
		data := benchList(n)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		c := index.ListCache{Dir: filepath.Join(dir, "cache")}
		if got, err := c.Load(path); err != nil || got.WriteErr != nil {
			b.Fatalf("err %v, write %v", err, got.WriteErr)
		}
		b.Run(fmt.Sprintf("plugins=%d/bytes=%d", n, len(data)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := c.Load(path)
				if err != nil || !got.Cached || len(got.List.Plugins) != n {
					b.Fatalf("err %v, cached %v", err, got.Cached)
				}
			}
		})
	}
}
