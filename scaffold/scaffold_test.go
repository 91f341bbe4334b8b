package scaffold_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/scaffold"
)

func TestTreeIsDeterministic(t *testing.T) {
	for _, kind := range scaffold.Kinds {
		a, err := scaffold.Tree(context.Background(), kind, "acme-x")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		b, err := scaffold.Tree(context.Background(), kind, "acme-x")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s: two renders differ (-first +second):\n%s", kind, diff)
		}
	}
}

func TestTreeModes(t *testing.T) {
	files, err := scaffold.Tree(context.Background(), scaffold.Plugin, "acme-x")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = f.Mode.String()
	}
	for path, want := range map[string]string{"server/plugin-linux-amd64": "-rwxr-xr-x", "manifest.yaml": "-rw-r--r--", ".github/workflows/release.yml": "-rw-r--r--"} {
		if got[path] != want {
			t.Errorf("%s: mode %q, want %q", path, got[path], want)
		}
	}
}

// TestTreeRefusesIDs checks that ids are judged by the manifest's own rules, which the
// error names.
func TestTreeRefusesIDs(t *testing.T) {
	tests := []struct {
		kind  scaffold.Kind
		id    string
		rules []string
	}{
		{scaffold.Plugin, "", []string{"manifest.id.required"}},
		{scaffold.Plugin, "NC_Greeter!", []string{"manifest.id.pattern"}},
		{scaffold.Canvas, "-board", []string{"manifest.id.pattern"}},
		{scaffold.Canvas, "board.config", []string{"manifest.id.config_suffix"}},
		{scaffold.Plugin, "a\"\nb", []string{"manifest.id.pattern"}},
		{scaffold.Extension, "", []string{"extension.name"}},
		{scaffold.Extension, "@Acme/x", []string{"extension.name.format"}},
		{scaffold.Extension, "_x", []string{"extension.name.format"}},
	}
	for _, tt := range tests {
		_, err := scaffold.Tree(context.Background(), tt.kind, tt.id)
		var idErr *scaffold.IDError
		if !errors.As(err, &idErr) {
			t.Errorf("%s %q: err %v, want an IDError", tt.kind, tt.id, err)
			continue
		}
		if diff := cmp.Diff(tt.rules, idErr.Problems.Rules()); diff != "" {
			t.Errorf("%s %q: rules (-want +got):\n%s", tt.kind, tt.id, diff)
		}
	}
}

func TestTreeAcceptsIDs(t *testing.T) {
	for _, tt := range []struct {
		kind scaffold.Kind
		id   string
	}{
		{scaffold.Plugin, "a"}, {scaffold.Plugin, "acme.stats_2-x"}, {scaffold.Canvas, "9board"},
		{scaffold.Extension, "@acme/todo-trigger"}, {scaffold.Extension, "todo~trigger"},
	} {
		if _, err := scaffold.Tree(context.Background(), tt.kind, tt.id); err != nil {
			t.Errorf("%s %q: %v", tt.kind, tt.id, err)
		}
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range scaffold.Kinds {
		if got, err := scaffold.ParseKind(string(k)); got != k || err != nil {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := scaffold.ParseKind("Plugin"); err == nil {
		t.Error("ParseKind(\"Plugin\") accepted")
	}
}
