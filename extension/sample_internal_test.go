package extension

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/extension/rpc"
)

func TestSampleTable(t *testing.T) {
	schema := map[string]any{
		"type":     "object",
		"required": []any{"repo", "count", "mode", "on", "tags", "fixed", "plain"},
		"properties": map[string]any{
			"repo":     map[string]any{"type": "string", "examples": []any{"octocat/Hello-World"}},
			"count":    map[string]any{"type": "integer"},
			"mode":     map[string]any{"enum": []any{"fast", "slow"}},
			"on":       map[string]any{"type": "boolean"},
			"tags":     map[string]any{"type": "array"},
			"fixed":    map[string]any{"const": "v1"},
			"plain":    map[string]any{"type": "string"},
			"api_url":  map[string]any{"type": "string", "default": "https://api.github.com"},
			"optional": map[string]any{"type": "string"},
		},
	}
	want := map[string]any{
		"repo": "octocat/Hello-World", "count": 1, "mode": "fast", "on": false, "tags": []any{},
		"fixed": "v1", "plain": "example", "api_url": "https://api.github.com",
	}
	if diff := cmp.Diff(want, sampleTable(schema)); diff != "" {
		t.Errorf("sample (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{}, sampleTable(nil)); diff != "" {
		t.Errorf("sample of no schema (-want +got):\n%s", diff)
	}
}

func TestCompileSchema(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr bool
	}{
		{`{"type": "object", "properties": {"repo": {"type": "string"}}}`, false},
		{`{"type": "object", "properties": {"repo": {"type": "strin"}}}`, true},
		{`{"type": "object", "required": "repo"}`, true},
		{`true`, true},
		{``, true},
		{`{"$ref": "https://example.com/remote.json"}`, true},
	}
	for _, tt := range tests {
		_, err := compileSchema("t", []byte(tt.raw))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err %v, want error %v", tt.raw, err, tt.wantErr)
		}
	}
}

func TestOversizedFrameIsExactlyOverTheLimit(t *testing.T) {
	const size = 1000
	frame := oversizedFrame(7, size)
	n, err := rpc.ParseHeader(frame[:rpc.HeaderLen])
	if err != nil || n != size || len(frame) != rpc.HeaderLen+size {
		t.Fatalf("header %d (%v), frame %d bytes, want a %d-byte body", n, err, len(frame), size)
	}
	if !bytes.HasPrefix(frame[rpc.HeaderLen:], []byte(`{"jsonrpc":"2.0","id":7,"method":"describe"`)) {
		t.Errorf("body starts %q", frame[rpc.HeaderLen:rpc.HeaderLen+50])
	}
}
