package action_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/test/internal/oidctest"
)

const (
	listedRepo = "acme/kandev-stats"
	packageID  = "acme-stats"
	pkgFile    = "acme-stats-0.1.0.tar.gz"
)

// The list the local registry runs with: acme-stats may be published from listedRepo.
const pluginsYAML = `plugins:
  - id: acme-stats
    repo: acme/kandev-stats
    kind: plugin
    categories: [analytics]
    owners: [acme]
`

// TestActionPublishesByTrustedPublishing runs action.yml's steps as a runner would, on a
// tag push of listedRepo with `permissions: id-token: write`, against a local registry
// whose trusted issuer is a local OIDC issuer. The release must be verified by the
// Action, published with an upload token exchanged for the job's identity token, and
// listed in index.json; a job of a repository the list does not name must be refused.
func TestActionPublishesByTrustedPublishing(t *testing.T) {
	is := oidctest.New(t)
	tokens := newTokenService(t, is)
	reg := startRegistry(t, pluginsYAML, is.URL)
	workspace := t.TempDir()
	makePackage(t, workspace)
	a := loadAction(t)
	var lastAudit int // audit entries already checked

	t.Run("unlisted repository", func(t *testing.T) {
		r := newRunner(t, a, tokens, workspace, "globex/kandev-stats", reg.url)
		results := r.runAction(a)
		last := results[len(results)-1]
		if last.name != "Publish" || last.err == nil {
			t.Fatalf("want the Publish step to fail, got step %q: %v\n%s", last.name, last.err, last.output)
		}
		for _, want := range []string{"HTTP 403", "globex/kandev-stats"} {
			if !strings.Contains(last.output, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, last.output)
			}
		}
		if v := indexVersion(t, reg, packageID); v != "" {
			t.Errorf("index.json lists %s@%s after a refused publish", packageID, v)
		}
	})

	t.Run("listed repository", func(t *testing.T) {
		r := newRunner(t, a, tokens, workspace, listedRepo, reg.url)
		results := r.runAction(a)
		for _, res := range results {
			if res.err != nil {
				t.Fatalf("%v\n%s", res.err, res.output)
			}
		}
		checkSteps(t, r, results)
		if got := tokens.requested(); !cmp.Equal(got, []string{reg.url}) {
			t.Errorf("identity tokens requested for audiences %q; want one, for the registry URL %q", got, reg.url)
		}
		if v := indexVersion(t, reg, packageID); v != "0.1.0" {
			t.Errorf("index.json lists %s at version %q; want 0.1.0", packageID, v)
		}
		lastAudit = checkAudit(t, reg, r.env["GITHUB_WORKFLOW_REF"])
	})

	// The token input: a publisher token from a secret, for registries without trusted
	// publishing; the job's identity is then not asked for.
	t.Run("publisher token", func(t *testing.T) {
		setVersion(t, filepath.Join(workspace, packageID), "0.2.0")
		pack(t, workspace, "pack", packageID)
		r := newRunner(t, a, tokens, workspace, listedRepo, reg.url)
		r.inputs["package"], r.inputs["token"] = packageID+"-0.2.0.tar.gz", reg.publisherToken(t, "acme")
		for _, res := range r.runAction(a) {
			if res.err != nil {
				t.Fatalf("%v\n%s", res.err, res.output)
			}
		}
		if got := tokens.requested(); len(got) != 0 {
			t.Errorf("with a token input the Action asked for identity tokens %q", got)
		}
		if v := indexVersion(t, reg, packageID); v != "0.2.0" {
			t.Errorf("index.json lists %s at version %q; want 0.2.0", packageID, v)
		}
		if got := newAudit(t, reg, lastAudit); !cmp.Equal(got, []string{"publish publisher:acme " + packageID + "@0.2.0 ok"}) {
			t.Errorf("audit entries of the token publish: %q; want one publish by publisher:acme", got)
		}
	})
}

// setVersion rewrites the version line of the manifest in dir.
func setVersion(t *testing.T, dir, version string) {
	t.Helper()
	path := filepath.Join(dir, "manifest.yaml")
	src := string(mustRead(t, path))
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "version:") {
			lines[i] = "version: \"" + version + "\""
		}
	}
	mustWrite(t, path, strings.Join(lines, "\n"))
}

// makePackage writes acme-stats-0.1.0.tar.gz into dir as an author's workflow would:
// `registry init plugin`, then `registry pack`.
func makePackage(t *testing.T, dir string) {
	t.Helper()
	pack(t, dir, "init", "plugin", packageID)
	pack(t, dir, "pack", packageID)
	if _, err := os.Stat(filepath.Join(dir, pkgFile)); err != nil {
		t.Fatal(err)
	}
}

