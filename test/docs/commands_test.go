package docs_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/test/internal/markdown"
	"github.com/pluginyard/registry/web"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden and the marked sample blocks of the Markdown documents")

// documentsIn are the Markdown files whose commands and samples are checked: the README
// and docs/*.md; docs/reference is generated (`registry docs`) and checked for freshness
// elsewhere.
func documentsIn(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, "docs/"+filepath.Base(d))
	}
	if len(out) < 4 {
		t.Fatalf("found only %q: the documents moved", out)
	}
	return out
}

// shown is one `registry …` command a document shows.
type shown struct {
	where string // document and line, or /docs page
	cmd   string // normalized: `go run ./cmd/registry` is `registry`, no comment, one line
}

var continuation = regexp.MustCompile(`\\\n\s*`)

// commandsIn returns the `registry …` commands of a shell block: continuations joined,
// comments and leading VAR=value assignments dropped, `go run ./cmd/registry` as `registry`.
func commandsIn(where, text string) []shown {
	var out []shown
	for _, line := range strings.Split(continuation.ReplaceAllString(text, ""), "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		for len(fields) > 0 && strings.Contains(fields[0], "=") {
			fields = fields[1:]
		}
		cmd := strings.Join(fields, " ")
		cmd = strings.Replace(cmd, "go run ./cmd/registry ", "registry ", 1)
		if strings.HasPrefix(cmd, "registry ") {
			out = append(out, shown{where: where, cmd: cmd})
		}
	}
	return out
}

// shownCommands are every `registry …` command of the documents' shell blocks and of the
// /docs pages' code blocks.
func shownCommands(t *testing.T) []shown {
	var out []shown
	for _, doc := range documentsIn(t) {
		blocks, err := markdown.Read(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.Lang == "sh" || b.Lang == "bash" || b.Lang == "console" {
				out = append(out, commandsIn(fmt.Sprintf("%s:%d", doc, b.Line), b.Text)...)
			}
		}
	}
	for section, blocks := range docsPageBlocks(t) {
		for _, b := range blocks {
			if !strings.Contains(b, "\njobs:") { // a workflow's steps: test/action lints them
				out = append(out, commandsIn("/docs/"+section, b)...)
			}
		}
	}
	return out
}

var preCode = regexp.MustCompile(`(?s)<pre><code>(.*?)</code></pre>`)

// docsPageBlocks renders the /docs pages as the server does and returns their code blocks.
func docsPageBlocks(t *testing.T) map[string][]string {
	out := map[string][]string{}
	for _, section := range []string{web.DocsIndex, web.DocsAuthors, web.DocsOperators} {
		var buf bytes.Buffer
		if err := web.Docs(web.DocsPage{Section: section, PublicURL: "https://plugins.example.com"}).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		for _, m := range preCode.FindAllStringSubmatch(buf.String(), -1) {
			out[section] = append(out[section], html.UnescapeString(m[1]))
		}
	}
	return out
}

// notRun are commands the documents show that this test cannot run offline, and why.
var notRun = map[string]string{
	"registry publish acme-stats-1.2.0.tar.gz --bundle acme-stats-1.2.0.tar.gz.sigstore.json --registry https://plugins.example.com": "a Sigstore bundle is signed by Fulcio and logged in Rekor for the package's exact bytes; the bundle route is tested in server and verify/signature with committed bundles",
	"registry serve --addr 0.0.0.0:8080 --public-url https://plugins.example.com --database 'postgres://registry:PASSWORD@db.internal:5432/registry?sslmode=require' --blobs 's3://registry-blobs?endpoint=s3.eu-west-1.amazonaws.com&region=eu-west-1' --data /var/lib/registry --plugins /etc/registry/plugins.yaml --log-key /etc/registry/log.key --trust-proxy --log-format json": "needs the PostgreSQL server and the bucket it names; test/deploy checks each of its flags against serve -h, and test/replicas runs serve on PostgreSQL and S3",
	"registry migrate --from sqlite:/var/lib/registry --to 'postgres://registry:PASSWORD@db.internal:5432/registry' --blobs 's3://registry-blobs?endpoint=s3.eu-west-1.amazonaws.com&region=eu-west-1'":                                                                                                                                                                                "needs the PostgreSQL server and the bucket it names; cmd/registry's TestMigrateRoundTrip runs this command against real ones",
}

