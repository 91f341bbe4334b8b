package index_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
)

// BenchmarkParseListSyntaxError measures a list whose last line breaks the YAML: yaml.v3
// fails, then goccy/go-yaml's parser reads the file again to find where. The cost should
// grow linearly with the file.
func BenchmarkParseListSyntaxError(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		var sb strings.Builder
		sb.WriteString("plugins:\n")
		for i := range n {
			fmt.Fprintf(&sb, "  - id: acme-p%d\n    repo: acme/p%d\n    categories: [tools]\n    owners: [acme]\n", i, i)
		}
		sb.WriteString("  - id: acme-last\n    repo: acme/last: broken\n")
		data := []byte(sb.String())
		b.Run(fmt.Sprintf("entries=%d/bytes=%d", n, len(data)), func(b *testing.B) {
			for b.Loop() {
				if _, probs := index.ParseList(data); !probs.Has("registry.yaml") {
					b.Fatal("no registry.yaml problem")
				}
			}
		})
	}
}