// pack runs the registry CLI in dir, as an author's build does before the Action.
func pack(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(registryBin, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("registry %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newRunner is a runner for a tag push v0.1.0 of repo, with the identity token request
// variables set (permissions: id-token: write) and the inputs a release workflow passes.
func newRunner(t *testing.T, a actionFile, tokens *tokenService, workspace, repo, registryURL string) *runner {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	owner, _, _ := strings.Cut(repo, "/")
	job := map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_REPOSITORY": repo, "GITHUB_REPOSITORY_ID": "4242", "GITHUB_REPOSITORY_OWNER": owner, "GITHUB_REPOSITORY_OWNER_ID": "77",
		"GITHUB_REF": "refs/tags/v0.1.0", "GITHUB_REF_NAME": "v0.1.0", "GITHUB_REF_TYPE": "tag",
		"GITHUB_SHA":          "4f0c1e9d2b7a8c3e5f6a7b8c9d0e1f2a3b4c5d6e",
		"GITHUB_WORKFLOW":     "release",
		"GITHUB_WORKFLOW_REF": repo + "/.github/workflows/release.yml@refs/tags/v0.1.0",
		"GITHUB_EVENT_NAME":   "push", "GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "publish",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": "https://api.github.com",
		"GITHUB_WORKSPACE": workspace, "GITHUB_ACTION_PATH": root, "GITHUB_ACTION_REPOSITORY": "pluginyard/registry",
		"RUNNER_TEMP": t.TempDir(), "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64",
		"ACTIONS_ID_TOKEN_REQUEST_URL": tokens.url(), "ACTIONS_ID_TOKEN_REQUEST_TOKEN": tokens.requestToken,
		"GOTOOLCHAIN": "local",
	}
	tokens.forJob(job)
	env := hostEnv()
	for k, v := range job {
		env[k] = v
	}
	inputs := map[string]string{}
	for name, in := range a.Inputs {
		inputs[name] = in.Default
	}
	inputs["package"], inputs["registry"] = pkgFile, registryURL
	return &runner{t: t, actionPath: root, inputs: inputs, env: env, outputs: map[string]map[string]string{}, logs: map[string]string{}}
}

// hostEnv is this process's environment without anything a runner sets or the Action
// reads, so the run depends only on what newRunner sets; the Go toolchain's variables stay.
func hostEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "REGISTRY_") {
			continue
		}
		env[k] = v
	}
	return env
}

// checkSteps asserts which steps were skipped, that the CLI the Action built is the one on
// PATH, and what verify and publish printed.
func checkSteps(t *testing.T, r *runner, results []stepResult) {
	t.Helper()
	wantSkipped := []string{
		"Set up Go: " + offlineSteps["actions/setup-go"],
		"Attest build provenance: if: inputs.attest == 'true' is false",
	}
	if diff := cmp.Diff(wantSkipped, r.skipped); diff != "" {
		t.Errorf("skipped steps (-want +got):\n%s", diff)
	}
	built := filepath.Join(r.env["RUNNER_TEMP"], "pluginyard-registry")
	if !slices.Contains(r.path, built) {
		t.Errorf("GITHUB_PATH additions %q do not include %s, where the Action builds the CLI", r.path, built)
	}
	if _, err := os.Stat(filepath.Join(built, "registry")); err != nil {
		t.Errorf("the Action did not build the CLI: %v", err)
	}
	wantOut := map[string][]string{
		"Verify the package": {pkgFile + ": valid, 0 errors"},
		"Publish": {"trusted publishing: upload token for " + packageID, "published " + packageID + "@0.1.0 (plugin, ",
			"page:    " + r.inputs["registry"] + "/plugins/" + packageID},
	}
	for step, wants := range wantOut {
		for _, want := range wants {
			if !strings.Contains(r.logs[step], want) {
				t.Errorf("step %q did not print %q:\n%s", step, want, r.logs[step])
			}
		}
	}
}

// indexVersion is the version index.json lists for id ("" when it does not list it).
func indexVersion(t *testing.T, reg *registry, id string) string {
	t.Helper()
	var doc struct {
		Plugins []struct {
			ID      string `json:"id"`
			Version string `json:"version"`
		} `json:"plugins"`
	}
	reg.getJSON(t, "/index.json", &doc)
	for _, p := range doc.Plugins {
		if p.ID == id {
			return p.Version
		}
	}
	return ""
}

type auditEntry struct {
	Actor   string         `json:"actor"`
	Action  string         `json:"action"`
	Target  string         `json:"target"`
	Outcome string         `json:"outcome"`
	Detail  map[string]any `json:"detail"`
}

// auditLog is the registry's audit log, newest first.
func auditLog(t *testing.T, reg *registry) []auditEntry {
	t.Helper()
	var log struct {
		Entries []auditEntry `json:"entries"`
	}
	reg.getJSON(t, "/api/v1/admin/audit", &log)
	return log.Entries
}

// newAudit describes the publish and token.oidc entries after the first seen ones.
func newAudit(t *testing.T, reg *registry, seen int) []string {
	t.Helper()
	entries := auditLog(t, reg)
	var got []string
	for _, e := range entries[:len(entries)-seen] {
		if e.Action == "token.oidc" || e.Action == "publish" {
			got = append(got, e.Action+" "+e.Actor+" "+e.Target+" "+e.Outcome)
		}
	}
	return got
}

// checkAudit asserts the publish went through trusted publishing: an accepted exchange of
// listedRepo's identity, then a publish by the upload token it gave. It returns the number
// of entries in the log.
func checkAudit(t *testing.T, reg *registry, workflowRef string) int {
	t.Helper()
	entries := auditLog(t, reg)
	var got []string
	for _, e := range entries {
		if e.Action == "token.oidc" || e.Action == "publish" {
			got = append(got, e.Action+" "+e.Actor+" "+e.Target+" "+e.Outcome)
		}
		if e.Action == "token.oidc" && e.Outcome == "ok" && e.Detail["workflow_ref"] != workflowRef {
			t.Errorf("token.oidc audit workflow_ref = %v; want the job's %s", e.Detail["workflow_ref"], workflowRef)
		}
	}
	want := []string{ // newest first
		"publish upload:oidc:" + listedRepo + " " + packageID + "@0.1.0 ok",
		"token.oidc oidc:" + listedRepo + " " + listedRepo + " ok",
		"token.oidc oidc:globex/kandev-stats globex/kandev-stats refused",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
	return len(entries)
}
