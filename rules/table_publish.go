package rules

import "github.com/pluginyard/registry/index"

// publishRules are the rules of the publish endpoint and the OIDC token exchange (ingest/).
var publishRules = []Rule{
	e("publish.filename", "The upload is a multipart file part named `package` with a filename `<id>-<version>.tar.gz` (or .tgz).", "The registry authorises the upload by the id in the name before it reads the package.", "curl -F package=@- …   # no file name", "curl -F package=@acme-stats-1.2.0.tar.gz …"),
	e("publish.unlisted", "The id (from the file name, then the manifest) is listed in plugins.yaml.", "Only curated ids may be published; an unlisted one is refused before any expensive work.", "publishing acme-new-1.0.0.tar.gz with no acme-new entry", "plugins:\n  - id: acme-new\n    repo: acme/kandev-new\n    owners: [acme]"),
	e("publish.forbidden", "The token may publish this id: a publisher token's publisher is among the entry's owners, an upload token's repository is the entry's repo.", "Only the listed owners and repository may publish a plugin.", "token of publisher someone-else for acme-stats", "    owners: [acme]   # and a token created with --publisher acme"),
	e("publish.file_id.collision", "The package's file id is not shared with another listed entry.", "Two entries with one file id would be served at one download URL.", "publishing @acme/jira while plugin acme-jira is listed", "rename one of the entries in plugins.yaml"),
	e("publish.token.publisher", "A publisher token's publisher (`registry token create --publisher`) is a publisher name, `"+index.PublisherPattern+"`, as every owner in plugins.yaml is.", "A publisher token may publish an entry only when its publisher is among the entry's owners, compared exactly; a name no owner can have makes a token that never publishes.", "registry token create --publisher \"acme corp\"", "registry token create --publisher acme   # as in owners: [acme]"),
	e("publish.version.exists", "A version, once published, is not published again with different bytes.", "Versions are immutable: hosts and lock files trust id@version to mean one set of bytes.", "re-publishing acme-stats 1.2.0 after a rebuild", "version: \"1.2.1\"   # publish a new version"),
	e("oidc.repository.unlisted", "The repository in the GitHub OIDC token is the repo of at least one plugins.yaml entry.", "An upload token is scoped to that repository's ids; an unlisted repository may publish nothing.", "exchanging a token from acme/scratch", "  - id: acme-stats\n    repo: acme/kandev-stats   # the repository the workflow runs in"),
	e("oidc.identity.changed", "The repository and owner ids in the token equal the ones pinned when the repository first published.", "A deleted and re-created repository of the same name belongs to someone else.", "a token from a re-created acme/kandev-stats", "ask the operator to reset the pin (registry pin) if the move was legitimate"),
	e("oidc.jti.missing", "The OIDC token carries a jti (token id) claim.", "Without it the exchange could not be made single-use.", "a hand-made token without jti", "the token GitHub Actions issues (it always carries jti)"),
	e("oidc.jti.length", "The jti claim is at most the stored length limit.", "Every jti is stored to refuse replays; the limit bounds that table.", "a token with a 10 KiB jti", "the token GitHub Actions issues"),
	e("oidc.jti.replayed", "An OIDC token is exchanged at most once.", "A leaked token must not be reusable to publish again.", "re-running the exchange with a saved token", "request a fresh token in the publishing job for every exchange"),
}
