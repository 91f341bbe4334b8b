package verify

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nameIssue is one thing wrong with an entry name: a rule id and the reason.
type nameIssue struct{ rule, why string }

// cleanName checks a tar entry name and returns its normalised form.
//
// Normalisation policy: one leading "./" is removed (what `tar -C dir .` writes), and a
// directory's trailing "/" is removed. The root entry itself ("." or "./") is reported by
// root=true and skipped by the caller when it is a directory; a file named so is refused
// as archive.path.empty, since its name is empty once normalised. Anything else that is not already a clean relative
// slash path is refused rather than rewritten: empty segments ("a//b"), "." segments
// ("a/./b"), a second "./", and a file name ending in "/". Refusing is safer than cleaning
// because checksums.txt must name every file exactly as the archive does.
func cleanName(raw string, dir bool) (name string, root bool, issues []nameIssue) {
	switch {
	case raw == "":
		return "", false, []nameIssue{{"archive.path.empty", "the entry has an empty name"}}
	case !utf8.ValidString(raw):
		return "", false, []nameIssue{{"archive.path.utf8", "the name is not valid UTF-8"}}
	case hasControl(raw):
		return "", false, []nameIssue{{"archive.path.control", "the name contains a control character (newline, tab, NUL, ...)"}}
	}
	if strings.Contains(raw, `\`) {
		issues = append(issues, nameIssue{"archive.path.backslash", `the name contains a backslash; use "/" between folders`})
	}
	if strings.HasPrefix(raw, "/") || isDrivePath(raw) {
		issues = append(issues, nameIssue{"archive.path.absolute", "the name is an absolute path; paths must be relative to the package root"})
	}
	name = strings.TrimPrefix(raw, "./")
	if dir {
		name = strings.TrimSuffix(name, "/")
	}
	if name == "" || name == "." {
		if !dir {
			issues = append(issues, nameIssue{"archive.path.empty", fmt.Sprintf("the file's name %q names the package root, not a file; give the file a name such as docs/notes.md, or store the root as a directory entry", raw)})
		}
		return "", len(issues) == 0 && dir, issues
	}
	return name, false, append(issues, segmentIssues(name)...)
}

func segmentIssues(name string) []nameIssue {
	var issues []nameIssue
	unclean := false
	for seg := range strings.SplitSeq(name, "/") {
		switch seg {
		case "..":
			if len(issues) == 0 || issues[len(issues)-1].rule != "archive.path.dotdot" {
				issues = append(issues, nameIssue{"archive.path.dotdot", `the name has a ".." segment, which could escape the package folder`})
			}
		case "", ".":
			unclean = true
		}
	}
	if unclean && !strings.HasPrefix(name, "/") {
		issues = append(issues, nameIssue{"archive.path.unclean", `the name has an empty or "." segment ("a//b", "a/./b", a trailing "/"); write it as a clean relative path`})
	}
	return issues
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// isDrivePath reports a Windows drive path such as "C:/x" or "C:x".
func isDrivePath(s string) bool {
	return len(s) >= 2 && s[1] == ':' && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// displayName renders an entry name for a problem's File: printable names as they are,
// others quoted so that the report stays valid UTF-8 on one line.
func displayName(raw string) string {
	if raw == "" {
		return `""`
	}
	if !utf8.ValidString(raw) || hasControl(raw) {
		return strconv.Quote(raw)
	}
	return raw
}

// foldKey maps a path to the name case-insensitive and normalizing file systems see, so
// that two paths with one key would be one file on some host:
//   - decomposed (NFD, as HFS+ stores names; composed and decomposed forms meet there);
//   - every rune replaced by the smallest rune of its simple case-folding orbit, the
//     equivalence strings.EqualFold uses (so "K", "k" and the Kelvin sign meet too);
//   - trailing dots and spaces dropped from every segment, as Windows does ("a.md." and
//     "a.md " are "a.md" there).
func foldKey(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for i, seg := range strings.Split(name, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		for _, r := range norm.NFD.String(strings.TrimRight(seg, ". ")) {
			b.WriteRune(foldRune(r))
		}
	}
	return b.String()
}

func foldRune(r rune) rune {
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return low
}
