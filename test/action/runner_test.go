package action_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// offlineSteps are the `uses:` steps of action.yml the harness cannot run offline, and why
// the run is still faithful without them. A `uses:` step not listed fails the test: a new
// one must be judged here.
var offlineSteps = map[string]string{
	"actions/setup-go":                "Go is already installed: the test's own toolchain is on PATH",
	"actions/attest-build-provenance": "needs Sigstore's public Fulcio and Rekor; the runs here use attest: false, which skips it",
}

// runner simulates a GitHub Actions runner executing a composite action's steps: the
// GITHUB_* and RUNNER_* variables, a fresh GITHUB_OUTPUT, GITHUB_ENV and GITHUB_PATH file
// per step whose contents are applied as the runner applies them, and the `${{ }}`
// expressions the steps use.
type runner struct {
	t          *testing.T
	actionPath string
	inputs     map[string]string
	env        map[string]string // the job's environment, GITHUB_ENV additions included
	path       []string          // GITHUB_PATH additions, newest first
	outputs    map[string]map[string]string
	skipped    []string // "name: reason" of the steps not run
	logs       map[string]string
}

// stepResult is one step's outcome.
type stepResult struct {
	name   string
	output string // stdout and stderr
	err    error
}

// runAction runs every step of a in order and stops at the first failing one, as the
// runner does for steps without continue-on-error.
func (r *runner) runAction(a actionFile) []stepResult {
	var results []stepResult
	for _, s := range a.Runs.Steps {
		res := r.step(s)
		results = append(results, res)
		if res.err != nil {
			break
		}
	}
	return results
}

func (r *runner) step(s actionStep) stepResult {
	res := stepResult{name: s.Name}
	if s.If != "" {
		ok, err := r.cond(s.If)
		if err != nil {
			res.err = fmt.Errorf("step %q: %w", s.Name, err)
			return res
		}
		if !ok {
			r.skipped = append(r.skipped, s.Name+": if: "+s.If+" is false")
			return res
		}
	}
	if s.Uses != "" {
		name, _, _ := strings.Cut(s.Uses, "@")
		why, ok := offlineSteps[name]
		if !ok {
			res.err = fmt.Errorf("step %q uses %s, which the harness neither runs nor lists in offlineSteps", s.Name, s.Uses)
			return res
		}
		r.skipped = append(r.skipped, s.Name+": "+why)
		return res
	}
	res.output, res.err = r.script(s)
	return res
}

// script runs a `run:` step as the runner runs `shell: bash`: bash --noprofile --norc
// -eo pipefail on a file holding the script.
func (r *runner) script(s actionStep) (string, error) {
	if s.Shell != "bash" {
		return "", fmt.Errorf("step %q: shell %q; composite run steps must name shell: bash", s.Name, s.Shell)
	}
	script, err := r.expand(s.Run)
	if err != nil {
		return "", fmt.Errorf("step %q: %w", s.Name, err)
	}
	dir := r.env["GITHUB_WORKSPACE"]
	if s.WorkingDirectory != "" {
		if dir, err = r.expand(s.WorkingDirectory); err != nil {
			return "", fmt.Errorf("step %q: working-directory: %w", s.Name, err)
		}
	}
	files := r.commandFiles()
	env, err := r.stepEnv(s, files)
	if err != nil {
		return "", fmt.Errorf("step %q: %w", s.Name, err)
	}
	file := filepath.Join(r.env["RUNNER_TEMP"], fmt.Sprintf("step-%d.sh", len(r.logs)))
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", file)
	cmd.Dir, cmd.Env = dir, env
	out, runErr := cmd.CombinedOutput()
	r.logs[s.Name] = string(out)
	if err := r.applyCommandFiles(s.ID, files); err != nil {
		return string(out), fmt.Errorf("step %q: %w", s.Name, err)
	}
	if runErr != nil {
		return string(out), fmt.Errorf("step %q: %w", s.Name, runErr)
	}
	return string(out), nil
}

