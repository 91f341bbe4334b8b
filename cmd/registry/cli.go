package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
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
	exitOK      = 0 // success (warnings allowed), and -h/--help
	exitInvalid = 1 // the input was checked and refused
	exitUsage   = 2 // bad flags or arguments, or an I/O error before anything could be checked
)

// The CLI convention, one for every subcommand:
//   - `registry CMD -h` (or --help, -help) prints the command's help on stdout and exits 0:
//     its summary, usage line, description, flags and example (help, printHelp);
//   - a usage error (unknown flag, missing or extra argument) prints ONE line on stderr,
//     "registry CMD: what is wrong (run `registry CMD -h` for usage)", and exits 2
//     (parse does it for flag errors, usageError for the command's own checks).
//
// A command makes its FlagSet with c.flags(name), parses with parse, and returns
// parseExit(err) when parse fails; its help is the help value in commands().

// flags returns a FlagSet for subcommand name ("lint", or "token create" for an action)
// that follows the convention: parse prints its help or its one-line error.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&flagOutput{c: c})
	fs.Usage = func() {}
	return fs
}

// flagOutput is the output of a FlagSet made by cli.flags: the flag package's own messages
// are dropped (parse words them), and parse finds the cli through it.
type flagOutput struct{ c *cli }

func (o *flagOutput) Write(p []byte) (int, error) { return len(p), nil }

// parse parses args with fs, allowing flags after positional arguments
// (`registry verify FILE --json`), and returns the positional arguments.
// Everything after a literal "--" is positional. On -h it prints the command's help and
// returns flag.ErrHelp; on a bad flag it prints one line and returns the error.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	pos, err := parseArgs(fs, args)
	if err == nil {
		return pos, nil
	}
	if o, ok := fs.Output().(*flagOutput); ok {
		if errors.Is(err, flag.ErrHelp) {
			o.c.printCommandHelp(fs)
		} else {
			o.c.usageError(fs.Name(), "%v", err)
		}
	}
	return nil, err
}

func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
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

// parseExit is the exit code after parse failed: 0 for -h, 2 for a usage error.
func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// usageError prints the one line of a usage error of command name and returns exitUsage.
func (c *cli) usageError(name, format string, args ...any) int {
	cmd, _, _ := strings.Cut(name, " ")
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	msg = strings.ReplaceAll(msg, "\n", " ")
	fmt.Fprintf(c.stderr, "registry %s: %s (run `registry %s -h` for usage)\n", name, msg, cmd)
	return exitUsage
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// help is a subcommand's -h text.
type help struct {
	// Summary is one line, lower case, no final period: shown by `registry -h` too.
	Summary string
	// Usage is the command line, after "usage: ", e.g. "registry lint [FILE]"; more lines
	// (one per form) are separated by "\n".
	Usage string
	// About says what the command does, what it prints and its exit status; optional.
	About string
	// Example is one or more complete command lines a reader can copy.
	Example string
}

// printCommandHelp prints the help of the command fs belongs to, with fs's flags.
func (c *cli) printCommandHelp(fs *flag.FlagSet) {
	name, _, _ := strings.Cut(fs.Name(), " ")
	cmd, ok := commands()[name]
	if !ok {
		cmd.help = help{Usage: "registry " + fs.Name() + " [flags]"}
	}
	printHelp(c.stdout, name, cmd.help, fs)
}

// printHelp writes h for command name; each FlagSet's flags follow under their own heading
// when there is more than one (the actions of token).
func printHelp(w io.Writer, name string, h help, sets ...*flag.FlagSet) {
	fmt.Fprintf(w, "registry %s: %s\n\n", name, h.Summary)
	for i, line := range strings.Split(h.Usage, "\n") {
		if i == 0 {
			fmt.Fprintf(w, "usage: %s\n", line)
		} else {
			fmt.Fprintf(w, "       %s\n", line)
		}
	}
	if h.About != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(h.About, "\n"))
	}
	for _, fs := range sets {
		heading := "flags:"
		if len(sets) > 1 {
			heading = "flags of `registry " + fs.Name() + "`:"
		}
		fmt.Fprintf(w, "\n%s\n", heading)
		printFlags(w, fs)
	}
	if len(sets) == 0 {
		fmt.Fprint(w, "\nflags: none\n")
	}
	fmt.Fprint(w, "\nexample:\n")
	for _, line := range strings.Split(strings.TrimRight(h.Example, "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// printFlags lists fs's flags as --name VALUE, then the usage and the default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		kind, usage := flag.UnquoteUsage(f)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			kind = ""
		}
		line := "  --" + f.Name
		if kind != "" {
			line += " " + placeholder(kind)
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" {
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, usage)
	})
	if n == 0 {
		fmt.Fprint(w, "  none\n")
	}
}

// placeholder names a flag's value in help: the back-quoted word of its usage (`DIR`), else
// its type.
func placeholder(kind string) string {
	switch kind {
	case "string", "value":
		return "VALUE"
	case "int", "int64", "uint", "uint64", "float":
		return "N"
	}
	return strings.ToUpper(kind)
}
