package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/problem"
)

const testHookSecret = "whsec_Y21kLXRlc3Qtd2ViaG9vay1zZWNyZXQtdmFsdWU=" // 27 bytes

// TestWebhooksFlag: --webhooks is parsed at start; every problem is named with its rule,
// line and column, and no message shows a secret.
func TestWebhooksFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("endpoints:\n  - name: ci\n    url: http://hooks.example.com/\n    secret: "+testHookSecret+"\n    events: [release.publish]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Webhooks: bad, getenv: func(string) string { return "" }}
	err := cfg.loadWebhooks()
	for _, want := range []string{"--webhooks " + bad, bad + ":3:10: endpoints[0].url [webhooks.url]", bad + ":4:5: endpoints[0].secret [webhooks.secret]",
		bad + ":5:14: endpoints[0].events[0] [webhooks.events]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\ndoes not name %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), strings.TrimPrefix(testHookSecret, "whsec_")) {
		t.Errorf("the error shows the secret: %v", err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("endpoints:\n  - name: ci\n    url: https://hooks.example.com/\n    secret_env: HOOK\n    events: [\"*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = &Config{Webhooks: good, getenv: envMap{"HOOK": testHookSecret}.get}
	if err := cfg.loadWebhooks(); err != nil || cfg.webhooks == nil || cfg.webhooks.Names()[0] != "ci" {
		t.Fatalf("good file: %v %+v", err, cfg.webhooks)
	}
	many := filepath.Join(dir, "many.yaml")
	if err := os.WriteFile(many, []byte("endpoints:\n  - name: ci\n    url: https://hooks.example.com/\n    secret_env: HOOK\n    events: ["+strings.Repeat("nope, ", 5000)+"nope]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = &Config{Webhooks: many, getenv: envMap{"HOOK": testHookSecret}.get}
	err = cfg.loadWebhooks()
	if err == nil || !strings.Contains(err.Error(), "5001 problem(s)") || strings.Count(err.Error(), "[webhooks.events]") > problem.MaxListed+1 ||
		!strings.Contains(err.Error(), "and 4901 more of rule webhooks.events") {
		t.Fatalf("5001 problems: the error is %d bytes, %d listed: %.300v", len(fmt.Sprint(err)), strings.Count(fmt.Sprint(err), "[webhooks.events]"), err)
	}
	cfg = &Config{Webhooks: filepath.Join(dir, "missing.yaml")}
	if err := cfg.loadWebhooks(); err == nil || !strings.Contains(err.Error(), "--webhooks") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestServeStartsWebhooks: serve with --webhooks starts the delivery worker.
func TestServeStartsWebhooks(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "webhooks.yaml")
	secret := filepath.Join(dir, "ci.secret")
	if err := os.WriteFile(secret, []byte(testHookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, []byte("endpoints:\n  - name: ci\n    url: https://hooks.example.com/\n    secret_file: ci.secret\n    events: [\"*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	recs := startLog(t, "webhooks: delivering", "--addr", freeAddr(t), "--data", filepath.Join(dir, "data"),
		"--plugins", "testdata/sync/plugins.yaml", "--sync-interval", "0", "--webhooks", hooks)
	for _, r := range recs {
		if strings.Contains(r.Msg, strings.TrimPrefix(testHookSecret, "whsec_")) {
			t.Fatalf("a log line shows the secret: %+v", r)
		}
	}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }
