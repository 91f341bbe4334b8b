package index_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

func extDoc(entries ...string) []byte {
	return []byte(`{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","serial":1,"extensions":[` + strings.Join(entries, ",") + `]}`)
}

// ext is a valid extension entry with the given fields replaced (raw JSON values).
func ext(extra string) string {
	fields := map[string]json.RawMessage{
		"name": json.RawMessage(`"acme-trigger"`), "version": json.RawMessage(`"1.0.0"`),
		"trigger_types": json.RawMessage(`["t"]`), "protocol_version": json.RawMessage(`2`),
		"launch": json.RawMessage(`{"type":"npx"}`), "package_url": json.RawMessage(`"https://registry.example/e.tar.gz"`),
		"package_sha256": json.RawMessage(`null`), "updated_at": json.RawMessage(`null`),
	}
	if extra != "" {
		var over map[string]json.RawMessage
		if err := json.Unmarshal([]byte("{"+extra+"}"), &over); err != nil {
			panic(err)
		}
		for k, v := range over {
			fields[k] = v
		}
	}
	out, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func TestCheckCurupira(t *testing.T) {
	tests := []struct {
		name string
		doc  []byte
		want []string
	}{
		{"valid", extDoc(ext("")), nil},
		{"empty", extDoc(), nil},
		{"schema_version 2", []byte(`{"schema_version":2,"generated_at":"2026-09-18T06:00:12Z","extensions":[]}`), []string{"index.schema_version schema_version"}},
		{"extensions null", []byte(`{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","extensions":null}`), []string{"index.extensions.null extensions"}},
		{"not JSON", []byte(`{`), []string{"index.json "}},
		{"wrong type", extDoc(ext(`"protocol_version":"2"`)), []string{"index.json extensions[0]"}},
		{"no name", extDoc(ext(`"name":""`)), []string{"index.extension.name extensions[0].name"}},
		{"duplicate", extDoc(ext(""), ext("")), []string{"index.extension.name.duplicate extensions[1].name"}},
		{"no version", extDoc(ext(`"version":""`)), []string{"index.extension.version extensions[0].version"}},
		{"protocol 1", extDoc(ext(`"protocol_version":1`)), []string{"index.extension.protocol_version extensions[0].protocol_version"}},
		{"no triggers", extDoc(ext(`"trigger_types":[]`)), []string{"index.extension.trigger_types extensions[0].trigger_types"}},
		{"no launch type", extDoc(ext(`"launch":{}`)), []string{"index.extension.launch extensions[0].launch"}},
		{"relative package", extDoc(ext(`"package_url":"e.tar.gz"`)), []string{"index.extension.package_url extensions[0].package_url"}},
		{"bad digest", extDoc(ext(`"package_sha256":"xyz"`)), []string{"index.extension.package_sha256 extensions[0].package_sha256"}},
		{"bad time", extDoc(ext(`"updated_at":"yesterday"`)), []string{"index.extension.updated_at extensions[0].updated_at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range index.CheckCurupira(tt.doc) {
				got = append(got, p.Rule+" "+p.Path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
