package manifest

import (
	"fmt"
	"regexp"
)

var actionKeyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

var actionScopes = []string{"workspace", "task", "repository"}

func (c *checker) webhooks() {
	seen := map[string]bool{}
	for i, w := range c.m.Webhooks {
		path := fmt.Sprintf("webhooks[%d]", i)
		switch {
		case w.Key == "":
			c.probs.Errorf("manifest.webhooks.key", path+".key", "expected a webhook key (used in /api/plugins/{id}/webhooks/{key}), found none; add key:")
		case seen[w.Key]:
			c.probs.Errorf("manifest.webhooks.duplicate", path+".key", "expected unique webhook keys, found %q again; hosts reject duplicates, rename or remove it", w.Key)
		}
		seen[w.Key] = true
		c.webhookAccess(path, w)
	}
}

func (c *checker) webhookAccess(path string, w Webhook) {
	access := w.EffectiveAccess(c.m.APIVersion)
	if access != AccessPublic && access != AccessAuthenticated {
		c.probs.Errorf("manifest.webhooks.access", path+".access", "expected access public or authenticated, found %q; hosts reject other values", w.Access)
		return
	}
	n := w.MaxBodyBytes
	switch {
	case n < 0 || n > MaximumWebhookMaxBodyBytes:
		c.probs.Errorf("manifest.webhooks.max_body_bytes", path+".max_body_bytes", "expected max_body_bytes between 1 and %d (16 MiB), found %d; hosts reject it, lower the limit", MaximumWebhookMaxBodyBytes, n)
	case access == AccessPublic && n > DefaultWebhookMaxBodyBytes:
		c.probs.Errorf("manifest.webhooks.max_body_bytes", path+".max_body_bytes", "expected at most %d bytes (4 MiB) for a public webhook (access %s by default under api_version %d), found %d; lower the limit or set access: authenticated", DefaultWebhookMaxBodyBytes, access, c.m.APIVersion, n)
	}
}

func (c *checker) actions() {
	seen := map[string]bool{}
	for i, a := range c.m.Actions {
		path := fmt.Sprintf("actions[%d]", i)
		switch {
		case !actionKeyPattern.MatchString(a.Key):
			c.probs.Errorf("manifest.actions.key", path+".key", "expected a non-empty action key matching %s, found %q; rename the action", actionKeyPattern, a.Key)
		case seen[a.Key]:
			c.probs.Errorf("manifest.actions.duplicate", path+".key", "expected unique action keys, found %q again; hosts reject duplicates, rename or remove it", a.Key)
		}
		seen[a.Key] = true
		c.actionScope(path, a)
		if acc := a.EffectiveAccess(); acc != AccessAuthenticated && acc != AccessAdmin {
			c.probs.Errorf("manifest.actions.access", path+".access", "expected access authenticated (the default) or admin, found %q; hosts reject other values", a.Access)
		}
		if a.MaxBodyBytes < 1 || a.MaxBodyBytes > MaxActionBodyBytes {
			c.probs.Errorf("manifest.actions.max_body_bytes", path+".max_body_bytes", "expected max_body_bytes from 1 through %d, found %d; set the largest JSON body the action accepts", MaxActionBodyBytes, a.MaxBodyBytes)
		}
	}
}

func (c *checker) actionScope(path string, a Action) {
	if a.ResourceScope != "" {
		if a.Scope != "" && a.Scope != a.ResourceScope {
			c.probs.Errorf("manifest.actions.scope", path+".resource_scope", "expected resource_scope to agree with scope, found scope %q and resource_scope %q; hosts refuse the manifest, delete resource_scope", a.Scope, a.ResourceScope)
			return
		}
		c.probs.Warnf("manifest.actions.resource_scope", path+".resource_scope", "expected the canonical field scope, found the legacy spelling resource_scope; rename it to scope")
	}
	if s := a.EffectiveScope(); !contains(actionScopes, s) {
		c.probs.Errorf("manifest.actions.scope", path+".scope", "expected scope workspace, task or repository, found %q; set the resource the host should authorize", s)
	}
}
