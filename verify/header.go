package verify

import (
	"bytes"
	"io"
)

const blockSize = 512

// headerTrace sees every byte archive/tar reads and follows the block structure beside
// it, so that the checks can see what tar.Reader merges away: the meta headers (PAX 'x'
// and 'g', GNU long names 'L' and 'K') before an entry, and the raw header block of the
// entry itself. Extractors disagree on how several meta headers combine (archive/tar keeps
// the last PAX header, Python's tarfile applies the first over the last) and on which
// header fields belong to the name, so the checks refuse those shapes instead of picking
// one reading.
//
// The trace needs no size of its own for entry data: after each Next, the archive tells it
// how many data bytes tar.Reader will treat as the entry's (dataFollows), which is exactly
// what tar.Reader skips before the next header.
type headerTrace struct {
	r     io.Reader
	skip  int64 // bytes of data and padding before the next header block
	blk   [blockSize]byte
	fill  int // bytes of blk filled
	metas []byte
	main  [blockSize]byte
	// seenMain is set once the entry's own header block has been read; bytes read after it
	// during Next (a sparse map) are counted in pastMain.
	seenMain bool
	pastMain int64
	badSize  bool // a meta header's size field could not be read
	stopped  bool // the trace lost the block structure (after a sparse entry)
}

func (t *headerTrace) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.observe(p[:n])
	return n, err
}

func (t *headerTrace) observe(b []byte) {
	for len(b) > 0 && !t.stopped {
		switch {
		case t.seenMain:
			t.pastMain += int64(len(b))
			return
		case t.skip > 0:
			k := min(t.skip, int64(len(b)))
			t.skip -= k
			b = b[k:]
		default:
			k := copy(t.blk[t.fill:], b)
			t.fill += k
			b = b[k:]
			if t.fill == blockSize {
				t.fill = 0
				t.block()
			}
		}
	}
}

// block classifies one complete header block.
func (t *headerTrace) block() {
	if t.blk == [blockSize]byte{} {
		return // end-of-archive marker
	}
	switch typ := t.blk[156]; typ {
	case 'x', 'g', 'L', 'K':
		t.metas = append(t.metas, typ)
		size, ok := parseNumeric(t.blk[124:136])
		if !ok || size < 0 {
			t.badSize = true
			return
		}
		t.skip = padded(size)
	default:
		t.main, t.seenMain = t.blk, true
	}
}

// dataFollows is called after Next returned an entry whose data, as tar.Reader reads it,
// is size bytes; the trace resumes at the next header.
func (t *headerTrace) dataFollows(size int64) {
	t.skip = max(0, padded(size)-t.pastMain)
	t.metas, t.seenMain, t.pastMain, t.badSize = t.metas[:0], false, 0, false
}

// stop ends tracing: the entry just read has data of a size the trace cannot know.
func (t *headerTrace) stop() { t.stopped = true }

func padded(n int64) int64 { return (n + blockSize - 1) / blockSize * blockSize }

// parseNumeric reads a tar numeric field: octal digits (space or NUL padded) or the
// base-256 form GNU tar writes for large values.
func parseNumeric(f []byte) (int64, bool) {
	if len(f) > 0 && f[0]&0x80 != 0 {
		if f[0] != 0x80 {
			return 0, false // negative or out of range
		}
		var n int64
		for _, c := range f[1:] {
			if n>>55 != 0 {
				return 0, false
			}
			n = n<<8 | int64(c)
		}
		return n, true
	}
	f = bytes.Trim(f, " \x00")
	if len(f) == 0 {
		return 0, true
	}
	var n int64
	for _, c := range f {
		if c < '0' || c > '7' || n>>60 != 0 {
			return 0, false
		}
		n = n<<3 | int64(c-'0')
	}
	return n, true
}

// headerProblem says what is ambiguous about the header chain of the entry just read, or
// "" when extractors all read it the same way.
func (t *headerTrace) headerProblem() (rule, why string) {
	var x, gnu int
	for _, m := range t.metas {
		switch m {
		case 'x':
			x++
		case 'L', 'K':
			gnu++
		}
	}
	switch {
	case t.badSize:
		return "archive.header.extended", "an extended header before the entry has a size field that cannot be read"
	case x > 1 || gnu > 1 || x > 0 && gnu > 0:
		return "archive.header.extended", "the entry has several extended headers (PAX 'x', GNU 'L'/'K') before it, and extractors disagree on which one names it (archive/tar keeps the last PAX header and Python's tarfile the first; GNU tar prefers a PAX path to a GNU long name, bsdtar and Python the reverse); rebuild with the pack tool or `tar --format=posix`, which write one PAX header per entry"
	case t.stopped || !t.seenMain:
		return "", ""
	}
	return mainHeaderProblem(t.main[:])
}

var (
	magicPOSIX = []byte("ustar\x0000")
	starTrail  = []byte("tar\x00")
)

// mainHeaderProblem checks the fields of an entry's own header that extractors read
// differently. Python's tarfile prepends the 155-byte prefix field (offset 345) to the
// name in every format; archive/tar and GNU tar use it only in POSIX ustar headers, and
// archive/tar reads only 131 bytes of it when a star trailer ("tar\0" at 508) is present.
func mainHeaderProblem(blk []byte) (rule, why string) {
	prefix := blk[345:500]
	posix := bytes.Equal(blk[257:265], magicPOSIX)
	switch {
	case !posix && prefix[0] != 0:
		return "archive.header.prefix", "the header is not POSIX ustar but has bytes in the ustar prefix field, which some extractors (Python's tarfile) read as part of the name and others ignore; rebuild with the pack tool or `tar --format=posix`"
	case posix && bytes.Equal(blk[508:512], starTrail) && prefix[0] != 0 && bytes.IndexByte(prefix[:131], 0) < 0:
		return "archive.header.prefix", "the header's prefix field runs into the star tar time fields, which some extractors read as part of the name; rebuild with the pack tool or `tar --format=posix`"
	}
	return "", ""
}
