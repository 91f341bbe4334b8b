package web

import "strings"

// The code samples of the docs pages are built here rather than in the
// templates: they contain braces (GitHub expressions) that templ would read
// as Go, and they use the registry's own public URL.

func docsPublicURL(p DocsPage) string {
	if p.PublicURL == "" {
		return "https://plugins.example.com"
	}
	return strings.TrimRight(p.PublicURL, "/")
}

func docsAction(p DocsPage) string {
	if p.Action == "" {
		return DefaultAction
	}
	return p.Action
}

func exampleListEntry() string {
	return `plugins:
  - id: acme-stats                 # must equal the manifest id
    repo: acme/kandev-stats        # the GitHub repository releases come from
    kind: plugin                   # plugin | canvas
    categories: [analytics]
    owners: [acme]                 # publishers whose tokens may publish it
    signing:
      required: true               # refuse unsigned releases
      sigstore:
        workflow: .github/workflows/release.yml
        ref: refs/tags/v*
    previews:                      # up to 8; canvases need at least one
      - url: https://raw.githubusercontent.com/acme/kandev-stats/v1.0.0/docs/cover.png
        alt: The stats page with a week of task throughput

extensions:
  - name: "@acme/curupira-jira"
    repo: acme/curupira-jira
    categories: [issue-trackers]
    owners: [acme]`
}

func examplePack() string {
	return `# dist/ holds manifest.yaml, README.md, assets/ and server/plugin-<goos>-<goarch>
registry pack dist -o acme-stats-1.2.0.tar.gz

# run exactly the checks the registry runs, offline
registry verify acme-stats-1.2.0.tar.gz`
}

func exampleWorkflow(p DocsPage) string {
	return `name: release
on:
  push:
    tags: ["v*"]

permissions:
  contents: read
  id-token: write       # lets the job prove which repository it runs in
  attestations: write   # only needed with attest: true

jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: stable
      # the registry CLI, from the same release as the action below
      - uses: actions/checkout@v4
        with:
          repository: pluginyard/registry
          ref: v1
          path: .registry-cli
      - name: Build the registry CLI
        working-directory: .registry-cli
        run: |
          go build -trimpath -o "$RUNNER_TEMP/registry-cli/" ./cmd/registry
          echo "$RUNNER_TEMP/registry-cli" >> "$GITHUB_PATH"
      - name: Build and pack
        id: pack
        run: |
          make dist    # your build: fills dist/ with manifest.yaml, README.md and server/
          file="acme-stats-${GITHUB_REF_NAME#v}.tar.gz"
          registry pack dist -o "$file"
          echo "file=$file" >> "$GITHUB_OUTPUT"
      - name: Publish
        uses: ` + docsAction(p) + `
        with:
          package: ${{ steps.pack.outputs.file }}
          registry: ` + docsPublicURL(p) + `
          attest: true   # sign with actions/attest-build-provenance`
}

func examplePublishCLI(p DocsPage) string {
	return `export REGISTRY_TOKEN=...   # from the operator: registry token create --publisher acme
registry publish acme-stats-1.2.0.tar.gz --registry ` + docsPublicURL(p) + `

# with a detached Sigstore bundle (cosign sign-blob --bundle, or a provenance attestation)
registry publish acme-stats-1.2.0.tar.gz --bundle acme-stats-1.2.0.tar.gz.sigstore.json \
  --registry ` + docsPublicURL(p)
}

// exampleRefusal is the API's real answer to a package with a stale checksum and a missing
// executable (test/docs checks it against the registry's output).
func exampleRefusal() string {
	return `HTTP/1.1 422 Unprocessable Entity
{
  "error": "the package is invalid: 2 problem(s)",
  "problems": [
    {
      "rule": "manifest.runtime.executables.missing",
      "path": "runtime.executables.linux-arm64",
      "file": "manifest.yaml",
      "message": "expected the package to contain \"server/plugin-linux-arm64\", found no such file; the package cannot install on linux-arm64, so build it into the package or remove the entry",
      "severity": "error",
      "doc_url": "https://plugins.example.com/docs/reference/kandev-manifest#manifest.runtime.executables.missing"
    },
    {
      "rule": "checksums.mismatch",
      "path": "server/plugin-linux-amd64",
      "file": "checksums.txt",
      "message": "line 8 says sha256 <sha256>, the file's content has <sha256>; regenerate checksums.txt after the last change",
      "severity": "error",
      "doc_url": "https://plugins.example.com/docs/reference/package#checksums.mismatch"
    }
  ]
}`
}

