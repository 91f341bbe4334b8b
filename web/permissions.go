package web

import (
	"slices"
	"strings"
)

// PermissionInput is what a package asks of its host, in the shape of a
// Kandev manifest's capabilities (the caller copies the fields over, so this
// package does not depend on the manifest package).
type PermissionInput struct {
	// ManagedBinary is true when the host runs an executable the package ships.
	ManagedBinary     bool
	Events            []string
	APIRead           []string
	APIWrite          []string
	State             bool
	Secrets           bool
	AgentInvoke       bool
	AgentConversation bool
	Auth              bool
	UserState         bool
	Webhooks          []AccessPoint
	Actions           []AccessPoint
	// NetworkOrigins are the external origins the package's web apps may contact.
	NetworkOrigins []string
	// AgentTools are the names of the tools the package gives agents.
	AgentTools []string
}

// AccessPoint is a webhook or action key with its effective access:
// "public", "authenticated" or "admin". An empty access counts as public.
type AccessPoint struct {
	Key    string
	Access string
}

// resourceWords names the Kandev data API resources in plain words.
var resourceWords = map[string]string{
	"tasks":             "tasks",
	"sessions":          "agent sessions",
	"messages":          "conversation messages",
	"workspaces":        "workspaces",
	"workflows":         "workflows",
	"agent_profiles":    "agent profiles",
	"executor_profiles": "executor profiles",
	"repositories":      "repositories",
}

// PermissionsFor turns what a package asks for into plain words, risky
// permissions first (secrets, auth, api_write, agent_invoke, network
// origins, public webhooks), each group in a fixed order.
func PermissionsFor(in PermissionInput) []Permission {
	var out []Permission
	add := func(p Permission, ok bool) {
		if ok {
			out = append(out, p)
		}
	}
	add(Permission{Key: "auth", Risky: true, Label: "Signs people in to Kandev",
		Detail: "Can log visitors in through an outside identity provider. This is the most powerful permission: install only from a publisher you trust."}, in.Auth)
	add(Permission{Key: "secrets", Risky: true, Label: "Reads and changes your secrets",
		Detail: "Can reveal, read, set and delete stored secrets such as API tokens."}, in.Secrets)
	add(Permission{Key: "api_write", Risky: true, Label: "Changes your Kandev data",
		Detail: writeDetail(in.APIWrite)}, len(in.APIWrite) > 0)
	add(Permission{Key: "agent_invoke", Risky: true, Label: "Runs AI agents on its own",
		Detail: "Can ask a utility agent for a completion, which may spend your model credits."}, in.AgentInvoke)
	add(Permission{Key: "network_origins", Risky: true, Label: "Talks to outside websites",
		Detail: "Its pages may contact " + joinWords(in.NetworkOrigins) + " directly from your browser."}, len(in.NetworkOrigins) > 0)
	public, signedIn := splitWebhooks(in.Webhooks)
	add(Permission{Key: "webhooks.public", Risky: true, Label: "Accepts requests from anyone on the internet",
		Detail: "Public webhooks, no Kandev login needed: " + joinWords(public) + "."}, len(public) > 0)
	return append(out, plainPermissions(in, signedIn)...)
}

// plainPermissions lists the permissions that are not flagged as risky.
func plainPermissions(in PermissionInput, signedInWebhooks []string) []Permission {
	var out []Permission
	add := func(p Permission, ok bool) {
		if ok {
			out = append(out, p)
		}
	}
	add(Permission{Key: "runtime", Label: "Runs its own program on the Kandev server",
		Detail: "Kandev starts and supervises the executable shipped in this package."}, in.ManagedBinary)
	add(Permission{Key: "api_read", Label: "Reads your Kandev data",
		Detail: "Read access to " + joinWords(resourceNames(in.APIRead)) + "."}, len(in.APIRead) > 0)
	add(Permission{Key: "events", Label: "Is told about activity in Kandev",
		Detail: "Receives these events: " + joinWords(in.Events) + "."}, len(in.Events) > 0)
	add(Permission{Key: "agent_conversation", Label: "Holds conversations with agents",
		Detail: "Can create hidden agent sessions and send them prompts."}, in.AgentConversation)
	add(Permission{Key: "agent_tools", Label: "Gives agents new tools",
		Detail: "Tools: " + joinWords(in.AgentTools) + "."}, len(in.AgentTools) > 0)
	add(Permission{Key: "webhooks.authenticated", Label: "Accepts requests from signed-in people",
		Detail: "Webhooks that need a Kandev login: " + joinWords(signedInWebhooks) + "."}, len(signedInWebhooks) > 0)
	add(actionsPermission(in.Actions), len(in.Actions) > 0)
	add(Permission{Key: "state", Label: "Keeps its own data on the server",
		Detail: "Stores and reads its own saved state."}, in.State)
	add(Permission{Key: "user_state", Label: "Keeps data for each person",
		Detail: "Its pages can store and read data that belongs to the signed-in person."}, in.UserState)
	return out
}

func actionsPermission(actions []AccessPoint) Permission {
	var keys []string
	admin := false
	for _, a := range actions {
		keys = append(keys, a.Key)
		admin = admin || a.Access == "admin"
	}
	p := Permission{Key: "actions", Label: "Adds buttons that act for signed-in people",
		Detail: "Actions: " + joinWords(keys) + "."}
	if admin {
		p.Detail += " Some are for admins only."
	}
	return p
}

func splitWebhooks(hooks []AccessPoint) (public, signedIn []string) {
	for _, h := range hooks {
		if h.Access == "" || h.Access == "public" {
			public = append(public, h.Key)
		} else {
			signedIn = append(signedIn, h.Key)
		}
	}
	return public, signedIn
}

func writeDetail(resources []string) string {
	var parts []string
	for _, r := range resources {
		switch r {
		case "tasks":
			parts = append(parts, "create and update tasks")
		case "messages":
			parts = append(parts, "send messages")
		default:
			parts = append(parts, "write "+r)
		}
	}
	return "Can " + joinWords(parts) + "."
}

// unique drops repeated items, keeping the first of each.
func unique(items []string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out
}

func resourceNames(resources []string) []string {
	out := make([]string, 0, len(resources))
	for _, r := range resources {
		if w, ok := resourceWords[r]; ok {
			out = append(out, w)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// joinWords joins items as "a", "a and b" or "a, b and c", without duplicates.
func joinWords(items []string) string {
	items = unique(items)
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
