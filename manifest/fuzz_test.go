package manifest_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// FuzzParse feeds arbitrary bytes through Parse and Validate: neither may panic, and every
// problem must be well-formed.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{corpusDir, validDir, invalidDir} {
		for _, path := range glob(f, dir+"/*.yaml") {
			f.Add(mustRead(f, path))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, probs := manifest.Parse(data)
		if m == nil && !probs.HasErrors() {
			t.Fatal("nil manifest without an error")
		}
		if m != nil {
			probs = append(probs, m.Validate(manifest.Files{"server/plugin-linux-amd64": {Size: 1}})...)
			probs = append(probs, m.Validate(nil)...)
			_ = m.Name()
		}
		for _, p := range probs {
			if !strings.HasPrefix(p.Rule, "manifest.") || p.Message == "" || p.File == "" ||
				(p.Severity != problem.Error && p.Severity != problem.Warning) {
				t.Fatalf("malformed problem: %+v", p)
			}
		}
	})
}

// FuzzParseBudget feeds alias and merge-key bombs and their mutations through Parse: no
// input may panic, every document Parse accepts must be within the work budget, and every
// message must stay short.
func FuzzParseBudget(f *testing.F) {
	f.Add(mergeBomb(10, 10))
	f.Add(mergeBomb(1000, 300))
	f.Add([]byte("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c]\n"))
	f.Add([]byte("k0: &k0 {a: 1, b: 2}\nk1: &k1 {<<: [*k0, *k0]}\nk2: &k2 {<<: [*k1, *k1]}\ncapabilities: {<<: *k2}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("a: &a {<<: *a}\n"))
	f.Add([]byte("config_schema: {x: &x {y: [*x]}}\n"))
	f.Add([]byte("id: a\n---\nid: b\n"))
	f.Add([]byte("x: " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "\n"))
	f.Add([]byte("description: &d \"\\a\\a\\a\"\ndisplay_name: *d\nauthor: *d\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, probs := manifest.Parse(data)
		for _, p := range probs {
			if len(p.Message) > 1100 {
				t.Fatalf("%s: message of %d bytes", p.Rule, len(p.Message))
			}
		}
		if m == nil {
			return
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("Parse accepted what yaml.v3 refuses: %v", err)
		}
		c := manifest.Expanded(&doc)
		if c.Cycle || c.Nodes > manifest.MaxExpandedNodes || c.Bytes > manifest.MaxExpandedBytes || c.Depth > manifest.MaxDepth {
			t.Fatalf("accepted a document over budget: %+v", c)
		}
		m.Validate(nil)
	})
}
