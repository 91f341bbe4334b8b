package extension_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/pluginyard/registry/extension"
)

const budgetRule = "extension.toml.budget"

// Hostile documents of n levels or parts, as the black-box test sent them.
func nestedTables(n int) string {
	return "x = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n"
}
func nestedArrays(n int) string {
	return "x = " + strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + "\n"
}
func dottedKey(n int) string   { return "x" + strings.Repeat(".a", n-1) + " = 1\n" }
func tableHeader(n int) string { return "[x" + strings.Repeat(".a", n-1) + "]\nb = 1\n" }
func arrayHeader(n int) string { return "[[x" + strings.Repeat(". 'a'", n-1) + "]]\nb = 1\n" }
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d = 1\n", i)
	}
	return b.String()
}

var attacks = []struct {
	name string
	doc  func(int) string
}{
	{"nested inline tables", nestedTables},
	{"nested arrays", nestedArrays},
	{"dotted key", dottedKey},
	{"table header", tableHeader},
	{"array-of-tables header", arrayHeader},
}

func budgetRules(t *testing.T, doc string) []string {
	t.Helper()
	m, probs := extension.Parse([]byte(doc))
	var rules []string
	for _, p := range probs {
		if p.Rule == budgetRule {
			rules = append(rules, p.Rule)
			if m != nil || p.File != extension.FileName || !strings.Contains(p.Message, "expected") || !strings.HasPrefix(p.Path, "line ") {
				t.Errorf("budget problem %+v with manifest %v; want no manifest, the file, a line and an explanation", p, m)
			}
		}
	}
	return rules
}

func TestTOMLBudgetRefusesAttacks(t *testing.T) {
	for _, a := range attacks {
		for _, n := range []int{extension.MaxTOMLDepth + 1, 8_000, 50_000} {
			t.Run(fmt.Sprintf("%s/%d", a.name, n), func(t *testing.T) {
				if got := budgetRules(t, a.doc(n)); len(got) != 1 {
					t.Errorf("got %d %s problems; want 1", len(got), budgetRule)
				}
			})
		}
	}
	t.Run("too many keys", func(t *testing.T) {
		if got := budgetRules(t, manyKeys(extension.MaxTOMLKeys+1)); len(got) != 1 {
			t.Errorf("got %d %s problems; want 1", len(got), budgetRule)
		}
	})
}

// Near misses: documents at the limits, and brackets, braces and dots that are not structure.
func TestTOMLBudgetAcceptsNearMisses(t *testing.T) {
	dots := strings.Repeat(".", 5_000)
	braces := strings.Repeat("{[", 5_000)
	for name, doc := range map[string]string{
		"tables at the limit":       nestedTables(extension.MaxTOMLDepth),
		"arrays at the limit":       nestedArrays(extension.MaxTOMLDepth),
		"dotted key at the limit":   dottedKey(extension.MaxTOMLKeyParts),
		"header at the limit":       tableHeader(extension.MaxTOMLKeyParts),
		"keys at the limit":         manyKeys(extension.MaxTOMLKeys),
		"dots in a basic string":    `description = "` + dots + `"` + "\n",
		"dots in a literal string":  `description = '` + dots + `'` + "\n",
		"dots in a quoted key":      `"` + dots + `" = 1` + "\n",
		"braces in a basic string":  `description = "` + braces + `\"` + braces + `"` + "\n",
		"braces in a literal":       `description = '` + braces + `\'` + "\n",
		"braces in multi-line":      "description = \"\"\"\n" + braces + "\n\\\"\"\"" + braces + "\n\"\"\"\"\"\n",
		"braces in multi-line lit":  "description = '''\n" + braces + "\n'''''\n",
		"floats":                    "k = 1.5e3\n" + "f = [" + strings.Repeat("1.25, ", 2_000) + "3.5]\n",
		"comment with brackets":     "# " + braces + "\n[launch] # " + braces + "\ntype = \"npx\" # " + braces + "\n",
		"brackets in a quoted head": `["` + braces + dots + `"]` + "\n" + "a = 1\n",
		"dates":                     "d = 1979-05-27 07:32:00Z\nt = [1979-05-27T07:32:00Z, 07:32:00]\n",
		"arrays over lines":         "a = [\n  [1, 2], # ]]]]\n  [3],\n]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if probs := extension.CheckTOMLBudget([]byte(doc)); len(probs) != 0 {
				t.Errorf("CheckTOMLBudget = %v; want no problems", probs)
			}
			if _, err := toml.Decode(doc, new(map[string]any)); err != nil {
				t.Errorf("near miss is not valid TOML: %v", err)
			}
		})
	}
}

