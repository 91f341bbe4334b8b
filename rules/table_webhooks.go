package rules

// webhookRules are the rules of the webhooks file (`registry serve --webhooks
// webhooks.yaml`, docs/webhooks.md): the server refuses to start with any of them broken,
// naming each problem's line and column. webhooks.destination is also what a delivery
// refused at connect time records in the delivery log.
var webhookRules = []Rule{
	e("webhooks.parse", "The file is YAML with an `endpoints:` list (and optionally `max_attempts:`, `timeout:`), every key known, none twice, within 64 KiB.", "A misspelt key would silently drop a setting, such as an event filter.", "endpoints:\n  - name: ci\n    urls: https://hooks.example.com/registry", "endpoints:\n  - name: ci\n    url: https://hooks.example.com/registry"),
	e("webhooks.name", "Each endpoint has a name of 1 to 64 lower-case letters, digits and `-`, unique in the file.", "Deliveries are kept and shown by endpoint name; renaming an endpoint starts it afresh.", "  - name: CI Hook", "  - name: ci-hook"),
	e("webhooks.url", "The URL is absolute https (http only with `allow_private: true`), with no user name, password or fragment.", "Events travel readable over plain http, and credentials in a URL end up in logs.", "    url: http://user:pw@hooks.example.com/registry", "    url: https://hooks.example.com/registry"),
	e("webhooks.destination", "Without `allow_private: true`, the endpoint is not, and does not resolve to, a loopback, private, link-local or CGNAT address; checked on the address actually connected to, after DNS.", "A webhook URL that reaches the registry's own network is a server-side request forgery.", "    url: https://169.254.169.254/latest", "    url: https://hooks.example.com/registry   # or allow_private: true for your own network"),
	e("webhooks.secret", "Each endpoint names its secret with exactly one of `secret_env` or `secret_file` (never inline), and the secret is `whsec_` followed by base64 of 24 to 64 bytes.", "A secret written in a file that ends up in version control is no secret; Standard Webhooks libraries expect the whsec_ form.", "    secret: whsec_abc", "    secret_env: REGISTRY_WEBHOOK_CI_SECRET   # whsec_$(openssl rand -base64 32)"),
	e("webhooks.events", "Each endpoint lists at least one event type it wants, each a known type or `*`.", "A misspelt type would silently never match.", "    events: [release.publish]", "    events: [release.published, release.yanked]"),
	e("webhooks.limits", "`max_attempts` is 1 to 30, `timeout` 1s to 30s, and the file lists at most 32 endpoints.", "They bound how long a dead receiver keeps a package's later events waiting, and the work of each round.", "max_attempts: 0", "max_attempts: 10"),
}
