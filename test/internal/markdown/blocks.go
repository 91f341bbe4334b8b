// Package markdown finds the fenced code blocks of the repository's Markdown documents, so
// that tests can run the commands and lint the workflows the documents show.
package markdown

import (
	"fmt"
	"os"
	"strings"
)

// Block is one fenced code block.
type Block struct {
	File string // the document, as given to Read
	Line int    // 1-based line of the opening fence
	Lang string // the info string's first word ("sh", "yaml", "text", or "")
	Text string // the lines between the fences, each ending in "\n"
}

// Where names the block for a test message: "docs/publishing.md:42 (yaml)".
func (b Block) Where() string { return fmt.Sprintf("%s:%d (%s)", b.File, b.Line, b.Lang) }

// Read returns the fenced blocks of the Markdown file at path.
func Read(path string) ([]Block, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("markdown: %w", err)
	}
	blocks, err := Parse(path, string(src))
	if err != nil {
		return nil, fmt.Errorf("markdown: %w", err)
	}
	return blocks, nil
}

// Parse returns the fenced blocks of src (``` fences only, which is all the documents use);
// an unclosed fence is an error, so a broken document cannot hide its last block.
func Parse(file, src string) ([]Block, error) {
	var out []Block
	var cur *Block
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), " ")
			cur = &Block{File: file, Line: i + 1, Lang: lang}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.Text += line + "\n"
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the code fence is never closed", file, cur.Line)
	}
	return out, nil
}
