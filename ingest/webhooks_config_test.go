package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
)

// where is a problem's rule and location, as a test compares them.
func where(probs problem.List) []string {
	out := []string{}
	for _, p := range probs {
		out = append(out, p.Rule+" "+p.File+" "+p.Path)
	}
	return out
}

func TestParseWebhooks(t *testing.T) {
	const ok = "    secret_env: GOOD\n    events: [\"*\"]\n"
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown top-level key", "endpoint: []\n", []string{"webhooks.parse webhooks.yaml:1:1 endpoint"}},
		{"no endpoints", "max_attempts: 3\n", []string{"webhooks.parse webhooks.yaml endpoints"}},
		{"not a mapping", "- a\n", []string{"webhooks.parse webhooks.yaml:1:1 "}},
		{"unknown endpoint key", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secrets: x\n" + ok,
			[]string{"webhooks.parse webhooks.yaml:4:5 endpoints[0].secrets"}},
		{"a key twice", "endpoints:\n  - name: ci\n    url: https://h.example/\n    url: https://i.example/\n" + ok,
			[]string{"webhooks.parse webhooks.yaml:4:5 endpoints[0].url"}},
		{"bad name", "endpoints:\n  - name: CI Hook\n    url: https://h.example/\n" + ok, []string{"webhooks.name webhooks.yaml:2:11 endpoints[0].name"}},
		{"no name", "endpoints:\n  - url: https://h.example/\n" + ok, []string{"webhooks.name webhooks.yaml:2:5 endpoints[0].name"}},
		{"duplicate name", "endpoints:\n  - name: ci\n    url: https://h.example/\n" + ok + "  - name: ci\n    url: https://i.example/\n" + ok,
			[]string{"webhooks.name webhooks.yaml:6:11 endpoints[1].name"}},
		{"relative url", "endpoints:\n  - name: ci\n    url: /hook\n" + ok, []string{"webhooks.url webhooks.yaml:3:10 endpoints[0].url"}},
		{"ftp url", "endpoints:\n  - name: ci\n    url: ftp://h.example/\n" + ok, []string{"webhooks.url webhooks.yaml:3:10 endpoints[0].url"}},
		{"credentials in the url", "endpoints:\n  - name: ci\n    url: https://u:p@h.example/\n" + ok, []string{"webhooks.url webhooks.yaml:3:10 endpoints[0].url"}},
		{"plain http to the internet", "endpoints:\n  - name: ci\n    url: http://h.example/\n" + ok, []string{"webhooks.url webhooks.yaml:3:10 endpoints[0].url"}},
		{"loopback literal", "endpoints:\n  - name: ci\n    url: https://127.0.0.1:9000/\n" + ok, []string{"webhooks.destination webhooks.yaml:3:10 endpoints[0].url"}},
		{"private literal", "endpoints:\n  - name: ci\n    url: https://[fd00::1]/\n" + ok, []string{"webhooks.destination webhooks.yaml:3:10 endpoints[0].url"}},
		{"localhost", "endpoints:\n  - name: ci\n    url: https://localhost/\n" + ok, []string{"webhooks.destination webhooks.yaml:3:10 endpoints[0].url"}},
		{"private allowed", "endpoints:\n  - name: ci\n    url: http://127.0.0.1:9000/\n    allow_private: true\n" + ok, nil},
		{"inline secret", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret: whsec_abc\n    events: [\"*\"]\n",
			[]string{"webhooks.secret webhooks.yaml:4:5 endpoints[0].secret", "webhooks.secret webhooks.yaml:2:5 endpoints[0]"}},
		{"no secret", "endpoints:\n  - name: ci\n    url: https://h.example/\n    events: [\"*\"]\n", []string{"webhooks.secret webhooks.yaml:2:5 endpoints[0]"}},
		{"unset variable", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: UNSET\n    events: [\"*\"]\n",
			[]string{"webhooks.secret webhooks.yaml:4:17 endpoints[0].secret_env"}},
		{"short secret", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: SHORT\n    events: [\"*\"]\n",
			[]string{"webhooks.secret webhooks.yaml:4:17 endpoints[0]"}},
		{"no whsec_ prefix", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: BARE\n    events: [\"*\"]\n",
			[]string{"webhooks.secret webhooks.yaml:4:17 endpoints[0]"}},
		{"both env and file", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: GOOD\n    secret_file: s.txt\n    events: [\"*\"]\n",
			[]string{"webhooks.secret webhooks.yaml:5:18 endpoints[0].secret_file"}},
		{"missing secret file", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_file: missing.txt\n    events: [\"*\"]\n",
			[]string{"webhooks.secret webhooks.yaml:4:18 endpoints[0].secret_file"}},
		{"secret file", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_file: s.txt\n    events: [release.yanked]\n", nil},
		{"unknown event", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: GOOD\n    events: [release.published, release.deleted]\n",
			[]string{"webhooks.events webhooks.yaml:5:33 endpoints[0].events[1]"}},
		{"no events", "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: GOOD\n", []string{"webhooks.events webhooks.yaml:2:5 endpoints[0].events"}},
		{"max_attempts out of range", "max_attempts: 0\nendpoints:\n  - name: ci\n    url: https://h.example/\n" + ok, []string{"webhooks.limits webhooks.yaml:1:15 max_attempts"}},
		{"timeout out of range", "timeout: 5m\nendpoints:\n  - name: ci\n    url: https://h.example/\n" + ok, []string{"webhooks.limits webhooks.yaml:1:10 timeout"}},
		{"too many endpoints", "endpoints:\n" + strings.Repeat("  - name: ci\n", MaxWebhookEndpoints+1), []string{"webhooks.limits webhooks.yaml:2:3 endpoints"}},
		{"not YAML", "endpoints: [\n", []string{"webhooks.parse webhooks.yaml "}},
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqr\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GOOD": testWebhookSecret, "SHORT": "whsec_c2hvcnQ=", "BARE": strings.TrimPrefix(testWebhookSecret, "whsec_")}
	secrets := WebhookSecrets{Getenv: func(k string) string { return env[k] }, ReadFile: os.ReadFile}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, probs := ParseWebhooks(filepath.Join(dir, "webhooks.yaml"), []byte(tt.yaml), secrets)
			got := where(probs)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], dir+string(filepath.Separator), "")
			}
			if diff := cmp.Diff(append([]string{}, tt.want...), got); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\n%v", diff, probs)
			}
			if (cfg == nil) != (len(tt.want) > 0) {
				t.Fatalf("config %v with problems %v", cfg, probs)
			}
		})
	}
}

