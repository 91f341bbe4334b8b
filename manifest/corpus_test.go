package manifest_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// corpusFindings are the rules each real manifest reports (see the corpus README); a file
// not listed must report nothing.
var corpusFindings = map[string]struct{ errors, warnings []string }{
	"tito__kandev-plugin-gitea__b87fd2b.yaml":       {errors: []string{"manifest.categories.unknown"}},
	"nova28__kandev-plugin-ops-intel__5119dbc.yaml": {errors: []string{"manifest.runtime.executables.platform"}},
	"yustme__kandev-telegram__54746ab__recipes-source-control-manifest.fragment.yaml": {errors: []string{
		"manifest.api_version.value", "manifest.id.required", "manifest.runtime.required", "manifest.version.required",
	}},
	"kdlbs__kandev-plugin-coordinator-template__6f53765.yaml": {warnings: []string{
		"manifest.agent_tools.surfaces.unknown", "manifest.capabilities.api_read.unknown", "manifest.capabilities.api_write.unknown",
	}},
	"kdlbs__kandev-plugin-session-cost__1c0a0e6.yaml": {warnings: []string{
		"manifest.capabilities.api_read.unknown", "manifest.capabilities.api_write.unknown",
	}},
	"sp1050107-zbot__kandev__dd67e00__plugin-fixture.yaml": {warnings: []string{
		"manifest.capabilities.api_read.unknown", "manifest.capabilities.api_write.unknown",
	}},
	"yattdev__kandev-plugin-coordinator__cc84f95.yaml": {warnings: []string{"manifest.capabilities.api_read.unknown"}},
	"zakaria1193__kandev-plugin-slack__3ff3e65.yaml":   {warnings: []string{"manifest.capabilities.api_read.unknown"}},
	"kdlbs__kandev__dfc22b5__plugin-fixture.yaml":      {warnings: []string{"manifest.tools.legacy"}},
}

func TestCorpus(t *testing.T) {
	seen := 0
	for _, path := range glob(t, corpusDir+"/*.yaml") {
		name := filepath.Base(path)
		want, listed := corpusFindings[name]
		if listed {
			seen++
		}
		t.Run(name, func(t *testing.T) {
			m, probs := check(t, path)
			if m == nil {
				t.Fatalf("did not parse:\n%s", render(probs))
			}
			if diff := cmp.Diff(want.errors, probs.Errors().Rules()); diff != "" {
				t.Errorf("error rules (-want +got):\n%s\n%s", diff, render(probs))
			}
			if diff := cmp.Diff(want.warnings, probs.Warnings().Rules()); diff != "" {
				t.Errorf("warning rules (-want +got):\n%s\n%s", diff, render(probs))
			}
		})
	}
	if seen != len(corpusFindings) {
		t.Errorf("corpusFindings names %d files, found %d of them in the corpus", len(corpusFindings), seen)
	}
}
