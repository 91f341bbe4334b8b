package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/extension/rpc"
)

var conformanceHelp = help{
	Summary: "run the Curupira protocol conformance checks against an extension",
	Usage:   "registry conformance [--timeout 10s] [--max-frame N] [--table TYPE=JSON]... [--logs] -- CMD [ARGS...]",
	About: `Starts the Curupira extension CMD, speaks the extension protocol to it over stdin/stdout,
and prints a pass/fail table of every check. An extension that calls an outside service
(an issue tracker, a chat API) needs that service to answer during the run: point the
extension at a local fake API (through its own environment or flags) when working offline.
Exit status: 0 when every check passes, 1 when one fails, 2 on usage errors.`,
	Example: "registry conformance -- node dist/index.js\nregistry conformance --timeout 30s --table github-issue='{\"repo\": \"acme/widgets\"}' -- ./my-extension",
}

// cmdConformance runs `registry conformance [--timeout 10s] [--max-frame N]
// [--table TYPE=JSON]… [--logs] -- CMD [ARGS…]`: it starts the Curupira extension CMD,
// checks it against the protocol, prints a pass/fail table and exits 1 on any failure.
func cmdConformance(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("conformance")
	timeout := fs.Duration("timeout", extension.DefaultTimeout, "how long to wait for each answer and for the extension to exit")
	maxFrame := fs.Int("max-frame", rpc.DefaultMaxFrame, "the frame size limit the extension enforces, in `BYTES`")
	logs := fs.Bool("logs", false, "show the extension's stderr")
	tables := conformanceTables{}
	fs.Var(tables, "table", "automation table for a trigger type, as `TYPE=JSON` such as TYPE='{\"key\": …}' (repeatable); default: built from the trigger's schema")
	command, err := parse(fs, args)
	switch {
	case err != nil:
		return parseExit(err)
	case len(command) == 0:
		return c.usageError("conformance", "expected the extension's command after --, e.g. -- node dist/index.js")
	case *timeout <= 0:
		return c.usageError("conformance", "--timeout %s: expected a positive duration such as 10s", *timeout)
	case *maxFrame <= 0:
		return c.usageError("conformance", "--max-frame %d: expected a positive number of bytes", *maxFrame)
	}
	cfg := extension.Config{Command: command, Timeout: *timeout, MaxFrame: *maxFrame, Tables: tables}
	if *logs {
		cfg.Stderr = c.stderr
	}
	report := extension.Conformance(ctx, cfg)
	fmt.Fprintf(c.stdout, "conformance of %s (protocol version %d, timeout %s)\n\n",
		strings.Join(command, " "), rpc.ProtocolVersion, timeout.Round(time.Millisecond))
	if err := report.WriteTable(c.stdout); err != nil {
		fmt.Fprintf(c.stderr, "conformance: %v\n", err)
		return exitUsage
	}
	if !report.OK() {
		return exitInvalid
	}
	return exitOK
}

// conformanceTables is the repeatable --table TYPE=JSON flag.
type conformanceTables map[string]map[string]any

// String implements flag.Value.
func (t conformanceTables) String() string {
	if len(t) == 0 {
		return ""
	}
	b, err := json.Marshal(map[string]map[string]any(t))
	if err != nil {
		return ""
	}
	return string(b)
}

// Set implements flag.Value.
func (t conformanceTables) Set(v string) error {
	name, raw, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want TYPE=JSON, e.g. github-issue='{\"repo\": \"acme/widgets\"}'")
	}
	var table map[string]any
	if err := json.Unmarshal([]byte(raw), &table); err != nil || table == nil {
		return fmt.Errorf("the table for %s must be a JSON object: %q", name, raw)
	}
	t[name] = table
	return nil
}
