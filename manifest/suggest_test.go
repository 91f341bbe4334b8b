package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/manifest"
)

// TestUnknownFieldSuggestsTheKnownName: an unknown field is answered with the field of its
// level the author most likely meant (an alias such as name → display_name, or a near
// spelling), and a field near nothing gets the plain advice.
func TestUnknownFieldSuggestsTheKnownName(t *testing.T) {
	base := "id: acme-plugin\napi_version: 2\nversion: \"1.0.0\"\nruntime:\n  type: binary\n  executables:\n    linux-amd64: server/plugin-linux-amd64\n"
	tests := []struct {
		extra, path, want string
	}{
		{"name: Acme\n", "name", "did you mean `display_name`?"},
		{"desc: Adds stats\n", "desc", "did you mean `description`?"},
		{"repository: https://github.com/acme/x\n", "repository", "did you mean `repo_url`?"},
		{"dispaly_name: Acme\n", "dispaly_name", "did you mean `display_name`?"},
		{"capabilities:\n  event: [task.created]\n", "capabilities.event", "did you mean `events`?"},
		{"previews: []\n", "previews", "remove it or check its spelling"},
	}
	for _, tt := range tests {
		_, probs := manifest.Parse([]byte(base + tt.extra))
		found := false
		for _, p := range probs {
			if p.Rule == "manifest.unknown_field" && p.Path == tt.path {
				found = true
				if !strings.Contains(p.Message, tt.want) {
					t.Errorf("%s: message %q, want it to contain %q", tt.path, p.Message, tt.want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no manifest.unknown_field problem in %v", tt.path, probs)
		}
	}
}

// BenchmarkUnknownFields: a manifest of n unknown keys near known names; suggestions stop
// after the first few, so the cost grows with n like parsing does.
func BenchmarkUnknownFields(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		var doc strings.Builder
		doc.WriteString("id: acme-plugin\n")
		for i := range n {
			fmt.Fprintf(&doc, "versio%d: x\n", i)
		}
		data := []byte(doc.String())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				manifest.Parse(data)
			}
		})
	}
}
