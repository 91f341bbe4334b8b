package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/manifest"
)

// mergeBomb is a manifest whose top level merges a mapping of keys entries merges times:
// a few bytes per merge that stand for keys fields each.
func mergeBomb(keys, merges int) []byte {
	var b strings.Builder
	b.WriteString("id: acme\napi_version: 2\nversion: \"1.0.0\"\nbase: &b {")
	for i := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "k%d: %d", i, i)
	}
	b.WriteString("}\n<<: [*b")
	b.WriteString(strings.Repeat(", *b", merges-1))
	b.WriteString("]\n")
	return []byte(b.String())
}

func TestBudgetRefusesExpansionBeforeDecoding(t *testing.T) {
	tests := []struct {
		name string
		yaml []byte
		rule string
		msg  string // what the message must say
	}{
		{"1000 keys merged 10^3 times", mergeBomb(1000, 1000), "manifest.yaml.budget", "found 2003012; "},
		{"1000 keys merged 10^4 times", mergeBomb(1000, 10_000), "manifest.yaml.budget", "at most 200000 YAML nodes after expanding aliases and merge keys, found 20012012"},
		{"aliases of aliases", []byte("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e]\n"), "manifest.yaml.budget", "YAML nodes"},
		{"alias cycle", []byte("a: &a [*a]\n"), "manifest.yaml.budget", "an alias inside the anchor it names"},
		{"long value aliased", []byte("a: &a " + strings.Repeat("x", 1<<20) + "\nb: [*a, *a, *a]\n"), "manifest.yaml.budget", "at most 2097152 bytes of YAML values"},
		{"deep nesting", []byte("a: " + strings.Repeat("[", 65) + strings.Repeat("]", 65) + "\n"), "manifest.yaml.depth", "at most 64 levels"},
		{"second document", []byte("id: a\n---\nid: b\n"), "manifest.yaml.documents", "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := manifest.Parse(tt.yaml)
			if m != nil {
				t.Errorf("manifest decoded, want it refused before decoding")
			}
			if diff := cmp.Diff([]string{tt.rule}, probs.Rules()); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if !strings.Contains(probs[0].Message, tt.msg) {
				t.Errorf("message %q does not say %q", probs[0].Message, tt.msg)
			}
			if n := len(probs[0].Message); n > 400 {
				t.Errorf("message is %d bytes, want a short one", n)
			}
		})
	}
}

func TestBudgetAcceptsAtTheLimit(t *testing.T) {
	// 64 levels of lists is the deepest nesting allowed; one key, one list per level.
	deep := []byte("id: a\nx: " + strings.Repeat("[", manifest.MaxDepth-1) + strings.Repeat("]", manifest.MaxDepth-1) + "\n")
	if m, probs := manifest.Parse(deep); m == nil {
		t.Errorf("depth %d refused: %v", manifest.MaxDepth, probs)
	}
	// A merge within budget decodes like yaml.v3 merges.
	if m, probs := manifest.Parse(mergeBomb(100, 10)); m == nil || !probs.Has("manifest.unknown_field") {
		t.Errorf("small merge: manifest %v, problems %v", m, probs)
	}
}

func TestExpandedCountsAliasesAsTheirAnchors(t *testing.T) {
	tests := []struct {
		yaml  string
		nodes int64
		depth int
	}{
		{"a", 2, 0},                                    // document, scalar
		{"a: b", 4, 1},                                 // document, mapping, key, value
		{"a: &x [1, 2]\nb: *x", 10, 2},                 // the alias costs the list's 3 nodes
		{"a: &x {k: v}\nb: {<<: *x}", 12, 3},           // the merge costs the mapping's 3 nodes
		{"a: &x {k: v}\nb: {<<: [*x, *x, *x]}", 19, 4}, // and once per merge
	}
	for _, tt := range tests {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tt.yaml), &n); err != nil {
			t.Fatal(err)
		}
		c := manifest.Expanded(&n)
		if c.Nodes != tt.nodes || c.Depth != tt.depth || c.Cycle {
			t.Errorf("%q: got %+v, want %d nodes, depth %d", tt.yaml, c, tt.nodes, tt.depth)
		}
	}
}

