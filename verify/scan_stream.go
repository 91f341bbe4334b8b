package verify

import (
	"bytes"
	"fmt"
)

// finding is the first match of one rule in one file.
type finding struct {
	rule *secretRule
	line int    // 1-based
	hint string // the match's first characters and its length, never the secret itself
}

// scanner looks for secretRules in one file's bytes as the file streams past (from
// fileSink.Write): no second read and no copy of the file. A file whose first 512 bytes
// hold a NUL byte is binary and not scanned. Consecutive chunks are joined over a seam of
// maxMatch bytes, so a match that straddles two writes is found too.
type scanner struct {
	pending  []byte // the first bytes, until the text-or-binary decision
	decided  bool
	binary   bool
	tail     []byte // the last maxMatch bytes seen
	lines    int    // newlines seen before the current chunk
	found    []finding
	seenRule map[string]bool
}

func newScanner() *scanner { return &scanner{} }

// write takes the next bytes of the file.
func (s *scanner) write(p []byte) {
	if s.binary {
		return
	}
	if !s.decided {
		s.pending = append(s.pending, p...)
		if len(s.pending) < headSize {
			return
		}
		s.decide()
		return
	}
	s.chunk(p)
}

// close ends the file: a file shorter than the head is decided and scanned now.
func (s *scanner) close() []finding {
	if !s.decided {
		s.decide()
	}
	return s.found
}

func (s *scanner) decide() {
	s.decided = true
	data := s.pending
	s.pending = nil
	if bytes.IndexByte(data[:min(len(data), headSize)], 0) >= 0 {
		s.binary = true
		return
	}
	s.chunk(data)
}

// chunk scans p, and the seam between the previous bytes and p.
func (s *scanner) chunk(p []byte) {
	if len(s.tail) > 0 {
		seam := make([]byte, 0, len(s.tail)+min(len(p), maxMatch))
		seam = append(append(seam, s.tail...), p[:min(len(p), maxMatch)]...)
		s.find(seam, s.lines-bytes.Count(s.tail, newline), len(s.tail))
	}
	s.find(p, s.lines, 0)
	s.lines += bytes.Count(p, newline)
	s.keepTail(p)
}

var newline = []byte{'\n'}

func (s *scanner) keepTail(p []byte) {
	if len(p) >= maxMatch {
		s.tail = append(s.tail[:0], p[len(p)-maxMatch:]...)
		return
	}
	s.tail = append(s.tail, p...)
	if over := len(s.tail) - maxMatch; over > 0 {
		s.tail = append(s.tail[:0], s.tail[over:]...)
	}
}

// find records each rule's first match in data. lines is the newline count before data.
// With seam > 0, data is the previous tail (seam bytes) and the start of the new chunk, and
// only matches that cross from one into the other count: the others are found in the
// chunks themselves.
func (s *scanner) find(data []byte, lines, seam int) {
	for i := range secretRules {
		r := &secretRules[i]
		if s.seenRule[r.id] {
			continue
		}
		for _, kw := range r.keywords {
			if s.findKeyword(r, kw, data, lines, seam) {
				break
			}
		}
	}
}

// findKeyword tries r at every occurrence of kw in data; it reports whether r matched.
func (s *scanner) findKeyword(r *secretRule, kw string, data []byte, lines, seam int) bool {
	k := []byte(kw)
	for off := 0; ; {
		j := bytes.Index(data[off:], k)
		if j < 0 {
			return false
		}
		i := off + j
		if seam > 0 && i >= seam {
			return false // starts in the new chunk: the chunk's own pass sees it
		}
		if n := r.match(data, i); n > 0 && (seam == 0 || i+n > seam) {
			s.record(r, kw, data[i:i+n], lines+bytes.Count(data[:i], newline)+1)
			return true
		}
		off = i + 1
	}
}

// record keeps r's finding. The message shows the keyword (or a key block's BEGIN line)
// and the length, never the secret: refusals are logged and audited.
func (s *scanner) record(r *secretRule, kw string, m []byte, line int) {
	if s.seenRule == nil {
		s.seenRule = map[string]bool{}
	}
	s.seenRule[r.id] = true
	show := len(kw)
	if r.id == "scan.private_key" {
		show = bytes.IndexByte(m, '\n')
		if show < 0 || show > 80 {
			show = min(len(m), 40)
		}
	}
	s.found = append(s.found, finding{rule: r, line: line, hint: fmt.Sprintf("%q…, %d characters", m[:show], len(m))})
}

// reportFindings turns a file's findings into problems.
func (a *archive) reportFindings(name string, found []finding) {
	for _, f := range found {
		a.errorf(f.rule.id, name, "line %d holds %s (%s); a package is public once published, so remove it, revoke it at its issuer (it must be treated as leaked), and publish again. A false positive (a test fixture, a documented example) is allowed by the plugins.yaml entry's scan_allow: [{path: %q, rule: %s}]", f.line, f.rule.what, f.hint, name, f.rule.id)
	}
}