// stepEnv is the process environment of a step: the job's, the step's own env: (expanded),
// the file-command paths, and PATH with the GITHUB_PATH additions first.
func (r *runner) stepEnv(s actionStep, files map[string]string) ([]string, error) {
	m := map[string]string{}
	for k, v := range r.env {
		m[k] = v
	}
	for k, v := range s.Env {
		x, err := r.expand(v)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		m[k] = x
	}
	for k, v := range files {
		m[k] = v
	}
	m["PATH"] = strings.Join(append(append([]string(nil), r.path...), r.env["PATH"]), string(os.PathListSeparator))
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out, nil
}

func (r *runner) commandFiles() map[string]string {
	dir := filepath.Join(r.env["RUNNER_TEMP"], "_runner_file_commands", fmt.Sprint(len(r.logs)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	files := map[string]string{}
	for _, name := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		files[name] = filepath.Join(dir, strings.ToLower(name))
		if err := os.WriteFile(files[name], nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	return files
}

// applyCommandFiles reads what a step wrote to its file commands: outputs for later
// `steps.<id>.outputs`, variables for later steps, PATH entries prepended.
func (r *runner) applyCommandFiles(id string, files map[string]string) error {
	outs, err := readKeyValues(files["GITHUB_OUTPUT"])
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	if id != "" {
		r.outputs[id] = outs
	}
	envs, err := readKeyValues(files["GITHUB_ENV"])
	if err != nil {
		return fmt.Errorf("GITHUB_ENV: %w", err)
	}
	for k, v := range envs {
		r.env[k] = v
	}
	paths, err := os.ReadFile(files["GITHUB_PATH"])
	if err != nil {
		return err
	}
	for _, p := range strings.Split(strings.TrimSpace(string(paths)), "\n") {
		if p = strings.TrimSpace(p); p != "" {
			r.path = append([]string{p}, r.path...)
		}
	}
	return nil
}

// readKeyValues parses a GITHUB_OUTPUT or GITHUB_ENV file: `name=value` lines and
// `name<<DELIMITER` multi-line values.
func readKeyValues(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			out[k] = strings.Join(val, "\n")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %q: expected name=value or name<<DELIMITER", line)
		}
		out[k] = v
	}
	return out, sc.Err()
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand replaces the `${{ }}` expressions of s; an expression the harness does not know
// is an error, so a step that starts using one cannot pass by reading it as "".
func (r *runner) expand(s string) (string, error) {
	var firstErr error
	out := expr.ReplaceAllStringFunc(s, func(m string) string {
		v, err := r.lookup(expr.FindStringSubmatch(m)[1])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	return out, firstErr
}

// lookup evaluates a context reference: inputs.*, github.*, runner.temp, env.*,
// steps.<id>.outputs.*.
func (r *runner) lookup(ref string) (string, error) {
	parts := strings.Split(ref, ".")
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		v, ok := r.inputs[parts[1]]
		if !ok {
			return "", fmt.Errorf("${{ %s }}: action.yml declares no input %q", ref, parts[1])
		}
		return v, nil
	case ref == "github.action_path":
		return r.actionPath, nil
	case len(parts) == 2 && parts[0] == "github":
		return r.env["GITHUB_"+strings.ToUpper(parts[1])], nil
	case ref == "runner.temp":
		return r.env["RUNNER_TEMP"], nil
	case len(parts) == 2 && parts[0] == "env":
		return r.env[parts[1]], nil
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
		return r.outputs[parts[1]][parts[3]], nil // a skipped step's outputs are empty
	}
	return "", fmt.Errorf("${{ %s }}: an expression the harness does not evaluate", ref)
}

var equality = regexp.MustCompile(`^\s*([A-Za-z0-9_.-]+)\s*(==|!=)\s*'([^']*)'\s*$`)

// cond evaluates an `if:` of the form `context.ref == 'literal'` (or !=).
func (r *runner) cond(s string) (bool, error) {
	m := equality.FindStringSubmatch(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "${{"), "}}"))
	if m == nil {
		return false, fmt.Errorf("if: %q: the harness evaluates only `ref == 'literal'` and `!=`", s)
	}
	v, err := r.lookup(m[1])
	if err != nil {
		return false, err
	}
	return (v == m[3]) == (m[2] == "=="), nil
}
