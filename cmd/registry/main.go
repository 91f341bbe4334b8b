// Command registry runs and administers the plugin marketplace registry: serve it, check
// and pack packages, publish from CI, and manage tokens, pins and backups.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand.
type command struct {
	run     func(ctx context.Context, c *cli, args []string) int
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"serve":           {cmdServe, "run the registry (HTTP server, index, marketplace)"},
		"verify":          {cmdVerify, "check a package offline exactly as the server does"},
		"pack":            {cmdPack, "build a deterministic package from a plugin folder"},
		"publish":         {cmdPublish, "upload a package to a registry (token or GitHub OIDC)"},
		"lint":            {cmdLint, "check a plugins.yaml curated list"},
		"check-signature": {cmdCheckSignature, "verify a file against a Sigstore bundle and an expected repository"},
		"conformance":     {cmdConformance, "run the Curupira protocol conformance checks against an extension"},
		"token":           {cmdToken, "create, list or revoke publisher tokens"},
		"pin":             {cmdPin, "show or reset a package's pinned repository identity"},
		"export":          {cmdExport, "write a static mirror (index.json, packages, icons) for a CDN"},
		"backup":          {cmdBackup, "write a consistent snapshot of the database"},
		"restore":         {cmdRestore, "restore a database snapshot into a data directory"},
		"fsck":            {cmdFsck, "re-hash every blob against the database; report missing, corrupt and orphan blobs"},
		"sync":            {cmdSync, "pull the latest GitHub release of every listed repository (--once: one round)"},
		"yank":            {cmdYank, "yank ID@VERSION in a data directory, with the server stopped"},
		"unyank":          {cmdUnyank, "restore a yanked ID@VERSION in a data directory, with the server stopped"},
		"delist":          {cmdDelist, "yank every version of ID in a data directory, with the server stopped"},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &cli{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, c *cli) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(c.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "registry: unknown command %q\n\n", args[0])
		usage(c.stderr)
		return exitUsage
	}
	return cmd.run(ctx, c, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: registry COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun `registry COMMAND -h` for a command's flags.")
}

// envDefault returns the environment value of key, else def.
func envDefault(c *cli, key, def string) string {
	if v := strings.TrimSpace(c.getenv(key)); v != "" {
		return v
	}
	return def
}