func exampleYank(p DocsPage) string {
	u := docsPublicURL(p)
	return `curl -X POST -H "Authorization: Bearer $REGISTRY_TOKEN" \
  -d '{"reason": "corrupts the stats cache, fixed in 1.2.1"}' \
  ` + u + `/api/v1/plugins/acme-stats/versions/1.2.0/yank

curl -X POST -H "Authorization: Bearer $REGISTRY_TOKEN" \
  -d '{"reason": "merged into Acme Insights", "replacement": "acme-insights"}' \
  ` + u + `/api/v1/plugins/acme-stats/deprecate`
}

func exampleConformance() string {
	return `# check your extension speaks the protocol, before you publish
registry conformance --timeout 10s -- node dist/index.js`
}

func exampleServe() string {
	return `# a registry with the demo plugins, on http://127.0.0.1:8080
go run ./cmd/registry serve --demo

# in production
registry serve --addr 0.0.0.0:8080 --data /var/lib/registry \
  --plugins /etc/registry/plugins.yaml --public-url https://plugins.example.com`
}

func exampleDocker(p DocsPage) string {
	return `docker build -t plugin-registry .
docker run -d --name registry -p 8080:8080 -v registry-data:/data \
  -e REGISTRY_ADDR=0.0.0.0:8080 -e REGISTRY_DATA=/data \
  -e REGISTRY_PUBLIC_URL=` + docsPublicURL(p) + ` \
  plugin-registry serve`
}

func exampleAdmin(p DocsPage) string {
	return `registry lint plugins.yaml                       # every problem, with line and column
kill -HUP "$(pidof registry)"                     # reload plugins.yaml
curl -X POST -H "Authorization: Bearer $REGISTRY_ADMIN_TOKEN" \
  ` + docsPublicURL(p) + `/api/v1/admin/reload          # or over the API

registry token create --publisher acme --expires 90d
registry token list
registry token revoke TOKEN_ID
registry pin reset acme-stats                     # accept a re-created repository`
}

func exampleSourceURL(p DocsPage) string { return docsPublicURL(p) + "/index.json" }

func exampleCurupiraURL(p DocsPage) string { return docsPublicURL(p) + "/curupira/index.json" }

func exampleOps(p DocsPage) string {
	return `registry sync --once                              # pull new GitHub releases now
registry export --out mirror --public-url https://cdn.example.com   # a static mirror
registry backup --data /var/lib/registry --out registry-backup.sqlite
curl ` + docsPublicURL(p) + `/readyz                     # DB reachable, index built, list loaded`
}

// configRow is one line of the configuration table.
type configRow struct {
	Flag, Env, Default, Meaning string
}

var configRows = []configRow{
	{"--addr", "REGISTRY_ADDR", "127.0.0.1:8080", "Address to listen on."},
	{"--data", "REGISTRY_DATA", "./data", "Directory for the SQLite database and the package blobs."},
	{"--plugins", "REGISTRY_PLUGINS", "./plugins.yaml", "The curated list of what may be published."},
	{"--public-url", "REGISTRY_PUBLIC_URL", "from --addr", "Base of every absolute URL the registry emits (package_url, icon_url). Set it to the HTTPS address hosts use."},
	{"", "REGISTRY_ADMIN_TOKEN", "generated", "Bearer token with every right. When unset, one is generated on first start, stored hashed and printed once."},
	{"--oidc-issuer", "REGISTRY_OIDC_ISSUER", "https://token.actions.githubusercontent.com", "Issuer of the CI tokens exchanged for upload tokens."},
	{"--oidc-audience", "REGISTRY_OIDC_AUDIENCE", "the public URL", "Audience the CI tokens must carry."},
	{"--sigstore-trusted-root", "REGISTRY_SIGSTORE_TRUSTED_ROOT", "", "trusted_root.json used to verify Sigstore bundles offline."},
	{"", "REGISTRY_GITHUB_API", "https://api.github.com", "GitHub API base for pulling releases."},
	{"", "REGISTRY_GITHUB_TOKEN", "", "Optional token for a higher GitHub rate limit."},
}
