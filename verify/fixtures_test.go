package verify_test

import (
	"strings"
	"testing"
)

const pluginManifest = `id: hello-verify
api_version: 2
version: "1.0.0"
display_name: Hello Verify
description: A tiny managed plugin used by the verify tests.
author: Pluginyard
categories: [tools]
repo_url: https://github.com/pluginyard/hello-verify
icon: assets/icon.png
runtime:
  type: binary
  executables:
    linux-amd64: server/plugin-linux-amd64
capabilities:
  events: [task.created]
`

const canvasManifest = `id: board-verify
api_version: 2
version: "2.1.0"
display_name: Board Verify
description: A canvas used by the verify tests.
author: Pluginyard
categories: [tools]
repo_url: https://github.com/pluginyard/board-verify
icon: assets/icon.png
min_kandev_version: "0.91.1"
capabilities:
  api_read: [tasks]
ui:
  web_apps:
    - key: board
      title: Board
      entry: ui/index.html
      placements: [workspace-canvas]
distribution:
  schema_version: 1
  kind: canvas
  license: MIT
  source_mode: static
`

const extensionManifest = `manifest_version = 1
name = "@acme/curupira-ext"
version = "1.2.0"
protocol_version = 2
runtime = "node"
kind = "trigger"
trigger_types = ["github-issue"]

[launch]
type = "npx"
package = "@acme/curupira-ext"
version = "1.2.0"
`

// pluginFiles are the files of a valid plugin, without checksums.txt.
func pluginFiles(tb testing.TB) []entry {
	return []entry{
		file("manifest.yaml", pluginManifest),
		file("README.md", "# Hello Verify\n\nSays hello.\n"),
		file("assets/icon.png", pngIcon(tb)),
		file("server/plugin-linux-amd64", "#!/bin/sh\necho hello\n"),
	}
}

// validPlugin is a complete, valid plugin package's entries.
func validPlugin(tb testing.TB) []entry { return withChecksums("", pluginFiles(tb)...) }

// plus returns a valid plugin with extra entries appended after checksums.txt.
func plus(tb testing.TB, extra ...entry) []entry { return append(validPlugin(tb), extra...) }

func validCanvas(tb testing.TB) []entry {
	return withChecksums("",
		file("manifest.yaml", canvasManifest),
		file("README.md", "# Board Verify\n\nA board.\n"),
		file("assets/icon.png", pngIcon(tb)),
		file("ui/index.html", "<!doctype html><title>Board</title><script src=\"board.js\"></script>\n"),
		file("ui/board.js", "document.title = 'Board';\n"),
	)
}

// npmExtension is a Curupira extension as `npm pack` lays it out, under package/.
func npmExtension() []entry {
	return withChecksums("package/",
		file("package/curupira-extension.toml", extensionManifest),
		file("package/package.json", `{"name":"@acme/curupira-ext","version":"1.2.0"}`+"\n"),
		file("package/README.md", "# curupira-ext\n"),
		file("package/index.js", "console.log('hi')\n"),
	)
}

// rootExtension is a Curupira extension at the archive root, without checksums.txt.
func rootExtension() []entry {
	return []entry{
		file("curupira-extension.toml", strings.Replace(extensionManifest, `"@acme/curupira-ext"`, `"acme-ext"`, 1)),
		file("index.js", "console.log('hi')\n"),
	}
}
