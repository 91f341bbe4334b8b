// Package manifest reads and checks a Kandev plugin's manifest.yaml: its types, a strict
// decoder that reports unknown fields and type errors by field path, and the validation
// rules of the Kandev manifest reference, including the canvas distribution block and the
// rules that need the package's file list.
package manifest

import (
	"strings"
	"unicode"
)

// FileName is the package path of the manifest; problems about it carry this File.
const FileName = "manifest.yaml"

// FileInfo describes one regular file of a package. Head holds at most the first 512 bytes.
type FileInfo struct {
	Size int64
	Head []byte
}

// Files maps every regular file of a package (slash-separated, package-relative) to its info.
type Files map[string]FileInfo

// API versions a Kandev host accepts. Version 1 keeps omitted webhook access public;
// version 2 makes it authenticated.
const (
	LegacyAPIVersion  = 1
	CurrentAPIVersion = 2
)

// Access values of webhooks and actions.
const (
	AccessPublic        = "public"
	AccessAuthenticated = "authenticated"
	AccessAdmin         = "admin"
)

// Manifest is a decoded manifest.yaml. Field names follow the Kandev reference; fields the
// reference does not name but real plugins use (License, Homepage, ExecutorProviders,
// AutomationConditions, the legacy Tools block) are kept so nothing is silently lost.
type Manifest struct {
	ID                   string                `yaml:"id"`
	APIVersion           int                   `yaml:"api_version"`
	Version              string                `yaml:"version"`
	DisplayName          string                `yaml:"display_name"`
	Description          string                `yaml:"description"`
	Author               string                `yaml:"author"`
	Categories           []string              `yaml:"categories"`
	Icon                 string                `yaml:"icon"`
	RepoURL              string                `yaml:"repo_url"`
	License              string                `yaml:"license"`
	Homepage             string                `yaml:"homepage"`
	MinKandevVersion     string                `yaml:"min_kandev_version"`
	Runtime              *Runtime              `yaml:"runtime"`
	BaseURL              string                `yaml:"base_url"`
	Endpoints            *Endpoints            `yaml:"endpoints"`
	Capabilities         Capabilities          `yaml:"capabilities"`
	Webhooks             []Webhook             `yaml:"webhooks"`
	Actions              []Action              `yaml:"actions"`
	RepositoryProviders  []string              `yaml:"repository_providers"`
	ReferenceSources     []ReferenceSource     `yaml:"reference_sources"`
	AuthProviders        []AuthProvider        `yaml:"auth_providers"`
	ConfigSchema         map[string]any        `yaml:"config_schema"`
	AgentTools           []AgentTool           `yaml:"agent_tools"`
	UI                   *UI                   `yaml:"ui"`
	Distribution         *Distribution         `yaml:"distribution"`
	AutomationConditions []AutomationCondition `yaml:"automation_conditions"`
	ExecutorProviders    []ExecutorProvider    `yaml:"executor_providers"`
	// Tools is the old top-level tools block; current hosts ignore it (see AgentTools).
	Tools []LegacyTool `yaml:"tools"`
}

// Runtime declares the managed executable. Type "binary" is the only supported value;
// Executables maps "<goos>-<goarch>" to a package path under server/.
type Runtime struct {
	Type        string            `yaml:"type"`
	Executables map[string]string `yaml:"executables"`
}

// Endpoints is the legacy remote-service block; a managed manifest must not set it.
type Endpoints struct {
	Health   string `yaml:"health"`
	Events   string `yaml:"events"`
	Webhooks string `yaml:"webhooks"`
}

// Capabilities declares what the plugin may do through the host.
type Capabilities struct {
	Events            []string `yaml:"events"`
	APIRead           []string `yaml:"api_read"`
	APIWrite          []string `yaml:"api_write"`
	State             bool     `yaml:"state"`
	Secrets           bool     `yaml:"secrets"`
	AgentInvoke       bool     `yaml:"agent_invoke"`
	AgentConversation bool     `yaml:"agent_conversation"`
	Auth              bool     `yaml:"auth"`
	UserState         bool     `yaml:"user_state"`
	// ExecutorProvider is newer than the reference; it accompanies executor_providers.
	ExecutorProvider bool `yaml:"executor_provider"`
}

// Webhook is a relayed inbound HTTP endpoint.
type Webhook struct {
	Key          string `yaml:"key"`
	Description  string `yaml:"description"`
	Method       string `yaml:"method"`
	Access       string `yaml:"access"`
	MaxBodyBytes int64  `yaml:"max_body_bytes"`
}

// Webhook body limits: the default and public maximum, and the authenticated maximum.
const (
	DefaultWebhookMaxBodyBytes int64 = 4 << 20
	MaximumWebhookMaxBodyBytes int64 = 16 << 20
)

// EffectiveAccess is the webhook's access after the api_version default: an omitted access
// is public under api_version 1 and authenticated otherwise.
func (w Webhook) EffectiveAccess(apiVersion int) string {
	if w.Access != "" {
		return w.Access
	}
	if apiVersion == LegacyAPIVersion {
		return AccessPublic
	}
	return AccessAuthenticated
}

// Action is an authenticated, manifest-declared browser action.
type Action struct {
	Key          string `yaml:"key"`
	Scope        string `yaml:"scope"`
	Access       string `yaml:"access"`
	MaxBodyBytes int64  `yaml:"max_body_bytes"`
	// ResourceScope is the legacy spelling of Scope; hosts still read it.
	ResourceScope string `yaml:"resource_scope"`
}

// MaxActionBodyBytes is the largest max_body_bytes an action may declare.
const MaxActionBodyBytes int64 = 1 << 20

// EffectiveScope is Scope, else the legacy ResourceScope.
func (a Action) EffectiveScope() string {
	if a.Scope != "" {
		return a.Scope
	}
	return a.ResourceScope
}

