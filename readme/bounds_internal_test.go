package readme

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// linesSeen records the most lines the definition parser was handed at once.
type linesSeen struct{ max int }

func (l *linesSeen) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	l.max = max(l.max, node.Lines().Len())
	parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
}

func TestRefChunksHandsAtMostMaxRefChunkLines(t *testing.T) {
	src := []byte(strings.Repeat("[a]: https://e.example\n", 200) + "text\n")
	seen := &linesSeen{}
	p := parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(prioritized(refChunks{seen})))
	doc := p.Parse(text.NewReader(src))
	if seen.max > maxRefChunk {
		t.Errorf("the definition parser got %d lines at once, want at most %d", seen.max, maxRefChunk)
	}
	if doc.ChildCount() == 0 || doc.LastChild().Kind() != ast.KindParagraph {
		t.Error("the text after the definitions is not a paragraph")
	}
}

func TestNearBottomKeepsTheLastDelimiterClose(t *testing.T) {
	pc := parser.NewContext()
	para := ast.NewParagraph()
	d := parser.NewDelimiter(true, false, 1, '*', inert{})
	para.AppendChild(para, d)
	pc.PushDelimiter(d)
	for range 2 * maxBottomDistance {
		para.AppendChild(para, ast.NewText())
	}
	nearBottom(para, pc, 0)
	if pc.LastDelimiter() == d || pc.LastDelimiter() != para.LastChild() {
		t.Error("a link opened far from the last delimiter would walk every node back to it")
	}
}

func prioritized(v any) util.PrioritizedValue { return util.Prioritized(v, 100) }
