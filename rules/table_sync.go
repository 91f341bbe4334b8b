package rules

// syncRules are the rules of the GitHub release sync (pull/): why a listed repository's
// latest release was not published. They appear in the sync status (GET
// /api/v1/admin/sync) and the server log.
var syncRules = []Rule{
	e("sync.repo.missing", "The listed repository exists on GitHub and is public.", "Sync reads releases through the public GitHub API; a missing repository has none to publish.", "    repo: acme/kandev-stats   # renamed on GitHub", "    repo: acme/stats-for-kandev   # its current name"),
	e("sync.repo.identity", "GitHub's answer for the repository names its repository id and owner id.", "Releases are pinned to those ids; without them the identity cannot be checked.", "(GitHub answered without ids)", "retry later; the next round checks again"),
	e("sync.identity.changed", "The repository and owner ids equal the ones pinned at the first publish.", "A deleted and re-created repository of the same name belongs to someone else.", "acme/kandev-stats re-created under another account", "registry pin reset, if the move was legitimate"),
	e("sync.release.missing", "The repository has a published release (drafts and prereleases do not count).", "Sync publishes the latest release; without one there is nothing to publish.", "only a draft release v1.2.0", "publish the release tagged v1.2.0 with the package attached"),
	e("sync.asset.missing", "The latest release has an asset named `<id>-<version>.tar.gz`, the version taken from the tag.", "Sync picks the package by that exact name.", "tag v1.2.0 with asset stats.tar.gz", "tag v1.2.0 with asset acme-stats-1.2.0.tar.gz"),
	e("sync.asset.too_large", "The asset is within the download limit.", "Sync downloads the asset before checking it; the limit bounds that download.", "a 300 MiB asset", "a package within the plugin limits (see the package section)"),
	e("sync.checksums.mismatch", "An attached checksums.txt, if any, lists the asset's actual sha256.", "A mismatch means the asset was replaced after checksums.txt was made.", "asset re-uploaded after checksums.txt", "upload matching files"),
	e("sync.version.conflict", "The release's version is not already published with other bytes.", "Versions are immutable; hosts trust id@version to mean one set of bytes.", "re-tagged v1.2.0 with a new build", "tag v1.2.1"),
	e("sync.publish.forbidden", "The repository may publish the id of the asset (it is the entry's repo).", "Only the listed repository may publish a plugin.", "acme/fork releasing acme-stats", "release from the repository the entry lists"),
	e("sync.publish.refused", "The downloaded package passes every package and manifest rule.", "Sync publishes through the same checks as a push; the refusal's problems say what to fix.", "a release whose manifest breaks a rule", "fix the problems `registry verify` lists, then release again"),
}
