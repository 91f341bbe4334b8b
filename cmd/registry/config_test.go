package main

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestServeRefusesMalformedSettings starts `registry serve` through run with one
// malformed value of each type, from a flag and from the environment: the start stops and
// the message names the flag, its variable, the value and the expected form. The context
// is cancelled, so a value wrongly accepted ends the run with 0 instead of serving.
func TestServeRefusesMalformedSettings(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    []string
		notWant string
	}{
		{name: "int64 from env", env: map[string]string{"REGISTRY_MAX_BODY": "10MB"},
			want: []string{`REGISTRY_MAX_BODY="10MB" (--max-body): expected a whole number of bytes, at least 1048576 (1 MiB), such as 104857600`}},
		{name: "int64 from flag", args: []string{"--max-body", "10MB"},
			want: []string{`--max-body "10MB" (REGISTRY_MAX_BODY): expected a whole number of bytes`}},
		{name: "int64 below its minimum", args: []string{"--max-body", "1000"},
			want: []string{`--max-body "1000" (REGISTRY_MAX_BODY): expected a whole number of bytes, at least 1048576`}},
		{name: "int from env", env: map[string]string{"REGISTRY_RATE_PUBLISH": "ten"},
			want: []string{`REGISTRY_RATE_PUBLISH="ten" (--rate-publish): expected ` + formRate}},
		{name: "negative int from flag", args: []string{"--rate-search", "-1"},
			want: []string{`--rate-search "-1" (REGISTRY_RATE_SEARCH): expected ` + formRate}},
		{name: "threshold from env", env: map[string]string{"REGISTRY_SIGSTORE_TLOG_THRESHOLD": "1.5"},
			want: []string{`REGISTRY_SIGSTORE_TLOG_THRESHOLD="1.5" (--sigstore-tlog-threshold): expected ` + formThreshold}},
		{name: "duration from env", env: map[string]string{"REGISTRY_SYNC_INTERVAL": "15"},
			want: []string{`REGISTRY_SYNC_INTERVAL="15" (--sync-interval): expected a duration of at least 1m such as 15m`}},
		{name: "duration from flag", args: []string{"--sync-interval", "5 minutes"},
			want: []string{`--sync-interval "5 minutes" (REGISTRY_SYNC_INTERVAL): expected a duration`}},
		{name: "negative duration", args: []string{"--sync-interval", "-5m"},
			want: []string{`--sync-interval "-5m" (REGISTRY_SYNC_INTERVAL): expected a duration of at least 1m such as 15m, 90s or 1h30m, or 0 to turn it off`}},
		{name: "an interval of a nanosecond", args: []string{"--scrub-interval", "1ns"},
			want: []string{`--scrub-interval "1ns" (REGISTRY_SCRUB_INTERVAL): expected a duration of at least 1m`}},
		{name: "an interval under a minute", env: map[string]string{"REGISTRY_SYNC_INTERVAL": "59s"},
			want: []string{`REGISTRY_SYNC_INTERVAL="59s" (--sync-interval): expected a duration of at least 1m`}},
		{name: "bool from env", env: map[string]string{"REGISTRY_DEMO": "yes"},
			want: []string{`REGISTRY_DEMO="yes" (--demo): expected true or false`}},
		{name: "bool from flag", args: []string{"--trust-proxy=on"},
			want: []string{`--trust-proxy "on" (REGISTRY_TRUST_PROXY): expected true or false`}},
		{name: "URL from env", env: map[string]string{"REGISTRY_PUBLIC_URL": "plugins.example.com"},
			want: []string{`REGISTRY_PUBLIC_URL="plugins.example.com" (--public-url): expected an absolute http(s) URL such as https://plugins.example.com`}},
		{name: "URL with a query", args: []string{"--public-url", "https://plugins.example.com/?x=1"},
			want: []string{`--public-url "https://plugins.example.com/?x=1" (REGISTRY_PUBLIC_URL): expected an absolute http(s) URL such as https://plugins.example.com; ` +
				`it has a query (?…), which a base URL cannot have (paths are appended to it): remove it`}},
		{name: "URL with an empty fragment", env: map[string]string{"REGISTRY_PUBLIC_URL": "https://plugins.example.com#"},
			want: []string{`REGISTRY_PUBLIC_URL="https://plugins.example.com#" (--public-url): expected an absolute http(s) URL such as https://plugins.example.com; it has a fragment (#…)`}},
		{name: "URL with a space, a query and a fragment", args: []string{"--public-url", "https://m.example.com/sub path?x#y"},
			want: []string{`it has a space, a query (?…) and a fragment (#…), which a base URL cannot have (paths are appended to it): remove them (a space in a path may be percent-encoded as %20)`}},
		{name: "URL from flag", args: []string{"--github-api", "ftp://api.example.com"},
			want: []string{`--github-api "ftp://api.example.com" (REGISTRY_GITHUB_API): expected an absolute http(s) URL`}},
		{name: "URL or off", args: []string{"--oidc-issuer", "of"},
			want: []string{`--oidc-issuer "of" (REGISTRY_OIDC_ISSUER): expected an absolute http(s) URL such as https://token.actions.githubusercontent.com, or off`}},
		{name: "host list from env", env: map[string]string{"REGISTRY_SYNC_DOWNLOAD_HOSTS": "https://evil.example/x"},
			want: []string{`REGISTRY_SYNC_DOWNLOAD_HOSTS="https://evil.example/x" (--sync-download-hosts): expected comma-separated host names`}},
		{name: "host list with a bad port", args: []string{"--sync-download-hosts", "github.com,mirror:99999"},
			want: []string{`--sync-download-hosts "github.com,mirror:99999" (REGISTRY_SYNC_DOWNLOAD_HOSTS): expected comma-separated host names`}},
		{name: "enum from env", env: map[string]string{"REGISTRY_LOG_FORMAT": "JSON"},
			want: []string{`REGISTRY_LOG_FORMAT="JSON" (--log-format): expected text or json`}},
		{name: "enum from flag", args: []string{"--log-format", "yaml"},
			want: []string{`--log-format "yaml" (REGISTRY_LOG_FORMAT): expected text or json`}},
		{name: "addr from flag, and no public-url error", args: []string{"--addr", "nonsense"},
			want:    []string{`--addr "nonsense" (REGISTRY_ADDR): expected host:port such as 127.0.0.1:8080`},
			notWant: "--public-url"},
		{name: "addr with a bad port from env", env: map[string]string{"REGISTRY_ADDR": "127.0.0.1:http"},
			want: []string{`REGISTRY_ADDR="127.0.0.1:http" (--addr): expected host:port`}, notWant: "--public-url"},
		{name: "malformed env beside a valid flag", args: []string{"--max-body", "2097152"}, env: map[string]string{"REGISTRY_MAX_BODY": "2MiB"},
			want: []string{`REGISTRY_MAX_BODY="2MiB" (--max-body)`}},
		{name: "every problem at once", args: []string{"--log-format", "yaml"}, env: map[string]string{"REGISTRY_MAX_BODY": "10MB", "REGISTRY_SYNC_INTERVAL": "soon"},
			want: []string{`REGISTRY_MAX_BODY="10MB"`, `REGISTRY_SYNC_INTERVAL="soon"`, `--log-format "yaml"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			c, _, errOut := testCLI(tt.env)
			args := append([]string{"serve", "--data", filepath.Join(t.TempDir(), "data"), "--plugins", "testdata/sync/plugins.yaml"}, tt.args...)
			if code := run(ctx, args, c); code != exitUsage {
				t.Fatalf("exit = %d, want %d (a malformed setting is a usage error); stderr:\n%s", code, exitUsage, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
			if tt.notWant != "" && strings.Contains(errOut.String(), tt.notWant) {
				t.Errorf("stderr mentions %q, which was never set:\n%s", tt.notWant, errOut)
			}
		})
	}
}

// TestServeSettingsParse checks what well-formed values become, and that a flag beats
// its environment variable.
func TestServeSettingsParse(t *testing.T) {
	def := Config{Addr: "127.0.0.1:8080", DataDir: "DATA", PluginsPath: "./plugins.yaml", PublicURL: "http://127.0.0.1:8080",
		MaxBodyBytes: 100 << 20, SiteName: "Plugin Registry", MaxIndexBytes: 5 << 20, IndexOrder: "downloads", SigstoreTlog: 1, SigstoreTimestamps: 1, SigstoreSCTs: 1,
		OIDCIssuer: "https://token.actions.githubusercontent.com", OIDCAudience: "http://127.0.0.1:8080",
		GitHubAPI: "https://api.github.com", SyncInterval: 15 * time.Minute, ScrubInterval: 24 * time.Hour, LogFormat: "text", RateAuth: 30, RatePublish: 60, RateSearch: 600, RateHostBuild: 30, RateReport: 10}
	with := func(f func(*Config)) Config { c := def; f(&c); return c }
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want Config
	}{
		{"defaults", nil, nil, def},
		{"environment", nil, map[string]string{"REGISTRY_MAX_BODY": "2097152", "REGISTRY_SYNC_INTERVAL": "0", "REGISTRY_DEMO": "true",
			"REGISTRY_LOG_FORMAT": "json", "REGISTRY_RATE_AUTH": "0", "REGISTRY_OIDC_ISSUER": "off", "REGISTRY_PUBLIC_URL": "https://p.example.com/",
			"REGISTRY_SYNC_DOWNLOAD_HOSTS": "GitHub.com, mirror.example.com:8443"},
			with(func(c *Config) {
				c.SyncDownloadHosts = []string{"github.com", "mirror.example.com:8443"}
				c.MaxBodyBytes, c.SyncInterval, c.Demo, c.LogFormat, c.RateAuth, c.OIDCIssuer = 2<<20, 0, true, "json", 0, "off"
				c.PublicURL, c.OIDCAudience = "https://p.example.com", "https://p.example.com"
			})},
		{"flags beat environment", []string{"--max-body", "3145728", "--demo=false", "--trust-proxy", "--addr", ":9090", "--rate-host-build", "5"},
			map[string]string{"REGISTRY_MAX_BODY": "2097152", "REGISTRY_DEMO": "true", "REGISTRY_RATE_HOST_BUILD": "7"},
			with(func(c *Config) {
				c.MaxBodyBytes, c.TrustProxy, c.Addr, c.RateHostBuild = 3<<20, true, ":9090", 5
				c.PublicURL, c.OIDCAudience = "http://127.0.0.1:9090", "http://127.0.0.1:9090"
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, errOut := testCLI(tt.env)
			fs := c.flags("serve")
			var cfg Config
			bindServeFlags(fs, c, &cfg)
			data := t.TempDir()
			if _, err := parse(fs, append([]string{"--data", data}, tt.args...)); err != nil {
				t.Fatal(err, errOut)
			}
			if err := cfg.validate(); err != nil {
				t.Fatal(err)
			}
			cfg.DataDir = "DATA"
			if diff := cmp.Diff(tt.want, cfg, cmpopts.IgnoreUnexported(Config{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRateLimitsMapEveryClass: each rate flag reaches its class, and 0 turns it off.
func TestRateLimitsMapEveryClass(t *testing.T) {
	cfg := Config{RateAuth: 1, RatePublish: 2, RateSearch: 3, RateHostBuild: 4}
	if got := cfg.rateLimits(); got.Auth != 1 || got.Publish != 2 || got.Search != 3 || got.HostBuild != 4 {
		t.Errorf("rateLimits() = %+v, want auth 1, publish 2, search 3, host_build 4", got)
	}
	if got := (&Config{}).rateLimits(); got.Auth != -1 || got.Publish != -1 || got.Search != -1 || got.HostBuild != -1 {
		t.Errorf("rateLimits() of zeros = %+v, want every class off (-1)", got)
	}
}

// TestStartupGC: the first build runs with a larger GC target that is put back after it,
// and an operator's GOGC is left alone.
func TestStartupGC(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := startupGC()
	if got := debug.SetGCPercent(400); got != 400 {
		t.Errorf("during the first build GOGC is %d, want 400", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after it GOGC is %d, want 100 back", got)
	}
	t.Setenv("GOGC", "50")
	startupGC()()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, startupGC changed the collector to %d", got)
	}
}
