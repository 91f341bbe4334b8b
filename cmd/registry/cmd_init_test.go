package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// runMain runs the registry command line through run, as main does.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, stdin: strings.NewReader(""), getenv: func(string) string { return "" }}
	code = run(context.Background(), args, c)
	return code, out.String(), errb.String()
}

var initKinds = []struct {
	kind, id, file string
	want           []string // files init writes
}{
	{"plugin", "acme-stats", "acme-stats-0.1.0.tar.gz", []string{
		".gitattributes", ".github/workflows/release.yml", ".gitignore", "README.md", "icon.svg", "manifest.yaml",
		"server/plugin-darwin-arm64", "server/plugin-linux-amd64", "server/plugin-linux-arm64"}},
	{"canvas", "acme-board", "acme-board-0.1.0.tar.gz", []string{
		".gitattributes", ".github/workflows/release.yml", ".gitignore", "README.md", "icon.svg", "manifest.yaml", "ui/index.html"}},
	{"extension", "@acme/todo-trigger", "acme-todo-trigger-0.1.0.tar.gz", []string{
		".gitattributes", ".github/workflows/release.yml", ".gitignore", "README.md", "curupira-extension.toml", "index.mjs"}},
}

// TestInitPackVerify runs init for every kind, then pack and verify on the tree as written,
// through run: both must accept it unchanged, with no problem at all.
func TestInitPackVerify(t *testing.T) {
	for _, k := range initKinds {
		t.Run(k.kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "src")
			code, stdout, stderr := runMain(t, "init", k.kind, dir, "--id", k.id)
			if code != exitOK || stderr != "" {
				t.Fatalf("init: exit %d stdout %q stderr %q", code, stdout, stderr)
			}
			if diff := cmp.Diff(k.want, treeFiles(t, dir)); diff != "" {
				t.Errorf("files written (-want +got):\n%s", diff)
			}
			out := t.TempDir()
			t.Chdir(out)
			packAndVerify(t, dir, k.file)
		})
	}
}

// TestInitPackVerifyLikeTheWorkflow packs what the release workflow packs, the committed
// files from `git archive`, which leaves out the export-ignore paths.
func TestInitPackVerifyLikeTheWorkflow(t *testing.T) {
	for _, tool := range []string{"git", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	for _, k := range initKinds {
		t.Run(k.kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			if code, _, stderr := runMain(t, "init", k.kind, dir, "--id", k.id); code != exitOK {
				t.Fatalf("init: exit %d stderr %q", code, stderr)
			}
			git(t, dir, "init", "-q")
			git(t, dir, "add", ".")
			git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
			archive := git(t, dir, "archive", "--format=tar", "HEAD")
			src := t.TempDir()
			tar := exec.Command("tar", "-x", "-C", src)
			tar.Stdin = bytes.NewReader(archive)
			if out, err := tar.CombinedOutput(); err != nil {
				t.Fatalf("tar -x: %v: %s", err, out)
			}
			var want []string
			for _, f := range k.want {
				if !strings.HasPrefix(f, ".git") {
					want = append(want, f)
				}
			}
			if diff := cmp.Diff(want, treeFiles(t, src)); diff != "" {
				t.Errorf("git archive (-want +got):\n%s", diff)
			}
			t.Chdir(t.TempDir())
			packAndVerify(t, src, k.file)
		})
	}
}