// TestDocumentedCommands runs every command the documents show, in the order a reader
// would, against a local registry, and compares what each prints with its golden file
// (go test ./test/docs -update rewrites them). A command shown that no case runs fails.
func TestDocumentedCommands(t *testing.T) {
	s := newSession(t)
	cases := documentedCases(t, s)
	known := map[string]bool{}
	for _, c := range cases {
		known[c.cmd] = true
	}
	for _, sh := range shownCommands(t) {
		if !known[sh.cmd] && notRun[sh.cmd] == "" {
			t.Errorf("%s shows `%s`, which no case of documentedCases runs: add one", sh.where, sh.cmd)
		}
	}
	outputs := map[string]string{}
	for _, c := range cases {
		if missing(t, c.needs) {
			continue
		}
		if c.setup != nil {
			c.setup(t)
		}
		got := s.runShown(t, c)
		outputs[c.golden] = got
		checkGolden(t, c.golden, got)
	}
	checkSamples(t, s, outputs)
}

// docCase is one documented command: the text the documents show, and how it runs here.
type docCase struct {
	cmd      string
	golden   string // testdata/<golden>.golden
	exit     int
	setup    func(t *testing.T)             // what a reader has done before, not itself shown
	args     func() []string                // the arguments to run, when not cmd's own (placeholders filled)
	after    func(t *testing.T, raw string) // reads what the command printed (a token to use next)
	server   bool                           // a `serve` command: run until ready, then interrupted
	repoRoot bool                           // run in the repository rather than the work directory
	sortRows bool                           // a table whose rows created in one second come in any order
	noToken  bool                           // run without REGISTRY_TOKEN
	needs    string                         // a program the command runs (skipped without it, except under CI=true)
	inDir    string                         // a directory under the work directory to run in
}

// runShown runs one case and returns its normalized output.
func (s *session) runShown(t *testing.T, c docCase) string {
	t.Helper()
	args := strings.Fields(strings.TrimPrefix(s.substitute(c.cmd), "registry "))
	if c.args != nil {
		args = c.args()
	}
	if c.server {
		return s.normalize(s.runServer(t, c, args))
	}
	raw := s.runCommand(t, c, args)
	if c.after != nil {
		c.after(t, raw)
	}
	out := s.normalize(raw)
	if c.sortRows {
		out = sortRows(out)
	}
	return out
}

// runCommand runs one command to its end, checks its exit status and returns its output.
func (s *session) runCommand(t *testing.T, c docCase, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := s.command(ctx, args...)
	cmd.Dir = filepath.Join(s.work, c.inDir)
	if c.noToken {
		cmd.Env = append(cmd.Env, "REGISTRY_TOKEN=", "ACTIONS_ID_TOKEN_REQUEST_URL=", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=")
	}
	out, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", c.cmd, err)
	}
	if code != c.exit {
		t.Errorf("`%s` exited %d; the documents say %d:\n%s", c.cmd, code, c.exit, out)
	}
	return string(out)
}

// runServer starts a documented `serve` on a fresh data directory, waits until it answers,
// stops it with SIGINT and returns what it printed, without the per-request log lines.
// With repoRoot it runs in the repository, on its own plugins.yaml, as the README's
// `go run ./cmd/registry serve --demo` does.
func (s *session) runServer(t *testing.T, c docCase, args []string) string {
	t.Helper()
	addr, data := freeAddr(t), filepath.Join(t.TempDir(), "data")
	shownData := "./data"
	for i, a := range args {
		switch {
		case a == "--addr":
			args[i+1] = addr
		case a == s.data:
			args[i], shownData = data, "/var/lib/registry"
		}
	}
	if !slices.Contains(args, "--addr") {
		args = append(args, "--addr", addr)
	}
	var log syncBuffer
	cmd := s.command(context.Background(), args...)
	cmd.Env = append(cmd.Env, "REGISTRY_DATA="+data, "REGISTRY_PUBLIC_URL=")
	if c.repoRoot {
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(cmd.Env, "REGISTRY_PLUGINS=")
	}
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, "http://"+addr, cmd)
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("`%s` stopped with %v:\n%s", c.cmd, err, log.String())
	}
	var kept []string
	for _, l := range strings.Split(log.String(), "\n") {
		if !strings.HasPrefix(l, "time=") {
			kept = append(kept, strings.NewReplacer(addr, "127.0.0.1:8080", data, shownData).Replace(l))
		}
	}
	out := demoKey.ReplaceAllString(strings.Join(kept, "\n"), "key <key id>")
	return demoPublicKey.ReplaceAllString(out, "ed25519_keys [<public key>]")
}

