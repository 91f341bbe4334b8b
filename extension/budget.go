package extension

import (
	"fmt"

	"github.com/pluginyard/registry/problem"
)

// The work budget of one curupira-extension.toml. The TOML decoder spends time and memory
// quadratic in how deeply a document nests and in how many parts a dotted key has (every
// level copies its key path, and Undecoded lists them all): 7.4 KB of `x = {a={a={…}}}`
// 8,000 deep took 12 s and 2.9 GB. So the text is measured first, by a scan linear in its
// bytes that keeps at most MaxTOMLDepth open brackets, and only a document within these
// limits is decoded. Real manifests nest 1 level, use keys of at most 2 parts and hold
// about 15 keys; the limits leave room for manifests hundreds of times larger.
const (
	// MaxTOMLDepth bounds how deeply inline tables and arrays nest.
	MaxTOMLDepth = 32
	// MaxTOMLKeyParts bounds the dotted parts of one key or table header.
	MaxTOMLKeyParts = 32
	// MaxTOMLKeys bounds the keys and table headers of the document (the unknown-key report
	// is measured at 16,000 keys).
	MaxTOMLKeys = 20_000
)

// CheckTOMLBudget reports, under rule extension.toml.budget, a document that nests inline
// tables or arrays deeper than MaxTOMLDepth, has a key or table header of more than
// MaxTOMLKeyParts dotted parts, or more than MaxTOMLKeys keys. It reads data once and
// allocates almost nothing, whatever data holds; call it before decoding untrusted TOML.
func CheckTOMLBudget(data []byte) problem.List {
	s := tomlScanner{data: data, line: 1, expectKey: true}
	s.run()
	return s.probs
}

// tomlScanner tokenizes just enough TOML to tell keys from values and brackets inside
// strings and comments from structure. It does not validate: where the text is not TOML,
// the decoder refuses it at or before the point where the scanner's reading could differ.
type tomlScanner struct {
	data      []byte
	i         int
	line      int
	lineStart int
	stack     []byte // the open '{' and '[' of values, at most MaxTOMLDepth
	keys      int
	expectKey bool // the next token is a key: at a line's start outside values, after '{' or a ',' in '{'
	probs     problem.List
}

func (s *tomlScanner) run() {
	for s.i < len(s.data) && !s.probs.HasErrors() {
		s.step()
	}
}

func (s *tomlScanner) step() {
	c := s.data[s.i]
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		s.i++
	case c == '\n':
		s.newline()
		s.i++
		s.expectKey = s.expectKey || len(s.stack) == 0
	case c == '#':
		s.skipComment()
	case s.expectKey && len(s.stack) == 0 && c == '[':
		s.header()
	case s.expectKey && isKeyStart(c):
		s.key()
	default:
		s.value(c)
	}
}

// value handles one token where a value (or what follows it) is expected.
func (s *tomlScanner) value(c byte) {
	s.expectKey = false
	switch c {
	case '"', '\'':
		s.skipString()
	case '{', '[':
		s.open(c)
	case '}', ']':
		if len(s.stack) > 0 {
			s.stack = s.stack[:len(s.stack)-1]
		}
		s.i++
	case ',':
		s.expectKey = len(s.stack) > 0 && s.stack[len(s.stack)-1] == '{'
		s.i++
	default:
		s.skipScalar()
	}
}

func (s *tomlScanner) open(c byte) {
	if len(s.stack) == MaxTOMLDepth {
		s.refuse(s.where(), "expected inline tables and arrays nested at most %d levels deep, found one nested deeper; flatten the structure or move it into [table] sections", MaxTOMLDepth)
		return
	}
	s.stack = append(s.stack, c)
	s.expectKey = c == '{'
	s.i++
}

// header reads a [table] or [[array]] header's key.
func (s *tomlScanner) header() {
	s.i++
	if s.i < len(s.data) && s.data[s.i] == '[' {
		s.i++
	}
	s.expectKey = false
	s.keyParts()
}

