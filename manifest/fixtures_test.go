package manifest_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pluginyard/registry/manifest"
)

// heads are the first bytes a fixture's .files line gives a file of that kind.
var heads = map[string][]byte{
	"png":  []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
	"jpeg": {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F'},
	"gif":  []byte("GIF89a\x01\x00\x01\x00"),
	"webp": []byte("RIFF\x24\x00\x00\x00WEBPVP8 "),
	"svg":  []byte("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"),
	"text": []byte("hello\n"),
	"bin":  []byte("\x7fELF\x02\x01\x01\x00"),
}

// mustRead reads a test file.
func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// packageFiles returns the package files of a fixture: its .files list when present
// ("path kind [size]" per line), else the files its manifest references.
func packageFiles(tb testing.TB, yamlPath string, m *manifest.Manifest) manifest.Files {
	tb.Helper()
	listPath := strings.TrimSuffix(yamlPath, ".yaml") + ".files"
	data, err := os.ReadFile(listPath)
	if os.IsNotExist(err) {
		return synthesize(m)
	}
	if err != nil {
		tb.Fatal(err)
	}
	files := manifest.Files{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		head, ok := heads[f[1]]
		if !ok {
			tb.Fatalf("%s: unknown kind %q", listPath, f[1])
		}
		size := int64(len(head))
		if len(f) > 2 {
			if size, err = strconv.ParseInt(f[2], 10, 64); err != nil {
				tb.Fatal(err)
			}
		}
		files[f[0]] = manifest.FileInfo{Size: size, Head: head}
	}
	return files
}

// synthesize builds the file list a correct package for m would have: every file the
// manifest references, with content of the right kind. The corpus holds manifests only, so
// this stands in for their packages.
func synthesize(m *manifest.Manifest) manifest.Files {
	files := manifest.Files{}
	add := func(name, kind string) {
		if name != "" {
			files[name] = manifest.FileInfo{Size: int64(len(heads[kind])), Head: heads[kind]}
		}
	}
	add("manifest.yaml", "text")
	if m.Runtime != nil {
		for _, p := range m.Runtime.Executables {
			add(p, "bin")
		}
	}
	if m.Icon != "" {
		kind := strings.TrimPrefix(filepath.Ext(m.Icon), ".")
		if _, ok := heads[kind]; !ok {
			kind = "png"
		}
		add(m.Icon, kind)
	}
	if m.UI != nil {
		add(strings.TrimPrefix(m.UI.Bundle, "/"), "text")
		for _, s := range m.UI.Styles {
			add(strings.TrimPrefix(s, "/"), "text")
		}
		for _, w := range m.UI.WebApps {
			add(w.Entry, "text")
		}
	}
	if m.Distribution != nil {
		add("README.md", "text")
		add("LICENSE.txt", "text")
		if m.Distribution.SourceMode == "project" {
			add(manifest.SourcePrefix+"manifest.yaml", "text")
			add(manifest.SourcePrefix+"README.md", "text")
		}
	}
	return files
}
