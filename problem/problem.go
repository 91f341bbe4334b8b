// Package problem is the shared shape of everything the registry finds wrong with a package,
// a manifest or a registry list: a stable rule id, where it is, how bad, and how to fix it.
package problem

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Severity says whether a problem refuses the package (Error) or only informs (Warning).
type Severity string

// The two severities. A host refuses a package with an Error; a Warning is listed but allowed.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Problem is one finding. Rule is stable (e.g. "manifest.runtime.executables.path") so that
// tools and metrics can key on it; Path is the field path inside File
// (e.g. "runtime.executables.linux-amd64"); Message says what was expected, what was found
// and how to fix it.
type Problem struct {
	Rule     string   `json:"rule"`
	Path     string   `json:"path"`
	File     string   `json:"file,omitempty"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
	// DocURL links the rule's entry in the reference (…/docs/reference/<section>#<rule>);
	// it is filled where problems are shown (WithDocs), not where they are found.
	DocURL string `json:"doc_url,omitempty"`
}

// String renders a problem on one line for logs and CLI output.
func (p Problem) String() string {
	where := p.Path
	if p.File != "" {
		if where != "" {
			where = p.File + ": " + where
		} else {
			where = p.File
		}
	}
	if where == "" {
		return fmt.Sprintf("%s [%s] %s", p.Severity, p.Rule, p.Message)
	}
	return fmt.Sprintf("%s %s [%s] %s", p.Severity, where, p.Rule, p.Message)
}

// List is an ordered collection of problems. The zero value is ready to use.
type List []Problem

// Errorf appends an error-severity problem.
func (l *List) Errorf(rule, path, format string, args ...any) {
	*l = append(*l, Problem{Rule: rule, Path: path, Message: fmt.Sprintf(format, args...), Severity: Error})
}

// Warnf appends a warning-severity problem.
func (l *List) Warnf(rule, path, format string, args ...any) {
	*l = append(*l, Problem{Rule: rule, Path: path, Message: fmt.Sprintf(format, args...), Severity: Warning})
}

// InFile returns a copy of l with File set on every problem that has none.
func (l List) InFile(file string) List {
	out := make(List, len(l))
	for i, p := range l {
		if p.File == "" {
			p.File = file
		}
		out[i] = p
	}
	return out
}

// WithDocs returns a copy of l with DocURL set on every problem to link(p.Rule); a problem
// whose rule link does not know keeps its DocURL.
func (l List) WithDocs(link func(rule string) string) List {
	if l == nil {
		return nil
	}
	out := make(List, len(l))
	for i, p := range l {
		if u := link(p.Rule); u != "" {
			p.DocURL = u
		}
		out[i] = p
	}
	return out
}

// HasErrors reports whether any problem has Error severity.
func (l List) HasErrors() bool {
	for _, p := range l {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the Error-severity problems.
func (l List) Errors() List { return l.only(Error) }

// Warnings returns only the Warning-severity problems.
func (l List) Warnings() List { return l.only(Warning) }

func (l List) only(s Severity) List {
	var out List
	for _, p := range l {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// Rules returns the distinct rule ids in l, sorted.
func (l List) Rules() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range l {
		if !seen[p.Rule] {
			seen[p.Rule] = true
			out = append(out, p.Rule)
		}
	}
	sort.Strings(out)
	return out
}

// Has reports whether a problem with the given rule id is in l.
func (l List) Has(rule string) bool {
	for _, p := range l {
		if p.Rule == rule {
			return true
		}
	}
	return false
}

// MaxListed is how many problems a report lists before it summarises the rest: enough to
// show an author every distinct mistake of a real package, few enough that a hostile one
// (200 000 symbolic links, say) draws a response of tens of kilobytes, not megabytes.
const MaxListed = 100

// MaxFieldLen bounds the bytes of a listed problem's Path, File and Message: names and
// values quoted from a package (a 1 MiB PAX path, say) are clipped to it, so 100 listed
// problems stay under a few hundred kilobytes.
const MaxFieldLen = 1024

// Capped collects problems with bounded memory: the first max are kept (each field
// clipped to MaxFieldLen); past that only a count per rule and severity is kept, and List
// ends with one summary problem per such pair.
//
// A summary keeps the rule id and severity of what it stands for (rather than a separate
// "truncated" rule) so that HasErrors, Has and Rules answer for the capped list exactly as
// for the whole one: a tool keyed on rule ids still sees every rule that fired.
type Capped struct {
	max   int
	kept  List
	more  map[summaryKey]int
	order []summaryKey
}

type summaryKey struct {
	rule     string
	severity Severity
}

// NewCapped returns a collector that lists at most max problems (MaxListed when max <= 0).
func NewCapped(max int) *Capped {
	if max <= 0 {
		max = MaxListed
	}
	return &Capped{max: max, more: map[summaryKey]int{}}
}

// Add collects one problem.
func (c *Capped) Add(p Problem) {
	if len(c.kept) < c.max {
		c.kept = append(c.kept, clipped(p))
		return
	}
	k := summaryKey{p.Rule, p.Severity}
	if _, ok := c.more[k]; !ok {
		c.order = append(c.order, k)
	}
	c.more[k]++
}

// AddAll collects every problem of l, in order.
func (c *Capped) AddAll(l List) {
	for _, p := range l {
		c.Add(p)
	}
}

// Errorf collects an error-severity problem about file. Past the cap the message is not
// even formatted: a problem only counted costs no allocation.
func (c *Capped) Errorf(rule, file, format string, args ...any) {
	c.addf(Error, rule, file, format, args)
}

// Warnf collects a warning-severity problem about file, as Errorf does.
func (c *Capped) Warnf(rule, file, format string, args ...any) {
	c.addf(Warning, rule, file, format, args)
}

func (c *Capped) addf(s Severity, rule, file, format string, args []any) {
	if len(c.kept) >= c.max {
		c.Add(Problem{Rule: rule, Severity: s})
		return
	}
	c.Add(Problem{Rule: rule, File: file, Message: fmt.Sprintf(format, args...), Severity: s})
}

// Total is the number of problems collected, listed or not.
func (c *Capped) Total() int {
	n := len(c.kept)
	for _, m := range c.more {
		n += m
	}
	return n
}

// List returns the kept problems followed by one summary per rule and severity that was
// past the cap, in the order those rules were first dropped.
func (c *Capped) List() List {
	out := make(List, len(c.kept), len(c.kept)+len(c.order))
	copy(out, c.kept)
	for _, k := range c.order {
		out = append(out, Problem{
			Rule:     k.rule,
			Severity: k.severity,
			Message:  fmt.Sprintf("and %d more of rule %s, not listed: a report lists the first %d problems of %d; fix those and check again", c.more[k], k.rule, c.max, c.Total()),
		})
	}
	return out
}

// Cap returns l with at most max problems listed (MaxListed when max <= 0), the rest
// summarised as Capped.List does.
func (l List) Cap(max int) List {
	c := NewCapped(max)
	c.AddAll(l)
	return c.List()
}

func clipped(p Problem) Problem {
	p.Path, p.File, p.Message = clip(p.Path), clip(p.File), clip(p.Message)
	return p
}

// clip shortens s to at most MaxFieldLen bytes on a rune boundary, saying how long it was.
func clip(s string) string {
	if len(s) <= MaxFieldLen {
		return s
	}
	note := fmt.Sprintf("... (%d bytes in all)", len(s))
	cut := MaxFieldLen - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}
