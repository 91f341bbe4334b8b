package manifest

import (
	"fmt"
	"strings"
)

var (
	knownAPIRead  = []string{"tasks", "sessions", "messages", "workspaces", "workflows", "agent_profiles", "executor_profiles", "repositories"}
	knownAPIWrite = []string{"tasks", "messages"}
	// floorVersion is the lowest min_kandev_version for api_read: messages and admin actions.
	floorVersion = []int{0, 91, 1}
)

const floorText = "0.91.1"

func (c *checker) minKandevVersion() {
	raw := c.m.MinKandevVersion
	if raw != "" {
		if _, ok := releaseVersion(raw); !ok {
			c.probs.Errorf("manifest.min_kandev_version.format", "min_kandev_version", "expected a release version of up to three numeric segments with an optional leading v (e.g. \"0.91.1\"), found %q; hosts refuse malformed values, so use a released Kandev version", raw)
			return
		}
	}
	if contains(c.m.Capabilities.APIRead, "messages") {
		c.requireFloor("capabilities.api_read", "capabilities.api_read: messages")
	}
	for i, a := range c.m.Actions {
		if a.Access == AccessAdmin {
			c.requireFloor(fmt.Sprintf("actions[%d].access", i), fmt.Sprintf("action %q with access: admin", a.Key))
		}
	}
}

// requireFloor reports a missing or too-low min_kandev_version for a feature that needs 0.91.1.
func (c *checker) requireFloor(path, feature string) {
	raw := c.m.MinKandevVersion
	v, ok := releaseVersion(raw)
	if !ok && raw != "" {
		return // already reported as malformed
	}
	if ok && atLeast(v, floorVersion) {
		return
	}
	found := "none"
	if raw != "" {
		found = fmt.Sprintf("%q", raw)
	}
	c.probs.Errorf("manifest.min_kandev_version.floor", path, "expected min_kandev_version of at least %s because of %s, found %s; hosts refuse the package, so set min_kandev_version: %q or higher", floorText, feature, found, floorText)
}

func (c *checker) capabilities() {
	caps := c.m.Capabilities
	c.vocabulary("manifest.capabilities.api_read.unknown", "capabilities.api_read", caps.APIRead, knownAPIRead)
	c.vocabulary("manifest.capabilities.api_write.unknown", "capabilities.api_write", caps.APIWrite, knownAPIWrite)
	for i, e := range caps.Events {
		c.event(fmt.Sprintf("capabilities.events[%d]", i), e)
	}
}

// vocabulary warns about resources outside today's list: hosts accept them but deny the
// call, unless the host is newer than the reference.
func (c *checker) vocabulary(rule, path string, values, known []string) {
	for i, v := range values {
		if !contains(known, v) {
			c.probs.Warnf(rule, fmt.Sprintf("%s[%d]", path, i), "expected one of %s, found %q; hosts that do not know it deny the call (PermissionDenied), so remove it unless the plugin targets a newer Kandev that defines it", strings.Join(known, ", "), v)
		}
	}
}

func (c *checker) event(path, e string) {
	if msg := eventPatternProblem(e); msg != "" {
		c.probs.Warnf("manifest.capabilities.events.pattern", path, "expected a dot-separated subject with '*' only as a whole segment (e.g. task.*), found %q (%s); the subscription can never match, so fix it", e, msg)
		return
	}
	if !knownEvent(e) {
		c.probs.Warnf("manifest.capabilities.events.unknown", path, "expected a subject Kandev publishes (e.g. task.created, shell.output.*, plugin.<id>.<event>), found %q that matches none known today; check the spelling, or keep it if a newer Kandev publishes it", e)
	}
}

func eventPatternProblem(e string) string {
	if e == "" {
		return "empty"
	}
	if strings.ContainsFunc(e, isSpace) {
		return "contains whitespace"
	}
	for _, seg := range strings.Split(e, ".") {
		if seg == "" {
			return "empty segment"
		}
		if seg != "*" && strings.Contains(seg, "*") {
			return "'*' inside a segment"
		}
	}
	return ""
}

// knownEvent reports whether a subject or pattern can match a subject Kandev publishes.
func knownEvent(e string) bool {
	segs := strings.Split(e, ".")
	if (segs[0] == "plugin" || segs[0] == "*") && len(segs) >= 3 {
		return true // plugin.<plugin_id>.<event>; plugin ids may contain dots
	}
	for _, s := range knownSubjects {
		if matchSubject(segs, strings.Split(s, ".")) {
			return true
		}
	}
	for _, s := range perSessionSubjects {
		if matchSubject(segs, append(strings.Split(s, "."), "id")) {
			return true
		}
	}
	return false
}

// matchSubject applies the host's rule: same segment count, '*' matches one segment.
func matchSubject(pattern, subject []string) bool {
	if len(pattern) != len(subject) {
		return false
	}
	for i, p := range pattern {
		if p != "*" && p != subject[i] {
			return false
		}
	}
	return true
}
