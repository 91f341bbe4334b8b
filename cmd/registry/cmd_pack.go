package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/rules"
	"github.com/pluginyard/registry/verify"
)

var packHelp = help{
	Summary: "build a deterministic package from a source folder, checked as verify checks it",
	Usage:   "registry pack DIR [-o FILE] [--no-verify]",
	About: `Packs DIR into a package tarball: files sorted by path, fixed time and owner, server/* mode
0755 and the rest 0644, checksums.txt generated and written last. DIR must not already hold
checksums.txt or checksums.txt.sig, nor a .git folder (pack a copy of the committed files,
e.g. from ` + "`git archive HEAD`" + `, instead).

The package is then checked exactly as ` + "`registry verify FILE`" + ` checks it (the server's own
checks). An invalid package is not written: its problems are printed on stderr as verify
prints them, and the exit status is 1. Warnings are printed and the package is written.

The default FILE is <id>-<version>.tar.gz in the current directory, read from
DIR/manifest.yaml (Kandev) or DIR/curupira-extension.toml (Curupira; "@scope/name" becomes
"scope-name"). An -o FILE must have that base name (or end in .tgz instead of .tar.gz);
--no-verify skips every check and writes FILE under any name.
Exit status: 0 when written (warnings allowed), 1 when DIR cannot be packed or the package
is invalid, 2 on usage or I/O errors.`,
	Example: "registry pack ./acme-stats\nregistry pack ./acme-stats -o dist/acme-stats-1.2.0.tar.gz",
}

// cmdPack implements `registry pack DIR [-o FILE] [--no-verify]`.
func cmdPack(ctx context.Context, c *cli, args []string) int {
	flags := c.flags("pack")
	var out string
	flags.StringVar(&out, "o", "", "output `FILE` (default <id>-<version>.tar.gz)")
	flags.StringVar(&out, "output", "", "output `FILE`, same as -o")
	noVerify := flags.Bool("no-verify", false, "write the package without checking it, under any name")
	pos, err := parse(flags, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		return c.usageError("pack", "expected one source folder DIR, found %s", plural(len(pos), "argument"))
	}
	dir := pos[0]
	if out == "" {
		if out, err = defaultPackName(dir); err != nil {
			fmt.Fprintf(c.stderr, "registry pack: %v\n", err)
			return exitUsage
		}
	}
	check := func(ctx context.Context, f *os.File) error { return checkPacked(ctx, c, f, out) }
	if *noVerify {
		check = nil
	}
	size, sum, err := packToFile(ctx, dir, out, check)
	if err != nil {
		fmt.Fprintf(c.stderr, "registry pack: %v\n", err)
		if errors.Is(err, pack.ErrInvalidTree) || errors.Is(err, errPackInvalid) {
			return exitInvalid
		}
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "wrote %s (%d bytes, sha256 %s)\n", out, size, sum)
	return exitOK
}

// errPackInvalid marks a package that was built but failed verification, so it was not
// written.
var errPackInvalid = errors.New("the package is invalid")

// checkPacked runs verify.Package on the packed bytes in f, as `registry verify out` would,
// and prints its report on stderr when it found anything. The file-name rule is stricter
// than verify's: a name that is not <id>-<version>.tar.gz (or .tgz) refuses rather than
// warns, because pack chooses the name and the registry refuses any other at publish.
func checkPacked(ctx context.Context, c *cli, f *os.File, out string) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read back %s: %w", out, err)
	}
	rep, err := verify.Package(ctx, f, verify.Options{FileName: filepath.Base(out)})
	if err != nil {
		return fmt.Errorf("verify %s: %w", out, err)
	}
	strictFileName(rep.Problems)
	rep.Problems = rep.Problems.WithDocs(rules.Linker(c.getenv("REGISTRY_URL")))
	if len(rep.Problems) > 0 {
		if err := writeVerifyText(c.stderr, out, rep); err != nil {
			return err
		}
	}
	if !rep.OK() {
		return fmt.Errorf("%w, so %s was not written: fix the problems above and pack again, or pass --no-verify to write it anyway", errPackInvalid, out)
	}
	return nil
}

// strictFileName turns verify's package.filename warning (a name not ending in .tar.gz)
// into an error, in place.
func strictFileName(l problem.List) {
	for i, p := range l {
		if p.Rule == "package.filename" && p.Severity == problem.Warning {
			l[i].Severity = problem.Error
			l[i].Message += "; omit -o to get that name, or pass --no-verify to write another"
		}
	}
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
	if probs := extension.CheckTOMLBudget(data); probs.HasErrors() {
		return "", "", fmt.Errorf("read name and version from %s: %s", filepath.Join(dir, "curupira-extension.toml"), probs.Errors()[0].Message)
	}
	if _, err := toml.Decode(string(data), &e); err != nil {
		return "", "", fmt.Errorf("read name and version from %s: %w", filepath.Join(dir, "curupira-extension.toml"), err)
	}
	return extension.FileID(e.Name), e.Version, nil
}

// packToFile packs dir into a temporary file beside out, runs check on it (when not nil),
// then renames it to out, so that out is either the complete, checked package or
// untouched. It returns the size and sha256.
func packToFile(ctx context.Context, dir, out string, check func(context.Context, *os.File) error) (int64, string, error) {
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
	if err == nil && check != nil {
		err = check(ctx, tmp)
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
