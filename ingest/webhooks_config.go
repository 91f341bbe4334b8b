package ingest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/problem"
)

// The webhook event types (docs/webhooks.md).
const (
	EventReleasePublished   = "release.published"
	EventReleaseYanked      = "release.yanked"
	EventPackageDeprecated  = "package.deprecated"
	EventPackageQuarantined = "package.quarantined"
	EventVerificationFailed = "verification.failed"
	EventSyncFailed         = "sync.failed"
)

// WebhookEvents are every event type, in the order the docs list them.
var WebhookEvents = []string{EventReleasePublished, EventReleaseYanked, EventPackageDeprecated,
	EventPackageQuarantined, EventVerificationFailed, EventSyncFailed}

// Limits of a webhooks file.
const (
	MaxWebhooksBytes     = 64 << 10
	MaxWebhookEndpoints  = 32
	DefaultWebhookTries  = 15
	MaxWebhookTries      = 30
	DefaultWebhookWait   = 10 * time.Second
	MaxWebhookWait       = 30 * time.Second
	minWebhookSecretSize = 24 // bytes of key, as Standard Webhooks asks (24 to 64)
	maxWebhookSecretSize = 64
)

// WebhookConfig is a parsed webhooks file (--webhooks).
type WebhookConfig struct {
	// MaxAttempts is how many times one delivery is tried before it is dead-lettered.
	MaxAttempts int `json:"max_attempts"`
	// Timeout bounds one attempt: connecting, sending and reading the answer's head.
	Timeout   time.Duration     `json:"timeout"`
	Endpoints []WebhookEndpoint `json:"endpoints"`
}

// WebhookEndpoint is one receiver. Its secret is held unexported: it is never logged,
// marshalled or shown back.
type WebhookEndpoint struct {
	Name   string   `json:"name"`
	URL    string   `json:"url"`
	Events []string `json:"events"` // event types, or ["*"] for all
	// AllowPrivate lets the endpoint resolve to a loopback, private or link-local address
	// (a receiver on the operator's own network) and use plain http.
	AllowPrivate bool `json:"allow_private"`
	key          []byte
}

// Wants reports whether the endpoint's filter takes events of type typ.
func (e *WebhookEndpoint) Wants(typ string) bool {
	return slices.Contains(e.Events, "*") || slices.Contains(e.Events, typ)
}

// Names returns the endpoints' names.
func (c *WebhookConfig) Names() []string {
	out := make([]string, 0, len(c.Endpoints))
	for _, e := range c.Endpoints {
		out = append(out, e.Name)
	}
	return out
}

// Endpoint returns the endpoint called name.
func (c *WebhookConfig) Endpoint(name string) (*WebhookEndpoint, bool) {
	for i := range c.Endpoints {
		if c.Endpoints[i].Name == name {
			return &c.Endpoints[i], true
		}
	}
	return nil, false
}

// WebhookSecrets is where ParseWebhooks reads the secrets the file points at.
type WebhookSecrets struct {
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
}

var webhookName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// webhookParser walks the YAML node tree, so that every problem names its line and column.
type webhookParser struct {
	file    string
	dir     string // secret_file paths are relative to the file's folder
	secrets WebhookSecrets
	probs   problem.List
}

func (p *webhookParser) errorf(n *yaml.Node, rule, path, format string, args ...any) {
	file := p.file
	if n != nil {
		file = fmt.Sprintf("%s:%d:%d", p.file, n.Line, n.Column)
	}
	p.probs = append(p.probs, problem.Problem{Rule: rule, Path: path, File: file, Severity: problem.Error, Message: fmt.Sprintf(format, args...)})
}

// ParseWebhooks parses and checks a webhooks file named file, reading the secrets it
// points at; it returns every problem, each with its rule and the line and column in
// File. The whole file is refused if anything is wrong.
func ParseWebhooks(file string, data []byte, secrets WebhookSecrets) (*WebhookConfig, problem.List) {
	p := &webhookParser{file: file, dir: filepath.Dir(file), secrets: secrets}
	if len(data) > MaxWebhooksBytes {
		p.errorf(nil, "webhooks.parse", "", "the file is %d bytes, over the %d-byte limit; a webhooks file lists a few endpoints", len(data), MaxWebhooksBytes)
		return nil, p.probs
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		p.errorf(nil, "webhooks.parse", "", "the file does not parse as YAML: %v; expected endpoints: [{name: ci, url: https://…, secret_env: NAME, events: [release.published]}]", err)
		return nil, p.probs
	}
	c := &WebhookConfig{MaxAttempts: DefaultWebhookTries, Timeout: DefaultWebhookWait}
	if len(doc.Content) == 1 {
		p.top(doc.Content[0], c)
	}
	if len(c.Endpoints) == 0 && len(p.probs) == 0 {
		p.errorf(nil, "webhooks.parse", "endpoints", "expected at least one endpoint under endpoints:, found none; list one, or leave --webhooks unset")
	}
	if len(p.probs) > 0 {
		return nil, p.probs
	}
	return c, nil
}

