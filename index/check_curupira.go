package index

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pluginyard/registry/problem"
)

type curupiraHostDoc struct {
	SchemaVersion json.RawMessage `json:"schema_version"`
	GeneratedAt   json.RawMessage `json:"generated_at"`
	Extensions    json.RawMessage `json:"extensions"`
}

type curupiraHostEntry struct {
	Name            string    `json:"name"`
	Version         string    `json:"version"`
	TriggerTypes    *[]string `json:"trigger_types"`
	ProtocolVersion int       `json:"protocol_version"`
	Launch          *Launch   `json:"launch"`
	PackageURL      string    `json:"package_url"`
	PackageSHA256   *string   `json:"package_sha256"`
	UpdatedAt       *string   `json:"updated_at"`
}

// CheckCurupira checks a Curupira /curupira/index.json document: schema_version exactly 1,
// an extensions array, and per extension a unique name, a version, protocol_version 2,
// a non-empty trigger_types list, a launch table with a type, a package_url, a valid
// package_sha256 when given and a timestamp in TimeFormat when given.
func CheckCurupira(doc []byte) problem.List {
	var probs problem.List
	var d curupiraHostDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		probs.Errorf("index.json", "", "expected a JSON object, found a document that cannot be decoded: %v", err)
		return probs
	}
	if string(bytes.TrimSpace(d.SchemaVersion)) != "1" {
		probs.Errorf("index.schema_version", "schema_version", "expected exactly 1, found %s", orMissing(d.SchemaVersion))
	}
	checkGeneratedAt(&probs, d.GeneratedAt)
	var entries []json.RawMessage
	if len(d.Extensions) == 0 || string(bytes.TrimSpace(d.Extensions)) == "null" || json.Unmarshal(d.Extensions, &entries) != nil {
		probs.Errorf("index.extensions.null", "extensions", "expected an extensions array (possibly empty), found %s", orMissing(d.Extensions))
		return probs
	}
	seen := map[string]bool{}
	for i, raw := range entries {
		checkExtensionEntry(&probs, fmt.Sprintf("extensions[%d]", i), raw, seen)
	}
	return probs
}

func checkExtensionEntry(probs *problem.List, path string, raw json.RawMessage, seen map[string]bool) {
	var e curupiraHostEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		probs.Errorf("index.json", path, "expected an extension object with typed fields: %v", err)
		return
	}
	switch {
	case e.Name == "":
		probs.Errorf("index.extension.name", path+".name", "expected a non-empty name")
	case seen[e.Name]:
		probs.Errorf("index.extension.name.duplicate", path+".name", "name %q appears twice; each extension is listed once", e.Name)
	}
	seen[e.Name] = true
	if e.Version == "" {
		probs.Errorf("index.extension.version", path+".version", "expected the release version, found none")
	}
	if e.ProtocolVersion != 2 {
		probs.Errorf("index.extension.protocol_version", path+".protocol_version", "expected 2, found %d; Curupira refuses other majors", e.ProtocolVersion)
	}
	if e.TriggerTypes == nil || len(*e.TriggerTypes) == 0 {
		probs.Errorf("index.extension.trigger_types", path+".trigger_types", "expected at least one trigger type, found none")
	}
	if e.Launch == nil || e.Launch.Type == "" {
		probs.Errorf("index.extension.launch", path+".launch", "expected a launch object with a type, found none")
	}
	if !isHTTPURL(e.PackageURL) {
		probs.Errorf("index.extension.package_url", path+".package_url", "expected an absolute http(s) URL, found %q", e.PackageURL)
	}
	if e.PackageSHA256 != nil && !isSHA256(*e.PackageSHA256) {
		probs.Errorf("index.extension.package_sha256", path+".package_sha256", "expected 64 lowercase hex digits or null, found %q", *e.PackageSHA256)
	}
	if e.UpdatedAt != nil && !isTimestamp(*e.UpdatedAt) {
		probs.Errorf("index.extension.updated_at", path+".updated_at", "expected an RFC 3339 UTC timestamp like 2026-09-18T06:00:12Z or null, found %q", *e.UpdatedAt)
	}
}
