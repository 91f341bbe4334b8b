package index

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Extension is one Curupira index entry: the latest listed release of a trigger extension.
type Extension struct {
	Name            string
	Version         string
	Description     string
	TriggerTypes    []string
	Runtime         string
	ProtocolVersion int
	Launch          Launch
	PackageURL      string
	PackageSHA256   string // empty: null
	RepoURL         string
	Signature       *Signature // nil: null
	UpdatedAt       time.Time  // zero: null
}

// Launch is how Curupira starts an extension (the manifest's [launch] table). Empty fields
// are omitted.
type Launch struct {
	Type    string   `json:"type"`
	Package string   `json:"package,omitempty"`
	Version string   `json:"version,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

type curupiraDoc struct {
	SchemaVersion int             `json:"schema_version"`
	GeneratedAt   string          `json:"generated_at"`
	Serial        int64           `json:"serial"`
	Extensions    []curupiraEntry `json:"extensions"`
}

type curupiraEntry struct {
	Name            string         `json:"name"`
	Version         string         `json:"version"`
	Description     string         `json:"description"`
	TriggerTypes    []string       `json:"trigger_types"`
	Runtime         string         `json:"runtime"`
	ProtocolVersion int            `json:"protocol_version"`
	Launch          Launch         `json:"launch"`
	PackageURL      string         `json:"package_url"`
	PackageSHA256   *string        `json:"package_sha256"`
	RepoURL         string         `json:"repo_url"`
	Signature       *signatureJSON `json:"signature"`
	UpdatedAt       *string        `json:"updated_at"`
}

// BuildCurupira renders the Curupira /curupira/index.json document:
// {schema_version: 1, generated_at, serial, extensions: [...]}, extensions sorted by name and
// never null, trigger_types never null, compact JSON, identical bytes for equal input. It
// refuses a zero GeneratedAt and an empty or duplicate name.
func BuildCurupira(s Snapshot) ([]byte, error) {
	if s.GeneratedAt.IsZero() {
		return nil, errors.New("index: build curupira: GeneratedAt is zero")
	}
	doc := curupiraDoc{
		SchemaVersion: SchemaVersion,
		GeneratedAt:   formatTime(s.GeneratedAt),
		Serial:        s.Serial,
		Extensions:    make([]curupiraEntry, 0, len(s.Extensions)),
	}
	for _, x := range s.Extensions {
		if x.Name == "" {
			return nil, errors.New("index: build curupira: an extension has an empty name")
		}
		doc.Extensions = append(doc.Extensions, curupiraEntry{
			Name: x.Name, Version: x.Version, Description: x.Description,
			TriggerTypes: nonNil(x.TriggerTypes), Runtime: x.Runtime, ProtocolVersion: x.ProtocolVersion,
			Launch: x.Launch, PackageURL: x.PackageURL, PackageSHA256: nullable(x.PackageSHA256),
			RepoURL: x.RepoURL, Signature: signatureOf(x.Signature), UpdatedAt: nullableTime(x.UpdatedAt),
		})
	}
	sort.Slice(doc.Extensions, func(i, j int) bool { return doc.Extensions[i].Name < doc.Extensions[j].Name })
	for i := 1; i < len(doc.Extensions); i++ {
		if doc.Extensions[i].Name == doc.Extensions[i-1].Name {
			return nil, fmt.Errorf("index: build curupira: extension %q appears twice", doc.Extensions[i].Name)
		}
	}
	out, err := marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("index: build curupira: %w", err)
	}
	return out, nil
}
