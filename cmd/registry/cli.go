package main

import (
	"flag"
	"fmt"
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

// parse parses args with fs, allowing flags after positional arguments
// (`registry verify FILE --json`), and returns the positional arguments.
// Everything after a literal "--" is positional.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageNote makes fs's -h print the command line and a note before the flags.
func usageNote(fs *flag.FlagSet, line, note string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n%s\n\nflags:\n", line, note)
		fs.PrintDefaults()
	}
}