func (s *tomlScanner) key() {
	s.expectKey = false
	s.keyParts()
}

// keyParts reads a bare, quoted or dotted key and counts it and its parts.
func (s *tomlScanner) keyParts() {
	at := s.where()
	parts := 0
	for {
		s.skipBlank()
		if s.i >= len(s.data) || !isKeyStart(s.data[s.i]) {
			break
		}
		parts++
		if c := s.data[s.i]; c == '"' || c == '\'' {
			s.skipString()
		} else {
			s.skipBare()
		}
		s.skipBlank()
		if s.i >= len(s.data) || s.data[s.i] != '.' {
			break
		}
		s.i++
	}
	if parts == 0 {
		return
	}
	s.keys++
	switch {
	case parts > MaxTOMLKeyParts:
		s.refuse(at, "expected keys and table headers of at most %d dotted parts, found one of %d parts; use shorter keys", MaxTOMLKeyParts, parts)
	case s.keys > MaxTOMLKeys:
		s.refuse(at, "expected at most %d keys and table headers, found more than %d; remove keys the manifest does not define", MaxTOMLKeys, MaxTOMLKeys)
	}
}

// skipString skips a basic, literal or multi-line string starting at s.i. A single-line
// string ends at its line's end even when unterminated (the decoder refuses it there).
func (s *tomlScanner) skipString() {
	q := s.data[s.i]
	if s.quotes(q) >= 3 {
		s.i += 3
		s.skipMultiline(q)
		return
	}
	for s.i++; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '\n':
			return
		case c == q:
			s.i++
			return
		case c == '\\' && q == '"' && s.i+1 < len(s.data) && s.data[s.i+1] != '\n':
			s.i++
		}
	}
}

// skipMultiline skips the body of a """ or ”' string and its closing quotes, of which
// there may be up to five ("""a""""" ends with the content a"").
func (s *tomlScanner) skipMultiline(q byte) {
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\n':
			s.newline()
		case c == '\\' && q == '"':
			s.i++
			if s.i < len(s.data) && s.data[s.i] == '\n' {
				s.newline()
			}
		case c == q:
			if n := s.quotes(q); n >= 3 {
				s.i += n
				return
			}
		}
		s.i++
	}
}

// quotes counts the run of q starting at s.i.
func (s *tomlScanner) quotes(q byte) int {
	n := 0
	for s.i+n < len(s.data) && s.data[s.i+n] == q {
		n++
	}
	return n
}

func (s *tomlScanner) skipComment() {
	for s.i < len(s.data) && s.data[s.i] != '\n' {
		s.i++
	}
}

func (s *tomlScanner) skipBlank() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t') {
		s.i++
	}
}

func (s *tomlScanner) skipBare() {
	for s.i < len(s.data) && isBare(s.data[s.i]) {
		s.i++
	}
}

// skipScalar skips a number, boolean, date or any other run up to the next delimiter; it
// always advances.
func (s *tomlScanner) skipScalar() {
	s.i++
	for s.i < len(s.data) && !isDelimiter(s.data[s.i]) {
		s.i++
	}
}

func (s *tomlScanner) newline() {
	s.line++
	s.lineStart = s.i + 1
}

func (s *tomlScanner) where() string {
	return fmt.Sprintf("line %d, column %d", s.line, s.i-s.lineStart+1)
}

// refuse records the one budget problem, at path "line L, column C" like extension.toml.
func (s *tomlScanner) refuse(at, format string, args ...any) {
	s.probs.Errorf("extension.toml.budget", at, "%s at %s: "+format, append([]any{FileName, at}, args...)...)
}

func isKeyStart(c byte) bool { return isBare(c) || c == '"' || c == '\'' }

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '#', ',', '[', ']', '{', '}', '"', '\'', '=':
		return true
	}
	return false
}
