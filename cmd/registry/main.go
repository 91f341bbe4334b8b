// Command registry runs and administers the plugin marketplace registry: serve it, check
// and pack packages, publish from CI, and manage tokens, pins and backups.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand: what runs it and its -h text (see the convention in cli.go).
type command struct {
	run  func(ctx context.Context, c *cli, args []string) int
	help help
}

func commands() map[string]command {
	return map[string]command{
		"serve":           {cmdServe, serveHelp},
		"verify":          {cmdVerify, verifyHelp},
		"pack":            {cmdPack, packHelp},
		"init":            {cmdInit, initHelp},
		"publish":         {cmdPublish, publishHelp},
		"lint":            {cmdLint, lintHelp},
		"docs":            {cmdDocs, docsHelp},
		"check-signature": {cmdCheckSignature, checkSignatureHelp},
		"conformance":     {cmdConformance, conformanceHelp},
		"token":           {cmdToken, tokenHelp},
		"pin":             {cmdPin, pinHelp},
		"reports":         {cmdReports, reportsHelp},
		"blocklist":       {cmdBlocklist, blocklistHelp},
		"export":          {cmdExport, exportHelp},
		"backup":          {cmdBackup, backupHelp},
		"restore":         {cmdRestore, restoreHelp},
		"fsck":            {cmdFsck, fsckHelp},
		"sync":            {cmdSync, syncHelp},
		"yank":            {cmdYank, yankHelp},
		"unyank":          {cmdUnyank, unyankHelp},
		"delist":          {cmdDelist, delistHelp},
		"archive":         {cmdArchive, archiveHelp},
		"unarchive":       {cmdUnarchive, unarchiveHelp},
		"compat":          {cmdCompat, compatHelp},
		"quarantine":      {cmdQuarantine, quarantineHelp},
		"log":             {cmdLog, logHelp()},
		"migrate":         {cmdMigrate, migrateHelp},
		"version":         {cmdVersion, versionHelp},
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
	if len(args) == 0 {
		usage(c.stderr)
		return exitUsage
	}
	switch name := args[0]; {
	case isHelp(name) && len(args) > 1:
		return run(ctx, []string{args[1], "-h"}, c) // registry help lint
	case isHelp(name):
		usage(c.stdout)
		return exitOK
	case name == "--version" || name == "-version":
		return cmdVersion(ctx, c, args[1:])
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "registry: unknown command %q%s (run `registry -h` for the list)\n", args[0], suggest(args[0], commandNames()))
		return exitUsage
	}
	return cmd.run(ctx, c, args[1:])
}

func commandNames() []string {
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: registry COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-16s %s\n", n, cmds[n].help.Summary)
	}
	fmt.Fprintln(w, "\nRun `registry COMMAND -h` for a command's usage, flags and an example;")
	fmt.Fprintln(w, "`registry --version` for the version of this binary.")
}

var versionHelp = help{
	Summary: "print the module version and the VCS revision this binary was built from",
	Usage:   "registry version\nregistry --version",
	About: `Prints "registry VERSION (revision REV, TIME[, modified])" from the build information Go
embeds; VERSION is "devel" and the revision is omitted when the binary carries none (go run,
go test, or a build outside a git checkout).`,
	Example: "registry version\nregistry --version",
}

// cmdVersion is `registry version` and `registry --version`.
func cmdVersion(_ context.Context, c *cli, args []string) int {
	fs := c.flags("version")
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) > 0 {
		return c.usageError("version", "expected no argument, found %q", strings.Join(pos, " "))
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(c.stdout, versionLine(info, ok))
	return exitOK
}

// versionLine renders build information: the main module's version ("devel" when Go
// recorded none) and the vcs.revision, vcs.time and vcs.modified settings when present.
func versionLine(info *debug.BuildInfo, ok bool) string {
	version := "devel"
	var rev, at, modified string
	if ok && info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	var parts []string
	if rev != "" {
		parts = append(parts, "revision "+rev)
	}
	if at != "" {
		parts = append(parts, at)
	}
	if modified == "true" {
		parts = append(parts, "modified")
	}
	if len(parts) == 0 {
		return "registry " + version
	}
	return "registry " + version + " (" + strings.Join(parts, ", ") + ")"
}

// suggest returns `; did you mean "x"?` for the candidate nearest to s, when one is near
// enough to be a typo (an edit distance of at most a third of its length, and at least 1),
// or when s is a prefix of exactly one candidate; else "".
func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	var prefixed []string
	for _, cand := range candidates {
		if strings.HasPrefix(cand, s) {
			prefixed = append(prefixed, cand)
		}
		if d := editDistance(s, cand); bestD < 0 || d < bestD {
			best, bestD = cand, d
		}
	}
	if bestD >= 0 && bestD <= max(1, len(best)/3) {
		return fmt.Sprintf("; did you mean `%s`?", best)
	}
	if len(prefixed) == 1 && s != "" {
		return fmt.Sprintf("; did you mean `%s`?", prefixed[0])
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b (Levenshtein plus
// the swap of two neighbours, the commonest typo), by bytes: command names are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// envDefault returns the environment value of key, else def.
func envDefault(c *cli, key, def string) string {
	if c.getenv == nil {
		return def
	}
	if v := strings.TrimSpace(c.getenv(key)); v != "" {
		return v
	}
	return def
}
