package main

import (
	"flag"
	"io"
)

// cli carries a subcommand's standard streams and environment, so that every subcommand can
// be run from tests without touching the process's own.
type cli struct {
	stdout io.Writer
	stderr io.Writer
	stdin  io.Reader
	getenv func(string) string
}

// Exit codes shared by every subcommand.
const (
	exitOK      = 0 // success (warnings allowed)
	exitInvalid = 1 // the input was checked and refused
	exitUsage   = 2 // bad flags, or an I/O error before anything could be checked
)

// flags returns a FlagSet for a subcommand that reports parse errors on c.stderr.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	return fs
}
