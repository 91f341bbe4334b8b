package rules_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/rules"
)

// TestFieldsAreTheDecoders: the field lists come from the decoders' types, so they hold
// the fields authors asked for, with their rules attached.
func TestFieldsAreTheDecoders(t *testing.T) {
	byPath := map[string]rules.Field{}
	for _, f := range rules.KandevFields() {
		byPath[f.Path] = f
	}
	for _, want := range []rules.Field{
		{Path: "api_version", Type: "integer", Rules: []string{"manifest.api_version.value"}},
		{Path: "display_name", Type: "string"},
		{Path: "runtime.executables", Type: "mapping of names to strings", Rules: []string{"manifest.runtime.executables.exe", "manifest.runtime.executables.missing", "manifest.runtime.executables.path", "manifest.runtime.executables.platform", "manifest.runtime.executables.required"}},
		{Path: "min_kandev_version", Type: "string", Rules: []string{"manifest.min_kandev_version.floor", "manifest.min_kandev_version.format"}},
		{Path: "ui.web_apps[].placements", Type: "list of strings", Rules: []string{"manifest.ui.web_apps.placements"}},
		{Path: "distribution.source_mode", Type: "string", Rules: []string{"manifest.distribution.source_mode"}},
	} {
		got, ok := byPath[want.Path]
		if !ok {
			t.Errorf("no field %s", want.Path)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", want.Path, diff)
		}
	}
	var launch bool
	for _, f := range rules.CurupiraFields() {
		launch = launch || f.Path == "launch.command"
	}
	if !launch {
		t.Errorf("CurupiraFields lacks launch.command")
	}
}
