package main

import (
	"strconv"
	"unicode"
)

// safe returns s unchanged when every rune prints as itself on a terminal, else quoted
// with Go escapes: an id, version, path or message from a package must never move the
// cursor (ESC sequences) or reorder the line (bidi controls such as U+202E).
func safe(s string) string {
	for _, r := range s {
		if !unicode.IsGraphic(r) && r != ' ' || unicode.Is(unicode.Cf, r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}
