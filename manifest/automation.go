package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Limits of automation_conditions from the reference.
const (
	maxAutomationConditions = 32
	maxAutomationFields     = 32
	maxAutomationSettings   = 64 << 10
	maxAutomationString     = 4096
	maxAutomationList       = 100
	maxVerificationHeaders  = 16
)

var automationSchemaKeys = []string{"type", "properties", "required", "additionalProperties"}
var automationFieldKeys = []string{"type", "title", "title_key", "enum", "items"}

func (c *checker) automationConditions() {
	conds := c.m.AutomationConditions
	if len(conds) > maxAutomationConditions {
		c.probs.Errorf("manifest.automation_conditions.count", "automation_conditions", "expected at most %d automation conditions, found %d; hosts reject the manifest, remove some", maxAutomationConditions, len(conds))
	}
	seen := map[string]bool{}
	for i, cond := range conds {
		path := fmt.Sprintf("automation_conditions[%d]", i)
		if !actionKeyPattern.MatchString(cond.Key) || seen[cond.Key] {
			c.probs.Errorf("manifest.automation_conditions.key", path+".key", "expected a unique key matching %s, found %q; rename the condition", actionKeyPattern, cond.Key)
		}
		seen[cond.Key] = true
		c.automationCondition(path, cond)
	}
}

func (c *checker) automationCondition(path string, cond AutomationCondition) {
	if cond.Access != AccessPublic {
		c.probs.Errorf("manifest.automation_conditions.access", path+".access", "expected explicit access: public (required for every condition), found %q; set access: public", cond.Access)
	}
	if cond.ConfigVersion != 1 {
		c.probs.Errorf("manifest.automation_conditions.config_version", path+".config_version", "expected config_version: 1, found %d; set config_version: 1", cond.ConfigVersion)
	}
	if strings.TrimSpace(cond.Label) == "" || len(cond.Label) > 200 {
		c.probs.Errorf("manifest.automation_conditions.label", path+".label", "expected a label of 1 to 200 bytes, found %d bytes; add a short label", len(cond.Label))
	}
	c.verificationHeaders(path+".verification_headers", cond.VerificationHeaders)
	props := c.automationSchema(path+".config_schema", cond.ConfigSchema)
	if props != nil {
		c.automationDefaults(path+".default_config", cond.DefaultConfig, props)
	}
}

func (c *checker) verificationHeaders(path string, headers []string) {
	if len(headers) > maxVerificationHeaders {
		c.probs.Errorf("manifest.automation_conditions.verification_headers", path, "expected at most %d headers, found %d; remove some", maxVerificationHeaders, len(headers))
	}
	seen := map[string]bool{}
	for i, h := range headers {
		if msg := headerProblem(h); msg != "" || seen[h] {
			if msg == "" {
				msg = "duplicate"
			}
			c.probs.Errorf("manifest.automation_conditions.verification_headers", fmt.Sprintf("%s[%d]", path, i), "expected a unique lowercase provider header starting with x- (not x-kandev-*, not x-webhook-secret, at most 100 characters of a-z, 0-9, -), found %q (%s); fix the header name", h, msg)
		}
		seen[h] = true
	}
}

