package extension

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pluginyard/registry/extension/rpc"
)

// The checks Conformance runs, in report order. Names are stable: CI logs and tests key on them.
const (
	CheckPrintManifest    = "print-manifest"
	CheckFraming          = "framing"
	CheckStdoutFramesOnly = "stdout-frames-only"
	CheckInitialize       = "initialize"
	CheckOtherMajor       = "initialize-other-major"
	CheckDescribe         = "describe"
	CheckSchema           = "trigger/schema"
	CheckValidate         = "trigger/validate"
	CheckPoll             = "trigger/poll"
	CheckOnStarted        = "trigger/onStarted"
	CheckOnFinished       = "trigger/onFinished"
	CheckUnknownMethod    = "unknown-method"
	CheckUnknownTrigger   = "unknown-trigger-type"
	CheckOversizedFrame   = "oversized-frame"
	CheckShutdown         = "shutdown"
)

// DefaultTimeout bounds every read from the extension and its exit.
const DefaultTimeout = 10 * time.Second

// Config says what to check and how long to wait.
type Config struct {
	// Command starts the extension: program and arguments. The checker appends
	// --curupira-print-manifest for the manifest check.
	Command []string
	// Timeout bounds each answer and each exit (DefaultTimeout when zero).
	Timeout time.Duration
	// MaxFrame is the frame cap the extension is expected to enforce
	// (rpc.DefaultMaxFrame when zero). The oversized-frame check sends MaxFrame+1 bytes.
	MaxFrame int
	// Tables holds, per trigger type, the automation table sent to trigger/validate and
	// trigger/poll. A trigger type without one gets a table built from its schema: every
	// property's default, and for required properties without one the first of examples,
	// const or enum, or a value of the declared type.
	Tables map[string]map[string]any
	// Stderr receives the extension's stderr (its logs); nil discards it.
	Stderr io.Writer
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = rpc.DefaultMaxFrame
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	return c
}

// Check is the outcome of one check. A skipped check could not run because an earlier
// failure (a process that does not start, an unframed stream) made it meaningless.
type Check struct {
	Name    string
	Passed  bool
	Skipped bool
	Detail  string
}

// ConformanceReport is the outcome of Conformance.
type ConformanceReport struct {
	Command  []string
	Manifest *Manifest // what --curupira-print-manifest printed, nil when it failed
	Checks   []Check
}

// OK reports whether every check passed (skipped checks only follow failed ones).
func (r *ConformanceReport) OK() bool {
	for _, c := range r.Checks {
		if !c.Passed {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Failed returns the names of the checks that ran and failed.
func (r *ConformanceReport) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.Passed && !c.Skipped {
			out = append(out, c.Name)
		}
	}
	return out
}

// Check returns the check called name.
func (r *ConformanceReport) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// WriteTable prints the pass/fail table and a summary line.
func (r *ConformanceReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tDETAIL")
	var passed, failed, skipped int
	for _, c := range r.Checks {
		result := "PASS"
		switch {
		case c.Skipped:
			result, skipped = "SKIP", skipped+1
		case !c.Passed:
			result, failed = "FAIL", failed+1
		default:
			passed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, result, oneLine(c.Detail))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("conformance: write table: %w", err)
	}
	_, err := fmt.Fprintf(w, "%d checks: %d passed, %d failed, %d skipped\n", len(r.Checks), passed, failed, skipped)
	if err != nil {
		return fmt.Errorf("conformance: write table: %w", err)
	}
	return nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// Conformance runs the extension started by cfg.Command and checks it against protocol
// version 2 and the message shapes of package rpc. It starts the command several times:
// once with --curupira-print-manifest, once for the main session (initialize through
// shutdown), once to offer protocol version 3, and once to send an oversized frame,
// because the last two may leave the extension's stream unusable. Every wait is bounded by
// cfg.Timeout, so a hanging extension fails a check instead of hanging the checker.
func Conformance(ctx context.Context, cfg Config) *ConformanceReport {
	cfg = cfg.withDefaults()
	r := &ConformanceReport{Command: cfg.Command}
	if len(cfg.Command) == 0 {
		r.Checks = []Check{{Name: CheckPrintManifest, Detail: "no command given"}}
		return r
	}
	c := &checker{cfg: cfg, report: r, results: map[string]Check{}}
	c.printManifest(ctx)
	c.mainSession(ctx)
	c.otherMajor(ctx)
	c.oversized(ctx)
	c.stdoutFramesOnly()
	for _, name := range checkOrder {
		if ch, ok := c.results[name]; ok {
			r.Checks = append(r.Checks, ch)
		}
	}
	return r
}

var checkOrder = []string{
	CheckPrintManifest, CheckFraming, CheckStdoutFramesOnly, CheckInitialize, CheckOtherMajor,
	CheckDescribe, CheckSchema, CheckValidate, CheckPoll, CheckOnStarted, CheckOnFinished,
	CheckUnknownMethod, CheckUnknownTrigger, CheckOversizedFrame, CheckShutdown,
}