// The demo generates its signing key at first start.
var (
	demoKey       = regexp.MustCompile(`\bkey [0-9a-f]{16}\b`)
	demoPublicKey = regexp.MustCompile(`ed25519_keys \[[A-Za-z0-9+/=]+\]`)
)

// substitute turns a documented command into one for this session: the example registry
// is the local one, /var/lib/registry its data directory.
func (s *session) substitute(cmd string) string {
	return strings.NewReplacer("https://plugins.example.com", s.url, "/var/lib/registry", s.data,
		"/etc/registry/plugins.yaml", s.plugins).Replace(cmd)
}

var (
	hex64     = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	timestamp = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?( UTC)?`)
	date      = regexp.MustCompile(`\b20\d{2}-\d{2}-\d{2}\b`)
	secret    = regexp.MustCompile(`\bpyr_[A-Za-z0-9_-]+`)
	// the log's verifier key, NAME+HASH+BASE64 (a fresh key per data directory)
	verifierKey = regexp.MustCompile(`/log\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+`)
	// a log's tree hash: its records carry their times
	treeRoot = regexp.MustCompile(`\(root [A-Za-z0-9+/=]{44}`)
	listedID = regexp.MustCompile(`(?m)^[a-z0-9]{8}  `) // a token id in `registry token list`
)

// normalize replaces what changes from run to run by the documents' placeholders.
func (s *session) normalize(out string) string {
	for from, to := range s.shownAs {
		out = strings.ReplaceAll(out, from, to)
	}
	out = strings.NewReplacer(s.url, "https://plugins.example.com", strings.TrimPrefix(s.url, "http://"), "plugins.example.com", s.data, "/var/lib/registry",
		s.plugins, "./plugins.yaml", s.work+"/", "", s.work, ".", os.TempDir(), "/tmp").Replace(out)
	out = hex64.ReplaceAllString(out, "<sha256>")
	out = verifierKey.ReplaceAllString(out, "/log+<hash>+<public key>")
	out = treeRoot.ReplaceAllString(out, "(root <tree hash>")
	out = secret.ReplaceAllString(out, "pyr_<secret>")
	for _, id := range s.ids {
		out = strings.ReplaceAll(out, id, "<id>")
	}
	out = listedID.ReplaceAllString(out, "<id>  ")
	out = timestamp.ReplaceAllString(out, "<time>")
	return date.ReplaceAllString(out, "<date>")
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./test/docs -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s changed (-golden +now); if the change is meant, run go test ./test/docs -update and check the documents:\n%s", path, diff)
	}
}

// sortRows sorts the lines of a table after its header line.
func sortRows(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 1 {
		slices.Sort(lines[1:])
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestNoUnpublishedModuleInstall refuses a code block that installs or runs the CLI by
// module path (`go install|run github.com/pluginyard/registry/cmd/registry@…`): the
// module is not published, so a reader's command would fail to resolve.
func TestNoUnpublishedModuleInstall(t *testing.T) {
	const bad = "github.com/pluginyard/registry/cmd/registry@"
	for _, doc := range documentsIn(t) {
		blocks, err := markdown.Read(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if strings.Contains(b.Text, bad) {
				t.Errorf("%s:%d: a code block runs %s…, which cannot resolve; build from a clone (go install ./cmd/registry)", doc, b.Line, bad)
			}
		}
	}
	for section, blocks := range docsPageBlocks(t) {
		for _, b := range blocks {
			if strings.Contains(b, bad) {
				t.Errorf("/docs/%s: a code block runs %s…, which cannot resolve", section, bad)
			}
		}
	}
}

// missing reports whether program is absent (logging that its case is not run); under
// CI=true an absent program fails the test instead, so CI cannot pass without running it.
func missing(t *testing.T, program string) bool {
	t.Helper()
	if program == "" {
		return false
	}
	if _, err := exec.LookPath(program); err == nil {
		return false
	}
	if os.Getenv("CI") == "true" {
		t.Errorf("%s is not installed; the documented command that runs it must run in CI", program)
	} else {
		t.Logf("%s is not installed: its documented command is not run", program)
	}
	return true
}
