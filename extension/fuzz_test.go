package extension_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/extension"
)

// FuzzParse checks that no input panics the parser and that every outcome is explained:
// a nil manifest comes with an error, and every problem names an extension rule and the file.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(manifestDir, "*", "*.toml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, probs := extension.Parse(data)
		if m == nil && !probs.HasErrors() {
			t.Fatalf("nil manifest without an error")
		}
		for _, p := range probs {
			if !strings.HasPrefix(p.Rule, "extension.") || p.File != extension.FileName || p.Message == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
	})
}
