package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pluginyard/registry/rules"
)

var docsHelp = help{
	Summary: "write the rule reference (every rule id, with examples) as Markdown",
	Usage:   "registry docs [--out DIR]",
	About: `Writes the rule reference (Kandev manifest, canvas distribution block, Curupira manifest,
plugins.yaml, package, signature, publish and index rules) as Markdown into DIR (default
docs/reference), one file per section and one anchor per rule id. It is generated from the
rule table the validators are tested against; CI checks that the committed copy is fresh.
Exit status: 0 when written, 2 on usage or write errors.`,
	Example: "registry docs --out docs/reference",
}

// cmdDocs implements `registry docs [--out DIR]`.
func cmdDocs(_ context.Context, c *cli, args []string) int {
	fs := c.flags("docs")
	out := fs.String("out", filepath.Join("docs", "reference"), "directory to write the Markdown reference into")
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 0 {
		return c.usageError("docs", "expected no arguments, found %q; the only flag is --out DIR", pos[0])
	}
	n, err := writeReference(*out)
	if err != nil {
		fmt.Fprintf(c.stderr, "registry docs: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "wrote %d files to %s\n", n, *out)
	return exitOK
}

// writeReference writes rules.Files into dir and removes other .md files there, so a
// renamed section leaves nothing stale behind.
func writeReference(dir string) (int, error) {
	files := rules.Files()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("create %s: %w", dir, err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, p := range old {
		if _, keep := files[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				return 0, fmt.Errorf("remove stale %s: %w", p, err)
			}
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return 0, fmt.Errorf("write %s: %w", name, err)
		}
	}
	return len(names), nil
}
