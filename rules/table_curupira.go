package rules

// curupiraRules are the rules of curupira-extension.toml (extension/).
var curupiraRules = []Rule{
	e("extension.toml", "The file parses as TOML.", "Curupira cannot read an extension whose manifest does not parse.", "name = \"acme-ext", "name = \"acme-ext\""),
	e("extension.type", "Each key has the TOML type the protocol gives it.", "Curupira decodes the manifest into typed fields.", "manifest_version = \"1\"", "manifest_version = 1"),
	e("extension.unknown", "Every key is one the extension manifest defines; the message suggests the nearest known name.", "Unknown keys are usually misspellings of a key Curupira then never sees.", "homepge = \"https://example.com\"", "homepage = \"https://example.com\""),
	e("extension.manifest_version", "`manifest_version` is 1.", "Curupira reads only version 1 of the manifest.", "manifest_version = 2", "manifest_version = 1"),
	e("extension.name", "The manifest has a `name`.", "The name is the extension's identity in Curupira and the index.", "description = \"Jira triggers\"", "name = \"@acme/curupira-jira\""),
	e("extension.name.format", "`name` is an npm-style package name (lowercase, optionally @scope/, at most 214 characters).", "Extensions are launched and listed by package name.", "name = \"Acme Jira\"", "name = \"@acme/curupira-jira\""),
	e("extension.version", "The manifest has a `version`.", "The index lists and Curupira starts a specific version.", "name = \"acme-ext\"", "version = \"1.2.0\""),
	e("extension.version.semver", "`version` is SemVer 2.0.0 without build metadata.", "Versions are compared by SemVer precedence and repeated in the package file name.", "version = \"v1.2\"", "version = \"1.2.0\""),
	e("extension.protocol_version", "`protocol_version` is 2.", "It is the protocol this registry and Curupira speak; Curupira refuses other majors.", "protocol_version = 1", "protocol_version = 2"),
	e("extension.runtime", "The manifest has a `runtime`.", "Curupira picks how to run the extension from it.", "kind = \"trigger\"", "runtime = \"node\""),
	w("extension.runtime.unknown", "`runtime` is one Curupira knows.", "A host may not be able to run an unknown runtime.", "runtime = \"deno\"", "runtime = \"node\""),
	e("extension.kind", "`kind` is trigger, the only kind.", "Curupira loads only trigger extensions.", "kind = \"action\"", "kind = \"trigger\""),
	e("extension.trigger_types", "The manifest lists at least one trigger type.", "Curupira routes triggers to an extension by these types.", "trigger_types = []", "trigger_types = [\"jira-issue\"]"),
	e("extension.trigger_types.format", "Every trigger type starts with a letter and holds only letters, digits, '-' and '_' (at most 64 characters).", "Trigger types are used as keys in Curupira's configuration.", "trigger_types = [\"jira issue\"]", "trigger_types = [\"jira-issue\"]"),
	e("extension.trigger_types.duplicate", "Each trigger type is listed once.", "A type listed twice is a copy-paste slip that Curupira would register twice.", "trigger_types = [\"jira-issue\", \"jira-issue\"]", "trigger_types = [\"jira-issue\"]"),
	e("extension.launch", "The manifest has a [launch] table.", "Curupira starts the extension as [launch] says.", "# no [launch] table", "[launch]\ntype = \"npx\"\npackage = \"@acme/curupira-jira\"\nversion = \"1.2.0\""),
	e("extension.launch.type", "`launch.type` is one of npx, node, python, binary, go.", "Each launch type is a different way of starting the process.", "[launch]\ntype = \"docker\"", "[launch]\ntype = \"npx\""),
	e("extension.launch.package", "`launch.package` is given when the launch type needs it (npx, go) and, for npx, is an npm package name.", "It is what Curupira runs: `npx package@version` or `go run package`.", "[launch]\ntype = \"npx\"\nversion = \"1.2.0\"", "[launch]\ntype = \"npx\"\npackage = \"@acme/curupira-jira\"\nversion = \"1.2.0\""),
	e("extension.launch.version", "`launch.version` is given when the launch type needs it (npx).", "Without it the host would start whatever version is latest.", "[launch]\ntype = \"npx\"\npackage = \"@acme/curupira-jira\"", "[launch]\ntype = \"npx\"\npackage = \"@acme/curupira-jira\"\nversion = \"1.2.0\""),
	e("extension.launch.command", "`launch.command` is given when the launch type needs it (node, python, binary).", "It is the script or executable Curupira starts.", "[launch]\ntype = \"node\"", "[launch]\ntype = \"node\"\ncommand = \"dist/index.js\""),
	w("extension.launch.version.mismatch", "`launch.version` equals `version`.", "Otherwise the host would start another release than the one listed.", "version = \"1.2.0\"\n[launch]\ntype = \"npx\"\npackage = \"@acme/curupira-jira\"\nversion = \"1.1.0\"", "version = \"1.2.0\"\n[launch]\ntype = \"npx\"\npackage = \"@acme/curupira-jira\"\nversion = \"1.2.0\""),
	e("extension.field.length", "Text fields stay within their length limit (see docs/limits.md).", "They reach the shared Curupira index and every host's UI.", "description = \"...\"   # thousands of characters", "description = \"Start agents from Jira issues.\""),
	e("extension.field.count", "Lists stay within their entry limit (see docs/limits.md).", "Every entry is copied into the index.", "trigger_types = [\"t1\", \"t2\", ...]   # more than the limit", "trigger_types = [\"jira-issue\"]"),
	e("extension.field.characters", "Text fields hold no control, bidirectional or other invisible characters.", "Invisible characters let a listing impersonate another or inject into logs and headers.", "description = \"Jira\\u202e triggers\"", "description = \"Jira triggers\""),
}
