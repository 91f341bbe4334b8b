package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// This file is the one place that fixes the message shapes the registry assumes where the
// protocol page is silent (spec: "Message shapes this registry assumes").

// ProtocolVersion is the protocol major version the registry speaks.
const ProtocolVersion = 2

// PrintManifestFlag makes an extension print its curupira-extension.toml and exit.
const PrintManifestFlag = "--curupira-print-manifest"

// The methods the host calls.
const (
	MethodInitialize = "initialize"
	MethodDescribe   = "describe"
	MethodSchema     = "trigger/schema"
	MethodValidate   = "trigger/validate"
	MethodPoll       = "trigger/poll"
	MethodOnStarted  = "trigger/onStarted"
	MethodOnFinished = "trigger/onFinished"
	MethodShutdown   = "shutdown"
)

// ReservedKeys are the prompt keys the host adds itself; a poll result must not use them.
var reservedKeys = []string{"repository", "automation"}

// IsReservedKey reports whether key is one the host fills itself.
func IsReservedKey(key string) bool { return slices.Contains(reservedKeys, key) }

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion int `json:"protocol_version"`
}

// InitializeResult is the result of initialize. ProtocolVersion is a pointer so that a
// missing member is told apart from 0.
type InitializeResult struct {
	ProtocolVersion *int   `json:"protocol_version"`
	Name            string `json:"name"`
	Version         string `json:"version"`
}

// DescribeResult is the result of describe.
type DescribeResult struct {
	Triggers []TriggerInfo `json:"triggers"`
}

// TriggerInfo describes one trigger type in a describe result.
type TriggerInfo struct {
	TriggerType string `json:"trigger_type"`
	Description string `json:"description"`
}

// TriggerParams are the params of trigger/schema.
type TriggerParams struct {
	TriggerType string `json:"trigger_type"`
}

// SchemaResult is the result of trigger/schema: the JSON Schema of the automation table.
type SchemaResult struct {
	Schema       json.RawMessage `json:"schema"`
	PromptFields []string        `json:"prompt_fields"`
}

// TableParams are the params of trigger/validate and trigger/poll.
type TableParams struct {
	TriggerType string         `json:"trigger_type"`
	Table       map[string]any `json:"table"`
}

// ValidateResult is the successful result of trigger/validate; a refusal is error -32003.
type ValidateResult struct {
	OK bool `json:"ok"`
}

// PollResult is the result of trigger/poll. Values stays raw: nil means the member was
// missing (a protocol error), "null" means nothing was found.
type PollResult struct {
	Values json.RawMessage `json:"values"`
}

// Pair is one field of a polled item.
type Pair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// LifecycleParams are the params of trigger/onStarted and trigger/onFinished.
type LifecycleParams struct {
	TriggerType string `json:"trigger_type"`
	Values      []Pair `json:"values"`
}

// ErrMissingValues is returned by ParsePoll when the result has no values member.
var ErrMissingValues = errors.New("rpc: poll result has no values member (null means nothing found)")

// ParsePoll decodes a trigger/poll result strictly. found is false for values null; pairs
// is non-nil (possibly empty) for an item. Every pair must be an object with a string key
// and a string value, and no key may be one the host reserves.
func ParsePoll(result json.RawMessage) (pairs []Pair, found bool, err error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(result, &obj); err != nil || obj == nil {
		return nil, false, fmt.Errorf("rpc: poll result is not an object: %s", truncate(result))
	}
	raw, ok := obj["values"]
	if !ok {
		return nil, false, ErrMissingValues
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, false, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false, fmt.Errorf("rpc: values must be null or an array of {key, value} objects, found %s", truncate(raw))
	}
	pairs = make([]Pair, 0, len(items))
	for i, item := range items {
		p, err := parsePair(item)
		if err != nil {
			return nil, false, fmt.Errorf("rpc: values[%d]: %w", i, err)
		}
		pairs = append(pairs, p)
	}
	return pairs, true, nil
}

func parsePair(item map[string]json.RawMessage) (Pair, error) {
	var p Pair
	if item == nil {
		return p, errors.New("must be an object with key and value")
	}
	for _, name := range []string{"key", "value"} {
		raw, ok := item[name]
		if !ok {
			return p, fmt.Errorf("has no %s member", name)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return p, fmt.Errorf("%s must be a string, found %s", name, truncate(raw))
		}
		if name == "key" {
			p.Key = s
		} else {
			p.Value = s
		}
	}
	if p.Key == "" {
		return p, errors.New("key is empty")
	}
	if IsReservedKey(p.Key) {
		return p, fmt.Errorf("key %q is reserved: the host adds ${%s} itself; rename the field", p.Key, p.Key)
	}
	return p, nil
}

func truncate(b []byte) string {
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
