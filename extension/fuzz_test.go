package extension_test

import (
	"fmt"
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
	for _, hostile := range []string{
		"version = \"1.0.0\u202e\"\n",
		"version = \"1.0.0\\\";evil=\\\"\"\n",
		"description = \"" + strings.Repeat(`\u0007`, 4096) + "\"\n",
		"[launch]\nargs = [\"\\u001b]0;x\\u0007\"]\n",
	} {
		f.Add([]byte(hostile))
	}
	f.Add(unknownKeys(100))
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

// unknownKeys is an extension manifest with n unknown keys after the known ones.
func unknownKeys(n int) []byte {
	var b strings.Builder
	b.WriteString("manifest_version = 1\nname = \"a\"\nversion = \"1.0.0\"\n")
	for i := range n {
		fmt.Fprintf(&b, "k%d = 1\n", i)
	}
	return []byte(b.String())
}

func TestManyUnknownKeysAreCountedNotListed(t *testing.T) {
	_, probs := extension.Parse(unknownKeys(1000))
	var unknown []string
	for _, p := range probs {
		if p.Rule == "extension.unknown" {
			unknown = append(unknown, p.Message)
		}
	}
	if len(unknown) != 21 || !strings.Contains(unknown[0], "line 4") || !strings.Contains(unknown[20], "980 more unknown keys") {
		t.Errorf("%d extension.unknown problems (%q ... %q); want 20 naming their line and one counting 980 more", len(unknown), unknown[0], unknown[len(unknown)-1])
	}
}

// BenchmarkParseUnknownKeys parses manifests of 1k, 4k and 16k unknown keys: the cost per key
// must stay flat (38 s at 16k when every key's line was searched).
func BenchmarkParseUnknownKeys(b *testing.B) {
	for _, n := range []int{1_000, 4_000, 16_000} {
		data := unknownKeys(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				extension.Parse(data)
			}
		})
	}
}

// TestLimitsAreDocumented ties docs/limits.md to the limit tables: every field and list has
// a row naming its path, its limit and its unit.
func TestLimitsAreDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/limits.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, l := range extension.FieldLimits() {
		unit := "bytes"
		if l.Runes {
			unit = "characters"
		}
		row := fmt.Sprintf("| `%s` | %d %s |", l.Path, l.Max, unit)
		if !strings.Contains(doc, "\n"+row) {
			t.Errorf("docs/limits.md has no row %q", row)
		}
	}
	for _, l := range extension.CountLimits() {
		row := fmt.Sprintf("| `%s` | %d entries |", l.Path, l.Max)
		if !strings.Contains(doc, "\n"+row) {
			t.Errorf("docs/limits.md has no row %q", row)
		}
	}
}
