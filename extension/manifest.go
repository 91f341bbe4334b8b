package extension

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/pluginyard/registry/problem"
)

// FileName is the manifest's file name inside an extension package.
const FileName = "curupira-extension.toml"

// Manifest is a decoded curupira-extension.toml.
type Manifest struct {
	ManifestVersion int      `toml:"manifest_version"`
	Name            string   `toml:"name"`
	Version         string   `toml:"version"`
	Description     string   `toml:"description"`
	ProtocolVersion int      `toml:"protocol_version"`
	Runtime         string   `toml:"runtime"`
	Kind            string   `toml:"kind"`
	TriggerTypes    []string `toml:"trigger_types"`
	Launch          Launch   `toml:"launch"`
	Homepage        string   `toml:"homepage"`
	License         string   `toml:"license"`
	Repository      string   `toml:"repository"`
}

// Launch is the [launch] table: how the host starts the extension.
//
// Known types and what they need:
//
//	npx     package (npm name) and version; the host runs `npx -y package@version args…`
//	node    command, a script path inside the package; `node command args…`
//	python  command, a script path or `-m module`; `python3 command args…`
//	binary  command, an executable path inside the package or a name on PATH
//	go      package, a Go package path ("." for the package root); `go run package[@version] args…`
type Launch struct {
	Type    string   `toml:"type"`
	Package string   `toml:"package"`
	Version string   `toml:"version"`
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
}

// maxUnknownKeys bounds the unknown keys reported one by one, with their line: finding a
// line scans the file, so reporting every key of a file made of unknown keys would cost time
// quadratic in its size (16,000 keys took 38 s). The rest are counted in one problem.
const maxUnknownKeys = 20

// Parse decodes data as a curupira-extension.toml and validates it. Every problem carries
// File "curupira-extension.toml". The manifest is nil only when data is not TOML of the
// right types or exceeds the TOML work budget (CheckTOMLBudget, checked before decoding);
// unknown keys are errors that name their line.
func Parse(data []byte) (*Manifest, problem.List) {
	if l := CheckTOMLBudget(data); l.HasErrors() {
		return nil, l.InFile(FileName)
	}
	var m Manifest
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&m)
	if err != nil {
		var l problem.List
		decodeProblem(&l, err)
		return nil, l.InFile(FileName)
	}
	var l problem.List
	unknown := md.Undecoded()
	for i, key := range unknown {
		if i == maxUnknownKeys {
			l.Errorf("extension.unknown", key.String(), "%d more unknown keys, starting with %q; remove them or fix their spelling", len(unknown)-i, quoteValue(key.String()))
			break
		}
		unknownKey(&l, data, key)
	}
	l = append(l, m.Validate()...)
	return &m, l.InFile(FileName)
}

func decodeProblem(l *problem.List, err error) {
	var pe toml.ParseError
	var ppe *toml.ParseError
	if errors.As(err, &ppe) && ppe != nil {
		pe = *ppe
	}
	if ppe != nil || errors.As(err, &pe) {
		path := fmt.Sprintf("line %d, column %d", pe.Position.Line, pe.Position.Col)
		l.Errorf("extension.toml", path, "%s is not valid TOML at line %d, column %d: %s; fix the syntax",
			FileName, pe.Position.Line, pe.Position.Col, pe.Message)
		return
	}
	// The library reports type mismatches as plain errors: `toml: line 3 (last key "name"): …`.
	msg := err.Error()
	key, line := "", ""
	if m := lastKeyRE.FindStringSubmatch(msg); m != nil {
		key = m[1]
	}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line = " at line " + m[1]
	}
	l.Errorf("extension.type", key, "%s has a value of the wrong type%s: %s; fix the value's type", FileName, line, strings.TrimPrefix(msg, "toml: "))
}

var (
	lastKeyRE = regexp.MustCompile(`last key "([^"]*)"`)
	lineRE    = regexp.MustCompile(`^toml: line (\d+)`)
)

func unknownKey(l *problem.List, data []byte, key toml.Key) {
	name := key.String()
	fix := "remove it or fix its spelling"
	if s := suggestKey(key); s != "" {
		fix = s + " Otherwise remove it"
	}
	if line := keyLine(data, key); line > 0 {
		l.Errorf("extension.unknown", name, "unknown key %q at line %d; %s (known keys: manifest_version, name, version, description, protocol_version, runtime, kind, trigger_types, homepage, license, repository, [launch] type, package, version, command, args)", quoteValue(name), line, fix)
		return
	}
	l.Errorf("extension.unknown", name, "unknown key %q; %s", quoteValue(name), fix)
}

// Known keys by table, and names authors write for them (from package.json and Kandev
// manifests); suggestKey offers one of them for an unknown key.
var (
	topKeys    = []string{"manifest_version", "name", "version", "description", "protocol_version", "runtime", "kind", "trigger_types", "launch", "homepage", "license", "repository"}
	launchKeys = []string{"type", "package", "version", "command", "args"}
	keyAliases = map[string]string{
		"display_name": "name", "title": "name", "desc": "description", "summary": "description",
		"repo": "repository", "repo_url": "repository", "url": "homepage", "website": "homepage",
		"triggers": "trigger_types", "trigger_type": "trigger_types", "protocol": "protocol_version",
		"cmd": "command", "arguments": "args", "pkg": "package",
	}
)

// suggestKey is "did you mean `x`?" for an unknown top-level or [launch] key, or "".
func suggestKey(key toml.Key) string {
	switch {
	case len(key) == 1:
		return problem.DidYouMean(key[0], topKeys, keyAliases)
	case len(key) == 2 && key[0] == "launch":
		return problem.DidYouMean(key[1], launchKeys, keyAliases)
	}
	return ""
}
