package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
)

const lintUsage = `usage: registry lint [FILE]

Checks a curated registry list (default ./plugins.yaml) strictly: unknown fields, wrong
types, duplicate ids, entries of any kind sharing a file id (download URL), bad ids and
repositories, previews, signing blocks and owners.
Prints every problem as FILE:LINE:COL: severity [rule] field: message.
Exit status: 0 when there is no error (warnings allowed), 1 when there is one, 2 when the
file cannot be read.
`

// cmdLint implements `registry lint [FILE]`.
func cmdLint(_ context.Context, c *cli, args []string) int {
	flags := c.flags("lint")
	flags.Usage = func() { fmt.Fprint(c.stderr, lintUsage) }
	pos, err := parse(flags, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(pos) > 1 {
		fmt.Fprint(c.stderr, lintUsage)
		return exitUsage
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
	for _, p := range probs {
		fmt.Fprintln(c.stdout, lintLine(file, p))
	}
	if probs.HasErrors() {
		fmt.Fprintf(c.stderr, "registry lint: %s: %d errors, %d warnings\n", file, len(probs.Errors()), len(probs.Warnings()))
		return exitInvalid
	}
	fmt.Fprintf(c.stdout, "%s: ok, %d plugins, %d extensions, %d warnings\n",
		file, len(list.Plugins), len(list.Extensions), len(probs))
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
