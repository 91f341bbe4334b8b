package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/manifest"
)

// wideConfigSchema is a manifest whose config_schema declares keys properties and lists a
// quarter as many undeclared names in required: the shape of the 85,000-key schema
// (201 s before the linear decoder), within the YAML budget up to 80,000 keys.
func wideConfigSchema(keys int) []byte {
	var b strings.Builder
	b.WriteString("id: acme\napi_version: 2\nversion: \"1.0.0\"\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/p\nconfig_schema:\n  type: object\n  properties:\n")
	for i := range keys {
		fmt.Fprintf(&b, "    k%d: {}\n", i)
	}
	b.WriteString("  required: [")
	for i := range keys / 4 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "r%d", i)
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// BenchmarkConfigSchemaKeys checks a config_schema of 10k, 40k and 80k keys: the cost per
// key must stay flat (linear growth).
func BenchmarkConfigSchemaKeys(b *testing.B) {
	for _, keys := range []int{10_000, 40_000, 80_000} {
		data := wideConfigSchema(keys)
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				m, probs := manifest.Check(data, manifest.Files{"server/p": {Size: 1}})
				if m == nil || len(probs) != keys/4 {
					b.Fatalf("want %d required warnings, got %d problems", keys/4, len(probs))
				}
			}
		})
	}
}

// toolSchemaManifest is a managed plugin with one agent tool whose input_schema has props
// properties, each with a pattern and a $ref into $defs: the JSON Schema compiler's work.
func toolSchemaManifest(props int) []byte {
	var b strings.Builder
	b.WriteString("id: acme\napi_version: 2\nversion: \"1.0.0\"\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/p\n" +
		"agent_tools:\n  - name: t\n    description: d\n    surfaces: [kanban-task]\n    input_schema:\n      type: object\n      $defs:\n        s: {type: string, pattern: '^[a-z]+(-[a-z0-9]+)*$'}\n      properties:\n")
	for i := range props {
		fmt.Fprintf(&b, "        p%d: {$ref: '#/$defs/s', pattern: '^p%d'}\n", i, i)
	}
	return []byte(b.String())
}

// BenchmarkToolSchemaCompile compiles agent tool schemas of growing size up to the 64 KiB
// limit (the last size is refused before compiling): the cost per property must stay flat.
func BenchmarkToolSchemaCompile(b *testing.B) {
	for _, props := range []int{250, 500, 1000, 4000} {
		data := toolSchemaManifest(props)
		b.Run(fmt.Sprintf("properties=%d", props), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				manifest.Check(data, manifest.Files{"server/p": {Size: 1}})
			}
		})
	}
}
