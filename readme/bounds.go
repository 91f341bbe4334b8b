package readme

import (
	"slices"
	"sort"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Bounds that keep goldmark linear. Each names the super-linear path it closes; inputs
// beyond a bound still render, as literal text, so a real README never notices them.
const (
	// maxNesting bounds the containers (block quotes, lists and list items) a block may
	// sit in. goldmark's reader recomputes the line offset from the line head for every
	// container it opens, so ">" or "- " repeated n times on one line costs n².
	maxNesting = 32
	// maxDelimiters bounds the emphasis and strikethrough delimiters pending in one
	// block. Every closer searches every earlier delimiter for an opener (goldmark keeps
	// no "openers bottom"), so "*a_" or "~a_" repeated costs n² without it.
	maxDelimiters = 128
	// maxDelimiterRun bounds one run of "*", "_" or "~" (and so the depth of the
	// emphasis it can nest).
	maxDelimiterRun = 32
	// maxCodeSpanRun bounds the backticks opening a code span. An opener without a
	// closer of its length scans the rest of the block, once per distinct length.
	maxCodeSpanRun = 32
	// maxLinkTail bounds how far past "](" or "][" the link parser may look for the
	// destination, title and ")" (bytes). Without it "[a](" repeated scans to the end of
	// the line at every "]".
	maxLinkTail = 2 << 10
	// maxLinkFailures is how many "](" or "][" in one block may fail to make a link
	// before later ones are not looked past (they stay text): each failure may have
	// scanned up to maxLinkTail bytes.
	maxLinkFailures = 64
	// maxOpenLabels bounds the "[" open at once in a block: each "]" walks every node
	// after its "[", so "[" n times then "]" n times costs n² without it.
	maxOpenLabels = 32
	// maxBottomDistance bounds how many inline nodes a link's close walks back to reach
	// the last delimiter before the link ("*" then "[*](x)" repeated costs n² without it).
	maxBottomDistance = 32
	// maxRefChunk is the number of lines handed to the link reference definition parser at
	// once: its reader finds a line by walking back from the paragraph's last line, so a
	// paragraph of n definitions costs n² without it.
	maxRefChunk = 64
)

func newMarkdown() goldmark.Markdown {
	p := parser.NewParser(
		parser.WithBlockParsers(boundBlocks(parser.DefaultBlockParsers())...),
		parser.WithInlineParsers(boundInlines(append(parser.DefaultInlineParsers(),
			util.Prioritized(extension.NewStrikethroughParser(), 500),
			util.Prioritized(extension.NewLinkifyParser(), 999),
			util.Prioritized(extension.NewTaskCheckBoxParser(), 0),
		))...),
		parser.WithParagraphTransformers(
			util.Prioritized(refChunks{parser.LinkReferenceParagraphTransformer}, 100),
			util.Prioritized(tableBound{extension.NewTableParagraphTransformer()}, 200),
		),
		parser.WithASTTransformers(
			util.Prioritized(extension.NewTableASTTransformer(), 0),
			util.Prioritized(headingShifter{}, 100),
		),
	)
	return goldmark.New(
		goldmark.WithParser(p),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(
				util.Prioritized(extension.NewTableHTMLRenderer(), 500),
				util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500),
				util.Prioritized(extension.NewTaskCheckBoxHTMLRenderer(), 500),
			),
			// Raw HTML passes through goldmark and is cleaned by bluemonday.
			html.WithUnsafe(),
		),
	)
}

func boundBlocks(in []util.PrioritizedValue) []util.PrioritizedValue {
	for i, v := range in {
		switch v.Value {
		case parser.NewBlockquoteParser(), parser.NewListParser():
			in[i].Value = nestingBound{v.Value.(parser.BlockParser)}
		}
	}
	return in
}

func boundInlines(in []util.PrioritizedValue) []util.PrioritizedValue {
	for i, v := range in {
		ip := v.Value.(parser.InlineParser)
		switch trig := string(ip.Trigger()); {
		case ip == parser.NewLinkParser():
			in[i].Value = linkBound{ip}
		case ip == parser.NewCodeSpanParser():
			in[i].Value = runBound{InlineParser: ip, max: maxCodeSpanRun}
		case ip == parser.NewEmphasisParser(), trig == "~":
			in[i].Value = runBound{InlineParser: ip, max: maxDelimiterRun, delimiters: true}
		}
	}
	return in
}

// nestingBound refuses to open a container deeper than maxNesting; the line is then a
// paragraph.
type nestingBound struct{ parser.BlockParser }

func (b nestingBound) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	depth := 0
	for n := parent; n != nil; n = n.Parent() {
		if depth++; depth > maxNesting {
			return nil, parser.NoChildren
		}
	}
	return b.BlockParser.Open(parent, reader, pc)
}

// runBound turns a run of its trigger longer than max, or (delimiters) any delimiter past
// maxDelimiters pending in the block, into literal text.
type runBound struct {
	parser.InlineParser
	max        int
	delimiters bool
}

