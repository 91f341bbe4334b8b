package docs_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var tokenIDLine = regexp.MustCompile(`Created token (\S+) `)

// documentedCases are the documents' commands in the order a reader runs them. Each runs
// as shown, with the example registry URL and data directory pointed at the session's.
func documentedCases(t *testing.T, s *session) []docCase {
	var revokeID string
	rememberToken := func(t *testing.T, raw string) {
		sec := secret.FindString(raw)
		if sec == "" {
			t.Fatalf("token create printed no pyr_ token:\n%s", raw)
		}
		s.env["REGISTRY_TOKEN"] = sec
		s.rememberID(t, raw)
	}
	return []docCase{
		// README.md, "Publishing from CI"
		{cmd: "registry --version", golden: "version"},
		{cmd: "registry init plugin my-plugin", golden: "init-my-plugin"},
		{cmd: "registry pack my-plugin", golden: "pack-my-plugin"},
		{cmd: "registry verify my-plugin-0.1.0.tar.gz", golden: "verify-my-plugin"},
		// docs/publishing.md, "Publishing with a token instead"
		{cmd: "registry token create --publisher acme --expires 90d --data /var/lib/registry", golden: "token-create", after: rememberToken},
		{cmd: "registry publish my-plugin-0.1.0.tar.gz --registry https://plugins.example.com", golden: "publish-my-plugin"},
		// /docs/authors, "Pack the release"; docs/publishing.md's token example
		{cmd: "registry pack dist -o acme-stats-1.2.0.tar.gz", golden: "pack-dist", setup: func(t *testing.T) {
			s.must(t, "init", "plugin", "dist", "--id", "acme-stats")
			setVersion(t, filepath.Join(s.work, "dist"), "1.2.0")
		}},
		{cmd: "registry verify acme-stats-1.2.0.tar.gz", golden: "verify-acme-stats"},
		{cmd: "registry publish acme-stats-1.2.0.tar.gz --registry https://plugins.example.com", golden: "publish-acme-stats"},
		// docs/publishing.md, "Permissions": the same publish without a token or an identity
		{cmd: "registry publish acme-stats-1.2.0.tar.gz --registry https://plugins.example.com", golden: "publish-no-credentials", exit: 2, noToken: true},
		// docs/publishing.md, "The package": the refusal, from the CLI (the API's JSON is
		// checked by checkSamples)
		{cmd: "registry publish acme-stats-1.2.1.tar.gz --registry https://plugins.example.com", golden: "publish-refused", exit: 1, setup: func(t *testing.T) {
			setVersion(t, filepath.Join(s.work, "dist"), "1.2.1")
			s.must(t, "pack", "dist", "--no-verify", "-o", "good-1.2.1.tar.gz")
			breakPackage(t, filepath.Join(s.work, "good-1.2.1.tar.gz"), filepath.Join(s.work, "acme-stats-1.2.1.tar.gz"))
		}},
		// docs/publishing.md, "Pins": the first trusted publishing exchange pins the repository
		{cmd: "registry pin show repo:acme/kandev-stats --data /var/lib/registry", golden: "pin-show", setup: func(t *testing.T) {
			s.exchangeOIDC(t, "acme/kandev-stats")
		}},
		{cmd: "registry pin reset repo:acme/kandev-stats --data /var/lib/registry", golden: "pin-reset"},
		// docs/reports.md, "Resolving": a report filed through the API, listed, then resolved
		{cmd: "registry reports list --open", golden: "reports-list", setup: func(t *testing.T) {
			s.fileReport(t, "acme-stats", `{"kind": "malicious", "version": "1.2.0", "reason": "posts tokens to a remote host"}`)
		}},
		{cmd: `registry reports resolve 1 --resolution "confirmed: 1.2.0 posts tokens to a remote host" --action yanked`, golden: "reports-resolve",
			args: func() []string {
				return []string{"reports", "resolve", "1", "--resolution", "confirmed: 1.2.0 posts tokens to a remote host", "--action", "yanked"}
			}},
		// /docs/operators, "Curate what is listed"
		{cmd: "registry lint plugins.yaml", golden: "lint"},
		{cmd: "registry token create --publisher acme --expires 90d", golden: "token-create-env", after: func(t *testing.T, raw string) {
			m := tokenIDLine.FindStringSubmatch(raw)
			if m == nil {
				t.Fatalf("token create printed no id:\n%s", raw)
			}
			revokeID = m[1]
			s.rememberID(t, raw)
		}},
		{cmd: "registry token list", golden: "token-list", sortRows: true},
		{cmd: "registry token revoke TOKEN_ID", golden: "token-revoke", args: func() []string { return []string{"token", "revoke", revokeID} }},
		{cmd: "registry pin reset acme-stats", golden: "pin-reset-id", exit: 1},
		// /docs/operators, "Operate it"
		{cmd: "registry sync --once", golden: "sync-once", exit: 1},
		{cmd: "registry export --out mirror --public-url https://cdn.example.com", golden: "export"},
		{cmd: "registry backup --data /var/lib/registry --out registry-backup.sqlite", golden: "backup"},
		// docs/transparency.md: the log's key, and audits of the registry and of a mirror
		{cmd: "registry log key --data /var/lib/registry", golden: "log-key", after: func(t *testing.T, raw string) {
			s.logKey = strings.TrimSpace(raw)
		}},
		{cmd: `registry log verify --registry https://plugins.example.com --key "plugins.example.com/log+1a2b3c4d+AcB8…" --state /var/lib/kandev/registry-audit.json`,
			golden: "log-verify", args: func() []string {
				return []string{"log", "verify", "--registry", s.url, "--key", s.logKey, "--state", filepath.Join(s.work, "registry-audit.json")}
			}},
		{cmd: `registry log verify --registry https://mirror.example.net --key "plugins.example.com/log+1a2b3c4d+AcB8…" --state mirror-audit.json --packages`,
			golden: "log-verify-mirror", setup: func(t *testing.T) { s.mirror(t) }, args: func() []string {
				return []string{"log", "verify", "--registry", s.shownAsURL("https://mirror.example.net"), "--key", s.logKey, "--state", "mirror-audit.json", "--packages"}
			}},
		// /docs/authors, "Curupira extensions": the extension registry init writes, built to dist/
		{cmd: "registry conformance --timeout 10s -- node dist/index.js", golden: "conformance", inDir: "ext", needs: "node", setup: func(t *testing.T) {
			s.must(t, "init", "extension", "ext/src", "--id", "todo-trigger")
			for from, to := range map[string]string{"index.mjs": "index.js", "curupira-extension.toml": "curupira-extension.toml"} {
				src, err := os.ReadFile(filepath.Join(s.work, "ext", "src", from))
				if err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(s.work, "ext", "dist", to), string(src))
			}
			mustWrite(t, filepath.Join(s.work, "ext", "dist", "package.json"), `{"type": "module"}`+"\n")
		}},
		// README.md "Two commands" and /docs/operators "Run it"
		{cmd: "registry serve --demo", golden: "serve-demo", server: true, repoRoot: true},
		{cmd: "registry serve --addr 0.0.0.0:8080 --data /var/lib/registry --plugins /etc/registry/plugins.yaml --public-url https://plugins.example.com",
			golden: "serve", server: true},
	}
}

// rememberID records the id of a token just created, shown as <id> in the golden files.
func (s *session) rememberID(t *testing.T, raw string) {
	t.Helper()
	m := tokenIDLine.FindStringSubmatch(raw)
	if m == nil {
		t.Fatalf("token create printed no id:\n%s", raw)
	}
	s.ids = append(s.ids, m[1])
}

// mirror exports the registry (`registry export`) into a folder served by a static file
// server, shown as https://mirror.example.net.
func (s *session) mirror(t *testing.T) {
	t.Helper()
	dir := filepath.Join(s.work, "static-mirror")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	s.shownAs[srv.URL] = "https://mirror.example.net"
	s.must(t, "export", "--out", dir, "--public-url", srv.URL)
}

// shownAsURL is the session's URL the documents show as shown.
func (s *session) shownAsURL(shown string) string {
	for from, to := range s.shownAs {
		if to == shown {
			return from
		}
	}
	return shown
}