func (p *webhookParser) top(n *yaml.Node, c *WebhookConfig) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "webhooks.parse", "", "expected a mapping with endpoints: (and optionally max_attempts:, timeout:), found a %s", kindName(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "max_attempts":
			c.MaxAttempts = p.intIn(v, "max_attempts", 1, MaxWebhookTries, c.MaxAttempts)
		case "timeout":
			c.Timeout = p.duration(v, "timeout", time.Second, MaxWebhookWait, c.Timeout)
		case "endpoints":
			p.endpoints(v, c)
		default:
			p.errorf(k, "webhooks.parse", k.Value, "unknown key %q; expected endpoints, max_attempts or timeout", truncateQuote(k.Value))
		}
	}
}

func (p *webhookParser) endpoints(n *yaml.Node, c *WebhookConfig) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "webhooks.parse", "endpoints", "expected a list of endpoints, found a %s", kindName(n))
		return
	}
	if len(n.Content) > MaxWebhookEndpoints {
		p.errorf(n, "webhooks.limits", "endpoints", "expected at most %d endpoints, found %d; fan out from one receiver instead", MaxWebhookEndpoints, len(n.Content))
		return
	}
	seen := map[string]*yaml.Node{}
	for i, item := range n.Content {
		path := fmt.Sprintf("endpoints[%d]", i)
		e, nameNode, ok := p.endpoint(item, path)
		if prev, dup := seen[e.Name]; dup && e.Name != "" {
			p.errorf(nameNode, "webhooks.name", path+".name", "the name %q is already used by the endpoint at line %d; give each endpoint its own name (deliveries are kept by name)", e.Name, prev.Line)
			continue
		}
		seen[e.Name] = nameNode
		if ok {
			c.Endpoints = append(c.Endpoints, e)
		}
	}
}

// endpoint reads one endpoint; ok is false when it has a problem.
func (p *webhookParser) endpoint(n *yaml.Node, path string) (e WebhookEndpoint, nameNode *yaml.Node, ok bool) {
	before := len(p.probs)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "webhooks.parse", path, "expected an endpoint {name, url, secret_env or secret_file, events}, found a %s", kindName(n))
		return e, n, false
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := fields[k.Value]; dup {
			p.errorf(k, "webhooks.parse", path+"."+k.Value, "the key %q is given twice; keep one", k.Value)
			continue
		}
		switch k.Value {
		case "name", "url", "secret_env", "secret_file", "events", "allow_private":
			fields[k.Value] = v
		case "secret":
			p.errorf(k, "webhooks.secret", path+".secret", "a secret written in the file is refused (files like this one end up in version control); put it in an environment variable named by secret_env, or a file named by secret_file")
		default:
			p.errorf(k, "webhooks.parse", path+"."+k.Value, "unknown key %q; expected name, url, secret_env or secret_file, events, allow_private", truncateQuote(k.Value))
		}
	}
	e.Name, nameNode = p.name(n, fields["name"], path)
	e.AllowPrivate = p.boolean(fields["allow_private"], path+".allow_private")
	e.URL = p.url(n, fields["url"], path+".url", e.AllowPrivate)
	e.Events = p.events(n, fields["events"], path+".events")
	e.key = p.secret(n, fields["secret_env"], fields["secret_file"], path)
	return e, nameNode, len(p.probs) == before
}

func (p *webhookParser) name(parent, n *yaml.Node, path string) (string, *yaml.Node) {
	if n == nil {
		p.errorf(parent, "webhooks.name", path+".name", "expected a name such as ci or chat-relay, found none")
		return "", parent
	}
	if n.Kind != yaml.ScalarNode || !webhookName.MatchString(n.Value) {
		p.errorf(n, "webhooks.name", path+".name", "expected 1 to 64 lower-case letters, digits and '-', starting with a letter or digit, found %q", truncateQuote(n.Value))
	}
	return n.Value, n
}

func (p *webhookParser) url(parent, n *yaml.Node, path string, allowPrivate bool) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Value == "" {
		p.errorf(parent, "webhooks.url", path, "expected the receiver's URL, such as https://hooks.example.com/registry, found none")
		return ""
	}
	u, err := url.Parse(n.Value)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		p.errorf(n, "webhooks.url", path, "expected an absolute https URL, such as https://hooks.example.com/registry, found %q", truncateQuote(n.Value))
	case u.User != nil:
		p.errorf(n, "webhooks.url", path, "the URL carries a user name or password, which would be logged with it; the signature authenticates the registry, so drop it")
	case u.Fragment != "":
		p.errorf(n, "webhooks.url", path, "the URL has a #fragment, which is never sent; drop it")
	case u.Scheme == "http" && !allowPrivate:
		p.errorf(n, "webhooks.url", path, "plain http is refused for a receiver on the internet (the events would travel readable); use https, or set allow_private: true for a receiver on your own network")
	case !allowPrivate && literalPrivate(u.Hostname()):
		p.errorf(n, "webhooks.destination", path, "%s is a loopback, private or link-local address; set allow_private: true if the receiver is on your own network", u.Hostname())
	}
	return n.Value
}