// EffectiveAccess is Access, defaulting to authenticated.
func (a Action) EffectiveAccess() string {
	if a.Access == "" {
		return AccessAuthenticated
	}
	return a.Access
}

// ReferenceSource is a dynamic composer-reference source.
type ReferenceSource struct {
	Source      string `yaml:"source"`
	Provider    string `yaml:"provider"`
	Kind        string `yaml:"kind"`
	DisplayName string `yaml:"display_name"`
	KindLabel   string `yaml:"kind_label"`
	Order       int    `yaml:"order"`
}

// AuthProvider is a login button; Initiate names a webhook key.
type AuthProvider struct {
	ID          string `yaml:"id"`
	DisplayName string `yaml:"display_name"`
	Initiate    string `yaml:"initiate"`
}

// AgentTool is an MCP tool the managed plugin contributes to task sessions.
type AgentTool struct {
	Name         string           `yaml:"name"`
	Description  string           `yaml:"description"`
	Surfaces     []string         `yaml:"surfaces"`
	InputSchema  map[string]any   `yaml:"input_schema"`
	OutputSchema map[string]any   `yaml:"output_schema"`
	Annotations  *ToolAnnotations `yaml:"annotations"`
}

// ToolAnnotations are MCP hints; nil means omitted.
type ToolAnnotations struct {
	ReadOnlyHint    *bool `yaml:"read_only_hint"`
	DestructiveHint *bool `yaml:"destructive_hint"`
	IdempotentHint  *bool `yaml:"idempotent_hint"`
	OpenWorldHint   *bool `yaml:"open_world_hint"`
}

// LegacyTool is an entry of the old top-level tools block.
type LegacyTool struct {
	Name        string `yaml:"name"`
	DisplayName string `yaml:"display_name"`
	Description string `yaml:"description"`
}

// UI is the optional native UI and isolated web apps.
type UI struct {
	Bundle      string       `yaml:"bundle"`
	Styles      []string     `yaml:"styles"`
	Pages       []Page       `yaml:"pages"`
	WebApps     []WebApp     `yaml:"web_apps"`
	Keybindings []Keybinding `yaml:"keybindings"`
}

// Page is declarative ui.pages metadata.
type Page struct {
	Key     string `yaml:"key"`
	Title   string `yaml:"title"`
	Path    string `yaml:"path"`
	Surface string `yaml:"surface"`
}

// WebApp is a packaged static web app loaded in a sandboxed iframe.
type WebApp struct {
	Key            string   `yaml:"key"`
	Title          string   `yaml:"title"`
	Entry          string   `yaml:"entry"`
	Placements     []string `yaml:"placements"`
	NetworkOrigins []string `yaml:"network_origins"`
}

// Keybinding is a plugin keyboard shortcut dispatched to the UI bundle.
type Keybinding struct {
	ID            string `yaml:"id"`
	Default       string `yaml:"default"`
	Description   string `yaml:"description"`
	AllowInEditor bool   `yaml:"allow_in_editor"`
}

// Distribution is the portable canvas block.
type Distribution struct {
	SchemaVersion int    `yaml:"schema_version"`
	Kind          string `yaml:"kind"`
	License       string `yaml:"license"`
	SourceMode    string `yaml:"source_mode"`
}

// AutomationCondition is a native automation-editor condition backed by a signed webhook.
type AutomationCondition struct {
	Key                 string         `yaml:"key"`
	AdapterKey          string         `yaml:"adapter_key"`
	Access              string         `yaml:"access"`
	VerificationHeaders []string       `yaml:"verification_headers"`
	ConfigVersion       int            `yaml:"config_version"`
	Label               string         `yaml:"label"`
	Description         string         `yaml:"description"`
	LabelKey            string         `yaml:"label_key"`
	DescriptionKey      string         `yaml:"description_key"`
	ConfigSchema        map[string]any `yaml:"config_schema"`
	DefaultConfig       map[string]any `yaml:"default_config"`
}

// ExecutorProvider is a newer contribution (remote execution environments); the reference
// does not document it, so its inner blocks are kept as free-form maps.
type ExecutorProvider struct {
	Key                    string            `yaml:"key"`
	DisplayName            string            `yaml:"display_name"`
	Description            string            `yaml:"description"`
	LocalizedMessages      map[string]string `yaml:"localized_messages"`
	ContractVersion        int               `yaml:"contract_version"`
	SupportedStateVersions []int             `yaml:"supported_state_versions"`
	ProfileSchema          map[string]any    `yaml:"profile_schema"`
	ResourceStateSchema    map[string]any    `yaml:"resource_state_schema"`
	Capabilities           map[string]any    `yaml:"capabilities"`
}

// Kind is "canvas" when the manifest has a distribution block, else "plugin".
func (m *Manifest) Kind() string {
	if m.Distribution != nil {
		return "canvas"
	}
	return "plugin"
}

// Name is DisplayName, else the humanized ID.
func (m *Manifest) Name() string {
	if strings.TrimSpace(m.DisplayName) != "" {
		return m.DisplayName
	}
	return Humanize(m.ID)
}

// IsManaged reports whether runtime.type is "binary".
func (m *Manifest) IsManaged() bool {
	return m.Runtime != nil && m.Runtime.Type == "binary"
}

// HasWebApps reports whether the manifest declares ui.web_apps.
func (m *Manifest) HasWebApps() bool {
	return m.UI != nil && len(m.UI.WebApps) > 0
}

// Humanize turns an id into a display name: "agent-stats" -> "Agent Stats".
func Humanize(id string) string {
	words := strings.FieldsFunc(id, func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || unicode.IsSpace(r)
	})
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}
