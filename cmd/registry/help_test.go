package main

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// invocations are every command of commands() plus the actions of token and pin, as the
// words that start their command line.
func invocations() [][]string {
	var out [][]string
	for _, name := range commandNames() {
		out = append(out, []string{name})
	}
	for _, a := range tokenActions {
		out = append(out, []string{"token", a})
	}
	return append(out, []string{"pin", "show"}, []string{"pin", "reset"})
}

func TestHelpEveryCommand(t *testing.T) {
	for _, words := range invocations() {
		for _, flag := range []string{"-h", "--help", "-help"} {
			name := strings.Join(words, " ")
			t.Run(name+" "+flag, func(t *testing.T) {
				c, out, errOut := testCLI(map[string]string{"REGISTRY_DATA": t.TempDir()})
				code := run(context.Background(), append(append([]string{}, words...), flag), c)
				if code != exitOK {
					t.Errorf("exit %d, want 0; stderr: %s", code, errOut)
				}
				h := commands()[words[0]].help
				got := out.String()
				for _, want := range []string{
					"registry " + words[0] + ": " + h.Summary + "\n",
					"\nusage: registry " + words[0],
					"\nflags",
					"\nexample:\n  ",
				} {
					if !strings.Contains(got, want) {
						t.Errorf("help does not contain %q:\n%s", want, got)
					}
				}
				if h.Summary == "" || strings.Contains(h.Summary, "\n") || strings.TrimSpace(h.Example) == "" {
					t.Errorf("help of %s needs a one-line summary and an example: %+v", words[0], h)
				}
				if !strings.Contains(h.Example, "registry "+words[0]) {
					t.Errorf("the example of %s does not run it: %q", words[0], h.Example)
				}
				if errOut.String() != "" {
					t.Errorf("help wrote to stderr: %s", errOut)
				}
			})
		}
	}
}

func TestBadFlagEveryCommand(t *testing.T) {
	for _, words := range invocations() {
		name := strings.Join(words, " ")
		t.Run(name, func(t *testing.T) {
			c, out, errOut := testCLI(map[string]string{"REGISTRY_DATA": t.TempDir()})
			code := run(context.Background(), append(append([]string{}, words...), "--no-such-flag"), c)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			msg := errOut.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				t.Errorf("stderr is not one line:\n%s", msg)
			}
			if !strings.HasPrefix(msg, "registry "+words[0]) || !strings.Contains(msg, "no-such-flag") {
				t.Errorf("stderr %q does not name the command and the flag", msg)
			}
			if out.String() != "" {
				t.Errorf("stdout: %s", out)
			}
		})
	}
}

// TestUsageErrorsAreOneLine covers the usage errors commands find themselves: missing and
// extra arguments, unknown actions.
func TestUsageErrorsAreOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"lint", "a.yaml", "b.yaml"}, "registry lint: expected at most one FILE, found 2: a.yaml b.yaml (run `registry lint -h` for usage)\n"},
		{[]string{"verify"}, "registry verify: expected one package FILE, found 0 arguments (run `registry verify -h` for usage)\n"},
		{[]string{"lint", "a\nb.yaml", "c.yaml"}, "registry lint: expected at most one FILE, found 2: a b.yaml c.yaml (run `registry lint -h` for usage)\n"},
		{[]string{"token"}, "registry token: expected an action: create, list or revoke (run `registry token -h` for usage)\n"},
		{[]string{"token", "--help=1"}, "registry token: unknown action \"--help=1\"; expected create, list or revoke (run `registry token -h` for usage)\n"},
		{[]string{"token", "crate"}, "registry token: unknown action \"crate\"; did you mean `create`?; expected create, list or revoke (run `registry token -h` for usage)\n"},
		{[]string{"pin"}, "registry pin: expected an action: show or reset (run `registry pin -h` for usage)\n"},
		{[]string{"restore"}, "registry restore: expected one SNAPSHOT file, found 0 arguments (run `registry restore -h` for usage)\n"},
		{[]string{"conformance"}, "registry conformance: expected the extension's command after --, e.g. -- node dist/index.js (run `registry conformance -h` for usage)\n"},
		{[]string{"publish", "a.tar.gz", "--registry", "ftp://x"}, "registry publish: --registry \"ftp://x\": expected the registry's absolute http(s) base URL, e.g. https://plugins.example.com (or set REGISTRY_URL) (run `registry publish -h` for usage)\n"},
		{[]string{"serve", "extra"}, "registry serve: expected no argument, found \"extra\" (every setting is a flag, such as --data DIR) (run `registry serve -h` for usage)\n"},
		{[]string{"sync", "--sync-interval", "0"}, "registry sync: --sync-interval 0s: a loop needs a positive interval (e.g. 15m), or pass --once (run `registry sync -h` for usage)\n"},
		{[]string{"version", "x"}, "registry version: expected no argument, found \"x\" (run `registry version -h` for usage)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			c, _, errOut := testCLI(map[string]string{"REGISTRY_DATA": t.TempDir(), "REGISTRY_PLUGINS": "testdata/sync/plugins.yaml"})
			if code := run(context.Background(), tt.args, c); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if diff := cmp.Diff(tt.want, errOut.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownCommandSuggestsTheNearest(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"verfy", "registry: unknown command \"verfy\"; did you mean `verify`? (run `registry -h` for the list)\n"},
		{"lnt", "registry: unknown command \"lnt\"; did you mean `lint`? (run `registry -h` for the list)\n"},
		{"pubilsh", "registry: unknown command \"pubilsh\"; did you mean `publish`? (run `registry -h` for the list)\n"},
		{"pakc", "registry: unknown command \"pakc\"; did you mean `pack`? (run `registry -h` for the list)\n"},
		{"publsh", "registry: unknown command \"publsh\"; did you mean `publish`? (run `registry -h` for the list)\n"},
		{"tok", "registry: unknown command \"tok\"; did you mean `token`? (run `registry -h` for the list)\n"},
		{"frobnicate", "registry: unknown command \"frobnicate\" (run `registry -h` for the list)\n"},
	}
	for _, tt := range tests {
		c, out, errOut := testCLI(nil)
		if code := run(context.Background(), []string{tt.arg}, c); code != exitUsage {
			t.Errorf("%s: exit %d, want %d", tt.arg, code, exitUsage)
		}
		if diff := cmp.Diff(tt.want, errOut.String()); diff != "" || out.String() != "" {
			t.Errorf("%s: stderr (-want +got):\n%s\nstdout: %s", tt.arg, diff, out)
		}
	}
}

func TestTopLevelHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		c, out, _ := testCLI(nil)
		if code := run(context.Background(), args, c); code != exitOK {
			t.Errorf("%v: exit %d, want 0", args, code)
		}
		for _, name := range commandNames() {
			if !strings.Contains(out.String(), "\n  "+name+" ") {
				t.Errorf("%v: the command list lacks %s:\n%s", args, name, out)
			}
		}
	}
	c, out, _ := testCLI(nil)
	if code := run(context.Background(), []string{"help", "lint"}, c); code != exitOK || !strings.Contains(out.String(), "usage: registry lint") {
		t.Errorf("registry help lint: exit %d, output:\n%s", code, out)
	}
	c, _, errOut := testCLI(nil)
	if code := run(context.Background(), nil, c); code != exitUsage || !strings.Contains(errOut.String(), "usage: registry COMMAND") {
		t.Errorf("registry without a command: exit %d, stderr:\n%s", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		c, out, errOut := testCLI(nil)
		if code := run(context.Background(), args, c); code != exitOK {
			t.Errorf("%v: exit %d; stderr %s", args, code, errOut)
		}
		info, ok := debug.ReadBuildInfo()
		if want := versionLine(info, ok) + "\n"; out.String() != want {
			t.Errorf("%v: printed %q, want %q", args, out, want)
		}
	}
}

func TestVersionLine(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "a9c9e269cc63"},
		{Key: "vcs.time", Value: "2026-12-01T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "registry devel"},
		{"go run", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "registry devel"},
		{"checkout build", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true,
			"registry devel (revision a9c9e269cc63, 2026-12-01T08:00:00Z, modified)"},
		{"go install @version", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs[:3]}, true,
			"registry v1.4.0 (revision a9c9e269cc63, 2026-12-01T08:00:00Z)"},
	}
	for _, tt := range tests {
		if got := versionLine(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"create", "list", "revoke"}
	tests := []struct{ in, want string }{
		{"creat", "; did you mean `create`?"},
		{"lst", "; did you mean `list`?"},
		{"rev", "; did you mean `revoke`?"},
		{"delete", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, names); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSyncHelpListsOnlyWhatSyncUses keeps serve-only settings out of sync's flags.
func TestSyncHelpListsOnlyWhatSyncUses(t *testing.T) {
	c, out, _ := testCLI(nil)
	if code := run(context.Background(), []string{"sync", "--help"}, c); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range append([]string{"once"}, syncSettings...) {
		if !strings.Contains(out.String(), "\n  --"+want+" ") && !strings.Contains(out.String(), "\n  --"+want+"\n") {
			t.Errorf("sync --help lacks --%s", want)
		}
	}
	for _, serveOnly := range []string{"addr", "demo", "max-body", "rate-auth", "oidc-issuer", "trust-proxy", "log-format"} {
		if strings.Contains(out.String(), "--"+serveOnly) {
			t.Errorf("sync --help lists the serve-only --%s:\n%s", serveOnly, out)
		}
	}
	c, _, errOut := testCLI(nil)
	if code := run(context.Background(), []string{"sync", "--addr", ":1"}, c); code != exitUsage || !strings.Contains(errOut.String(), "-addr") {
		t.Errorf("sync --addr: exit %d, stderr %s; want a usage error", code, errOut)
	}
}
