package manifest_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// where is the rule, path and severity of a problem, the parts a caller keys on.
type where struct {
	Rule, Path string
	Severity   problem.Severity
}

func wheres(probs problem.List) []where {
	var out []where
	for _, p := range probs {
		out = append(out, where{p.Rule, p.Path, p.Severity})
	}
	return out
}

func TestParseReportsFieldPaths(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []where
	}{
		{"type error deep in a list", "webhooks:\n  - key: a\n  - key: b\n    max_body_bytes: big\n",
			[]where{{"manifest.type", "webhooks[1].max_body_bytes", problem.Error}}},
		{"unknown fields at every level", "id: a\nextra: 1\nruntime:\n  typ: binary\nui:\n  web_apps:\n    - key: m\n      entry_point: x\n",
			[]where{
				{"manifest.unknown_field", "extra", problem.Warning},
				{"manifest.unknown_field", "runtime.typ", problem.Warning},
				{"manifest.unknown_field", "ui.web_apps[0].entry_point", problem.Warning},
			}},
		{"all problems at once", "api_version: two\ncategories: tools\ncapabilities:\n  state: maybe\n",
			[]where{
				{"manifest.type", "api_version", problem.Error},
				{"manifest.type", "categories", problem.Error},
				{"manifest.type", "capabilities.state", problem.Error},
			}},
		{"executables keep their key in the path", "runtime:\n  executables:\n    linux-amd64: [a]\n",
			[]where{{"manifest.type", "runtime.executables.linux-amd64", problem.Error}}},
		{"duplicate executable key", "runtime:\n  executables:\n    linux-amd64: a\n    linux-amd64: b\n",
			[]where{{"manifest.yaml.duplicate_key", "runtime.executables.linux-amd64", problem.Error}}},
		{"free-form schemas are not checked for unknown fields", "config_schema:\n  type: object\n  x-anything: 1\n", nil},
		{"an anchored unknown field is only warned about", "base: &b {state: true}\n", []where{{"manifest.unknown_field", "base", problem.Warning}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := manifest.Parse([]byte(tt.yaml))
			if m == nil {
				t.Fatal("nil manifest")
			}
			if diff := cmp.Diff(tt.want, wheres(probs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, p := range probs {
				if p.File != manifest.FileName {
					t.Errorf("File = %q, want %q", p.File, manifest.FileName)
				}
			}
		})
	}
}

func TestParseDecodesValues(t *testing.T) {
	src := `
id: acme
api_version: 1
version: 1.0
caps: &caps
  state: true
capabilities:
  <<: *caps
  events: [task.created]
actions:
  - key: a
    resource_scope: task
    max_body_bytes: 10
agent_tools:
  - name: t
    annotations: {read_only_hint: true}
`
	m, probs := manifest.Parse([]byte(src))
	if diff := cmp.Diff([]string{"manifest.unknown_field"}, probs.Rules()); diff != "" {
		t.Fatalf("rules (-want +got):\n%s", diff)
	}
	got := []any{m.ID, m.APIVersion, m.Version, m.Capabilities.State, m.Capabilities.Events,
		m.Actions[0].EffectiveScope(), m.Actions[0].EffectiveAccess(), m.Actions[0].MaxBodyBytes,
		*m.AgentTools[0].Annotations.ReadOnlyHint, m.AgentTools[0].Annotations.DestructiveHint == nil}
	want := []any{"acme", 1, "1.0", true, []string{"task.created"}, "task", "authenticated", int64(10), true, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseRefusesUnreadableYAML(t *testing.T) {
	tests := []struct{ name, yaml, rule string }{
		{"syntax", "id: [", "manifest.yaml.syntax"},
		{"scalar root", "just text", "manifest.yaml.root"},
		{"list root", "- a\n", "manifest.yaml.root"},
		{"empty", "", "manifest.yaml.root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, probs := manifest.Check([]byte(tt.yaml), manifest.Files{})
			if m != nil {
				t.Errorf("manifest = %+v, want nil", m)
			}
			if diff := cmp.Diff([]string{tt.rule}, probs.Rules()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateNilFilesSkipsContentChecks(t *testing.T) {
	src := "id: a\napi_version: 2\nversion: '1.0.0'\nicon: icon.png\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/p\nui:\n  bundle: /ui/b.js\n"
	_, withNil := manifest.Check([]byte(src), nil)
	if len(withNil) != 0 {
		t.Errorf("nil files: want no problems, got:\n%s", render(withNil))
	}
	_, withEmpty := manifest.Check([]byte(src), manifest.Files{})
	want := []string{"manifest.icon.missing", "manifest.runtime.executables.missing", "manifest.ui.bundle.missing"}
	if diff := cmp.Diff(want, withEmpty.Rules()); diff != "" {
		t.Errorf("empty files (-want +got):\n%s", diff)
	}
}

func TestMessagesSayExpectedFoundAndFix(t *testing.T) {
	for _, path := range glob(t, invalidDir+"/*.yaml") {
		_, probs := check(t, path)
		for _, p := range probs {
			if !strings.Contains(p.Message, "expected") || !strings.Contains(p.Message, "found") {
				t.Errorf("%s: message lacks expected/found: %s", p.Rule, p.Message)
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	plugin := &manifest.Manifest{ID: "agent-stats", Runtime: &manifest.Runtime{Type: "binary"}}
	canvas := &manifest.Manifest{ID: "my_board.v2", DisplayName: "Board", Distribution: &manifest.Distribution{}}
	got := []any{plugin.Kind(), plugin.Name(), plugin.IsManaged(), canvas.Kind(), canvas.Name(), canvas.IsManaged(),
		manifest.Humanize("my_board.v2"), manifest.Humanize("kandev-plugin-slack"), manifest.Humanize("")}
	want := []any{"plugin", "Agent Stats", true, "canvas", "Board", false, "My Board V2", "Kandev Plugin Slack", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWebhookEffectiveAccess(t *testing.T) {
	tests := []struct {
		access     string
		apiVersion int
		want       string
	}{
		{"", 1, "public"},
		{"", 2, "authenticated"},
		{"public", 2, "public"},
		{"authenticated", 1, "authenticated"},
	}
	for _, tt := range tests {
		if got := (manifest.Webhook{Access: tt.access}).EffectiveAccess(tt.apiVersion); got != tt.want {
			t.Errorf("access %q api %d: got %q, want %q", tt.access, tt.apiVersion, got, tt.want)
		}
	}
}

func TestImageType(t *testing.T) {
	tests := []struct {
		name, head, ct, ext string
	}{
		{"png", "\x89PNG\r\n\x1a\nrest", "image/png", ".png"},
		{"jpeg", "\xff\xd8\xff\xdb", "image/jpeg", ".jpg"},
		{"gif87", "GIF87a..", "image/gif", ".gif"},
		{"webp", "RIFF\x00\x00\x00\x00WEBPVP8L", "image/webp", ".webp"},
		{"svg", "<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml", ".svg"},
		{"svg after prolog", "\ufeff<?xml version='1.0'?>\n<!-- c -->\n<!DOCTYPE svg>\n<svg>", "image/svg+xml", ".svg"},
		{"html is not svg", "<html><svg></svg></html>", "", ""},
		{"svgz-like prefix", "<svgfoo>", "", ""},
		{"riff wave", "RIFF\x00\x00\x00\x00WAVEfmt ", "", ""},
		{"text", "hello", "", ""},
		{"empty", "", "", ""},
		{"unterminated comment", "<!-- <svg>", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, ext := manifest.ImageType([]byte(tt.head))
			if diff := cmp.Diff([]string{tt.ct, tt.ext}, []string{ct, ext}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestIconFormats(t *testing.T) {
	for _, kind := range []string{"png", "jpeg", "gif", "webp", "svg"} {
		t.Run(kind, func(t *testing.T) {
			m := &manifest.Manifest{ID: "a", APIVersion: 2, Version: "1.0.0", Icon: "assets/icon",
				Runtime: &manifest.Runtime{Type: "binary", Executables: map[string]string{"linux-amd64": "server/p"}}}
			files := manifest.Files{"server/p": {Size: 1}, "assets/icon": {Size: 10, Head: heads[kind]}}
			if probs := m.Validate(files); len(probs) != 0 {
				t.Errorf("want no problems, got:\n%s", render(probs))
			}
		})
	}
}
