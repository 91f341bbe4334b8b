// Package readme renders a package's README.md into sanitized HTML. The registry renders
// once, at publish, and stores the result with the release, so a page view never does work
// proportional to what an author uploaded.
//
// The renderer is goldmark with GitHub-flavoured Markdown, whose time on hostile input is
// made linear by the bounds in bounds.go, followed by bluemonday. Input longer than
// MaxMarkdown is cut at the last line break before the limit and the page says so.
package readme

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// MaxMarkdown is the most Markdown rendered: a longer README is cut at the last line break
// before this many bytes (at a UTF-8 boundary when one line is longer) and shown with a
// note saying so. Publishing is not refused for it: a README is documentation, not part of
// what a host installs.
const MaxMarkdown = 512 << 10

// headingShift moves README headings below the page's own: the page has its h1 and an h2
// "README" section, so a README's "# Title" becomes h3.
const headingShift = 2

// TruncatedClass marks the note appended to a cut README.
const TruncatedClass = "readme-truncated"

// Render renders a README (GitHub-flavoured Markdown) into sanitized HTML. Raw HTML in the
// source is kept only as far as the sanitizer allows: no script, style, iframe or form; no
// event handlers; only http, https and mailto URLs. Relative links and images are dropped,
// because they point into the author's repository, not at this registry. truncated reports
// that the input was longer than MaxMarkdown and only its start was rendered.
func Render(markdown []byte) (html []byte, truncated bool, err error) {
	src, truncated := clip(markdown, MaxMarkdown)
	var buf bytes.Buffer
	if err := converter().Convert(src, &buf); err != nil {
		return nil, false, fmt.Errorf("readme: render: %w", err)
	}
	out := policy().SanitizeBytes(buf.Bytes())
	if truncated {
		out = fmt.Appendf(out, `<p class="%s"><em>This README is %d bytes long; the registry shows its first %d bytes of Markdown.</em></p>`+"\n",
			TruncatedClass, len(markdown), len(src))
	}
	return out, truncated, nil
}

// clip returns at most limit bytes of src, ending after a line break when there is one in
// range, else at a UTF-8 boundary.
func clip(src []byte, limit int) ([]byte, bool) {
	if len(src) <= limit {
		return src, false
	}
	head := src[:limit]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1], true
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(src[cut]) {
		cut--
	}
	return src[:cut], true
}

// converter is built once: goldmark's Markdown and bluemonday's Policy are safe for
// concurrent use once configured.
var converter = sync.OnceValue(func() goldmark.Markdown { return newMarkdown() })

var policy = sync.OnceValue(readmePolicy)

// readmePolicy is bluemonday's user-generated-content policy without relative URLs, with
// nofollow and noreferrer on every link.
func readmePolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowRelativeURLs(false)
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(false)
	// GFM task lists render checkboxes; keep them inert.
	p.AllowAttrs("type").Matching(bluemonday.SpaceSeparatedTokens).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	return p
}

// headingShifter lowers every Markdown heading by headingShift levels.
type headingShifter struct{}

// Transform implements parser.ASTTransformer.
func (headingShifter) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			h.Level = min(h.Level+headingShift, 6)
		}
		return ast.WalkContinue, nil
	})
}
