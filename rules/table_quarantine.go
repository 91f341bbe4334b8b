package rules

// quarantineRules are the rules of quarantine (registry quarantine, POST
// /api/v1/admin/quarantine/..., ingest/quarantine.go; docs/quarantine.md).
var quarantineRules = []Rule{
	e("quarantine.reason", "A quarantine has a public reason: one line of plain text, 1 to 500 characters.", "The reason is shown on the package's page, in the 410 of its downloads and in its package document: a takedown with no public reason leaves users guessing.", "registry quarantine set acme-stats   # no --reason", "registry quarantine set --reason \"a leaked token published 1.4.2, which uploads ~/.ssh\" acme-stats@1.4.2"),
	e("quarantine.forbidden", "Only the registry's admins quarantine a package or release a quarantine.", "A quarantine takes a package away from every host; an owner's token could otherwise lift an admin's quarantine.", "POST /api/v1/admin/quarantine/acme-stats with a publisher token", "the admin token (--admin-secret), or registry quarantine on the data directory"),
	e("quarantine.download", "A quarantined package or release is not downloaded: 410 Gone, with the reason.", "A quarantine must take the bytes out of reach at once, while keeping them as evidence (nothing is deleted).", "GET /packages/acme-stats/acme-stats-1.4.2.tar.gz while acme-stats@1.4.2 is quarantined", "install another version, or wait for the quarantine to be released"),
	e("publish.quarantined", "A quarantined package takes no new release, and a quarantined release is not published again, by any token, until an admin releases the quarantine.", "A leaked token must not be able to push past a quarantine; another version of a package with one quarantined release may be published (that is how a fix ships).", "publishing acme-stats 1.4.3 while acme-stats is quarantined", "ask the registry's admins to release the quarantine (registry quarantine release acme-stats), then publish"),
}
