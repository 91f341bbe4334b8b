package readme_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/readme"
)

// pathological are Markdown inputs that cost goldmark's default configuration time
// quadratic in their length, each built to about n bytes.
var pathological = []struct {
	name string
	gen  func(n int) string
}{
	{"link-open", func(n int) string { return strings.Repeat("[a](", n/4) }},
	{"image-open", func(n int) string { return strings.Repeat("![a](", n/5) }},
	{"link-dest-angle", func(n int) string { return strings.Repeat("[a](<", n/5) }},
	{"link-title-paren", func(n int) string { return strings.Repeat("[a](b (", n/7) }},
	{"stars", func(n int) string { return strings.Repeat("*", n) }},
	{"emphasis-mix", func(n int) string { return strings.Repeat("*a_", n/3) }},
	{"strike-mix", func(n int) string { return strings.Repeat("~a_", n/3) }},
	{"emphasis-nest", func(n int) string { return strings.Repeat("*", n/2) + "a" + strings.Repeat("*", n/2) }},
	{"star-then-links", func(n int) string { return "*" + strings.Repeat("[*](x)", n/6) }},
	{"brackets", func(n int) string { return strings.Repeat("[", n) }},
	{"brackets-closed", func(n int) string { return strings.Repeat("[", n/2) + strings.Repeat("]", n/2) }},
	{"shortcut-refs-lines", func(n int) string { return strings.Repeat("[a]\n", n/4) }},
	{"quotes-one-line", func(n int) string { return strings.Repeat(">", n) + " a" }},
	{"quotes-lines", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(strings.Repeat(">", i%200) + " a\n")
		}
		return b.String()
	}},
	{"lists-one-line", func(n int) string { return strings.Repeat("- ", n/2) + "a" }},
	{"quote-list", func(n int) string { return strings.Repeat("> - ", n/4) + "a" }},
	{"ref-definitions", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n/2; i++ {
			fmt.Fprintf(&b, "[r%d]: /u%d\n", i, i)
		}
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "[r%d] ", i)
		}
		return b.String()
	}},
	{"ref-definition-titles", func(n int) string { return strings.Repeat("[a]: b \"\n", n/9) }},
	{"html-open-a", func(n int) string { return strings.Repeat("<a", n/2) }},
	{"html-attr-quote", func(n int) string { return strings.Repeat("<a x=\"", n/6) }},
	{"backticks-growing", func(n int) string {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString(strings.Repeat("`", i) + "a")
		}
		return b.String()
	}},
	{"table-wide-header", func(n int) string {
		return strings.Repeat("a|", 200) + "\n" + strings.Repeat("-|", 200) + "\n" + strings.Repeat("x\n", n/2)
	}},
}

// benchSizes stop below MaxMarkdown, so the largest input is rendered whole.
var benchSizes = []int{16 << 10, 64 << 10, 256 << 10, 500 << 10}

// BenchmarkRenderPathological renders each pathological input at four sizes; ns/op grows
// linearly (×4 per step, ×1.95 for the last) when every bound holds.
func BenchmarkRenderPathological(b *testing.B) {
	for _, p := range pathological {
		for _, n := range benchSizes {
			src := []byte(p.gen(n))
			b.Run(fmt.Sprintf("%s/%dKiB", p.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					if _, _, err := readme.Render(src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
