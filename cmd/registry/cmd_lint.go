package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
)

var lintHelp = help{
	Summary: "check a plugins.yaml curated list",
	Usage:   "registry lint [FILE]",
	About: `Checks a curated registry list (default ./plugins.yaml) strictly: YAML syntax, unknown fields,
wrong types, duplicate ids, entries of any kind sharing a file id (download URL), bad ids and
repositories, unknown categories, empty owners, previews and signing blocks.
Prints every problem as FILE:LINE:COL: severity [rule] field: message, then a summary.
Exit status: 0 when there is no error (warnings allowed), 1 when there is one, 2 on usage
errors or when the file cannot be read.`,
	Example: "registry lint plugins.yaml",
}

// cmdLint implements `registry lint [FILE]`.
func cmdLint(_ context.Context, c *cli, args []string) int {
	pos, err := parse(c.flags("lint"), args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) > 1 {
		return c.usageError("lint", "expected at most one FILE, found %d: %s", len(pos), strings.Join(pos, " "))
	}
	file := "plugins.yaml"
	if len(pos) == 1 {
		file = pos[0]
	}
	list, probs, err := index.LoadList(file)
	if err != nil {
		fmt.Fprintf(c.stderr, "registry lint: %v\n", err)
		return exitUsage
	}
	// Capped: a list with 10 000 problems prints the first problem.MaxListed and a count
	// per rule of the rest; the summary below counts them all.
	for _, p := range probs.Cap(problem.MaxListed) {
		fmt.Fprintln(c.stdout, lintLine(file, p))
	}
	errs, warns := plural(len(probs.Errors()), "error"), plural(len(probs.Warnings()), "warning")
	if probs.HasErrors() {
		fmt.Fprintf(c.stderr, "registry lint: %s: %s, %s\n", file, errs, warns)
		return exitInvalid
	}
	fmt.Fprintf(c.stdout, "%s: ok, %s, %s, %s\n",
		file, plural(len(list.Plugins), "plugin"), plural(len(list.Extensions), "extension"), warns)
	return exitOK
}

// lintLine renders one problem in the FILE:LINE:COL form editors and CI annotators read.
func lintLine(file string, p problem.Problem) string {
	field, line, col, ok := index.Position(p.Path)
	if !ok {
		line, col = 1, 1
	}
	msg := p.Message
	if field != "" {
		msg = field + ": " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s [%s] %s", file, line, col, p.Severity, p.Rule, msg)
}
