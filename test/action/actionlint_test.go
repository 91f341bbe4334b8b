package action_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/scaffold"
	"github.com/pluginyard/registry/test/internal/markdown"
	"github.com/pluginyard/registry/web"
)

// ActionlintVersion is the actionlint .ci/run installs; an older or newer one may judge
// the same workflow differently, so another version is refused rather than trusted.
const ActionlintVersion = "1.7.7"

// actionlint returns the path of actionlint at ActionlintVersion. Without it the test is
// skipped, except under CI=true, where a missing linter would hide every finding.
func actionlint(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("actionlint")
	if err != nil {
		if gobin := goBin(); gobin != "" {
			path, err = exec.LookPath(filepath.Join(gobin, "actionlint"))
		}
	}
	if err != nil {
		msg := "actionlint not found on PATH or in $(go env GOPATH)/bin; install it with " +
			"`go install github.com/rhysd/actionlint/cmd/actionlint@v" + ActionlintVersion + "` (.ci/run does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, err := exec.Command(path, "-version").Output()
	if err != nil {
		t.Fatalf("%s -version: %v", path, err)
	}
	if got, _, _ := strings.Cut(string(out), "\n"); strings.TrimSpace(got) != "v"+ActionlintVersion {
		t.Fatalf("%s is %q; the workflows are checked with v%s (go install github.com/rhysd/actionlint/cmd/actionlint@v%[3]s)",
			path, strings.TrimSpace(got), ActionlintVersion)
	}
	return path
}

func goBin() string {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), string(os.PathListSeparator))
	return filepath.Join(first, "bin")
}

// lintTarget is one workflow to check: where it was shown and its text.
type lintTarget struct {
	name string // a file name for actionlint's messages
	from string // where a reader sees it
	text string
}

func TestWorkflowsPassActionlint(t *testing.T) {
	bin := actionlint(t)
	targets := append(actionTargets(t), docTargets(t)...)
	targets = append(targets, webTargets(t)...)
	targets = append(targets, scaffoldTargets(t)...)
	for _, want := range []string{"action.yml as used", "action.yml steps", "docs/publishing.md", "/docs/authors", "registry init plugin", "registry init canvas", "registry init extension"} {
		if !hasTarget(targets, want) {
			t.Errorf("no workflow taken from %s: the extraction no longer finds it", want)
		}
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			if out, err := lint(t, bin, tg); err != nil {
				t.Errorf("actionlint refuses the workflow from %s: %v\n%s\n--- workflow:\n%s", tg.from, err, out, tg.text)
			}
		})
	}
}

func hasTarget(ts []lintTarget, from string) bool {
	for _, tg := range ts {
		if strings.HasPrefix(tg.from, from) {
			return true
		}
	}
	return false
}

// lint runs actionlint on one workflow in a repository of its own, which holds this
// repository's action.yml at its root so that `uses: ./` resolves to it.
func lint(t *testing.T, bin string, tg lintTarget) ([]byte, error) {
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows", tg.name+".yml")
	mustWrite(t, wf, tg.text)
	mustWrite(t, filepath.Join(dir, "action.yml"), string(mustRead(t, filepath.Join(repoRoot, "action.yml"))))
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), bin, "-no-color", wf)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// actionTargets checks action.yml twice: a workflow that uses it with its inputs (actionlint
// reads the metadata and checks every input passed exists and every required one is given),
// and its composite steps moved into a reusable workflow with the same inputs, so that the
// expressions and scripts in them are type-checked (and shellchecked, when shellcheck is there).
func actionTargets(t *testing.T) []lintTarget {
	uses := `name: use-action
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
  id-token: write
  attestations: write
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: publish
        uses: ./
        with:
          package: acme-stats-1.2.0.tar.gz
          registry: https://plugins.example.com
          attest: true
      - run: echo "bundle=$BUNDLE"
        env:
          BUNDLE: ${{ steps.publish.outputs.bundle-path }}
`
	return []lintTarget{
		{name: "action-as-used", from: "action.yml as used by a workflow", text: uses},
		{name: "action-steps", from: "action.yml steps, as a reusable workflow", text: stepsWorkflow(t)},
	}
}

