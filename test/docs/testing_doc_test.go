// Package docs_test keeps docs/testing.md true: every test it names as guarding a rule must
// exist, so the table cannot point at a renamed or deleted test.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// named matches `pkg.TestName`, `pkg/sub.TestName` or a bare `TestName` (same package as the
// previous qualified name in the cell), with an optional /subtest.
var named = regexp.MustCompile("`(?:([a-z/]+)\\.)?((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)[^`]*`")

func TestGuardingTestsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := testFuncs(t, root)
	checked := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| rule") {
			continue
		}
		cells := strings.Split(line, "|")
		pkg := ""
		for _, m := range named.FindAllStringSubmatch(cells[len(cells)-2], -1) {
			if m[1] != "" {
				pkg = m[1]
			}
			if pkg == "" {
				t.Errorf("%s has no package in %q", m[2], line)
				continue
			}
			checked++
			if !funcs[pkg+"."+m[2]] {
				t.Errorf("docs/testing.md names %s.%s, which does not exist", pkg, m[2])
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d tests named in docs/testing.md; the table did not parse", checked)
	}
}

// testFuncs returns "pkg.TestName" for every test, fuzz and benchmark function, pkg being
// the directory relative to root ("server", "cmd/registry", "test/crash").
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			out[pkg+"."+m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
