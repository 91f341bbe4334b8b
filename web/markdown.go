package web

import (
	"bytes"
	"fmt"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// readmeHeadingShift moves README headings below the page's own: the page
// has its h1 and an h2 "README" section, so a README's "# Title" becomes h3.
const readmeHeadingShift = 2

// HTML is markup that is safe to write into a page as it is. Only this
// package can make a non-empty one (RenderMarkdown), so a caller cannot pass
// unsanitized markup to a page by mistake.
type HTML struct {
	s string
}

// String returns the markup.
func (h HTML) String() string { return h.s }

// IsZero reports whether there is no markup.
func (h HTML) IsZero() bool { return h.s == "" }

// RenderMarkdown renders a README (GitHub-flavoured Markdown) into sanitized
// HTML. Raw HTML in the source is kept only as far as the sanitizer allows:
// no script, style, iframe or form; no event handlers; only http, https and
// mailto URLs. Relative links and images are dropped, because they point
// into the author's repository, not at this registry.
func RenderMarkdown(src []byte) (HTML, error) {
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(
			util.Prioritized(headingShifter{}, 100),
		)),
		// Raw HTML passes through goldmark and is cleaned by bluemonday below.
		goldmark.WithRendererOptions(html.WithUnsafe()),
	)
	var buf bytes.Buffer
	if err := md.Convert(src, &buf); err != nil {
		return HTML{}, fmt.Errorf("web: render markdown: %w", err)
	}
	return HTML{s: readmePolicy().Sanitize(buf.String())}, nil
}

// headingShifter lowers every Markdown heading by readmeHeadingShift levels.
type headingShifter struct{}

// Transform implements parser.ASTTransformer.
func (headingShifter) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			h.Level = min(h.Level+readmeHeadingShift, 6)
		}
		return ast.WalkContinue, nil
	})
}

// readmePolicy is bluemonday's user-generated-content policy without
// relative URLs, with nofollow and noopener on every link.
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
