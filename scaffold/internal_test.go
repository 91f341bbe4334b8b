package scaffold

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestDisplayName(t *testing.T) {
	for id, want := range map[string]string{
		"acme-task.board":    "Acme Task Board",
		"@acme/todo-trigger": "Todo Trigger",
		"x":                  "X",
		"9lives_v2":          "9lives V2",
	} {
		if got := displayName(id); got != want {
			t.Errorf("displayName(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestCheckReportsTemplateDefects checks that a tree verify refuses for another reason
// than the id is reported as a defect of the template, not as a bad id.
func TestCheckReportsTemplateDefects(t *testing.T) {
	files, err := render(Plugin, "acme-x")
	if err != nil {
		t.Fatal(err)
	}
	var broken []File
	for _, f := range files {
		if f.Path != "server/plugin-linux-amd64" {
			broken = append(broken, f)
		}
	}
	err = check(context.Background(), Plugin, "acme-x", broken)
	var idErr *IDError
	if err == nil || errors.As(err, &idErr) || !strings.Contains(err.Error(), "manifest.runtime.executables.missing") {
		t.Errorf("check of a tree without its launcher: %v", err)
	}
}
