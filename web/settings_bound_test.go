package web_test

import (
	"fmt"
	"testing"

	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/web"
)

// TestSettingsForIsBounded: a schema stored before the publish limit lists at most
// MaxSettings rows, the required ones kept first; the bound is the manifest's.
func TestSettingsForIsBounded(t *testing.T) {
	if web.MaxSettings != manifest.MaxConfigProperties {
		t.Fatalf("web.MaxSettings %d != manifest.MaxConfigProperties %d", web.MaxSettings, manifest.MaxConfigProperties)
	}
	props := map[string]any{}
	for i := range 80_000 {
		props[fmt.Sprintf("p%05d", i)] = map[string]any{"type": "string"}
	}
	got := web.SettingsFor(map[string]any{"properties": props, "required": []any{"p79999"}})
	if len(got) != web.MaxSettings {
		t.Fatalf("%d settings, want %d", len(got), web.MaxSettings)
	}
	if got[0].Name != "p79999" || !got[0].Required || got[1].Name != "p00000" {
		t.Errorf("first rows %q, %q: want the required p79999, then p00000", got[0].Name, got[1].Name)
	}
}
