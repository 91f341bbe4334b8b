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
// fileSink.Write): no second read of the file. A file whose first 512 bytes hold a NUL
// byte is binary and not scanned. Each write is scanned behind the last maxMatch bytes of
// the one before (buf), so a match that straddles two writes is found whole: a keyword is
// tried only once its whole window (maxMatch bytes) and the byte before it are at hand, or
// at the end of the file.
type scanner struct {
	pending []byte // the first bytes, until the text-or-binary decision
	decided bool
	binary  bool
	buf     []byte // bytes carried over from the last write, then the current write
	carried int    // how many bytes of buf were carried over
	from    int    // first keyword position in buf not yet tried
	lines   int    // newlines before buf[0]
	found   []finding
	seen    map[string]bool // rule ids found
}

func newScanner() *scanner { return &scanner{} }

// reset readies s for the next file, keeping its buffers' memory: one scanner serves a
// whole archive. The previous file's findings must have been reported.
func (s *scanner) reset() *scanner {
	*s = scanner{pending: s.pending[:0], buf: s.buf[:0]}
	return s
}

// write takes the next bytes of the file.
func (s *scanner) write(p []byte) {
	switch {
	case s.binary:
	case s.decided:
		s.chunk(p, false)
	default:
		s.pending = append(s.pending, p...)
		if len(s.pending) >= headSize {
			s.decide()
		}
	}
}

// close ends the file and returns its findings.
func (s *scanner) close() []finding {
	if !s.decided {
		s.decide()
	}
	if !s.binary {
		s.chunk(nil, true)
	}
	return s.found
}

func (s *scanner) decide() {
	s.decided = true
	data := s.pending
	if bytes.IndexByte(data[:min(len(data), headSize)], 0) >= 0 {
		s.binary = true
		return
	}
	s.chunk(data, false)
}

// chunk scans the carried bytes and p. Keyword positions from s.from up to limit are
// tried now; the rest wait for more bytes (or the end of the file, when final).
func (s *scanner) chunk(p []byte, final bool) {
	s.buf = append(s.buf[:s.carried], p...)
	limit := len(s.buf)
	if !final {
		limit -= maxMatch
	}
	if limit > s.from {
		s.find(limit)
	} else {
		limit = s.from
	}
	// Carry the untried positions and the byte before them (a word-start check needs it).
	c := max(0, limit-1)
	s.lines += bytes.Count(s.buf[:c], newline)
	s.carried = copy(s.buf, s.buf[c:])
	s.from = limit - c
}

var newline = []byte{'\n'}

// find records the first match of each rule not yet found whose keyword starts in
// buf[from:limit].
func (s *scanner) find(limit int) {
	for i := range keywords {
		s.findKeyword(&keywords[i], limit)
	}
}

// findKeyword tries kw's rules not yet found at every occurrence of kw starting in
// buf[from:limit].
func (s *scanner) findKeyword(kw *keyword, limit int) {
	k := []byte(kw.text)
	for off := s.from; off < limit && s.wants(kw); {
		j := bytes.Index(s.buf[off:], k)
		if j < 0 || off+j >= limit {
			return
		}
		i := off + j
		for _, r := range kw.rules {
			if s.seen[r.id] {
				continue
			}
			if n := r.match(s.buf, i, kw.text); n > 0 {
				s.record(r, kw.text, s.buf[i:i+n], s.lines+bytes.Count(s.buf[:i], newline)+1)
			}
		}
		off = i + 1
	}
}

// wants reports whether a rule of kw is still to be found.
func (s *scanner) wants(kw *keyword) bool {
	for _, r := range kw.rules {
		if !s.seen[r.id] {
			return true
		}
	}
	return false
}

// record keeps r's finding. The message shows the keyword (or a key block's BEGIN line)
// and the length, never the secret: refusals are logged and audited.
func (s *scanner) record(r *secretRule, kw string, m []byte, line int) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[r.id] = true
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
