package examples_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/pack"
)

// kandevManifest is the part of a manifest these tests check by hand; the manifest
// package checks every rule.
type kandevManifest struct {
	ID               string `yaml:"id"`
	Version          string `yaml:"version"`
	DisplayName      string `yaml:"display_name"`
	Description      string `yaml:"description"`
	Author           string `yaml:"author"`
	Categories       []string
	RepoURL          string `yaml:"repo_url"`
	Icon             string `yaml:"icon"`
	MinKandevVersion string `yaml:"min_kandev_version"`
	Runtime          struct {
		Type        string            `yaml:"type"`
		Executables map[string]string `yaml:"executables"`
	} `yaml:"runtime"`
	Distribution *struct {
		Kind string `yaml:"kind"`
	} `yaml:"distribution"`
}

type file struct {
	Mode int64
	Data []byte
}

// mustUnpack returns the files of a package in archive order, and the map of them.
func mustUnpack(tb testing.TB, pkg []byte) ([]string, map[string]file) {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		tb.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var order []string
	files := map[string]file{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return order, files
		}
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		order = append(order, h.Name)
		files[h.Name] = file{h.Mode, data}
	}
}

func mustPack(tb testing.TB, name string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := examples.Pack(name, &buf); err != nil {
		tb.Fatalf("examples.Pack(%s): %v", name, err)
	}
	return buf.Bytes()
}

func TestNames(t *testing.T) {
	want := []string{"curupira-github-issues", "hello-managed", "pr-insights", "slack-relay", "task-board-canvas"}
	if diff := cmp.Diff(want, examples.Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
}

func TestEmbeddedPackEqualsDirPack(t *testing.T) {
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			var onDisk bytes.Buffer
			if err := pack.Dir(name, &onDisk); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mustPack(t, name), onDisk.Bytes()) {
				t.Error("embedded example and folder on disk pack to different bytes")
			}
		})
	}
}

func TestPackUnknownExample(t *testing.T) {
	err := examples.Pack("no-such-example", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no-such-example") {
		t.Errorf("Pack(unknown) = %v, want an error naming it", err)
	}
}

func TestKandevExamplesAreComplete(t *testing.T) {
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			order, files := mustUnpack(t, mustPack(t, name))
			raw, ok := files["manifest.yaml"]
			if !ok {
				t.Skip("not a Kandev package")
			}
			if order[len(order)-1] != "checksums.txt" {
				t.Errorf("last entry = %s, want checksums.txt", order[len(order)-1])
			}
			var m kandevManifest
			if err := yaml.Unmarshal(raw.Data, &m); err != nil {
				t.Fatal(err)
			}
			checkIdentity(t, name, m)
			checkFiles(t, m, files)
		})
	}
}

func checkIdentity(t *testing.T, name string, m kandevManifest) {
	t.Helper()
	if m.ID != name {
		t.Errorf("id = %q, want the folder name %q", m.ID, name)
	}
	if !strings.HasPrefix(m.Version, "1.") {
		t.Errorf("version = %q, want 1.x.y", m.Version)
	}
	if m.DisplayName == "" || m.Description == "" || m.Author == "" || len(m.Categories) == 0 {
		t.Errorf("display_name, description, author and categories must all be set: %+v", m)
	}
	if m.RepoURL != "https://github.com/pluginyard/"+name {
		t.Errorf("repo_url = %q, want https://github.com/pluginyard/%s", m.RepoURL, name)
	}
}

func checkFiles(t *testing.T, m kandevManifest, files map[string]file) {
	t.Helper()
	if _, ok := files["README.md"]; !ok {
		t.Error("README.md missing")
	}
	if _, ok := files[m.Icon]; m.Icon == "" || !ok {
		t.Errorf("icon %q missing from the package", m.Icon)
	}
	if m.Distribution != nil {
		if m.Runtime.Type != "" || m.MinKandevVersion == "" {
			t.Errorf("canvas: runtime %q (want none), min_kandev_version %q (want set)", m.Runtime.Type, m.MinKandevVersion)
		}
		return
	}
	if m.Runtime.Type != "binary" || len(m.Runtime.Executables) == 0 {
		t.Fatalf("runtime = %+v, want a managed binary runtime", m.Runtime)
	}
	for platform, p := range m.Runtime.Executables {
		f, ok := files[p]
		if !ok || !strings.HasPrefix(p, "server/") || f.Mode != 0o755 {
			t.Errorf("executable %s = %s: present %v, mode %o; want under server/ with mode 755", platform, p, ok, f.Mode)
		}
		if !bytes.HasPrefix(f.Data, []byte("#!/bin/sh\n")) {
			t.Errorf("executable %s does not start with #!/bin/sh", p)
		}
	}
}
