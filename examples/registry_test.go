package examples_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/pluginyard/registry/examples"
	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/verify"
)

// TestExamplesVerifyClean runs each example package through the same checks as a publish:
// archive safety, checksums.txt, file name, manifest rules. The examples are what a newcomer
// copies, so even a warning is a failure here.
func TestExamplesVerifyClean(t *testing.T) {
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			pkg := mustPack(t, name)
			probe, err := verify.Package(context.Background(), bytes.NewReader(pkg), verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fileName := probe.ID + "-" + probe.Version + ".tar.gz"
			rep, err := verify.Package(context.Background(), bytes.NewReader(pkg), verify.Options{FileName: fileName})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rep.Problems {
				t.Errorf("%s: %s", fileName, p)
			}
			if rep.Kind != "extension" && rep.Icon == nil {
				t.Errorf("%s: no icon found", fileName)
			}
			// The Curupira example (a teammate's) documents itself in its manifest; a README
			// is required of the Kandev examples, which the marketplace page renders.
			if rep.Kind != "extension" && len(rep.README) == 0 {
				t.Errorf("%s: no README.md found", fileName)
			}
		})
	}
}

// TestPluginsYAMLListsEveryExample keeps the repository's plugins.yaml and examples/ in step:
// the demo publishes every example, and an unlisted id would be refused.
func TestPluginsYAMLListsEveryExample(t *testing.T) {
	list, probs, err := index.LoadList("../plugins.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("plugins.yaml: %s", p)
	}
	for _, name := range examples.Names() {
		rep, err := verify.Package(context.Background(), bytes.NewReader(mustPack(t, name)), verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Kind == "extension" {
			if _, ok := list.Extension(rep.ID); !ok {
				t.Errorf("extension %s (examples/%s) is not under extensions: in plugins.yaml", rep.ID, name)
			}
			continue
		}
		e, ok := list.Plugin(rep.ID)
		if !ok {
			t.Errorf("%s (examples/%s) is not listed in plugins.yaml", rep.ID, name)
			continue
		}
		if e.Kind != rep.Kind {
			t.Errorf("%s: plugins.yaml kind %q, package kind %q", rep.ID, e.Kind, rep.Kind)
		}
		if e.Repo != "pluginyard/"+rep.ID {
			t.Errorf("%s: plugins.yaml repo %q, want pluginyard/%s as in its repo_url", rep.ID, e.Repo, rep.ID)
		}
	}
}