func TestMergeKeysFollowYAML(t *testing.T) {
	src := `
id: acme
caps: &caps {state: true, secrets: true}
more: &more {state: false, auth: true, extra: 1}
capabilities:
  <<: [*caps, *more]
  secrets: false
`
	m, probs := manifest.Parse([]byte(src))
	if m == nil {
		t.Fatal(probs)
	}
	got := []bool{m.Capabilities.State, m.Capabilities.Secrets, m.Capabilities.Auth}
	// Own keys win over merged ones; an earlier merge wins over a later one.
	if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
		t.Errorf("state, secrets, auth (-want +got):\n%s", diff)
	}
	want := []where{
		{"manifest.unknown_field", "caps", "warning"},
		{"manifest.unknown_field", "more", "warning"},
		{"manifest.unknown_field", "capabilities.extra", "warning"},
	}
	if diff := cmp.Diff(want, wheres(probs)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestUnknownFieldsOfAnAliasedBlockAreReportedOnce(t *testing.T) {
	src := "id: a\nb: &b {x: 1, y: 2}\nui: {<<: *b}\ncapabilities: {<<: *b}\n"
	_, probs := manifest.Parse([]byte(src))
	want := []where{
		{"manifest.unknown_field", "b", "warning"},
		{"manifest.unknown_field", "ui.x", "warning"},
		{"manifest.unknown_field", "ui.y", "warning"},
	}
	if diff := cmp.Diff(want, wheres(probs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFreeFormBlocksDecodeAsYAMLv3 compares the free-form blocks of every real manifest and
// fixture with what yaml.v3 itself decodes, the values a host sees.
func TestFreeFormBlocksDecodeAsYAMLv3(t *testing.T) {
	type tool struct {
		InputSchema  map[string]any `yaml:"input_schema"`
		OutputSchema map[string]any `yaml:"output_schema"`
	}
	type blocks struct {
		ConfigSchema      map[string]any `yaml:"config_schema"`
		AgentTools        []tool         `yaml:"agent_tools"`
		ExecutorProviders []struct {
			ProfileSchema map[string]any `yaml:"profile_schema"`
			Capabilities  map[string]any `yaml:"capabilities"`
		} `yaml:"executor_providers"`
	}
	inline := map[string][]byte{
		"non-string keys":                  []byte("config_schema:\n  type: object\n  codes: {1: one, true: yes, 2.5: half, ~: none}\n  nested: {a: [{3: c}]}\n"),
		"merge into a free-form block":     []byte("base: &b {x: 1, y: [a]}\nconfig_schema: {<<: *b, y: [b], z: null}\n"),
		"scalars as yaml.v3 resolves them": []byte("config_schema: {a: 0x1f, b: 1e3, c: .inf, d: 2001-12-14, e: !!str 12, f: '', g: ~}\n"),
	}
	var sources []string
	for _, dir := range []string{corpusDir, validDir, invalidDir} {
		sources = append(sources, glob(t, dir+"/*.yaml")...)
	}
	for name := range inline {
		sources = append(sources, name)
	}
	compared := 0
	for _, path := range sources {
		data, ok := inline[path]
		if !ok {
			data = mustRead(t, path)
		}
		var want blocks
		if yaml.Unmarshal(data, &want) != nil {
			continue
		}
		m, _ := manifest.Parse(data)
		if m == nil {
			continue
		}
		got := blocks{ConfigSchema: m.ConfigSchema}
		for _, at := range m.AgentTools {
			got.AgentTools = append(got.AgentTools, tool{at.InputSchema, at.OutputSchema})
		}
		for _, ep := range m.ExecutorProviders {
			got.ExecutorProviders = append(got.ExecutorProviders, struct {
				ProfileSchema map[string]any `yaml:"profile_schema"`
				Capabilities  map[string]any `yaml:"capabilities"`
			}{ep.ProfileSchema, ep.Capabilities})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-yaml.v3 +manifest):\n%s", path, diff)
		}
		compared++
	}
	if compared < 50 {
		t.Errorf("compared only %d manifests", compared)
	}
}

// BenchmarkMergeBomb is the attack: 1000 keys merged 10^4 times. It must be refused
// in milliseconds with little memory (it took 11 s and 917 MB at 10^3 merges before the
// budget).
func BenchmarkMergeBomb(b *testing.B) {
	for _, merges := range []int{1_000, 10_000} {
		data := mergeBomb(1000, merges)
		b.Run(fmt.Sprintf("1000x%d", merges), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if m, probs := manifest.Parse(data); m != nil || !probs.Has("manifest.yaml.budget") {
					b.Fatal("merge bomb not refused")
				}
			}
		})
	}
}

// BenchmarkParseFlatList parses the densest manifests without aliases, one-character list
// items, up to the 1 MiB manifest limit: building the node tree is yaml.v3's linear cost
// (the budget refuses the larger ones after it), so ns/op and B/op grow with the size.
func BenchmarkParseFlatList(b *testing.B) {
	for _, items := range []int{125_000, 250_000, 500_000} {
		data := []byte("a: [" + strings.Repeat("1,", items) + "1]\n")
		b.Run(fmt.Sprintf("bytes=%d", len(data)), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				manifest.Parse(data)
			}
		})
	}
}
