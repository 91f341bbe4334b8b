package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve checks plugins.yaml once per content and binary: the first start parses it and
// keeps the result in DATA/cache, the next start of the same bytes decodes that, and any
// edit parses again (index.ListCache has the rules; this is its wiring).
func TestServeCachesTheCheckedList(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	src, err := os.ReadFile("testdata/sync/plugins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "plugins.yaml")
	start := func(body []byte) bool {
		t.Helper()
		if err := os.WriteFile(list, body, 0o600); err != nil {
			t.Fatal(err)
		}
		c, out, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret"})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan int, 1)
		go func() {
			done <- cmdServe(ctx, c, []string{"--log-format", "json", "--addr", freeAddr(t), "--data", data, "--plugins", list, "--sync-interval", "0"})
		}()
		awaitServing(t, out, errOut, done)
		cancel()
		if code := <-done; code != exitOK {
			t.Fatalf("serve exit %d; stderr:\n%s", code, errOut)
		}
		recs := strings.Split(errOut.String(), "\n")
		for _, line := range recs {
			var r struct {
				Msg     string `json:"msg"`
				Plugins int    `json:"plugins"`
				Cached  bool   `json:"cached"`
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Msg == "curated list" {
				if r.Plugins == 0 {
					t.Errorf("curated list line without its plugins: %s", line)
				}
				return r.Cached
			}
		}
		t.Fatalf("no curated list line in:\n%s", strings.Join(recs, "\n"))
		return false
	}
	if start(src) {
		t.Errorf("first start: the list came from a cache")
	}
	if _, err := os.Stat(filepath.Join(data, "cache", "plugins-list.gob")); err != nil {
		t.Errorf("first start wrote no cache: %v", err)
	}
	if !start(src) {
		t.Errorf("second start of the same list: parsed again, want the cache")
	}
	if start(append(src, []byte("\n# edited\n")...)) {
		t.Errorf("start after an edit: the cache of the old bytes was used")
	}
}
