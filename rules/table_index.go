package rules

import (
	"strconv"

	"github.com/pluginyard/registry/index"
)

// indexRules are the rules the registry checks on the index documents it builds (index/,
// ingest/); a publish or reload whose documents would break them is refused.
var indexRules = []Rule{
	e("index.size", "Each index document is at most the host's size cap (--index-max-bytes); past it the size policy compacts entries, then chooses them by rank, and shards hold the rest, so no publish is refused for the catalogue's size. Only a cap too small for any one entry refuses a rebuild.", "Hosts refuse the whole document past the cap, so every plugin would disappear from them.", "--index-max-bytes 100: no document with one entry fits", "--index-max-bytes 5242880 (the Kandev host cap; at least 65536)"),
	e("index.shrink", "A rebuild does not drop more plugins from the index than the shrink guard allows.", "A bad list or store must not empty every host's marketplace at once; the operator can force it.", "a reload that would drop most plugins", "fix the list, or reload with force if the removal is intended"),
	e("index.invalid", "The documents the registry builds pass every index rule below.", "A document a host cannot read breaks the marketplace for everyone.", "(a built document broke an index rule)", "the problem names the rule; fix the listed data"),
	e("index.json", "The document is a JSON object that decodes.", "Hosts decode it as JSON.", "[]", "{\"schema_version\": 1, \"plugins\": []}"),
	e("index.schema_version", "`schema_version` is exactly 1.", "Hosts refuse other schema versions.", "{\"schema_version\": 2}", "{\"schema_version\": 1}"),
	e("index.generated_at", "`generated_at` is an RFC 3339 UTC timestamp string (an error when missing or not a string, a warning when a string that is not such a timestamp).", "Hosts show and compare it.", "\"generated_at\": \"yesterday\"", "\"generated_at\": \"2026-09-18T06:00:12Z\""),
	w("index.source", "The Kandev index has a source object {name, url}.", "Hosts label the marketplace source with it.", "{\"schema_version\": 1, \"plugins\": []}", "{\"schema_version\": 1, \"source\": {\"name\": \"Acme\", \"url\": \"https://plugins.example.com\"}, \"plugins\": []}"),
	e("index.plugins.null", "`plugins` is an array (possibly empty).", "Hosts refuse a document whose plugins is null or missing.", "\"plugins\": null", "\"plugins\": []"),
	e("index.plugin.id", "Every entry has a non-empty id.", "Hosts drop entries without one.", "{\"id\": \"\"}", "{\"id\": \"acme-stats\"}"),
	e("index.plugin.id.duplicate", "Each id appears once.", "Hosts drop the repetition.", "two entries with id acme-stats", "one entry per id"),
	e("index.plugin.kind", "Every entry's kind is plugin or canvas.", "Hosts drop entries of another kind.", "\"kind\": \"widget\"", "\"kind\": \"canvas\""),
	e("index.plugin.version", "Every entry names its release version.", "Hosts cannot compare versions without it.", "\"version\": \"\"", "\"version\": \"1.2.0\""),
	e("index.plugin.package_url", "Every entry's package_url is an absolute http(s) URL.", "Hosts install from it.", "\"package_url\": \"/packages/acme-stats.tar.gz\"", "\"package_url\": \"https://plugins.example.com/packages/acme-stats/acme-stats-1.2.0.tar.gz\""),
	e("index.plugin.package_sha256", "Every package_sha256 is 64 lowercase hex digits.", "Hosts check the download against it.", "\"package_sha256\": \"ABC\"", "\"package_sha256\": \"3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b\""),
	e("index.plugin.icon_url", "An icon_url is an absolute http(s) URL or null.", "Hosts load the icon from it.", "\"icon_url\": \"icon.png\"", "\"icon_url\": \"https://plugins.example.com/icons/acme-stats/1.2.0\""),
	e("index.plugin.categories", "categories is an array (possibly empty).", "Older hosts break on null.", "\"categories\": null", "\"categories\": []"),
	e("index.plugin.updated_at", "updated_at is an RFC 3339 UTC timestamp or null.", "Hosts sort by string comparison, which only works for one format.", "\"updated_at\": \"18/09/2026\"", "\"updated_at\": \"2026-09-18T06:00:12Z\""),
	e("index.plugin.stars", "stars is a count of at least 0, or null.", "Hosts show and sort by it.", "\"stars\": -1", "\"stars\": 12"),
	e("index.plugin.publisher", "A publisher object has schema_version 1 and decimal repository_id and owner_id.", "Hosts pin the publisher identity by these ids.", "\"publisher\": {\"schema_version\": 1, \"repository_id\": \"abc\"}", "\"publisher\": {\"schema_version\": 1, \"repository_id\": \"123\", \"owner_id\": \"456\"}"),
	e("index.plugin.previews", "An entry has at most "+strconv.Itoa(index.MaxPreviews)+" previews, each with an https URL and alt text, and a canvas at least one.", "Hosts drop the entry otherwise.", "\"previews\": []   // on a canvas", "\"previews\": [{\"url\": \"https://example.com/a.png\", \"alt\": \"The board\"}]"),
	e("index.extensions.null", "The Curupira index's `extensions` is an array (possibly empty).", "Curupira refuses a document whose extensions is null or missing.", "\"extensions\": null", "\"extensions\": []"),
	e("index.extension.name", "Every extension has a non-empty name.", "Curupira lists and launches extensions by name.", "{\"name\": \"\"}", "{\"name\": \"@acme/curupira-jira\"}"),
	e("index.extension.name.duplicate", "Each extension name appears once.", "Each extension is listed once.", "two entries named @acme/curupira-jira", "one entry per name"),
	e("index.extension.version", "Every extension names its release version.", "Curupira starts that version.", "\"version\": \"\"", "\"version\": \"1.2.0\""),
	e("index.extension.protocol_version", "Every extension's protocol_version is 2.", "Curupira refuses other majors.", "\"protocol_version\": 1", "\"protocol_version\": 2"),
	e("index.extension.trigger_types", "Every extension lists at least one trigger type.", "Curupira routes triggers by type.", "\"trigger_types\": []", "\"trigger_types\": [\"jira-issue\"]"),
	e("index.extension.launch", "Every extension has a launch object with a type.", "Curupira starts the extension as it says.", "\"launch\": null", "\"launch\": {\"type\": \"npx\", \"package\": \"@acme/curupira-jira\", \"version\": \"1.2.0\"}"),
	e("index.extension.package_url", "Every extension's package_url is an absolute http(s) URL.", "Curupira downloads from it.", "\"package_url\": \"\"", "\"package_url\": \"https://plugins.example.com/packages/acme-curupira-jira/acme-curupira-jira-1.2.0.tar.gz\""),
	e("index.extension.package_sha256", "A package_sha256 is 64 lowercase hex digits or null.", "Curupira checks the download against it.", "\"package_sha256\": \"xyz\"", "\"package_sha256\": \"3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b\""),
	e("index.extension.updated_at", "updated_at is an RFC 3339 UTC timestamp or null.", "Curupira sorts and shows it.", "\"updated_at\": \"today\"", "\"updated_at\": \"2026-09-18T06:00:12Z\""),
}
