// Package action_test exercises the publishing Action (action.yml) and every release
// workflow the repository shows or writes: actionlint on each, and the Action's own steps
// run with bash in a simulated GitHub Actions runner against a local registry.
package action_test

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

const repoRoot = "../.."

// actionFile is what the harness reads of action.yml.
type actionFile struct {
	Inputs  map[string]actionInput  `yaml:"inputs"`
	Outputs map[string]actionOutput `yaml:"outputs"`
	Runs    struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionInput struct {
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	Default     string `yaml:"default"`
}

type actionOutput struct {
	Value string `yaml:"value"`
}

// actionStep is one composite step; raw keeps it whole for the actionlint workflow.
type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Run              string            `yaml:"run"`
	Env              map[string]string `yaml:"env"`
	raw              map[string]any
}

func loadAction(t *testing.T) actionFile {
	t.Helper()
	src := mustRead(t, filepath.Join(repoRoot, "action.yml"))
	var a actionFile
	if err := yaml.Unmarshal(src, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	var raw struct {
		Runs struct {
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(src, &raw); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	for i := range a.Runs.Steps {
		a.Runs.Steps[i].raw = raw.Runs.Steps[i]
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using is %q; the harness runs composite actions", a.Runs.Using)
	}
	return a
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