// Every fixture and example manifest stays within the budget.
func TestTOMLBudgetAcceptsFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(manifestDir, "*", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob("../examples/*/" + extension.FileName)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, examples...)
	if len(files) < 10 {
		t.Fatalf("found %d manifests; the fixture paths moved", len(files))
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if probs := extension.CheckTOMLBudget(data); len(probs) != 0 {
			t.Errorf("%s: %v", file, probs)
		}
	}
}

// BenchmarkTOMLBudget checks the refused attacks at four sizes: the cost must grow linearly
// in the input and allocate a constant amount (the decoder took 12 s and 2.9 GB at 8,000).
func BenchmarkTOMLBudget(b *testing.B) {
	for _, a := range attacks {
		for _, n := range []int{1_000, 4_000, 16_000, 64_000} {
			data := []byte(a.doc(n))
			b.Run(fmt.Sprintf("%s/n=%d", strings.ReplaceAll(a.name, " ", "_"), n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, probs := extension.Parse(data); !probs.HasErrors() {
						b.Fatal("attack accepted")
					}
				}
			})
		}
	}
}

// FuzzTOMLBudget checks that the scan never panics and that what it accepts decodes within
// the limits: arrays directly inside arrays can only come from brackets, so they nest at
// most MaxTOMLDepth deep, and no decoded key is longer than the parts the limits allow.
func FuzzTOMLBudget(f *testing.F) {
	for _, a := range attacks {
		f.Add([]byte(a.doc(extension.MaxTOMLDepth + 1)))
		f.Add([]byte(a.doc(extension.MaxTOMLDepth)))
	}
	f.Add([]byte("s = \"\"\"a\"\"\"\"\"\nx = [[[1]]]\n"))
	f.Add([]byte("s = '''a'''''\n[a.'b'.\"c\"]\nk = {a.b = [{c = 1}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if probs := extension.CheckTOMLBudget(data); len(probs) != 0 {
			if len(probs) != 1 || probs[0].Rule != budgetRule {
				t.Fatalf("problems %v; want one %s", probs, budgetRule)
			}
			return
		}
		var v map[string]any
		md, err := toml.Decode(string(data), &v)
		if err != nil {
			return
		}
		if d := arrayDepth(v); d > extension.MaxTOMLDepth {
			t.Fatalf("accepted a document with arrays nested %d deep", d)
		}
		// A key path gains at most MaxTOMLKeyParts parts from its header and from the key
		// at every inline level.
		maxKey := extension.MaxTOMLKeyParts * (extension.MaxTOMLDepth + 2)
		for _, k := range md.Keys() {
			if len(k) > maxKey {
				t.Fatalf("accepted a key of %d parts", len(k))
			}
		}
	})
}

// arrayDepth is the longest chain of arrays directly inside arrays below v.
func arrayDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, arrayDepth(e))
		}
		return d
	case []map[string]any:
		for _, e := range v {
			d = max(d, arrayDepth(e))
		}
		return d
	case []any:
		inner := 0
		for _, e := range v {
			if _, ok := e.([]any); ok {
				inner = max(inner, arrayDepth(e))
			} else {
				d = max(d, arrayDepth(e))
			}
		}
		return max(d, inner+1)
	}
	return 0
}