// No problem message, and no marshalled configuration, shows any part of a secret.
func TestParseWebhooksNeverShowsSecrets(t *testing.T) {
	const secret = "whsec_c2VjcmV0LXRoYXQtbXVzdC1uZXZlci1iZS1zaG93bg==" // 30 bytes
	secrets := WebhookSecrets{Getenv: func(string) string { return secret }, ReadFile: func(string) ([]byte, error) { return nil, errors.New("no") }}
	yaml := "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: S\n    events: [\"*\"]\n"
	cfg, probs := ParseWebhooks("webhooks.yaml", []byte(yaml), secrets)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	shown := fmtJSON(cfg) + " " + fmtJSON(cfg.Endpoints[0])
	if strings.Contains(shown, "c2VjcmV0") || strings.Contains(shown, "secret-that") {
		t.Fatalf("the configuration shows its secret: %s", shown)
	}
	bad := WebhookSecrets{Getenv: func(string) string { return "whsec_c2VjcmV0LXRvby1zaG9ydA==" }}
	_, probs = ParseWebhooks("webhooks.yaml", []byte(yaml), bad)
	if len(probs) != 1 || strings.Contains(probs[0].Message, "c2VjcmV0") {
		t.Fatalf("problems %v show the secret (or are not the one expected)", probs)
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2001:4860:4860::8888": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00::1": false, "100.64.0.1": false, "0.0.0.0": false,
		"::ffff:127.0.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
		"0.1.2.3": false, "240.0.0.1": false, "64:ff9b::a00:1": false, "64:ff9b::7f00:1": false, "64:ff9b::808:808": true,
	} {
		if got := literalPrivate(addr); got == want {
			t.Errorf("%s: private = %v, want %v", addr, got, !want)
		}
	}
}

// The largest and most ambiguous files within MaxWebhooksBytes: one byte over the limit,
// an alias standing for the events list (never expanded: refused as not a list), 64 KiB of
// nested brackets, and thousands of unknown event types, each named with its line and
// column (the file's size bounds their number).
func TestParseWebhooksHostileFiles(t *testing.T) {
	head := "endpoints:\n  - name: ci\n    url: https://h.example/\n    secret_env: GOOD\n"
	many := head + "    events: [" + strings.Repeat("nope,", (MaxWebhooksBytes-len(head)-20)/5) + "nope]\n"
	tests := []struct {
		name, yaml string
		rule       string
		count      int
	}{
		{"over the limit", strings.Repeat("#", MaxWebhooksBytes+1), "webhooks.parse", 1},
		{"alias for the events", "x: &e [release.published]\n" + head + "    events: *e\n", "webhooks.events", 2},
		{"nested brackets", "endpoints: " + strings.Repeat("[", MaxWebhooksBytes/2) + strings.Repeat("]", MaxWebhooksBytes/2-20), "webhooks.parse", 1},
		{"thousands of unknown events", many, "webhooks.events", strings.Count(many, "nope")},
	}
	secrets := WebhookSecrets{Getenv: func(string) string { return testWebhookSecret }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.yaml) > MaxWebhooksBytes+1 {
				t.Fatalf("the input is %d bytes", len(tt.yaml))
			}
			cfg, probs := ParseWebhooks("webhooks.yaml", []byte(tt.yaml), secrets)
			if cfg != nil || len(probs) != tt.count || !probs.Has(tt.rule) {
				t.Fatalf("config %v, %d problems (%v), want %d with %s", cfg, len(probs), probs.Rules(), tt.count, tt.rule)
			}
		})
	}
}
