package rules

// reportRules are the rules of reports (ingest/reports.go): filing one from a package's
// page or POST /api/v1/plugins/{id}/reports, and resolving one (`registry reports
// resolve`, POST /api/v1/admin/reports/{report}/resolve).
var reportRules = []Rule{
	e("report.package.unknown", "The reported id names a published package.", "A report is about something people can install; an unknown id is a typo or a probe.", "POST /api/v1/plugins/acme-helo/reports", "POST /api/v1/plugins/acme-hello/reports"),
	e("report.version.unknown", "A report's version, when given, is a published version of the package.", "The admin must be able to find the bytes the report is about.", `{"kind": "broken", "version": "9.9.9", "reason": "…"}`, `{"kind": "broken", "version": "1.2.0", "reason": "…"}   # or no version: the whole package`),
	e("report.kind", "A report's kind is malicious, broken or other.", "The kind sorts the admin queue: malicious reports are read first.", `{"kind": "spam", "reason": "…"}`, `{"kind": "malicious", "reason": "…"}`),
	e("report.reason.missing", "A report says why, in a non-empty reason.", "A report without a reason cannot be checked.", `{"kind": "broken", "reason": ""}`, `{"kind": "broken", "reason": "1.2.0 crashes on start: panic in config.go"}`),
	e("report.reason.length", "A report's reason is at most 4 KiB (4096 bytes).", "Reports come from anyone; the bound keeps the queue readable and the table small.", "a reason pasting a 20 KiB log", "a short reason with a link to the log"),
	e("report.reason.text", "A report's reason is plain text: no control or format characters but newline and tab.", "Admins read reasons in a terminal and on pages; bidirectional overrides and escapes could disguise them.", "\"looks \\u202efine\"", "\"looks fine, but posts ~/.ssh to a remote host\""),
	e("report.duplicate", "One address has at most one open report of a package (and version) per kind.", "Re-sending a report does not make it louder; the first one is still in the queue.", "submitting the same form twice", "wait for the first report to be resolved"),
	e("report.body.size", "A report request's body is at most 8 KiB.", "The body is read whole before it is checked; the bound keeps that cheap.", "a 1 MiB JSON body", "a reason of at most 4 KiB"),
	e("report.body.json", "An API report's body is a JSON object with kind, reason and an optional version.", "The API takes JSON; the page's form posts to the page's own address.", "curl --data 'kind=broken' …/api/v1/plugins/acme-hello/reports", "curl -H 'Content-Type: application/json' --data '{\"kind\":\"broken\",\"reason\":\"…\"}' …"),
	e("report.origin", "A report a browser sends comes from a page of this registry (Sec-Fetch-Site or Origin).", "Another site must not make its visitors' browsers file reports from their addresses (cross-site request forgery).", "a form on another site posting to /plugins/acme-hello/report", "the form on the package's own page"),
	e("report.unknown", "A report id to resolve names a report.", "Resolving the wrong report would show a resolution on the wrong page.", "registry reports resolve 9999 …", "registry reports list --open   # then resolve an id it shows"),
	e("report.resolved", "A report is resolved once; its resolution is kept as first written.", "The page and the audit log must not say two things.", "registry reports resolve 12 … twice", "file a note in the audit log instead, or act with yank/deprecate/quarantine"),
	e("report.resolution.missing", "A resolution has a non-empty text.", "The text is what the package page shows when the report led to an action.", `registry reports resolve 12 --resolution ""`, `registry reports resolve 12 --resolution "confirmed: 1.0.0 posts tokens" --action yanked`),
	e("report.resolution.length", "A resolution is at most 1 KiB (1024 bytes).", "It is shown on the package page.", "a resolution pasting an analysis", "one or two sentences with a link to the analysis"),
	e("report.resolution.text", "A resolution is one line of plain text.", "It is shown on the package page and in a terminal.", "\"confirmed\\nsee log\"", "\"confirmed; see the advisory\""),
	e("report.action", "A resolution's action is none, yanked, quarantined or deprecated.", "The action is what the package page reports as done.", "--action deleted", "--action quarantined"),
}