// stepsWorkflow is action.yml's composite steps as the job of a workflow_call workflow.
func stepsWorkflow(t *testing.T) string {
	a := loadAction(t)
	inputs := map[string]any{}
	for name, in := range a.Inputs {
		spec := map[string]any{"type": "string", "required": in.Required, "description": in.Description}
		if !in.Required {
			spec["default"] = in.Default
		}
		inputs[name] = spec
	}
	steps := make([]map[string]any, 0, len(a.Runs.Steps))
	for _, s := range a.Runs.Steps {
		steps = append(steps, s.raw)
	}
	wf := map[string]any{
		"name": "action-steps",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"steps": map[string]any{"runs-on": "ubuntu-latest", "steps": steps}},
	}
	out, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// docTargets are the workflows and workflow fragments shown in the Markdown documents.
func docTargets(t *testing.T) []lintTarget {
	var out []lintTarget
	for _, doc := range []string{"README.md", "docs/publishing.md", "docs/limits.md", "docs/testing.md"} {
		blocks, err := markdown.Parse(doc, string(mustRead(t, filepath.Join(repoRoot, doc))))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.Lang != "yaml" && b.Lang != "yml" {
				continue
			}
			if text, ok := asWorkflow(b.Text); ok {
				out = append(out, lintTarget{name: fmt.Sprintf("%s-%d", strings.ReplaceAll(doc, "/", "-"), b.Line), from: b.Where(), text: text})
			}
		}
	}
	return out
}

var stepStart = regexp.MustCompile(`(?m)^\s*- (name|uses|run|id):`)

// asWorkflow returns a block as a whole workflow: as it is when it is one, or, when it is a
// list of steps (the docs show a step to replace), inside a job. Other YAML (plugins.yaml
// entries) is not a workflow.
func asWorkflow(text string) (string, bool) {
	if strings.Contains(text, "\njobs:") {
		return text, true
	}
	if !stepStart.MatchString(text) || strings.Contains(text, "plugins:") {
		return "", false
	}
	return `name: snippet
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
  id-token: write
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - id: pack
        run: echo "file=acme-stats-1.2.0.tar.gz" >> "$GITHUB_OUTPUT"
` + reindent(text, "      "), true
}

// reindent moves a block of lines so that its least indented line starts at indent.
func reindent(text, indent string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); least < 0 || n < least {
			least = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(indent + l[least:])
		}
		b.WriteString("\n")
	}
	return b.String()
}

var preCode = regexp.MustCompile(`(?s)<pre><code>(.*?)</code></pre>`)

// webTargets are the workflows on the /docs pages, rendered as the server renders them.
func webTargets(t *testing.T) []lintTarget {
	var out []lintTarget
	for _, section := range []string{web.DocsIndex, web.DocsAuthors, web.DocsOperators} {
		var buf bytes.Buffer
		if err := web.Docs(web.DocsPage{Section: section, PublicURL: "https://plugins.example.com"}).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		for i, m := range preCode.FindAllStringSubmatch(buf.String(), -1) {
			text := html.UnescapeString(m[1])
			if wf, ok := asWorkflow(text); ok {
				out = append(out, lintTarget{name: fmt.Sprintf("docs-%s-%d", section, i), from: "/docs/" + section, text: wf})
			}
		}
	}
	return out
}

// scaffoldTargets are the release workflows `registry init` writes, one per kind.
func scaffoldTargets(t *testing.T) []lintTarget {
	var out []lintTarget
	for _, kind := range scaffold.Kinds {
		files, err := scaffold.Tree(context.Background(), kind, "acme-"+string(kind))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range files {
			if strings.HasPrefix(f.Path, ".github/workflows/") {
				found = true
				out = append(out, lintTarget{name: "init-" + string(kind), from: "registry init " + string(kind) + " (" + f.Path + ")", text: string(f.Data)})
			}
		}
		if !found {
			t.Error(errors.New("registry init " + string(kind) + " writes no workflow under .github/workflows/"))
		}
	}
	return out
}
