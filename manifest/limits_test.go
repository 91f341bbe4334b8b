package manifest_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/manifest"
)

// TestIndexPoisoningIsRefused is the attack: a ~1 MiB description of "\a" escapes,
// reused through aliases as display_name and author. Each field is refused by its length
// and character rules, in short messages.
func TestIndexPoisoningIsRefused(t *testing.T) {
	src := "id: acme\napi_version: 2\nversion: \"1.0.0\"\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/p\n" +
		"description: &d \"" + strings.Repeat(`\a`, 1<<19) + "\"\ndisplay_name: *d\nauthor: *d\n"
	m, probs := manifest.Check([]byte(src), manifest.Files{"server/p": {Size: 1}})
	if m == nil {
		t.Fatalf("refused before validation: %v", probs)
	}
	want := []where{
		{"manifest.field.length", "display_name", "error"},
		{"manifest.field.characters", "display_name", "error"},
		{"manifest.field.length", "description", "error"},
		{"manifest.field.characters", "description", "error"},
		{"manifest.field.length", "author", "error"},
		{"manifest.field.characters", "author", "error"},
	}
	if diff := cmp.Diff(want, wheres(probs)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	total := 0
	for _, p := range probs {
		total += len(p.Message)
		if p.Rule == "manifest.field.length" && !strings.Contains(p.Message, fmt.Sprint(1<<19)) {
			t.Errorf("%s message does not name the length %d: %s", p.Path, 1<<19, p.Message)
		}
		if p.Rule == "manifest.field.characters" && !strings.Contains(p.Message, "U+0007") {
			t.Errorf("%s message does not name the character: %s", p.Path, p.Message)
		}
	}
	if total > 4096 {
		t.Errorf("messages total %d bytes, want a few hundred per field", total)
	}
}

func TestMessagesAboutHugeValuesAreBounded(t *testing.T) {
	huge := strings.Repeat("x", 600<<10)
	src := "id: acme\napi_version: 2\nversion: \"1.0.0\"\nruntime: {type: binary, executables: {linux-amd64: server/p}}\n" +
		"categories: [" + huge + "]\nrepo_url: ftp://" + huge + "\n"
	_, probs := manifest.Check([]byte(src), manifest.Files{"server/p": {Size: 1}})
	if !probs.Has("manifest.categories.unknown") || !probs.Has("manifest.repo_url.scheme") {
		t.Fatalf("rules %v", probs.Rules())
	}
	for _, p := range probs {
		if len(p.Message) > 1100 {
			t.Errorf("%s: message is %d bytes", p.Rule, len(p.Message))
		}
		if !strings.Contains(p.Message, "; ") {
			t.Errorf("%s: bounded message lost its fix: %s", p.Rule, p.Message)
		}
	}
}

func TestTextProblem(t *testing.T) {
	tests := []struct {
		s         string
		multiline bool
		want      string // "" for accepted, else the start of the description
	}{
		{"Acme Plugin", false, ""},
		{"Zoë's Ünïcode 插件 プラグイン", false, ""},
		{"می‌خواهم", false, ""},     // ZWNJ in Persian
		{"👨‍👩‍👧 family", false, ""}, // ZWJ emoji sequence
		{"line one\nline two\twith tab", true, ""},
		{"line one\nline two", false, "U+000A (a control character) at character 9"},
		{"tab\there", false, "U+0009"},
		{"bell\a", true, "U+0007"},
		{"cr\r", true, "U+000D"},
		{"del\x7f", false, "U+007F"},
		{"c1\u0085", false, "U+0085"},
		{"c1\u009b[31m", false, "U+009B"},
		{"rlo\u202e", false, "U+202E (a bidirectional control)"},
		{"lre\u202a", false, "U+202A (a bidirectional control)"},
		{"isolate\u2066\u2067\u2068\u2069", false, "U+2066 (a bidirectional control) at character 8 (4 forbidden characters in all)"},
		{"mark\u200f", false, "U+200F (a bidirectional control)"},
		{"zwsp\u200b", false, "U+200B (an invisible format character)"},
		{"bom\ufeff", false, "U+FEFF"},
		{"soft\u00adhyphen", false, "U+00AD"},
		{"sep\u2028", true, "U+2028 (a line or paragraph separator)"},
		{"bad\xffutf8", false, "invalid UTF-8 at character 4"},
		{"replacement \ufffd is a glyph", false, ""},
		{"two\x00nul\x00", true, "U+0000 (a control character) at character 4 (2 forbidden characters in all)"},
	}
	for _, tt := range tests {
		got := manifest.TextProblem(tt.s, tt.multiline)
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("TextProblem(%q, %v) = %q, want prefix %q", tt.s, tt.multiline, got, tt.want)
		}
	}
}

// TestLimitsAreDocumented ties docs/limits.md to the tables: every field and list limit has
// a row naming its path, its limit and its unit.
func TestLimitsAreDocumented(t *testing.T) {
	doc := string(mustRead(t, "../docs/limits.md"))
	for _, l := range manifest.FieldLimits() {
		unit := "bytes"
		if l.Runes {
			unit = "characters"
		}
		row := regexp.MustCompile(`(?m)^\| ` + "`" + regexp.QuoteMeta(l.Path) + "`" + ` \| ` + fmt.Sprint(l.Max) + ` ` + unit + ` \|`)
		if !row.MatchString(doc) {
			t.Errorf("docs/limits.md has no row \"| `%s` | %d %s |\"", l.Path, l.Max, unit)
		}
	}
	for _, l := range manifest.CountLimits() {
		row := regexp.MustCompile(`(?m)^\| ` + "`" + regexp.QuoteMeta(l.Path) + "`" + ` \| ` + fmt.Sprint(l.Max) + ` entries \|`)
		if !row.MatchString(doc) {
			t.Errorf("docs/limits.md has no row \"| `%s` | %d entries |\"", l.Path, l.Max)
		}
	}
	for _, n := range []int{manifest.MaxExpandedNodes, manifest.MaxExpandedBytes, manifest.MaxDepth} {
		if !strings.Contains(doc, fmt.Sprint(n)) {
			t.Errorf("docs/limits.md does not state the YAML budget %d", n)
		}
	}
}

func TestRequiredMessagesListFewNames(t *testing.T) {
	var b strings.Builder
	b.WriteString("config_schema:\n  type: object\n  properties:\n")
	for i := range 25 {
		fmt.Fprintf(&b, "    p%02d: {type: string}\n", i)
	}
	b.WriteString("  required: [missing]\n")
	m, _ := manifest.Parse([]byte(b.String()))
	var got []string
	for _, p := range m.Validate(nil) {
		if p.Rule == "manifest.config_schema.required" {
			got = append(got, p.Message)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "[p00 p01 p02 p03 p04 p05 p06 p07 p08 p09] and 15 more") {
		t.Errorf("want one warning naming 10 of the 25 properties, got %q", got)
	}
}
