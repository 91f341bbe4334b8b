package main

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/translog"
)

// registryData is a data directory as `registry serve --public-url
// https://plugins.example.com` leaves it: a stored release of testdata/sync/plugins.yaml,
// its log key and the last good documents, at the registry's own URL.
func registryData(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	st := MustStore(t, data)
	defer st.Close()
	insertRelease(t, st, "acme-hello", "0.9.0", "plugin", "Says hello")
	if _, err := translog.LoadKey(data, "", translog.KeyName("https://plugins.example.com")); err != nil {
		t.Fatal(err)
	}
	list, err := loadList("testdata/sync/plugins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc := ingest.New(st, list, ingest.Config{PublicURL: "https://plugins.example.com"}, slog.New(slog.DiscardHandler))
	err = svc.Rebuild(context.Background())
	svc.Close() // writes the last good documents
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// files maps every file under dir to its content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportAndSyncKeepTheLastGoodDocuments: an export at a mirror's URL and a sync at
// its default URL build documents for themselves; the last good documents serve falls
// back to stay the registry's, byte for byte.
func TestExportAndSyncKeepTheLastGoodDocuments(t *testing.T) {
	data := registryData(t)
	lastGood := filepath.Join(data, "index", "last-good")
	before := files(t, lastGood)
	if doc := before["documents.json"]; doc == "" {
		t.Fatalf("no last good documents to keep: %v", before)
	}
	for name, body := range before {
		if strings.HasPrefix(name, "kandev-") && !strings.Contains(body, "https://plugins.example.com/") {
			t.Fatalf("the last good %s does not name the registry's URL: %s", name, body)
		}
	}
	c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": data, "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml"})
	if code := cmdExport(context.Background(), c, []string{"--out", filepath.Join(t.TempDir(), "mirror"), "--public-url", "https://mirror.example.net"}); code != exitOK {
		t.Fatalf("export: exit %d; stderr: %s", code, errOut)
	}
	if diff := cmp.Diff(before, files(t, lastGood)); diff != "" {
		t.Errorf("export replaced the last good documents (-before +after):\n%s", diff)
	}
	gh := fakeGitHub(t)
	c, out, errOut := testCLI(map[string]string{"REGISTRY_DATA": data, "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml", "REGISTRY_GITHUB_API": gh.URL})
	cmdSync(context.Background(), c, []string{"--once"}) // acme-broken fails: exit 1
	if !strings.Contains(out.String(), "published acme-hello@1.0.0") {
		t.Fatalf("sync did not publish: %s; stderr: %s", out, errOut)
	}
	if diff := cmp.Diff(before, files(t, lastGood)); diff != "" {
		t.Errorf("sync replaced the last good documents (-before +after):\n%s", diff)
	}
}

// TestExportNeedsTheLogKey: a data directory restored without its log.key is refused, and
// the export creates no key, which would name the registry's log after the mirror.
func TestExportNeedsTheLogKey(t *testing.T) {
	data := registryData(t)
	key := filepath.Join(data, translog.KeyFile)
	if err := os.Remove(key); err != nil {
		t.Fatal(err)
	}
	before := files(t, data)
	c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": data, "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml"})
	out := filepath.Join(t.TempDir(), "mirror")
	if code := cmdExport(context.Background(), c, []string{"--out", out, "--public-url", "https://cdn.mirror.example"}); code != exitInvalid {
		t.Fatalf("export without a log key: exit %d, want %d; stderr: %s", code, exitInvalid, errOut)
	}
	for _, want := range []string{"the log key is missing from " + key, "restore log.key from the backup", "`registry serve --data " + data + "` once"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(key); err == nil {
		t.Errorf("the export created %s", key)
	}
	if diff := cmp.Diff(before, files(t, data)); diff != "" {
		t.Errorf("the refused export changed the data directory (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused export wrote %s", out)
	}
}

// TestExportChecksThePublicURL: export refuses the public URLs serve refuses (no scheme, a
// query, a fragment, a space), naming the flag, and writes nothing.
func TestExportChecksThePublicURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"plugins.example.com", `--public-url "plugins.example.com" (REGISTRY_PUBLIC_URL): expected an absolute http(s) URL such as https://plugins.example.com`},
		{"ftp://plugins.example.com", `--public-url "ftp://plugins.example.com" (REGISTRY_PUBLIC_URL): expected an absolute http(s) URL`},
		{"https://m.example.com/?x", "it has a query (?…), which a base URL cannot have (paths are appended to it): remove it"},
		{"https://m.example.com/#top", "it has a fragment (#…)"},
		{"https://m.example.com/sub path?x#y", "it has a space, a query (?…) and a fragment (#…)"},
	}
	data := registryData(t)
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": data, "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml"})
			out := filepath.Join(t.TempDir(), "mirror")
			if code := cmdExport(context.Background(), c, []string{"--out", out, "--public-url", tt.url}); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, errOut)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, errOut)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the refused export wrote %s", out)
			}
		})
	}
}