func (b runBound) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	run := 0
	for run < len(line) && line[run] == line[0] {
		run++
	}
	if run > b.max || (b.delimiters && pendingDelimiters(pc) >= maxDelimiters) {
		block.Advance(run)
		return ast.NewTextSegment(seg.WithStop(seg.Start + run))
	}
	return b.InlineParser.Parse(parent, block, pc)
}

// pendingDelimiters counts the block's pending delimiters, up to maxDelimiters.
func pendingDelimiters(pc parser.Context) int {
	n := 0
	for d := pc.FirstDelimiter(); d != nil && n < maxDelimiters; d = d.NextDelimiter {
		n++
	}
	return n
}

// linkBound gives the link parser a reader that ends maxLinkTail bytes after a "]" (and
// right after "](" once the block has had maxLinkFailures links that did not parse) and
// finds segments by binary search, and keeps the delimiter a link's close walks back to
// near the link.
type linkBound struct{ parser.InlineParser }

var linkStateKey = parser.NewContextKey()

// linkState is what linkBound knows of one block: how many "](" and "][" did not make a
// link, and how many "[" are open.
type linkState struct {
	block ast.Node
	fails int
	open  int
}

func stateOf(parent ast.Node, pc parser.Context) *linkState {
	st, _ := pc.Get(linkStateKey).(*linkState)
	if st == nil || st.block != parent {
		st = &linkState{block: parent}
		pc.Set(linkStateKey, st)
	}
	return st
}

func (b linkBound) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	st := stateOf(parent, pc)
	if line[0] != ']' {
		return b.open(parent, block, pc, st, line, seg)
	}
	tail := len(line) > 1 && (line[1] == '(' || line[1] == '[')
	stop := seg.Start + maxLinkTail
	if tail && st.fails >= maxLinkFailures {
		stop = seg.Start + 2
	}
	st.open = max(st.open-1, 0)
	n := b.InlineParser.Parse(parent, &boundedReader{Reader: block, stop: stop, lines: parent.Lines()}, pc)
	if tail && n == nil {
		st.fails++
	}
	return n
}

// open handles "[" and "![": past maxOpenLabels open labels they are text, since every
// "]" walks the nodes after its "[".
func (b linkBound) open(parent ast.Node, block text.Reader, pc parser.Context, st *linkState, line []byte, seg text.Segment) ast.Node {
	width := 1
	if line[0] == '!' {
		if len(line) < 2 || line[1] != '[' {
			return nil
		}
		width = 2
	}
	if st.open >= maxOpenLabels {
		block.Advance(width)
		return ast.NewTextSegment(seg.WithStop(seg.Start + width))
	}
	nearBottom(parent, pc, seg.Start)
	n := b.InlineParser.Parse(parent, block, pc)
	if n != nil {
		st.open++
	}
	return n
}

// CloseBlock lets the link parser turn unclosed "[" into text.
func (b linkBound) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := b.InlineParser.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
	pc.Set(linkStateKey, nil)
}

// nearBottom pushes an inert delimiter before a link's "[" when the last pending
// delimiter is more than maxBottomDistance nodes back. The link parser records the last
// delimiter as the "bottom" its close processes down to, walking every node in between;
// with the inert one there, the walk is short, and no emphasis can match it, so the
// result is the same.
func nearBottom(parent ast.Node, pc parser.Context, pos int) {
	last := pc.LastDelimiter()
	if last == nil {
		return
	}
	n := parent.LastChild()
	for i := 0; i < maxBottomDistance && n != nil; i++ {
		if n == last {
			return
		}
		n = n.PreviousSibling()
	}
	d := parser.NewDelimiter(false, false, 0, 0, inert{})
	d.Segment = text.NewSegment(pos, pos)
	parent.AppendChild(parent, d)
	pc.PushDelimiter(d)
}

// inert is the processor of a delimiter that never opens or closes anything.
type inert struct{}

func (inert) IsDelimiter(byte) bool                     { return false }
func (inert) CanOpenCloser(_, _ *parser.Delimiter) bool { return false }
func (inert) OnMatch(int) ast.Node                      { return ast.NewText() }

// boundedReader is a block reader whose lines end at stop (an absolute source offset).
type boundedReader struct {
	text.Reader
	stop  int
	lines *text.Segments
}

func (r *boundedReader) PeekLine() ([]byte, text.Segment) {
	line, seg := r.Reader.PeekLine()
	if line == nil || seg.Stop <= r.stop {
		return line, seg
	}
	if seg.Start >= r.stop {
		return nil, seg
	}
	keep := len(line) - (seg.Stop - r.stop)
	return line[:keep], seg.WithStop(r.stop)
}

