package manifest_test

import (
	"strings"
	"testing"

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
