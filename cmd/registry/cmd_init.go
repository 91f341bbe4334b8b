package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pluginyard/registry/scaffold"
)

var initHelp = help{
	Summary: "write the starting source tree of a plugin, canvas or extension",
	Usage:   "registry init plugin|canvas|extension DIR [--id ID] [--force]",
	About: `Writes into DIR (created when missing) a tree that ` + "`registry pack`" + ` and ` + "`registry verify`" + `
accept as it is:
  plugin     manifest.yaml (a managed plugin), server/ launchers for linux-amd64,
             linux-arm64 and darwin-arm64, icon.svg, README.md
  canvas     manifest.yaml with the distribution: block, ui/index.html, icon.svg, README.md
  extension  curupira-extension.toml, index.mjs (protocol version 2, Node.js), README.md
and for every kind .github/workflows/release.yml, which packs, verifies, signs (Sigstore
build provenance) and publishes each v<version> tag by trusted publishing (OIDC), plus
.gitattributes and .gitignore. The manifest's comments explain every field.

The id (an extension's name) defaults to DIR's base name and must pass the manifest's id
rules (a Kandev id: ^[a-z0-9][a-z0-9._-]*$; a Curupira name: an npm name, "@scope/name"
allowed). A DIR that already holds files is refused unless --force.
Exit status: 0 when written, 2 on usage errors (unknown kind, refused id, DIR not empty)
or I/O errors.`,
	Example: "registry init plugin acme-stats\nregistry init extension todo-trigger --id @acme/todo-trigger",
}

// cmdInit implements `registry init KIND DIR [--id ID] [--force]`.
func cmdInit(ctx context.Context, c *cli, args []string) int {
	flags := c.flags("init")
	id := flags.String("id", "", "the manifest `ID`, or an extension's name (default: DIR's base name)")
	force := flags.Bool("force", false, "write into a DIR that is not empty, replacing files with the same names")
	pos, err := parse(flags, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 2 {
		return c.usageError("init", "expected a KIND (plugin, canvas or extension) and a DIR, found %s", plural(len(pos), "argument"))
	}
	kind, err := scaffold.ParseKind(pos[0])
	if err != nil {
		return c.usageError("init", "%v", err)
	}
	dir := pos[1]
	fromFlag := *id != ""
	if !fromFlag {
		if *id, err = defaultInitID(dir); err != nil {
			fmt.Fprintf(c.stderr, "registry init: %v\n", err)
			return exitUsage
		}
	}
	files, err := scaffold.Write(ctx, dir, kind, *id, *force)
	var idErr *scaffold.IDError
	switch {
	case errors.As(err, &idErr):
		return c.usageError("init", "%s", idRefusal(idErr, fromFlag))
	case errors.Is(err, scaffold.ErrNotEmpty):
		return c.usageError("init", "%v", err)
	case err != nil:
		fmt.Fprintf(c.stderr, "registry init: %v\n", err)
		return exitUsage
	}
	printInitDone(c, dir, kind, *id, files)
	return exitOK
}

// defaultInitID is the base name of dir, made absolute so that "." names the folder.
func defaultInitID(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.Base(abs), nil
}

// idRefusal words a refused id for the command line: where the id came from, the rules
// that refused it, and how to pass another.
func idRefusal(e *scaffold.IDError, fromFlag bool) string {
	source := fmt.Sprintf("the folder name %q, the default id,", e.ID)
	if fromFlag {
		source = fmt.Sprintf("--id %q", e.ID)
	}
	msg := source + " is refused by the manifest rules:"
	for _, p := range e.Problems {
		msg += fmt.Sprintf(" [%s] %s;", p.Rule, p.Message)
	}
	return msg + " pass a valid one with --id ID"
}

func printInitDone(c *cli, dir string, kind scaffold.Kind, id string, files []scaffold.File) {
	fmt.Fprintf(c.stdout, "wrote %s %q into %s:\n", kind, id, dir)
	for _, f := range files {
		fmt.Fprintf(c.stdout, "  %s\n", f.Path)
	}
	fmt.Fprintf(c.stdout, "\nnext: %s says how to pack and check it locally and how to publish it\n", filepath.Join(dir, "README.md"))
}
