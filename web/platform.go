package web

import (
	"sort"
	"strings"
)

// How a package runs, for RunsOn.Mode.
const (
	RunsNative  = "native"  // a managed plugin: the executables it ships
	RunsBrowser = "browser" // a canvas or web-app-only plugin: inside the host's browser frame
	RunsLaunch  = "launch"  // a Curupira extension: started by its [launch] type
)

// Platform is one platform a managed plugin ships an executable for.
type Platform struct {
	Key   string // the runtime.executables key, e.g. "darwin-arm64"
	Label string // e.g. "macOS Apple silicon"
}

// RunsOn says where a package runs, and which common platforms it leaves out.
type RunsOn struct {
	Mode      string     // RunsNative, RunsBrowser or RunsLaunch
	Platforms []Platform // RunsNative: one per executable, in a stable order
	// Missing are sentences naming common platforms without a build, most severe first
	// (a whole operating system before one processor of it). RunsNative only.
	Missing []string
	// Summary says in a sentence what RunsBrowser and RunsLaunch packages need.
	Summary string
}

var osNames = map[string]string{
	"linux": "Linux", "darwin": "macOS", "windows": "Windows", "freebsd": "FreeBSD", "openbsd": "OpenBSD",
	"netbsd": "NetBSD", "dragonfly": "DragonFly BSD", "illumos": "illumos", "solaris": "Solaris", "aix": "AIX",
	"plan9": "Plan 9", "android": "Android", "ios": "iOS", "js": "JavaScript", "wasip1": "WASI",
}

var archNames = map[string]string{
	"amd64": "x86-64", "arm64": "Arm64", "386": "x86 (32-bit)", "arm": "Arm (32-bit)", "riscv64": "RISC-V 64-bit",
	"ppc64": "POWER (big-endian)", "ppc64le": "POWER (little-endian)", "s390x": "IBM Z", "loong64": "LoongArch 64-bit",
	"mips": "MIPS", "mipsle": "MIPS (little-endian)", "mips64": "MIPS64", "mips64le": "MIPS64 (little-endian)", "wasm": "WebAssembly",
}

// osOrder puts the common desktop and server systems first.
var osOrder = map[string]int{"linux": 0, "darwin": 1, "windows": 2}

// PlatformLabel names a runtime.executables key for people: "linux-amd64" is "Linux x86-64",
// "darwin-arm64" is "macOS Apple silicon". An unknown key is shown as it is.
func PlatformLabel(key string) string {
	goos, goarch, ok := strings.Cut(key, "-")
	osName, knownOS := osNames[goos]
	archName, knownArch := archNames[goarch]
	switch {
	case !ok || !knownOS || !knownArch:
		return key
	case key == "darwin-arm64":
		return "macOS Apple silicon"
	case key == "darwin-amd64":
		return "macOS Intel"
	}
	return osName + " " + archName
}

// NativeRunsOn describes a managed plugin from its runtime.executables keys.
func NativeRunsOn(keys []string) RunsOn {
	r := RunsOn{Mode: RunsNative}
	has := map[string]bool{}
	for _, k := range keys {
		has[k] = true
		r.Platforms = append(r.Platforms, Platform{Key: k, Label: PlatformLabel(k)})
	}
	sort.Slice(r.Platforms, func(i, j int) bool { return platformLess(r.Platforms[i].Key, r.Platforms[j].Key) })
	r.Missing = missingPlatforms(has)
	return r
}

func platformLess(a, b string) bool {
	oa, _, _ := strings.Cut(a, "-")
	ob, _, _ := strings.Cut(b, "-")
	ra, okA := osOrder[oa]
	rb, okB := osOrder[ob]
	switch {
	case okA && okB && ra != rb:
		return ra < rb
	case okA != okB:
		return okA
	}
	return a < b
}

// missingPlatforms names the common platforms (Linux, macOS and Windows on their usual
// processors) that have no build: first each system with none at all, then each common
// processor of a system that has builds for others.
func missingPlatforms(has map[string]bool) []string {
	anyOf := func(goos string) bool {
		for k := range has {
			if strings.HasPrefix(k, goos+"-") {
				return true
			}
		}
		return false
	}
	var whole, partial []string
	for _, goos := range []string{"linux", "darwin", "windows"} {
		if !anyOf(goos) {
			whole = append(whole, "No "+osNames[goos]+" build: this plugin will not run on "+osNames[goos]+".")
			continue
		}
		partial = append(partial, missingArchs(goos, has)...)
	}
	return append(whole, partial...)
}

func missingArchs(goos string, has map[string]bool) []string {
	var out []string
	note := func(key, sentence string) {
		if !has[key] {
			out = append(out, "No "+PlatformLabel(key)+" build: "+sentence)
		}
	}
	switch goos {
	case "linux":
		note("linux-amd64", "it will not run on x86-64 Linux (most PCs and servers).")
		note("linux-arm64", "it will not run on Arm64 Linux (such as Raspberry Pi 4 and later, or Arm cloud servers).")
	case "darwin":
		note("darwin-arm64", "on Apple silicon Macs it runs only through Rosetta 2.")
		note("darwin-amd64", "it will not run on Intel Macs.")
	case "windows":
		note("windows-amd64", "it will not run on most Windows PCs.")
	}
	return out
}

// BrowserRunsOn describes a canvas or a web-app-only plugin: it ships no executable.
func BrowserRunsOn() RunsOn {
	return RunsOn{Mode: RunsBrowser, Summary: "In the browser, inside Kandev's sandboxed canvas frame: it ships no executable, so it runs wherever Kandev runs."}
}

// LaunchRunsOn describes a Curupira extension by its [launch] type.
func LaunchRunsOn(launchType string) RunsOn {
	s, ok := map[string]string{
		"npx":    "Node.js, through npx: any system with Node.js and npm installed.",
		"node":   "Node.js: any system with Node.js installed.",
		"python": "Python 3: any system with python3 installed.",
		"go":     "Go, through go run: any system with the Go toolchain installed.",
		"binary": "A program Curupira starts directly: only the systems that program was built for (the manifest does not list them).",
	}[launchType]
	if !ok {
		s = "Launch type " + launchType + ": see the extension's README for what it needs."
	}
	return RunsOn{Mode: RunsLaunch, Summary: s}
}
