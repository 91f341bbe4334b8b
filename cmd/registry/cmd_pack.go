package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/pack"
)

const packUsage = `usage: registry pack DIR [-o FILE]

Packs DIR into a deterministic package tarball: files sorted by path, fixed time and owner,
server/* mode 0755 and the rest 0644, checksums.txt generated and written last.
DIR must not already hold checksums.txt or checksums.txt.sig.

The default FILE is <id>-<version>.tar.gz in the current directory, read from
DIR/manifest.yaml (Kandev) or DIR/curupira-extension.toml (Curupira; "@scope/name"
becomes "scope-name").
`

// cmdPack implements `registry pack DIR [-o FILE]`.
func cmdPack(ctx context.Context, c *cli, args []string) int {
	flags := c.flags("pack")
	flags.Usage = func() { fmt.Fprint(c.stderr, packUsage) }
	var out string
	flags.StringVar(&out, "o", "", "output file (default <id>-<version>.tar.gz)")
	flags.StringVar(&out, "output", "", "same as -o")
	pos, err := parse(flags, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprint(c.stderr, packUsage)
		return exitUsage
	}
	dir := pos[0]
	if out == "" {
		if out, err = defaultPackName(dir); err != nil {
			fmt.Fprintf(c.stderr, "registry pack: %v\n", err)
			return exitUsage
		}
	}
	size, sum, err := packToFile(ctx, dir, out)
	if err != nil {
		fmt.Fprintf(c.stderr, "registry pack: %v\n", err)
		if errors.Is(err, pack.ErrInvalidTree) {
			return exitInvalid
		}
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "wrote %s (%d bytes, sha256 %s)\n", out, size, sum)
	return exitOK
}

// defaultPackName reads the id and version of the package source in dir and returns
// "<id>-<version>.tar.gz".
func defaultPackName(dir string) (string, error) {
	id, version, err := readIdentity(dir)
	if err != nil {
		return "", err
	}
	for _, v := range []struct{ field, value string }{{"id", id}, {"version", version}} {
		if v.value == "" || v.value == "." || v.value == ".." || strings.ContainsAny(v.value, `/\`+"\x00") {
			return "", fmt.Errorf("%s %q cannot name the output file; fix the manifest or pass -o FILE", v.field, v.value)
		}
	}
	return id + "-" + version + ".tar.gz", nil
}

// readIdentity returns the id and version from dir/manifest.yaml or, failing that, the name
// and version from dir/curupira-extension.toml.
func readIdentity(dir string) (id, version string, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "manifest.yaml"))
	if err == nil {
		var m struct {
			ID      string `yaml:"id"`
			Version string `yaml:"version"`
		}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return "", "", fmt.Errorf("read id and version from %s: %w", filepath.Join(dir, "manifest.yaml"), err)
		}
		return m.ID, m.Version, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	data, err = os.ReadFile(filepath.Join(dir, "curupira-extension.toml"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%s holds neither manifest.yaml nor curupira-extension.toml, so the output cannot be named; pass -o FILE", dir)
	}
	if err != nil {
		return "", "", err
	}
	var e struct {
		Name    string `toml:"name"`
		Version string `toml:"version"`
	}
	if _, err := toml.Decode(string(data), &e); err != nil {
		return "", "", fmt.Errorf("read name and version from %s: %w", filepath.Join(dir, "curupira-extension.toml"), err)
	}
	return extension.FileID(e.Name), e.Version, nil
}

// packToFile packs dir into a temporary file beside out, then renames it to out, so that
// out is either the complete package or untouched. It returns the size and sha256.
func packToFile(ctx context.Context, dir, out string) (int64, string, error) {
	if err := ctx.Err(); err != nil {
		return 0, "", err
	}
	if err := outsideDir(dir, out); err != nil {
		return 0, "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return 0, "", fmt.Errorf("create output: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(tmp, h)}
	err = pack.Dir(dir, cw)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", out, cerr)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return 0, "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, "", fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return 0, "", fmt.Errorf("write %s: %w", out, err)
	}
	return cw.n, hex.EncodeToString(h.Sum(nil)), nil
}

// outsideDir refuses an output file inside the directory being packed: it would be packed
// into itself (and into every later package).
func outsideDir(dir, out string) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(absDir, absOut); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("output %s is inside %s: it would be packed into itself; write it outside the folder", out, dir)
	}
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
