package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func indexIDs(t *testing.T, addr string) []string {
	t.Helper()
	res, err := http.Get("http://" + addr + "/index.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct{ Plugins []struct{ ID string } }
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range doc.Plugins {
		ids = append(ids, p.ID)
	}
	return ids
}

func adminPost(t *testing.T, addr, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer admin-secret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func adminPostBody(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer admin-secret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestReloadKeepsPreviousListOnError: a broken plugins.yaml never empties the catalog;
// delisting hides a plugin but keeps its releases.
func TestReloadKeepsPreviousListOnError(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "plugins.yaml")
	orig, err := os.ReadFile("../../plugins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cmdServe(ctx, c, []string{"--demo", "--addr", addr, "--data", filepath.Join(dir, "data"), "--plugins", list})
	}()
	defer func() { cancel(); <-done }()
	for i := 0; i < 100; i++ {
		if res, err := http.Get("http://" + addr + "/readyz"); err == nil {
			res.Body.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := indexIDs(t, addr)
	if len(before) < 4 {
		t.Fatalf("demo index = %v; stderr %s", before, errOut)
	}
	if err := os.WriteFile(list, []byte("plugins:\n  - id: Not Valid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := adminPost(t, addr, "/api/v1/admin/reload"); st != http.StatusUnprocessableEntity {
		t.Errorf("reload of a broken file: %d, want 422", st)
	}
	if got := indexIDs(t, addr); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("catalog changed after a broken reload: %v", got)
	}
	res, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct{ Checks map[string]string }
	_ = json.NewDecoder(res.Body).Decode(&ready)
	res.Body.Close()
	if !strings.Contains(ready.Checks["plugins_yaml_reload"], "previous list in force") {
		t.Errorf("readyz does not report the failed reload: %v", ready.Checks)
	}
	// Two entries that share a download URL: refused with the rule id, the list in force stays.
	colliding := string(orig) + "\n  - name: \"@pr/insights\"\n    repo: acme/curupira-pr-insights\n    owners: [acme]\n"
	if !strings.Contains(string(orig), "extensions:") {
		colliding = string(orig) + "extensions:\n  - name: \"@pr/insights\"\n    repo: acme/curupira-pr-insights\n    owners: [acme]\n"
	}
	if err := os.WriteFile(list, []byte(colliding), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, body := adminPostBody(t, addr, "/api/v1/admin/reload"); st != http.StatusUnprocessableEntity || !strings.Contains(body, `"rule":"registry.file_id.collision"`) {
		t.Errorf("reload of a list with a file-id collision: %d %s, want 422 with registry.file_id.collision", st, body)
	}
	if got := indexIDs(t, addr); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("catalog changed after a refused reload: %v", got)
	}
	// Delist pr-insights: it leaves the index, its package stays downloadable.
	delisted := strings.Replace(string(orig), "  - id: pr-insights\n", "  - id: pr-insights-gone\n", 1)
	if err := os.WriteFile(list, []byte(delisted), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := adminPost(t, addr, "/api/v1/admin/reload"); st != http.StatusOK {
		t.Fatalf("reload: %d; stderr %s", st, errOut)
	}
	for _, id := range indexIDs(t, addr) {
		if id == "pr-insights" {
			t.Error("delisted plugin still in the index")
		}
	}
	dl, err := http.Get("http://" + addr + "/packages/pr-insights/pr-insights-1.0.1.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	dl.Body.Close()
	if dl.StatusCode != http.StatusOK {
		t.Errorf("delisted release download: %d", dl.StatusCode)
	}
}
