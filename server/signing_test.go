package server_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// signedPkg builds a valid plugin package whose checksums.txt is signed with key.
func signedPkg(t *testing.T, id, version string, key ed25519.PrivateKey) []byte {
	t.Helper()
	files := map[string][]byte{
		"manifest.yaml": []byte("id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\ndescription: signed\nruntime:\n  type: binary\n" +
			"  executables:\n    linux-amd64: server/plugin-linux-amd64\n"),
		"server/plugin-linux-amd64": []byte("#!/bin/sh\n"),
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var sums strings.Builder
	for _, n := range names {
		d := sha256.Sum256(files[n])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(d[:]), n)
	}
	files["checksums.txt"] = []byte(sums.String())
	files["checksums.txt.sig"] = []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, files["checksums.txt"])))
	names = append(names, "checksums.txt", "checksums.txt.sig")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		mode := int64(0o644)
		if strings.HasPrefix(n, "server/") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: mode, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEd25519SigningPolicy(t *testing.T) {
	pub, listed, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	dir := t.TempDir()
	list := fmt.Sprintf(`plugins:
  - id: signed-plugin
    repo: acme/signed-plugin
    signing:
      required: true
      ed25519_keys: [%s]
`, base64.StdEncoding.EncodeToString(pub))
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)

	tests := []struct {
		name   string
		data   []byte
		status int
		rule   string
	}{
		{"unsigned but required", pkg(t, "signed-plugin", "0.9.0", "x"), http.StatusUnprocessableEntity, "signature.required"},
		{"signed by an unlisted key", signedPkg(t, "signed-plugin", "0.9.1", other), http.StatusUnprocessableEntity, "signature.ed25519.unknown_key"},
		{"signed by the listed key", signedPkg(t, "signed-plugin", "1.0.0", listed), http.StatusCreated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.publish(adminToken, fileNameOf(t, tt.data), tt.data)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.rule != "" && !bytes.Contains(r.Body, []byte(`"rule":"`+tt.rule+`"`)) {
				t.Errorf("body lacks rule %s: %s", tt.rule, r.Body)
			}
		})
	}
	var doc struct {
		Plugins []struct {
			ID        string
			Signature *struct{ Type, Identity string }
		}
	}
	e.get("/index.json").json(t, &doc)
	if len(doc.Plugins) != 1 || doc.Plugins[0].Signature == nil || doc.Plugins[0].Signature.Type != "ed25519" {
		t.Fatalf("index entry = %+v", doc.Plugins)
	}
	page := e.get("/plugins/signed-plugin")
	if !bytes.Contains(page.Body, []byte("ed25519")) {
		t.Error("plugin page does not show the ed25519 signature")
	}
}
