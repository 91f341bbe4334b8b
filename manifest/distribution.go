package manifest

import (
	"fmt"
	"path"
	"strings"

	"github.com/pluginyard/registry/problem"
)

// SourcePrefix is where a project-mode canvas keeps its editable project.
const SourcePrefix = "distribution/source/"

// PermissiveLicenses need no LICENSE.txt in a canvas package (registry contract §2).
var PermissiveLicenses = []string{"MIT", "ISC", "Unlicense", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
	"MPL-2.0", "GPL-2.0-only", "GPL-3.0-only", "LGPL-2.1-only", "LGPL-3.0-only"}

var (
	sourceExtensions  = strings.Fields(".css .html .htm .js .jsx .mjs .cjs .json .map .md .txt .ts .tsx .yaml .yml .lock .toml")
	sourceNames       = []string{"Dockerfile", "Makefile", "README", "LICENSE", ".env.example"}
	forbiddenExts     = strings.Fields(".zip .tar .gz .tgz .bz2 .xz .7z .rar .exe .dll .so .dylib .bin .wasm")
	forbiddenSegments = []string{".git", "node_modules", ".kandev"}
)

// distribution checks the canvas block, what a canvas may declare, and its package rules.
func (c *checker) distribution() {
	d := c.m.Distribution
	if d == nil {
		return
	}
	c.distributionBlock(d)
	c.canvasWebApp()
	if c.m.MinKandevVersion == "" {
		c.probs.Errorf("manifest.distribution.min_kandev_version", "min_kandev_version", "expected a canvas to declare the lowest Kandev version it supports, found none; add min_kandev_version")
	}
	if extra := canvasForbidden(c.m); len(extra) > 0 {
		c.probs.Errorf("manifest.distribution.contribution", "distribution", "expected a canvas to contain only a static web app, found %s; remove them or publish a plugin instead", strings.Join(extra, ", "))
	}
	if c.files != nil {
		c.canvasFiles(d)
	}
}

func (c *checker) distributionBlock(d *Distribution) {
	if d.SchemaVersion != 1 {
		c.probs.Errorf("manifest.distribution.schema_version", "distribution.schema_version", "expected schema_version: 1, found %d; set it to 1", d.SchemaVersion)
	}
	if d.Kind != "canvas" {
		c.probs.Errorf("manifest.distribution.kind", "distribution.kind", "expected kind: canvas, found %q; set kind: canvas", d.Kind)
	}
	if strings.TrimSpace(d.License) == "" {
		c.probs.Errorf("manifest.distribution.license", "distribution.license", "expected a license (an SPDX id such as MIT), found none; add license:")
	}
	if d.SourceMode != "static" && d.SourceMode != "project" {
		c.probs.Errorf("manifest.distribution.source_mode", "distribution.source_mode", "expected source_mode static or project, found %q; pick one", d.SourceMode)
	}
}

func (c *checker) canvasWebApp() {
	var apps []WebApp
	if c.m.UI != nil {
		apps = c.m.UI.WebApps
	}
	if len(apps) != 1 {
		c.probs.Errorf("manifest.distribution.web_apps", "ui.web_apps", "expected exactly one web app in a canvas, found %d; declare a single ui.web_apps entry", len(apps))
		return
	}
	if !contains(apps[0].Placements, "workspace-canvas") {
		c.probs.Errorf("manifest.distribution.web_apps", "ui.web_apps[0].placements", "expected the canvas web app to include the workspace-canvas placement, found %v; add workspace-canvas", apps[0].Placements)
	}
}

// canvasForbidden lists the plugin contributions a canvas may not carry.
func canvasForbidden(m *Manifest) []string {
	out := backendContributions(m)
	add := func(cond bool, name string) {
		if cond {
			out = append(out, name)
		}
	}
	add(len(m.AgentTools) > 0, "agent_tools")
	add(m.Runtime != nil, "runtime")
	add(m.BaseURL != "", "base_url")
	add(m.Endpoints != nil, "endpoints")
	add(m.ConfigSchema != nil, "config_schema")
	caps := m.Capabilities
	add(caps.State, "capabilities.state")
	add(caps.Secrets, "capabilities.secrets")
	add(caps.AgentInvoke, "capabilities.agent_invoke")
	add(caps.AgentConversation, "capabilities.agent_conversation")
	add(caps.Auth, "capabilities.auth")
	add(caps.ExecutorProvider, "capabilities.executor_provider")
	return out
}

func (c *checker) canvasFiles(d *Distribution) {
	if _, ok := c.files["README.md"]; !ok {
		c.probs.Errorf("manifest.distribution.readme", "distribution", "expected README.md at the package root of a canvas, found none; add a README.md")
	}
	if _, ok := c.files["LICENSE.txt"]; !ok && !contains(PermissiveLicenses, d.License) {
		c.probs.Errorf("manifest.distribution.license_file", "distribution.license", "expected LICENSE.txt in the package because license %q is not one of %s, found none; ship the license text as LICENSE.txt", d.License, strings.Join(PermissiveLicenses, ", "))
	}
	c.sourceFiles(d.SourceMode)
}

func (c *checker) sourceFiles(mode string) {
	var found []string
	for _, name := range sortedKeys(c.files) {
		if strings.HasPrefix(name, SourcePrefix) {
			found = append(found, name)
		}
	}
	switch mode {
	case "static":
		if len(found) > 0 {
			c.probs.Errorf("manifest.distribution.source.static", "distribution.source_mode", "expected no files under %s with source_mode static, found %d (first: %s); remove them or use source_mode: project", SourcePrefix, len(found), found[0])
		}
		return
	case "project":
		for _, req := range []string{"manifest.yaml", "README.md"} {
			if _, ok := c.files[SourcePrefix+req]; !ok {
				c.probs.Errorf("manifest.distribution.source.required", "distribution.source_mode", "expected %s%s with source_mode project, found none; include the project's %s", SourcePrefix, req, req)
			}
		}
	}
	for _, name := range found {
		c.sourceFile(name)
	}
}

// sourceFile applies the distribution/source/ rules to one file; File names the offender.
func (c *checker) sourceFile(name string) {
	rel := strings.TrimPrefix(name, SourcePrefix)
	base := path.Base(rel)
	var rule, msg string
	switch {
	case hasForbiddenSegment(rel):
		rule, msg = "manifest.distribution.source.component", "expected no .git, node_modules, .kandev or .env* (other than .env.example) path components under "+SourcePrefix
	case contains(forbiddenExts, strings.ToLower(path.Ext(base))):
		rule, msg = "manifest.distribution.source.extension", "expected no archives or binaries ("+strings.Join(forbiddenExts, " ")+") under "+SourcePrefix
	case !contains(sourceExtensions, path.Ext(base)) && !contains(sourceNames, base):
		rule, msg = "manifest.distribution.source.name", "expected only "+strings.Join(sourceExtensions, " ")+" files, Dockerfile, Makefile, README, LICENSE or .env.example under "+SourcePrefix
	default:
		return
	}
	c.probs = append(c.probs, sourceProblem(rule, name, fmt.Sprintf("%s, found %s; remove it from the project source", msg, name)))
}

func hasForbiddenSegment(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if contains(forbiddenSegments, seg) || strings.HasPrefix(seg, ".env") && seg != ".env.example" {
			return true
		}
	}
	return false
}

func sourceProblem(rule, file, msg string) problem.Problem {
	return problem.Problem{Rule: rule, File: file, Message: msg, Severity: problem.Error}
}
