package manifest

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// TextProblem describes the characters of s that a field shown to people must not carry, or
// returns "" when there are none: C0 and C1 control characters and DEL (multiline allows
// only newline and tab among them), Unicode format characters (category Cf: bidirectional
// embeddings, overrides, isolates and marks, zero-width spaces, the BOM, soft hyphens, tag
// characters), the line and paragraph separators, and invalid UTF-8 (a real U+FFFD is
// fine). Zero-width joiner and non-joiner are allowed: Persian, Indic scripts and emoji
// sequences need them. The description quotes the first offending character with %U, never
// raw, so the message is safe to print anywhere. Curupira extensions use the same rule.
func TextProblem(s string, multiline bool) string {
	first, where, n, invalid := rune(0), 0, 0, false
	for i, count := 0, 1; i < len(s); count++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		bad := r == utf8.RuneError && size == 1
		if bad || forbiddenRune(r, multiline) {
			if n == 0 {
				first, where, invalid = r, count, bad
			}
			n++
		}
		i += size
	}
	if n == 0 {
		return ""
	}
	total := "the only one"
	if n > 1 {
		total = fmt.Sprintf("%d forbidden characters in all", n)
	}
	if invalid {
		return fmt.Sprintf("invalid UTF-8 at character %d (%s)", where, total)
	}
	return fmt.Sprintf("%U (%s) at character %d (%s)", first, runeClass(first), where, total)
}

func forbiddenRune(r rune, multiline bool) bool {
	switch {
	case multiline && (r == '\n' || r == '\t'):
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200c || r == 0x200d:
		return false
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func runeClass(r rune) string {
	switch {
	case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c:
		return "a bidirectional control"
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return "a control character"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator"
	}
	return "an invisible format character"
}

// forbiddenText names what TextProblem refuses, for messages.
func forbiddenText(multiline bool) string {
	if multiline {
		return "control characters other than newline and tab, bidirectional controls or invisible format characters"
	}
	return "control characters (newlines included), bidirectional controls or invisible format characters"
}