func literalPrivate(host string) bool {
	a, err := netip.ParseAddr(host)
	return (err == nil && !publicAddr(a)) || strings.EqualFold(host, "localhost")
}

func (p *webhookParser) events(parent, n *yaml.Node, path string) []string {
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(parent, "webhooks.events", path, "expected a list of event types, such as [release.published, release.yanked], or [\"*\"] for all of: %s", strings.Join(WebhookEvents, ", "))
		return nil
	}
	var out []string
	for i, v := range n.Content {
		if v.Kind != yaml.ScalarNode || (v.Value != "*" && !slices.Contains(WebhookEvents, v.Value)) {
			p.errorf(v, "webhooks.events", fmt.Sprintf("%s[%d]", path, i), "unknown event type %q; expected \"*\" or one of: %s", truncateQuote(v.Value), strings.Join(WebhookEvents, ", "))
			continue
		}
		out = append(out, v.Value)
	}
	return out
}

// secret reads the key one of secret_env or secret_file points at. No message shows any
// part of the secret: only its length.
func (p *webhookParser) secret(parent, env, file *yaml.Node, path string) []byte {
	var raw string
	switch {
	case env != nil && file != nil:
		p.errorf(file, "webhooks.secret", path+".secret_file", "give secret_env or secret_file, not both")
		return nil
	case env != nil:
		if env.Value == "" {
			p.errorf(env, "webhooks.secret", path+".secret_env", "expected the name of an environment variable, found none")
			return nil
		}
		raw = p.secrets.Getenv(env.Value)
		if raw == "" {
			p.errorf(env, "webhooks.secret", path+".secret_env", "the environment variable %s is unset or empty; set it to the endpoint's secret, for example whsec_$(openssl rand -base64 32)", env.Value)
			return nil
		}
	case file != nil:
		name := file.Value
		if !filepath.IsAbs(name) {
			name = filepath.Join(p.dir, name)
		}
		data, err := p.secrets.ReadFile(name)
		if err != nil {
			p.errorf(file, "webhooks.secret", path+".secret_file", "cannot read the secret file: %v", err)
			return nil
		}
		raw = strings.TrimSpace(string(data))
	default:
		p.errorf(parent, "webhooks.secret", path, "expected secret_env: NAME or secret_file: PATH, holding the endpoint's secret (whsec_ followed by base64 of 24 to 64 random bytes), found neither")
		return nil
	}
	return p.decodeSecret(firstNonNil(env, file), raw, path)
}

func (p *webhookParser) decodeSecret(n *yaml.Node, raw, path string) []byte {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(raw, "whsec_"))
	if err != nil || !strings.HasPrefix(raw, "whsec_") || len(key) < minWebhookSecretSize || len(key) > maxWebhookSecretSize {
		p.errorf(n, "webhooks.secret", path, "the secret (%d characters) is not whsec_ followed by base64 of %d to %d bytes; generate one with: echo whsec_$(openssl rand -base64 32)",
			len(raw), minWebhookSecretSize, maxWebhookSecretSize)
		return nil
	}
	return key
}

func firstNonNil(ns ...*yaml.Node) *yaml.Node {
	for _, n := range ns {
		if n != nil {
			return n
		}
	}
	return nil
}

func (p *webhookParser) boolean(n *yaml.Node, path string) bool {
	if n == nil {
		return false
	}
	if n.Kind != yaml.ScalarNode || (n.Value != "true" && n.Value != "false") {
		p.errorf(n, "webhooks.parse", path, "expected true or false, found %q", truncateQuote(n.Value))
	}
	return n.Value == "true"
}

func (p *webhookParser) intIn(n *yaml.Node, path string, lo, hi, def int) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < lo || v > hi {
		p.errorf(n, "webhooks.limits", path, "expected a whole number from %d to %d, found %q", lo, hi, truncateQuote(n.Value))
		return def
	}
	return v
}

func (p *webhookParser) duration(n *yaml.Node, path string, lo, hi, def time.Duration) time.Duration {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < lo || v > hi {
		p.errorf(n, "webhooks.limits", path, "expected a duration from %s to %s, such as 10s, found %q", lo, hi, truncateQuote(n.Value))
		return def
	}
	return v
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar " + strconv.Quote(truncateQuote(n.Value))
}

// publicAddr reports whether a is a unicast address on the internet: not loopback,
// private (RFC 1918, fc00::/7), link-local, unspecified or multicast, nor in a range that
// reaches no public host (nonPublic: "this network" 0.0.0.0/8, CGNAT 100.64.0.0/10, the
// reserved 240.0.0.0/4 and broadcast). IPv4-mapped IPv6 addresses are judged as IPv4, and
// NAT64 addresses (64:ff9b::/96) as the IPv4 address they embed.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || !a.IsValid() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	nonPublic = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("240.0.0.0/4")} // 240.0.0.0/4 holds the broadcast address
)
