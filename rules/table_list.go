package rules

import (
	"strconv"
	"strings"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/manifest"
)

// listRules are the rules of the registry's plugins.yaml (index/).
var listRules = []Rule{
	e("registry.yaml", "The file is one non-empty YAML document that parses.", "A list that does not parse would empty the catalog; the registry keeps the previous one instead.", "plugins:\n  - id: acme-stats\n    repo: [acme", "plugins:\n  - id: acme-stats\n    repo: acme/kandev-stats"),
	e("registry.yaml.alias", "The file uses no YAML anchors or aliases.", "Aliases make one entry silently share another's owners or signing policy, and can expand without bound.", "plugins:\n  - &base\n    id: acme-a\n    repo: acme/a\n  - *base", "plugins:\n  - id: acme-a\n    repo: acme/a"),
	e("registry.field.unknown", "Every field is one plugins.yaml defines; the message lists the known ones.", "A misspelt field (owner for owners) would silently change who may publish.", "    owner: [acme]", "    owners: [acme]"),
	e("registry.field.duplicate", "No mapping gives the same field twice.", "YAML readers disagree on which value wins, and the field decides who may publish.", "    repo: acme/a\n    repo: acme/b", "    repo: acme/a"),
	e("registry.field.type", "Each field has the type plugins.yaml gives it (mapping, list, string, boolean).", "The list is decoded into typed entries.", "    owners: acme", "    owners: [acme]"),
	e("registry.field.required", "The file has a top-level plugins: or extensions: list, and every entry has its required fields (id or name, repo).", "An entry without them cannot be matched to any package.", "plugins:\n  - id: acme-stats", "plugins:\n  - id: acme-stats\n    repo: acme/kandev-stats"),
	e("registry.id", "Every plugin id matches the manifest id pattern and does not end in .config.", "An entry is matched to packages by manifest id.", "  - id: Acme_Stats", "  - id: acme-stats"),
	e("registry.id.duplicate", "Each plugin id is listed once.", "Two entries for one id would give two answers to who may publish it.", "  - id: acme-stats\n  - id: acme-stats", "  - id: acme-stats\n  - id: acme-board"),
	e("registry.extension.name", "Every extension name is an npm-style package name.", "An extension entry is matched to packages by the manifest's name.", "  - name: Acme Jira", "  - name: \"@acme/curupira-jira\""),
	e("registry.extension.name.duplicate", "Each extension name is listed once.", "Two entries for one name would give two answers to who may publish it.", "  - name: \"@acme/jira\"\n  - name: \"@acme/jira\"", "  - name: \"@acme/jira\""),
	e("registry.repo", "`repo` is a GitHub owner/name (no URL, no .git).", "Publishing from GitHub Actions and sync are authorised by this repository.", "    repo: https://github.com/acme/kandev-stats.git", "    repo: acme/kandev-stats"),
	e("registry.kind", "`kind` is plugin or canvas, and on publish the package's kind matches it.", "Hosts install plugins and canvases differently; a package of the other kind is refused.", "    kind: widget", "    kind: canvas"),
	e("registry.categories", "Every category is a tag of 1 to 64 characters without surrounding spaces, listed once.", "Categories drive the marketplace's sidebar and filters.", "    categories: [\" analytics\"]", "    categories: [analytics]"),
	w("registry.categories.unknown", "Every category is one of the manifest's categories ("+strings.Join(manifest.Categories(), ", ")+").", "Hosts filter by the manifest's categories only: any other tag never shows in their filters.", "    categories: [integrations]", "    categories: ["+manifest.Categories()[0]+"]"),
	e("registry.owners", "Every owner is a publisher name (letters, digits, '.', '_', '-', at most 64).", "Owners are the publishers whose tokens may publish, yank and deprecate.", "    owners: [\"acme corp\"]", "    owners: [acme]"),
	w("registry.owners.empty", "An owners field, when written, names at least one publisher.", "An empty list lets no publisher token publish, yank or deprecate the entry: most likely a template left unfilled.", "    owners: []", "    owners: [acme]"),
	e("registry.previews.required", "A canvas entry has at least one preview.", "The first preview is a canvas's cover on every host's marketplace.", "  - id: acme-board\n    repo: acme/board\n    kind: canvas", "  - id: acme-board\n    repo: acme/board\n    kind: canvas\n    previews:\n      - url: https://example.com/board.png\n        alt: The board with three columns"),
	e("registry.previews.count", "An entry has at most "+strconv.Itoa(index.MaxPreviews)+" previews.", "Hosts drop an entry with more.", "    previews: [...]   # nine entries", "    previews: [...]   # at most eight"),
	e("registry.previews.url", "Every preview URL is an absolute https URL with a host, no credentials, no fragment, at most "+strconv.Itoa(index.MaxPreviewURLLen)+" characters.", "Hosts load previews from these URLs and refuse anything else.", "      - url: http://example.com/a.png", "      - url: https://example.com/a.png"),
	e("registry.previews.alt", "Every preview has alt text: non-blank, at most "+strconv.Itoa(index.MaxPreviewAltLen)+" characters.", "Screen readers read the alt text; hosts refuse previews without it.", "      - url: https://example.com/a.png\n        alt: \"\"", "      - url: https://example.com/a.png\n        alt: The stats page with a week of throughput"),
	e("registry.signing.ed25519_keys", "Every ed25519 key is the standard base64 of a 32-byte public key.", "Signatures in checksums.txt.sig are checked against these keys.", "      ed25519_keys: [\"not-a-key\"]", "      ed25519_keys: [\"<base64 of the 32-byte public key>\"]"),
	e("registry.signing.sigstore.repository", "`signing.sigstore.repository` is a GitHub owner/name.", "A Sigstore certificate must name this repository as the one that built the release.", "        repository: acme", "        repository: acme/kandev-stats"),
	e("registry.signing.sigstore.workflow", "`signing.sigstore.workflow` is a workflow file path under .github/workflows/.", "The certificate must name this workflow; a wrong path refuses every release.", "        workflow: release.yml", "        workflow: .github/workflows/release.yml"),
	e("registry.signing.sigstore.ref", "`signing.sigstore.ref` is a full git ref or a valid glob of one (refs/tags/v*, refs/heads/main).", "The certificate must name a matching ref.", "        ref: v1.0.0", "        ref: refs/tags/v*"),
	e("registry.signing.sigstore.issuer", "`signing.sigstore.issuer` is an absolute https URL.", "The certificate's OIDC issuer must equal it.", "        issuer: token.actions.githubusercontent.com", "        issuer: https://token.actions.githubusercontent.com"),
	w("registry.file_id.version_suffix", "No file id is another listed file id plus `-<version>` (kit and kit-1.0.0).", "A package file name such as kit-1.0.0-0.1.0.tar.gz then reads as kit@1.0.0-0.1.0 or kit-1.0.0@0.1.0: the registry tries both and the manifest decides, but people cannot tell them apart.", "plugins:\n  - id: kit\n    repo: bob/kit\n  - id: kit-1.0.0\n    repo: alice/kit", "plugins:\n  - id: kit\n    repo: bob/kit\n  - id: kit-one\n    repo: alice/kit"),
	e("registry.file_id.collision", "No two entries share a file id, the name in download URLs (an extension @scope/name becomes scope-name).", "Both would be served at one /packages/<file id>/<file id>-<version>.tar.gz URL.", "plugins:\n  - id: acme-jira\n    repo: acme/kandev-jira\nextensions:\n  - name: \"@acme/jira\"   # file id acme-jira too\n    repo: acme/curupira-jira", "plugins:\n  - id: acme-jira-board\n    repo: acme/kandev-jira\nextensions:\n  - name: \"@acme/jira\"\n    repo: acme/curupira-jira"),
}
