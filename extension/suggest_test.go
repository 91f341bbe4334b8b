package extension_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/extension"
)

// TestUnknownKeySuggestsTheKnownName: an unknown key is answered with the key of its table
// the author most likely meant; a key near nothing gets the plain advice.
func TestUnknownKeySuggestsTheKnownName(t *testing.T) {
	const base = "manifest_version = 1\nname = \"acme-ext\"\nversion = \"1.0.0\"\nprotocol_version = 2\nruntime = \"node\"\nkind = \"trigger\"\ntrigger_types = [\"t\"]\n"
	tests := []struct{ top, launch, key, want string }{
		{"homepge = \"https://example.com\"\n", "", "homepage", "did you mean `homepage`?"},
		{"display_name = \"Acme\"\n", "", "display_name", "did you mean `name`?"},
		{"repo = \"https://github.com/acme/x\"\n", "", "repo", "did you mean `repository`?"},
		{"", "cmd = \"index.js\"\n", "launch.cmd", "did you mean `command`?"},
		{"previews = []\n", "", "previews", "remove it or fix its spelling"},
	}
	for _, tt := range tests {
		doc := base + tt.top + "[launch]\ntype = \"node\"\ncommand = \"index.js\"\n"
		if tt.launch != "" {
			doc = base + "[launch]\ntype = \"node\"\n" + tt.launch
		}
		_, probs := extension.Parse([]byte(doc))
		found := false
		for _, p := range probs {
			if p.Rule == "extension.unknown" {
				found = true
				if !strings.Contains(p.Message, tt.want) {
					t.Errorf("%s: message %q, want it to contain %q", tt.key, p.Message, tt.want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no extension.unknown problem in %v", tt.key, probs)
		}
	}
}
