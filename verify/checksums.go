package verify

import (
	"bytes"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"

	"github.com/pluginyard/registry/problem"
)

// ChecksumLine is one well-formed line of checksums.txt.
type ChecksumLine struct {
	Line   int    // 1-based line number
	Digest string // 64 lowercase hex digits
	Path   string // package-relative slash path
}

// ParseChecksums parses checksums.txt strictly: every line is exactly
// "<64 lowercase hex>  <path>\n" (sha256sum's text format, LF endings, the last line
// terminated too), paths are clean and relative, sorted in byte order, listed once, and
// neither checksums.txt nor checksums.txt.sig lists itself. It returns every well-formed
// line, and a problem (Path "line N") for each violation; rules are checksums.format,
// checksums.path, checksums.order, checksums.duplicate and checksums.self.
func ParseChecksums(data []byte) ([]ChecksumLine, problem.List) {
	raws := splitLines(data)
	var (
		lines []ChecksumLine
		probs problem.List
		seen  = make(map[string]int, len(raws)) // sized once: no rehashing as it grows
		prev  string
	)
	for i, raw := range raws {
		l, ok := parseLine(raw, i+1, &probs)
		if !ok {
			continue
		}
		l.Line = i + 1
		if first, dup := seen[l.Path]; dup {
			probs.Errorf("checksums.duplicate", lineAt(l.Line), "%q is listed again (first on line %d); list each file once", l.Path, first)
			continue
		}
		seen[l.Path] = l.Line
		if l.Path < prev {
			probs.Errorf("checksums.order", lineAt(l.Line), "%q comes after %q; sort the lines by path in byte order (LC_ALL=C sort -k2)", l.Path, prev)
		}
		prev = l.Path
		lines = append(lines, l)
	}
	return lines, probs
}

// splitLines splits on LF; a final line without LF is returned with a marker so that
// parseLine can report it.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	parts := strings.Split(string(data), "\n")
	if parts[len(parts)-1] == "" {
		return parts[:len(parts)-1]
	}
	parts[len(parts)-1] += noNewline
	return parts
}

// noNewline marks the last line when the file does not end with a newline. It cannot
// occur in a real line because lines are split on it.
const noNewline = "\n"

// lineAt is a problem's Path for line n, built only when there is a problem.
func lineAt(n int) string { return "line " + strconv.Itoa(n) }

func parseLine(raw string, n int, probs *problem.List) (ChecksumLine, bool) {
	if line, ok := strings.CutSuffix(raw, noNewline); ok {
		probs.Errorf("checksums.format", lineAt(n), "the last line does not end with a newline; end every line with LF")
		raw = line
	}
	if strings.HasSuffix(raw, "\r") {
		probs.Errorf("checksums.format", lineAt(n), "the line ends with CR LF; use LF line endings")
		return ChecksumLine{}, false
	}
	digest, p, ok := strings.Cut(raw, "  ")
	if !ok {
		probs.Errorf("checksums.format", lineAt(n), "expected \"<sha256 hex>  <path>\" (two spaces), found %q", clip(raw))
		return ChecksumLine{}, false
	}
	if !isLowerHex(digest) {
		probs.Errorf("checksums.format", lineAt(n), "expected 64 lowercase hex digits before the two spaces, found %q", clip(digest))
		return ChecksumLine{}, false
	}
	if why := checkListedPath(p); why != "" {
		probs.Errorf("checksums.path", lineAt(n), "the path %q %s", clip(p), why)
		return ChecksumLine{}, false
	}
	if p == checksumsName || p == checksumsSigName {
		probs.Errorf("checksums.self", lineAt(n), "%s must not be listed; it lists every other file", p)
		return ChecksumLine{}, false
	}
	return ChecksumLine{Digest: digest, Path: p}, true
}

func isLowerHex(s string) bool {
	if len(s) != 2*sha256Size {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkListedPath says what is wrong with a listed path, or "".
func checkListedPath(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "*"):
		return "starts with \"*\" (sha256sum binary mode); use text mode: two spaces, no star"
	case strings.HasPrefix(p, "/"):
		return "is absolute; list paths relative to the package root"
	case strings.HasPrefix(p, "./"):
		return "starts with \"./\"; list paths without it"
	case strings.Contains(p, `\`):
		return "contains a backslash; use \"/\""
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "is not a clean relative path (empty, \".\" or \"..\" segment)"
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// checkChecksums compares the parsed lines with the files under base (a folder prefix,
// "" for the root); paths in checksums.txt are relative to base. Problems carry Path =
// the file's package path.
func checkChecksums(lines []ChecksumLine, digests map[string][sha256Size]byte, base string) problem.List {
	var probs problem.List
	listed := make(map[string]bool, len(lines))
	for _, l := range lines {
		listed[l.Path] = true
		sum, ok := digests[base+l.Path]
		switch {
		case !ok:
			probs.Errorf("checksums.absent", base+l.Path, "line %d lists %q, which is not in the package; remove the line or add the file", l.Line, l.Path)
		case !bytes.Equal(hexBytes(l.Digest), sum[:]):
			probs.Errorf("checksums.mismatch", base+l.Path, "line %d says sha256 %s, the file's content has %s; regenerate checksums.txt after the last change", l.Line, l.Digest, hex.EncodeToString(sum[:]))
		}
	}
	for _, name := range sortedKeys(digests) {
		rel, ok := strings.CutPrefix(name, base)
		if !ok || rel == checksumsName || rel == checksumsSigName || listed[rel] {
			continue
		}
		probs.Errorf("checksums.unlisted", name, "%q is in the package but not in checksums.txt; every file except checksums.txt and checksums.txt.sig must be listed", rel)
	}
	return probs
}

func hexBytes(s string) []byte {
	b, _ := hex.DecodeString(s) // s passed isLowerHex
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
