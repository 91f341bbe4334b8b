// Package problem is the shared shape of everything the registry finds wrong with a package,
// a manifest or a registry list: a stable rule id, where it is, how bad, and how to fix it.
package problem

import (
	"fmt"
	"sort"
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
