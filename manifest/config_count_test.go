package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// schemaManifest is a valid manifest whose config_schema has n properties; each property is
// a mapping when mapping is true, else a bare string (which the validator warns about).
func schemaManifest(n int, mapping bool) []byte {
	var b strings.Builder
	b.WriteString("id: acme\napi_version: 2\nversion: \"1.0.0\"\ndisplay_name: Acme\ndescription: d\nauthor: a\n" +
		"runtime:\n  type: binary\n  executables:\n    linux-amd64: server/p\nconfig_schema:\n  type: object\n  properties:\n")
	for i := range n {
		if mapping {
			fmt.Fprintf(&b, "    p%d: {type: string}\n", i)
		} else {
			fmt.Fprintf(&b, "    p%d: x\n", i)
		}
	}
	return []byte(b.String())
}

func TestConfigSchemaPropertyCount(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		mapping bool
		refused bool
	}{
		{"at the limit", manifest.MaxConfigProperties, true, false},
		{"one over", manifest.MaxConfigProperties + 1, true, true},
		{"80,000 bare properties: one problem, not one each", 80_000, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := manifest.Check(schemaManifest(tc.n, tc.mapping), manifest.Files{"server/p": {Size: 1}})
			var count []problem.Problem
			for _, p := range probs {
				if p.Rule == "manifest.field.count" {
					count = append(count, p)
				}
			}
			if !tc.refused {
				if len(count) != 0 {
					t.Fatalf("refused at %d properties: %v", tc.n, count)
				}
				return
			}
			if len(count) != 1 || count[0].Path != "config_schema.properties" || count[0].Severity != problem.Error ||
				!strings.Contains(count[0].Message, fmt.Sprint(tc.n)) || !strings.Contains(count[0].Message, fmt.Sprint(manifest.MaxConfigProperties)) {
				t.Fatalf("problems %v, want one manifest.field.count error at config_schema.properties naming %d and the limit", count, tc.n)
			}
			if len(probs) > 3 {
				t.Errorf("%d problems for one oversized schema, want at most 3", len(probs))
			}
		})
	}
}
