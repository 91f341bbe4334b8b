// Package catalog generates catalogues of N plugins for the scale benchmarks: valid
// packages built with the registry's own pack code (optionally signed with an ed25519
// key, as a publisher's signing step does after `registry pack`) and the plugins.yaml that
// lists them. It is bounded (at most MaxPlugins) and makes no network call; seed.go puts a
// catalogue into a registry, over loopback HTTP or straight into a data directory.
package catalog

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"
	"time"

	"github.com/pluginyard/registry/pack"
)

// MaxPlugins bounds a catalogue: the benchmarks go to 50k, the generator refuses more than
// twice that so a typo cannot fill the disk.
const MaxPlugins = 100_000

// Words are the topics of generated plugins: one per plugin, round robin, so that a search
// for one of them matches N/len(Words) plugins. CommonWord is in every description.
var Words = []string{"issues", "deploy", "metrics", "search", "review", "tickets", "agent", "notes", "stats", "alerts"}

// CommonWord appears in the description of every generated plugin: the "common word"
// search of the page benchmarks matches the whole catalogue.
const CommonWord = "workflow"

// Categories are the plugin categories the generator spreads plugins over (the manifest's
// known categories, without canvas: generated packages are managed plugins).
var Categories = []string{"tools", "connector", "automation", "analytics"}

// Publishers is how many publishers (owners in plugins.yaml) the catalogue has; plugin i
// belongs to Publisher(i).
const Publishers = 20

// Options describe one catalogue.
type Options struct {
	N int
	// Key, when set, signs every package (checksums.txt.sig) and plugins.yaml requires a
	// signature by its public half for every entry.
	Key ed25519.PrivateKey
}

// Check refuses a size outside 1..MaxPlugins.
func Check(n int) error {
	if n < 1 || n > MaxPlugins {
		return fmt.Errorf("catalog: %d plugins is outside 1..%d: choose a catalogue size of at most %d", n, MaxPlugins, MaxPlugins)
	}
	return nil
}

// ID is the id of plugin i, e.g. "gen-metrics-000002".
func ID(i int) string { return fmt.Sprintf("gen-%s-%06d", Words[i%len(Words)], i) }

// Publisher is the owner of plugin i.
func Publisher(i int) string { return fmt.Sprintf("pub-%02d", i%Publishers) }

// Category is the category of plugin i.
func Category(i int) string { return Categories[(i/len(Words))%len(Categories)] }

// FileName is the upload file name of plugin i at version.
func FileName(i int, version string) string { return ID(i) + "-" + version + ".tar.gz" }

// TestKey is a fixed ed25519 key for signed catalogues (deterministic bytes run to run).
func TestKey() ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("pluginyard bench catalog key"))
	return ed25519.NewKeyFromSeed(seed[:])
}

// Package builds the package of plugin i at version: a small managed plugin (manifest,
// README, one linux-amd64 executable), packed by pack.FS and signed when key is set.
func Package(i int, version string, key ed25519.PrivateKey) ([]byte, error) {
	id, word := ID(i), Words[i%len(Words)]
	title := strings.ToUpper(word[:1]) + word[1:]
	manifest := "id: " + id + "\napi_version: 2\nversion: \"" + version + "\"\n" +
		"display_name: " + title + " " + id[len(id)-6:] + "\n" +
		"description: Generated " + word + " plugin for the " + CommonWord + " scale benchmark\n" +
		"author: Bench " + Publisher(i) + "\ncategories: [" + Category(i) + "]\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	fsys := fstest.MapFS{
		"manifest.yaml":             {Data: []byte(manifest)},
		"server/plugin-linux-amd64": {Data: bytes.Repeat([]byte("#!/bin/sh\necho "+word+" "+version+"\n"), 100), Mode: pack.ExecMode},
		"README.md":                 {Data: []byte("# " + title + " " + id + "\n\nA generated plugin about " + word + ", version " + version + ".\n")},
	}
	var buf bytes.Buffer
	if err := pack.FS(fsys, &buf); err != nil {
		return nil, fmt.Errorf("catalog: pack %s: %w", id, err)
	}
	if key == nil {
		return buf.Bytes(), nil
	}
	var signed bytes.Buffer
	if err := sign(buf.Bytes(), key, &signed); err != nil {
		return nil, fmt.Errorf("catalog: sign %s: %w", id, err)
	}
	return signed.Bytes(), nil
}

// sign copies the entries of pkg into a new archive with pack's gzip settings and inserts
// checksums.txt.sig (base64 ed25519 signature of the checksums.txt bytes) after checksums.txt.
func sign(pkg []byte, key ed25519.PrivateKey, w io.Writer) error {
	zr, err := gzip.NewReader(bytes.NewReader(pkg))
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.OS = 255 // as pack writes it
	tw := tar.NewWriter(zw)
	signed := false
	for tr := tar.NewReader(zr); ; {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := writeEntry(tw, h, data); err != nil {
			return err
		}
		if h.Name == pack.ChecksumsFile {
			sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, data)) + "\n"
			sh := &tar.Header{Typeflag: tar.TypeReg, Name: pack.ChecksumsSigFile, Mode: pack.FileMode, ModTime: time.Unix(pack.EpochUnix, 0)}
			if err := writeEntry(tw, sh, []byte(sig)); err != nil {
				return err
			}
			signed = true
		}
	}
	if !signed {
		return fmt.Errorf("no %s to sign", pack.ChecksumsFile)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func writeEntry(tw *tar.Writer, h *tar.Header, data []byte) error {
	h.Size = int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar header %s: %w", h.Name, err)
	}
	_, err := tw.Write(data)
	return err
}

// List is the plugins.yaml of the first n plugins; with pub set, every entry requires a
// signature by that ed25519 public key.
func List(n int, pub ed25519.PublicKey) []byte {
	var b bytes.Buffer
	b.WriteString("# Generated by bench/catalog: ")
	fmt.Fprintf(&b, "%d plugins.\nplugins:\n", n)
	for i := range n {
		fmt.Fprintf(&b, "  - id: %s\n    repo: bench/%s\n    kind: plugin\n    categories: [%s]\n    owners: [%s]\n",
			ID(i), ID(i), Category(i), Publisher(i))
		if pub != nil {
			fmt.Fprintf(&b, "    signing:\n      required: true\n      ed25519_keys: [%s]\n", base64.StdEncoding.EncodeToString(pub))
		}
	}
	return b.Bytes()
}

// Report is what Write wrote.
type Report struct {
	Plugins  int
	Files    int   // package files plus plugins.yaml
	Bytes    int64 // their total size
	ListPath string
	Packages []string // package paths, plugin i at index i
}

// Write makes the catalogue under dir: dir/plugins.yaml and dir/packages/<id>-1.0.0.tar.gz.
func Write(dir string, o Options) (*Report, error) {
	if err := Check(o.N); err != nil {
		return nil, err
	}
	pkgDir := filepath.Join(dir, "packages")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	rep := &Report{Plugins: o.N, ListPath: filepath.Join(dir, "plugins.yaml")}
	var pub ed25519.PublicKey
	if o.Key != nil {
		pub = o.Key.Public().(ed25519.PublicKey)
	}
	list := List(o.N, pub)
	if err := os.WriteFile(rep.ListPath, list, 0o644); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	rep.Files, rep.Bytes = 1, int64(len(list))
	for i := range o.N {
		data, err := Package(i, "1.0.0", o.Key)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(pkgDir, FileName(i, "1.0.0"))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		rep.Packages = append(rep.Packages, p)
		rep.Files++
		rep.Bytes += int64(len(data))
	}
	return rep, nil
}
