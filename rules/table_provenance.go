package rules

// provenanceRules keep a package's build provenance from downgrading (ingest/provenance.go):
// once a release carried a verified Sigstore signature from GitHub Actions, later releases
// keep its repository and workflow until an admin allows a change.
var provenanceRules = []Rule{
	e("provenance.missing", "Once a release of a package carried a verified Sigstore signature, every later release carries one too (an ed25519 checksums.txt.sig alone does not count: it is not build provenance).",
		"A leaked publish token must not be enough to push an unsigned release of a package whose users rely on its provenance.",
		"$ registry publish acme-stats-1.3.0.tar.gz --registry …   # 1.2.0 came with a Sigstore bundle, 1.3.0 with none",
		"$ registry publish acme-stats-1.3.0.tar.gz --bundle acme-stats-1.3.0.sigstore.json --registry …\n# or, if the package really stops signing: registry pin reset acme-stats"),
	e("provenance.repository_changed", "A Sigstore signature comes from the repository (GitHub ids) of the package's last verified release, unless the entry's signing.sigstore.repository names the new one.",
		"A release built in another repository was not built from the source users checked.",
		"release 1.2.0 signed in acme/kandev-stats, 1.3.0 in acme/stats-next",
		"    signing:\n      sigstore:\n        repository: acme/stats-next   # the move, stated in the list\n# or: registry pin reset acme-stats"),
	e("provenance.workflow_changed", "A Sigstore signature comes from the workflow of the package's last verified release, unless the entry's signing.sigstore.workflow names the new one.",
		"Another workflow of the repository (a test job, any branch) must not be able to produce releases.",
		"release 1.2.0 signed by .github/workflows/release.yml, 1.3.0 by .github/workflows/ci.yml",
		"    signing:\n      sigstore:\n        workflow: ci.yml   # the change, stated in the list\n# or: registry pin reset acme-stats"),
}

// archiveRules are the rules of archived packages (ingest/archive.go).
var archiveRules = []Rule{
	e("publish.archived", "A package its owner archived (no more releases expected) takes no new release until it is unarchived.",
		"Archived says to users that nothing new will come; a release after it is either a mistake or a stolen token.",
		"$ registry publish acme-stats-1.3.0.tar.gz …   # acme-stats is archived",
		"$ registry unarchive acme-stats --registry …   # then publish"),
}
