package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/rules"
	"github.com/pluginyard/registry/verify"
)

var verifyHelp = help{
	Summary: "check a package offline exactly as the server does",
	Usage:   "registry verify FILE [--json]",
	About: `Checks a package (.tar.gz) offline, with exactly the checks the server runs on publish:
safe unpacking and limits, checksums.txt, the manifest (manifest.yaml or
curupira-extension.toml), and FILE's base name: a name ending in .tar.gz (or .tgz) must be
exactly <id>-<version>.tar.gz (or .tgz), with the manifest's id and version ("@scope/name"
written "scope-name"), else it is an error (package.filename); any other name draws that
rule as a warning only.
Prints the problems grouped by file and field, each with a link to its rule's entry in the
rule reference (on the registry at REGISTRY_URL when set, else the path /docs/reference/…
that every registry serves), then a summary line; --json prints
{"ok","id","version","kind","sha256","problems":[{"rule","path","file","message","severity","doc_url"}]}.
Exit status: 0 when valid (warnings allowed), 1 when invalid, 2 on usage or I/O errors.`,
	Example: "registry verify acme-hello-1.0.0.tar.gz\nregistry verify acme-hello-1.0.0.tar.gz --json",
}

// verifyResult is the --json document.
type verifyResult struct {
	OK       bool              `json:"ok"`
	ID       string            `json:"id"`
	Version  string            `json:"version"`
	Kind     string            `json:"kind"`
	SHA256   string            `json:"sha256"`
	Problems []problem.Problem `json:"problems"`
}

// cmdVerify implements `registry verify FILE [--json]`.
func cmdVerify(ctx context.Context, c *cli, args []string) int {
	flags := c.flags("verify")
	asJSON := flags.Bool("json", false, "print the report as JSON")
	pos, err := parse(flags, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		return c.usageError("verify", "expected one package FILE, found %d arguments", len(pos))
	}
	rep, err := verifyFile(ctx, pos[0])
	if err != nil {
		fmt.Fprintf(c.stderr, "registry verify: %v\n", err)
		return exitUsage
	}
	rep.Problems = rep.Problems.WithDocs(rules.Linker(c.getenv("REGISTRY_URL")))
	if *asJSON {
		err = writeVerifyJSON(c.stdout, rep)
	} else {
		err = writeVerifyText(c.stdout, pos[0], rep)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "registry verify: %v\n", err)
		return exitUsage
	}
	if !rep.OK() {
		return exitInvalid
	}
	return exitOK
}

// verifyFile runs verify.Package on a file as the server runs it on an upload: default
// limits, the file's base name as the package name.
func verifyFile(ctx context.Context, path string) (*verify.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open package: %w", err)
	}
	defer f.Close()
	rep, err := verify.Package(ctx, f, verify.Options{FileName: filepath.Base(path)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

func writeVerifyJSON(w io.Writer, rep *verify.Report) error {
	res := verifyResult{OK: rep.OK(), ID: rep.ID, Version: rep.Version, Kind: rep.Kind, SHA256: rep.SHA256, Problems: rep.Problems}
	if res.Problems == nil {
		res.Problems = []problem.Problem{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// writeVerifyText prints a header, the problems grouped by file then field, and a
// summary line.
func writeVerifyText(w io.Writer, path string, rep *verify.Report) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", safe(path))
	ew.printf("  id %s, version %s, kind %s\n", safe(orDash(rep.ID)), safe(orDash(rep.Version)), safe(orDash(rep.Kind)))
	ew.printf("  sha256 %s, %d bytes\n", orDash(rep.SHA256), rep.Size)
	for _, g := range groupProblems(rep.Problems) {
		ew.printf("\n%s\n", safe(g.file))
		for _, p := range g.problems {
			where := ""
			if p.Path != "" {
				where = safe(p.Path) + ": "
			}
			ew.printf("  %s%s [%s] %s\n", where, p.Severity, p.Rule, safe(p.Message))
			if link := docLink(p); link != "" {
				ew.printf("    see %s\n", safe(link))
			}
		}
	}
	verdict := "valid"
	if !rep.OK() {
		verdict = "invalid"
	}
	ew.printf("\n%s: %s, %s, %s\n", safe(path), verdict, plural(len(rep.Problems.Errors()), "error"), plural(len(rep.Problems.Warnings()), "warning"))
	return ew.err
}

// docLink is the problem's rule reference link: its DocURL, else the path of the rule's
// entry on any registry (so `pack`, which prints this report too, links the same entries).
func docLink(p problem.Problem) string {
	if p.DocURL != "" {
		return p.DocURL
	}
	return rules.DocPath(p.Rule)
}

type problemGroup struct {
	file     string
	problems problem.List
}

// groupProblems groups problems by file (package-wide ones first, under "(package)"),
// files in name order, and within a file by field path, keeping the report's order
// otherwise.
func groupProblems(l problem.List) []problemGroup {
	byFile := map[string]problem.List{}
	for _, p := range l {
		byFile[p.File] = append(byFile[p.File], p)
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files) // "" (package-wide) sorts first
	groups := make([]problemGroup, 0, len(files))
	for _, f := range files {
		ps := byFile[f]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
		name := f
		if name == "" {
			name = "(package)"
		}
		groups = append(groups, problemGroup{name, ps})
	}
	return groups
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// errWriter keeps the first write error so that printing stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
