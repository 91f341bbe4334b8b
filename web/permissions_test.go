package web_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

func TestPermissionsFor(t *testing.T) {
	tests := []struct {
		name string
		in   web.PermissionInput
		want []web.Permission
	}{
		{"nothing", web.PermissionInput{}, nil},
		{"read only", web.PermissionInput{APIRead: []string{"tasks", "messages", "agent_profiles"}, Events: []string{"task.created", "task.*"}},
			[]web.Permission{
				{Key: "api_read", Label: "Reads your Kandev data", Detail: "Read access to tasks, conversation messages and agent profiles."},
				{Key: "events", Label: "Is told about activity in Kandev", Detail: "Receives these events: task.created and task.*."},
			}},
		{"writes and secrets", web.PermissionInput{APIWrite: []string{"tasks", "messages"}, Secrets: true, State: true},
			[]web.Permission{
				{Key: "secrets", Risky: true, Label: "Reads and changes your secrets", Detail: "Can reveal, read, set and delete stored secrets such as API tokens."},
				{Key: "api_write", Risky: true, Label: "Changes your Kandev data", Detail: "Can create and update tasks and send messages."},
				{Key: "state", Label: "Keeps its own data on the server", Detail: "Stores and reads its own saved state."},
			}},
		{"webhooks split by access, empty access counts as public",
			web.PermissionInput{Webhooks: []web.AccessPoint{{Key: "slack", Access: "public"}, {Key: "legacy"}, {Key: "sync", Access: "authenticated"}}},
			[]web.Permission{
				{Key: "webhooks.public", Risky: true, Label: "Accepts requests from anyone on the internet", Detail: "Public webhooks, no Kandev login needed: slack and legacy."},
				{Key: "webhooks.authenticated", Label: "Accepts requests from signed-in people", Detail: "Webhooks that need a Kandev login: sync."},
			}},
		{"canvas with network origins",
			web.PermissionInput{NetworkOrigins: []string{"https://api.example.com", "https://cdn.example.com", "https://api.example.com"}, UserState: true},
			[]web.Permission{
				{Key: "network_origins", Risky: true, Label: "Talks to outside websites", Detail: "Its pages may contact https://api.example.com and https://cdn.example.com directly from your browser."},
				{Key: "user_state", Label: "Keeps data for each person", Detail: "Its pages can store and read data that belongs to the signed-in person."},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, web.PermissionsFor(tt.in)); diff != "" {
				t.Errorf("PermissionsFor (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPermissionsRisky checks which capabilities are flagged, and that the
// risky ones come first.
func TestPermissionsRisky(t *testing.T) {
	in := web.PermissionInput{
		ManagedBinary: true, Events: []string{"task.created"}, APIRead: []string{"tasks"}, APIWrite: []string{"tasks"},
		State: true, Secrets: true, AgentInvoke: true, AgentConversation: true, Auth: true, UserState: true,
		Webhooks:       []web.AccessPoint{{Key: "in", Access: "public"}, {Key: "priv", Access: "authenticated"}},
		Actions:        []web.AccessPoint{{Key: "sync", Access: "admin"}},
		NetworkOrigins: []string{"https://api.example.com"},
		AgentTools:     []string{"search_tasks"},
	}
	type flag struct {
		Key   string
		Risky bool
	}
	var got []flag
	for _, p := range web.PermissionsFor(in) {
		got = append(got, flag{p.Key, p.Risky})
	}
	want := []flag{
		{"auth", true}, {"secrets", true}, {"api_write", true}, {"agent_invoke", true},
		{"network_origins", true}, {"webhooks.public", true},
		{"runtime", false}, {"api_read", false}, {"events", false}, {"agent_conversation", false},
		{"agent_tools", false}, {"webhooks.authenticated", false}, {"actions", false},
		{"state", false}, {"user_state", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("permission keys (-want +got):\n%s", diff)
	}
}
