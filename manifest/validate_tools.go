package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	maxAgentTools      = 16
	maxToolSchemaBytes = 64 << 10
	maxToolDescription = 1024
)

var (
	agentToolNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,31}$`)
	knownSurfaces        = []string{"kanban-task", "office-task"}
)

func (c *checker) agentTools() {
	tools := c.m.AgentTools
	if len(tools) == 0 {
		return
	}
	if !c.m.IsManaged() {
		c.probs.Errorf("manifest.agent_tools.runtime", "agent_tools", "expected runtime.type: binary because agent tools run in the managed plugin, found no managed runtime; add a runtime block or remove agent_tools")
	}
	if len(tools) > maxAgentTools {
		c.probs.Errorf("manifest.agent_tools.count", "agent_tools", "expected at most %d agent tools, found %d; hosts reject the manifest, remove some", maxAgentTools, len(tools))
	}
	seen := map[string]bool{}
	for i, t := range tools {
		c.agentTool(fmt.Sprintf("agent_tools[%d]", i), t, seen)
	}
}

func (c *checker) agentTool(path string, t AgentTool, seen map[string]bool) {
	switch {
	case !agentToolNamePattern.MatchString(t.Name):
		c.probs.Errorf("manifest.agent_tools.name", path+".name", "expected a name matching %s, found %q; rename the tool", agentToolNamePattern, t.Name)
	case seen[t.Name]:
		c.probs.Errorf("manifest.agent_tools.duplicate", path+".name", "expected unique tool names, found %q again; rename or remove it", t.Name)
	}
	seen[t.Name] = true
	if strings.TrimSpace(t.Description) == "" || len(t.Description) > maxToolDescription {
		c.probs.Errorf("manifest.agent_tools.description", path+".description", "expected a description of 1 to %d bytes, found %d bytes; describe what the tool does", maxToolDescription, len(t.Description))
	}
	c.surfaces(path+".surfaces", t.Surfaces)
	c.toolSchema("manifest.agent_tools.input_schema", path+".input_schema", t.InputSchema, true)
	c.toolSchema("manifest.agent_tools.output_schema", path+".output_schema", t.OutputSchema, false)
	if a := t.Annotations; a != nil && a.ReadOnlyHint != nil && a.DestructiveHint != nil && *a.ReadOnlyHint && *a.DestructiveHint {
		c.probs.Errorf("manifest.agent_tools.annotations", path+".annotations", "expected read_only_hint and destructive_hint not both true, found both true; hosts reject the tool, drop one")
	}
}

func (c *checker) surfaces(path string, surfaces []string) {
	if len(surfaces) == 0 {
		c.probs.Errorf("manifest.agent_tools.surfaces", path, "expected one or both of kanban-task and office-task, found none; add surfaces: [kanban-task]")
		return
	}
	seen := map[string]bool{}
	for i, s := range surfaces {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case seen[s]:
			c.probs.Errorf("manifest.agent_tools.surfaces", p, "expected each surface once, found %q again; remove the duplicate", s)
		case !contains(knownSurfaces, s):
			c.probs.Warnf("manifest.agent_tools.surfaces.unknown", p, "expected kanban-task or office-task, found %q; hosts that do not know it do not expose the tool there, keep it only if the plugin targets a newer Kandev", s)
		}
		seen[s] = true
	}
}

// toolSchema compiles an agent tool schema as the host does: an object-root JSON Schema of
// at most 64 KiB when serialized, with no remote references.
func (c *checker) toolSchema(rule, path string, schema map[string]any, required bool) {
	if schema == nil {
		if required {
			c.probs.Errorf(rule, path, "expected an object-root JSON Schema, found none; add input_schema: {type: object, properties: {...}}")
		}
		return
	}
	if msg := compileToolSchema(path, schema); msg != "" {
		c.probs.Errorf(rule, path, "expected a compilable object-root JSON Schema of at most %d bytes, found %s; fix the schema", maxToolSchemaBytes, msg)
	}
}

// compileToolSchema returns "" when the schema is acceptable, else what is wrong.
func compileToolSchema(path string, schema map[string]any) string {
	raw, err := json.Marshal(schema)
	if err != nil {
		return "a value that is not JSON-compatible"
	}
	if len(raw) > maxToolSchemaBytes {
		return fmt.Sprintf("%d bytes", len(raw))
	}
	if schema["type"] != "object" {
		return fmt.Sprintf("root type %v instead of object", schema["type"])
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return "invalid JSON"
	}
	url := "mem:///" + path + ".json"
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	if err := comp.AddResource(url, doc); err != nil {
		return "an unusable schema: " + oneLine(err)
	}
	if _, err := comp.Compile(url); err != nil {
		return "a schema that does not compile: " + oneLine(err)
	}
	return ""
}

// noLoader refuses every external reference: a manifest schema must be self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("external reference " + url + " is not allowed")
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	return truncate(s, 300)
}
