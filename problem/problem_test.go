package problem_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
)

func TestCappedSummarisesPerRule(t *testing.T) {
	c := problem.NewCapped(3)
	for range 2 {
		c.Errorf("archive.symlink", "a", "link")
	}
	c.Warnf("archive.readme.size", "README.md", "big")
	for range 5 {
		c.Errorf("archive.symlink", "b", "link")
	}
	c.Warnf("archive.readme.size", "README.md", "big")
	c.Errorf("archive.fifo", "p", "fifo")

	got := c.List()
	type row struct {
		Rule     string
		Severity problem.Severity
		File     string
	}
	var rows []row
	for _, p := range got {
		rows = append(rows, row{p.Rule, p.Severity, p.File})
	}
	want := []row{
		{"archive.symlink", problem.Error, "a"},
		{"archive.symlink", problem.Error, "a"},
		{"archive.readme.size", problem.Warning, "README.md"},
		{"archive.symlink", problem.Error, ""},
		{"archive.readme.size", problem.Warning, ""},
		{"archive.fifo", problem.Error, ""},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("List (-want +got):\n%s", diff)
	}
	if msg := got[3].Message; !strings.Contains(msg, "and 5 more of rule archive.symlink") || !strings.Contains(msg, "first 3 problems of 10") {
		t.Errorf("summary message %q does not give the count, the rule and the total", msg)
	}
	if c.Total() != 10 {
		t.Errorf("Total = %d, want 10", c.Total())
	}
	if !got.Has("archive.fifo") || !got.HasErrors() {
		t.Errorf("a rule past the cap must stay visible to Has and HasErrors: %v", got)
	}
}

func TestCappedUnderTheCapIsUnchanged(t *testing.T) {
	var l problem.List
	l.Errorf("a.b", "x", "one")
	l.Warnf("a.c", "y", "two")
	if diff := cmp.Diff(l, l.Cap(problem.MaxListed)); diff != "" {
		t.Errorf("Cap changed a short list (-want +got):\n%s", diff)
	}
	if got := (problem.List{}).Cap(0); len(got) != 0 {
		t.Errorf("Cap of an empty list = %v", got)
	}
}

func TestCapDefaultsToMaxListed(t *testing.T) {
	var l problem.List
	for range problem.MaxListed + 50 {
		l.Errorf("archive.symlink", "", "link")
	}
	got := l.Cap(0)
	if len(got) != problem.MaxListed+1 || !strings.Contains(got[problem.MaxListed].Message, "and 50 more") {
		t.Errorf("Cap(0) listed %d problems, last %q; want %d and one summary of 50", len(got), got[len(got)-1].Message, problem.MaxListed)
	}
}

func TestCappedClipsLongFields(t *testing.T) {
	long := strings.Repeat("é", problem.MaxFieldLen) // 2 bytes a rune: cut must fall on a boundary
	c := problem.NewCapped(1)
	c.Add(problem.Problem{Rule: "archive.path.length", Path: long, File: long, Message: "the path " + long, Severity: problem.Error})
	p := c.List()[0]
	for name, v := range map[string]string{"Path": p.Path, "File": p.File, "Message": p.Message} {
		if len(v) > problem.MaxFieldLen || !utf8.ValidString(v) || !strings.Contains(v, "bytes in all)") {
			t.Errorf("%s: %d bytes, valid UTF-8 %v, %q...: want at most %d bytes, valid, saying how long it was", name, len(v), utf8.ValidString(v), v[:20], problem.MaxFieldLen)
		}
	}
}

// TestWithDocsLinksKnownRules: every problem whose rule the linker knows gets its link, the
// others keep theirs, and the original list is not changed.
func TestWithDocsLinksKnownRules(t *testing.T) {
	in := problem.List{
		{Rule: "manifest.id.pattern", Severity: problem.Error},
		{Rule: "made.up", Severity: problem.Warning, DocURL: "kept"},
	}
	link := func(rule string) string {
		if rule == "manifest.id.pattern" {
			return "/docs/reference/kandev-manifest#manifest.id.pattern"
		}
		return ""
	}
	got := in.WithDocs(link)
	want := problem.List{
		{Rule: "manifest.id.pattern", Severity: problem.Error, DocURL: "/docs/reference/kandev-manifest#manifest.id.pattern"},
		{Rule: "made.up", Severity: problem.Warning, DocURL: "kept"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithDocs (-want +got):\n%s", diff)
	}
	if in[0].DocURL != "" {
		t.Errorf("WithDocs changed its input: %q", in[0].DocURL)
	}
}
