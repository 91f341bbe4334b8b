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
	"html"
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

// MaxHTML is the most HTML Render returns and the registry stores for one README or
// CHANGELOG.md. Markdown is small and its HTML can be large: a reference definition with a
// 2,000-byte URL used 50,000 times is 2 KB of Markdown and 100 MB of HTML. A document whose
// HTML is longer is not stored; OversizeNotice stands in for it.
const MaxHTML = 1 << 20

// OversizeClass marks the notice stored instead of HTML longer than its limit.
const OversizeClass = "readme-oversize"

// Result is a rendering and what was left out of it.
type Result struct {
	HTML []byte
	// Truncated: the Markdown was longer than MaxMarkdown and only its start was rendered.
	Truncated bool
	// Oversize: the HTML was longer than the limit and was not kept; HTML is nil.
	Oversize bool
}

// Render renders a README (GitHub-flavoured Markdown) into sanitized HTML. Raw HTML in the
// source is kept only as far as the sanitizer allows: no script, style, iframe or form; no
// event handlers; only http, https and mailto URLs. Relative links and images are dropped,
// because they point into the author's repository, not at this registry. truncated reports
// that the input was longer than MaxMarkdown and only its start was rendered. HTML longer
// than MaxHTML is replaced by OversizeNotice("README.md", ...); RenderLimited reports it.
func Render(markdown []byte) (html []byte, truncated bool, err error) {
	r, err := RenderLimited(markdown, MaxHTML)
	if err != nil {
		return nil, false, err
	}
	if r.Oversize {
		return OversizeNotice("README.md", len(markdown), MaxHTML), r.Truncated, nil
	}
	return r.HTML, r.Truncated, nil
}

// RenderLimited renders like Render, but keeps no more than maxHTML bytes of HTML, before
// or after sanitizing: when the rendering is longer, Result.Oversize is set and Result.HTML
// is nil. Memory stays within a small multiple of maxHTML whatever the input.
func RenderLimited(markdown []byte, maxHTML int) (Result, error) {
	src, truncated := clip(markdown, MaxMarkdown)
	w := &capWriter{limit: maxHTML}
	if err := converter().Convert(src, w); err != nil {
		return Result{}, fmt.Errorf("readme: render: %w", err)
	}
	if w.over {
		return Result{Truncated: truncated, Oversize: true}, nil
	}
	out := policy().SanitizeBytes(w.buf)
	if truncated {
		out = fmt.Appendf(out, `<p class="%s"><em>This README is %d bytes long; the registry shows its first %d bytes of Markdown.</em></p>`+"\n",
			TruncatedClass, len(markdown), len(src))
	}
	if len(out) > maxHTML {
		return Result{Truncated: truncated, Oversize: true}, nil
	}
	return Result{HTML: out, Truncated: truncated}, nil
}

// OversizeNotice is the HTML stored instead of a document (file, size bytes of Markdown)
// whose HTML is longer than limit bytes. It holds nothing the author wrote.
func OversizeNotice(file string, size, limit int) []byte {
	return fmt.Appendf(nil, `<p class="%s"><em>This %s (%d bytes of Markdown) renders to more than %d KiB of HTML, the most the registry shows; read it in the package's repository.</em></p>`+"\n",
		OversizeClass, html.EscapeString(file), size, limit>>10)
}

// capWriter keeps what is written up to limit bytes and notes, without failing, that more
// was written: the renderer ignores most write errors, so it is told nothing.
type capWriter struct {
	buf   []byte
	limit int
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.over || len(w.buf)+len(p) > w.limit {
		w.over = true
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
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