func headerProblem(h string) string {
	switch {
	case len(h) > 100:
		return "too long"
	case !strings.HasPrefix(h, "x-"):
		return "not an x- header"
	case strings.HasPrefix(h, "x-kandev-") || h == "x-webhook-secret":
		return "reserved by the host"
	case strings.TrimLeft(h, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
		return "characters outside a-z, 0-9, -"
	}
	return ""
}

// automationSchema checks a condition's config_schema and returns its properties (nil when
// the schema itself is unusable).
func (c *checker) automationSchema(path string, s map[string]any) map[string]any {
	const rule = "manifest.automation_conditions.config_schema"
	if s["type"] != "object" {
		c.probs.Errorf(rule, path+".type", "expected an object schema (type: object), found %v; hosts reject the condition", s["type"])
		return nil
	}
	if raw, err := json.Marshal(s); err != nil || len(raw) > maxAutomationSettings {
		c.probs.Errorf(rule, path, "expected a JSON-compatible schema of at most %d bytes; simplify the schema", maxAutomationSettings)
		return nil
	}
	for _, k := range sortedKeys(s) {
		if !contains(automationSchemaKeys, k) {
			c.probs.Errorf(rule, path+"."+k, "expected only %s, found unknown keyword %q; hosts reject unknown keywords, remove it", strings.Join(automationSchemaKeys, ", "), k)
		}
	}
	if v, ok := s["additionalProperties"]; ok && v != false {
		c.probs.Errorf(rule, path+".additionalProperties", "expected additionalProperties: false or omitted, found %v; remove it or set false", v)
	}
	props, ok := s["properties"].(map[string]any)
	if !ok && s["properties"] != nil {
		c.probs.Errorf(rule, path+".properties", "expected a mapping of fields, found %T; list fields under properties:", s["properties"])
		return nil
	}
	if len(props) > maxAutomationFields {
		c.probs.Errorf(rule, path+".properties", "expected at most %d fields, found %d; remove some", maxAutomationFields, len(props))
	}
	for _, name := range sortedKeys(props) {
		c.automationField(path+".properties."+name, name, props[name])
	}
	c.automationRequired(path, s, props)
	if props == nil {
		props = map[string]any{}
	}
	return props
}

func (c *checker) automationField(path, name string, raw any) {
	const rule = "manifest.automation_conditions.config_schema"
	field, ok := raw.(map[string]any)
	if !ok || !actionKeyPattern.MatchString(name) {
		c.probs.Errorf(rule, path, "expected a field named like %s whose schema is a mapping, found %q with %T; rename or fix the field", actionKeyPattern, name, raw)
		return
	}
	for _, k := range sortedKeys(field) {
		if !contains(automationFieldKeys, k) {
			c.probs.Errorf(rule, path+"."+k, "expected only %s, found unknown keyword %q; hosts reject unknown keywords, remove it", strings.Join(automationFieldKeys, ", "), k)
		}
	}
	for _, k := range []string{"title", "title_key"} {
		if v, ok := field[k]; ok {
			if s, isString := v.(string); !isString || len(s) > 200 {
				c.probs.Errorf(rule, path+"."+k, "expected a string of at most 200 bytes, found %v; shorten it", v)
			}
		}
	}
	if msg := automationFieldType(field); msg != "" {
		c.probs.Errorf(rule, path+".type", "expected a string, boolean, string-enum or string-list field, found %s; hosts reject other field types", msg)
	}
}

// automationFieldType says what is wrong with a field's type, or "".
func automationFieldType(f map[string]any) string {
	switch f["type"] {
	case "array":
		items, ok := f["items"].(map[string]any)
		if !ok || len(items) != 1 || items["type"] != "string" || f["enum"] != nil {
			return "an array whose items are not exactly {type: string}"
		}
	case "boolean":
		if f["enum"] != nil || f["items"] != nil {
			return "a boolean with enum or items"
		}
	case "string":
		if f["items"] != nil {
			return "a string with items"
		}
		return enumProblem(f)
	default:
		return fmt.Sprintf("type %v", f["type"])
	}
	return ""
}

func enumProblem(f map[string]any) string {
	v, ok := f["enum"]
	if !ok {
		return ""
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > maxAutomationList {
		return "an enum that is not a list of 1 to 100 values"
	}
	for _, o := range list {
		if s, isString := o.(string); !isString || len(s) > maxAutomationString {
			return "an enum with a non-string or over-long value"
		}
	}
	return ""
}

func (c *checker) automationRequired(path string, s, props map[string]any) {
	raw, ok := s["required"]
	if !ok {
		return
	}
	list, isList := raw.([]any)
	if !isList {
		c.probs.Errorf("manifest.automation_conditions.config_schema", path+".required", "expected a list of field names, found %T; write required: [name]", raw)
		return
	}
	for i, r := range list {
		if name, isString := r.(string); !isString || props[name] == nil {
			c.probs.Errorf("manifest.automation_conditions.config_schema", fmt.Sprintf("%s.required[%d]", path, i), "expected a declared field name, found %v; declare the field or remove it from required", r)
		}
	}
}

// automationDefaults checks that default_config holds only declared fields with valid values.
func (c *checker) automationDefaults(path string, defaults, props map[string]any) {
	const rule = "manifest.automation_conditions.default_config"
	if raw, err := json.Marshal(defaults); err != nil || len(raw) > maxAutomationSettings {
		c.probs.Errorf(rule, path, "expected JSON-compatible defaults of at most %d bytes; shrink them", maxAutomationSettings)
		return
	}
	for _, k := range sortedKeys(defaults) {
		field, ok := props[k].(map[string]any)
		if !ok {
			c.probs.Errorf(rule, path+"."+k, "expected only fields declared in config_schema.properties, found %q; remove it or declare the field", k)
			continue
		}
		if msg := defaultValueProblem(field, defaults[k]); msg != "" {
			c.probs.Errorf(rule, path+"."+k, "expected a value valid for the field, found %v (%s); fix the default", defaults[k], msg)
		}
	}
}

func defaultValueProblem(field map[string]any, v any) string {
	switch field["type"] {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "not a boolean"
		}
	case "string":
		s, ok := v.(string)
		if !ok || len(s) > maxAutomationString {
			return "not a string of at most 4096 bytes"
		}
		if enum, has := field["enum"].([]any); has && s != "" && !containsAny(enum, s) {
			return "not one of the enum values"
		}
	case "array":
		list, ok := v.([]any)
		if !ok || len(list) > maxAutomationList {
			return "not a list of at most 100 strings"
		}
		for _, item := range list {
			if s, isString := item.(string); !isString || len(s) > maxAutomationString {
				return "a list item that is not a string of at most 4096 bytes"
			}
		}
	}
	return ""
}

func containsAny(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