// Value returns a segment's bytes like goldmark's block reader, finding the first line by
// binary search instead of walking back from the last.
func (r *boundedReader) Value(seg text.Segment) []byte {
	n := r.lines.Len()
	if n == 0 {
		return r.Reader.Value(seg)
	}
	line := sort.Search(n, func(i int) bool { return r.lines.At(i).Start > seg.Start }) - 1
	line = max(line, 0)
	src := r.Source()
	ret := make([]byte, 0, seg.Stop-seg.Start+1)
	i := seg.Start
	for ; line < n; line++ {
		s := r.lines.At(line)
		if i < 0 {
			i = s.Start
		}
		ret = s.ConcatPadding(ret)
		for ; i < seg.Stop && i < s.Stop; i++ {
			ret = append(ret, src[i])
		}
		i = -1
		if s.Stop > seg.Stop {
			break
		}
	}
	return ret
}

// FindClosure is goldmark's findClosureReader over the bounded lines.
func (r *boundedReader) FindClosure(opener, closer byte, opts text.FindClosureOptions) (*text.Segments, bool) {
	opened, codeSpan := 1, 0
	orgline, orgpos := r.Position()
	var ret *text.Segments
	closed := false
loop:
	for {
		bs, seg := r.PeekLine()
		if bs == nil {
			break
		}
		for i := 0; i < len(bs); i++ {
			c := bs[i]
			switch {
			case opts.CodeSpan && c == '`':
				run := 0
				for ; i < len(bs) && bs[i] == '`'; i++ {
					run++
				}
				i--
				if codeSpan == 0 {
					codeSpan = run
				} else if run == codeSpan {
					codeSpan = 0
				}
			case codeSpan != 0:
			case c == '\\' && i < len(bs)-1 && util.IsPunct(bs[i+1]):
				i++
			case c == closer:
				if opened--; opened == 0 {
					if ret == nil {
						ret = text.NewSegments()
					}
					ret.Append(seg.WithStop(seg.Start + i - seg.Padding))
					r.Advance(i + 1)
					closed = true
					break loop
				}
			case c == opener:
				if !opts.Nesting {
					break loop
				}
				opened++
			}
		}
		if !opts.Newline || seg.Stop >= r.stop {
			break
		}
		r.AdvanceLine()
		if ret == nil {
			ret = text.NewSegments()
		}
		ret.Append(seg)
	}
	if !opts.Advance {
		r.SetPosition(orgline, orgpos)
	}
	if closed {
		return ret, true
	}
	return nil, false
}

// tableBound leaves a paragraph a paragraph when, as a table, it would have more cells
// than bytes: rows are padded to the header's width, so a wide header over short rows
// would multiply the output.
type tableBound struct{ parser.ParagraphTransformer }

func (t tableBound) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines, src := node.Lines(), reader.Source()
	size, cols := 0, 0
	for i := range lines.Len() {
		seg := lines.At(i)
		line := seg.Value(src)
		size += len(line)
		if c := delimiterRowCells(line); c > cols {
			cols = c
		}
	}
	if cols > 0 && cols*lines.Len() > size {
		return
	}
	t.ParagraphTransformer.Transform(node, reader, pc)
}

// delimiterRowCells counts the cells of a line that could be a table's delimiter row
// ("|---|:-:|"), or 0.
func delimiterRowCells(line []byte) int {
	pipes, dash := 0, false
	for _, c := range line {
		switch c {
		case '|':
			pipes++
		case '-':
			dash = true
		case ':', ' ', '\t', '\n', '\r':
		default:
			return 0
		}
	}
	if !dash {
		return 0
	}
	return pipes + 1
}

// refChunks hands the link reference definition parser a paragraph's lines maxRefChunk at
// a time, as long as each chunk is all definitions. A definition whose title would
// continue past a chunk's end is taken without it (the next line stays text).
type refChunks struct{ parser.ParagraphTransformer }

func (t refChunks) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if node.Lines().Len() <= maxRefChunk {
		t.ParagraphTransformer.Transform(node, reader, pc)
		return
	}
	parent := node.Parent()
	rest := slices.Clone(node.Lines().Sliced(0, node.Lines().Len()))
	for len(rest) > 0 {
		n := min(len(rest), maxRefChunk)
		left := t.chunk(node, rest[:n], reader, pc)
		if len(left) > 0 || n == len(rest) {
			rest = append(left, rest[n:]...)
			break
		}
		rest = rest[n:]
	}
	if len(rest) == 0 {
		parent.RemoveChild(parent, node)
		return
	}
	kept := text.NewSegments()
	kept.AppendAll(rest)
	node.SetLines(kept)
}

// chunk runs the definition parser on lines as a paragraph of their own before node and
// returns the lines it left (those after the last definition).
func (t refChunks) chunk(node *ast.Paragraph, lines []text.Segment, reader text.Reader, pc parser.Context) []text.Segment {
	parent := node.Parent()
	p := ast.NewParagraph()
	p.SetBlankPreviousLines(node.HasBlankPreviousLines())
	p.Lines().AppendAll(lines)
	parent.InsertBefore(parent, node, p)
	t.ParagraphTransformer.Transform(p, reader, pc)
	if p.Parent() == nil {
		return nil
	}
	parent.RemoveChild(parent, p)
	return slices.Clone(p.Lines().Sliced(0, p.Lines().Len()))
}