func packAndVerify(t *testing.T, src, file string) {
	t.Helper()
	code, stdout, stderr := runMain(t, "pack", src)
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "wrote "+file+" ") {
		t.Fatalf("pack: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runMain(t, "verify", file)
	if code != exitOK || !strings.HasSuffix(stdout, file+": valid, 0 errors, 0 warnings\n") {
		t.Errorf("verify: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func git(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, errb.String())
	}
	return out
}

// treeFiles lists the regular files under dir as sorted slash paths.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestInitDefaultIDIsTheFolderName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hello-stats")
	code, stdout, stderr := runMain(t, "init", "plugin", dir)
	if code != exitOK || !strings.HasPrefix(stdout, `wrote plugin "hello-stats" into `) {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nid: \"hello-stats\"\n") {
		t.Errorf("manifest.yaml does not carry the folder name as id:\n%s", data)
	}
}

// TestInitRefusals checks the usage errors: each exits 2, says what is wrong on one
// line (ids: with the manifest rule that refused them) and writes nothing.
func TestInitRefusals(t *testing.T) {
	tests := []struct {
		name    string
		args    func(dir string) []string
		wantErr []string
	}{
		{"invalid --id", func(dir string) []string { return []string{"init", "plugin", dir, "--id", "NC_Greeter!"} },
			[]string{`--id "NC_Greeter!"`, "[manifest.id.pattern]", "--id ID"}},
		{"--id ending in .config", func(dir string) []string { return []string{"init", "canvas", dir, "--id", "acme.config"} },
			[]string{"[manifest.id.config_suffix]"}},
		{"invalid extension name", func(dir string) []string { return []string{"init", "extension", dir, "--id", "@Acme/x"} },
			[]string{"[extension.name.format]"}},
		{"invalid folder name", func(dir string) []string { return []string{"init", "plugin", filepath.Join(dir, "My Plugin")} },
			[]string{`the folder name "My Plugin", the default id,`, "[manifest.id.pattern]", "--id ID"}},
		{"unknown kind", func(dir string) []string { return []string{"init", "theme", dir} },
			[]string{`unknown kind "theme"`}},
		{"no DIR", func(dir string) []string { return []string{"init", "plugin"} },
			[]string{"expected a KIND (plugin, canvas or extension) and a DIR, found 1 argument"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := runMain(t, tt.args(dir)...)
			if code != exitUsage || stdout != "" {
				t.Errorf("exit %d stdout %q; want exit %d, no stdout", code, stdout, exitUsage)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if files := treeFiles(t, dir); len(files) != 0 {
				t.Errorf("files written: %v", files)
			}
		})
	}
}

func TestInitNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	readme := filepath.Join(dir, "README.md")
	launcher := filepath.Join(dir, "server", "plugin-linux-amd64")
	if err := os.Mkdir(filepath.Dir(launcher), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{mine, readme, launcher} {
		if err := os.WriteFile(f, []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runMain(t, "init", "plugin", dir, "--id", "acme-stats")
	if code != exitUsage || !strings.Contains(stderr, "folder is not empty") || !strings.Contains(stderr, "--force") {
		t.Fatalf("without --force: exit %d stderr %q", code, stderr)
	}
	if diff := cmp.Diff([]string{"README.md", "notes.txt", "server/plugin-linux-amd64"}, treeFiles(t, dir)); diff != "" {
		t.Fatalf("files after the refusal (-want +got):\n%s", diff)
	}
	if code, _, stderr := runMain(t, "init", "plugin", dir, "--id", "acme-stats", "--force"); code != exitOK {
		t.Fatalf("with --force: exit %d stderr %q", code, stderr)
	}
	if got, _ := os.ReadFile(mine); string(got) != "mine\n" {
		t.Errorf("--force changed a file outside the tree: %q", got)
	}
	if got, _ := os.ReadFile(readme); !strings.HasPrefix(string(got), "# Acme Stats\n") {
		t.Errorf("--force did not replace README.md: %q", got)
	}
	if info, err := os.Stat(launcher); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("--force left the replaced launcher with mode %v (%v), want 0755", info.Mode(), err)
	}
}

func TestInitHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		code, stdout, _ := runMain(t, "init", arg)
		for _, w := range []string{"usage: registry init plugin|canvas|extension DIR [--id ID] [--force]", "--force", "example:"} {
			if code != exitOK || !strings.Contains(stdout, w) {
				t.Errorf("%s: exit %d, stdout lacks %q:\n%s", arg, code, w, stdout)
			}
		}
	}
}

// TestInitPluginLauncherRuns starts the launcher as a host would: it runs, says what it
// is and exits 1.
func TestInitPluginLauncherRuns(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := filepath.Join(t.TempDir(), "acme-stats")
	if code, _, stderr := runMain(t, "init", "plugin", dir); code != exitOK {
		t.Fatalf("init: exit %d stderr %q", code, stderr)
	}
	launcher := filepath.Join(dir, "server", "plugin-linux-amd64")
	info, err := os.Stat(launcher)
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("launcher mode %v (%v), want 0755", info.Mode(), err)
	}
	out, err := exec.Command(launcher).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "acme-stats linux-amd64: this is the launcher written by `registry init`") {
		t.Errorf("launcher: %v, output %q", err, out)
	}
}

// TestInitExtensionConformance runs the written extension through the protocol checks.
func TestInitExtensionConformance(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := filepath.Join(t.TempDir(), "todo-trigger")
	if code, _, stderr := runMain(t, "init", "extension", dir); code != exitOK {
		t.Fatalf("init: exit %d stderr %q", code, stderr)
	}
	todo := filepath.Join(dir, "TODO.md")
	if err := os.WriteFile(todo, []byte("# Work\n- [x] done already\n- [ ] fix the login page\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, "conformance", "--table", `todo-item={"path": "`+filepath.ToSlash(todo)+`"}`, "--", node, filepath.Join(dir, "index.mjs"))
	if code != exitOK || !strings.Contains(stdout, "15 checks: 15 passed, 0 failed, 0 skipped") {
		t.Errorf("conformance: exit %d stderr %q\n%s", code, stderr, stdout)
	}
	// The open item, once, with its line; the checked one never.
	if !strings.Contains(stdout, "todo-item: 1 item(s), then values null") || !strings.Contains(stdout, "todo-item: accepted 2 field(s)") {
		t.Errorf("poll did not yield exactly the open item:\n%s", stdout)
	}
}

// TestInitWorkflow reads the release workflow as YAML: OIDC permissions, the pack step's
// file name, and the repository's own action with attest: true.
func TestInitWorkflow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	if code, _, stderr := runMain(t, "init", "extension", dir, "--id", "@acme/todo-trigger"); code != exitOK {
		t.Fatalf("init: exit %d stderr %q", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On          map[string]map[string][]string `yaml:"on"`
		Permissions map[string]string              `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Name, Uses, Run string
				With            map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"contents": "read", "id-token": "write", "attestations": "write"}, wf.Permissions); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"v*"}, wf.On["push"]["tags"]); diff != "" {
		t.Errorf("on.push.tags (-want +got):\n%s", diff)
	}
	var packRun string
	var publish map[string]string
	for _, s := range wf.Jobs["publish"].Steps {
		if s.Name == "Pack" {
			packRun = s.Run
		}
		if s.Uses == "pluginyard/registry@v1" {
			publish = s.With
		}
	}
	if !strings.Contains(packRun, `file="acme-todo-trigger-${GITHUB_REF_NAME#v}.tar.gz"`) || !strings.Contains(packRun, `registry pack "$src" -o "$file"`) {
		t.Errorf("pack step:\n%s", packRun)
	}
	want := map[string]string{"package": "${{ steps.pack.outputs.file }}", "registry": "${{ env.REGISTRY_URL }}", "attest": "true"}
	if diff := cmp.Diff(want, publish); diff != "" {
		t.Errorf("pluginyard/registry@v1 inputs (-want +got):\n%s", diff)
	}
}
