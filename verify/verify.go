// Package verify reads a package (a gzip'd tar) safely and checks it the way a Kandev or
// Curupira host would before installing it: entry types and names, size and count limits,
// checksums.txt, the file name, and the manifest (through the manifest and extension
// packages). The server's publish path and the `registry verify` command both call Package,
// so an author sees exactly what the registry will say.
//
// Reading streams: memory stays bounded whatever the input, because only small, named
// files (the manifest, checksums.txt and its signature, README.md, small images) and the
// first 512 bytes of every other file are kept.
package verify

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// Kinds of package a Report can describe.
const (
	KindPlugin    = "plugin"
	KindCanvas    = "canvas"
	KindExtension = "extension"
)

// Limits bound what a package may hold. Sizes are in bytes and are counted on the bytes
// actually read, never on what a tar header claims.
type Limits struct {
	MaxCompressed   int64 // the .tar.gz itself
	MaxFileSize     int64 // one regular file, decompressed
	MaxTotalSize    int64 // every regular file together, decompressed
	MaxFiles        int   // regular files (directory entries are bounded by the same number)
	MaxPathLen      int   // bytes of a normalised entry path
	MaxManifestSize int64 // manifest.yaml or curupira-extension.toml
}

// PluginLimits returns the limits of registry-contract.md §2 for plugins and Curupira
// extensions: 100 MiB compressed (the host's download cap), 200 MiB per file and in total.
// The contract names no file-count or path-length limit for plugins; 10 000 files and
// 1024-byte paths are generous bounds that keep a hostile archive from growing the file
// table without end.
func PluginLimits() Limits {
	return Limits{
		MaxCompressed:   100 << 20,
		MaxFileSize:     200 << 20,
		MaxTotalSize:    200 << 20,
		MaxFiles:        10000,
		MaxPathLen:      1024,
		MaxManifestSize: 1 << 20,
	}
}

// CanvasLimits returns the tighter limits for canvas packages (a manifest with a
// `distribution:` block): 10 MiB compressed, 25 MiB expanded, 512 files, 5 MiB per file,
// 64 KiB manifest, 240-byte paths.
func CanvasLimits() Limits {
	return Limits{
		MaxCompressed:   10 << 20,
		MaxFileSize:     5 << 20,
		MaxTotalSize:    25 << 20,
		MaxFiles:        512,
		MaxPathLen:      240,
		MaxManifestSize: 64 << 10,
	}
}

// Options configure Package. The zero value uses PluginLimits and CanvasLimits and skips
// the file-name rule.
type Options struct {
	// FileName is the package's file name (a base name, e.g. "agent-stats-1.2.0.tar.gz").
	// When set, the manifest id and version must match it; see checkFileName.
	FileName string
	// Plugin limits apply to plugins and extensions, Canvas limits to manifests with a
	// distribution block. Reading stops at the larger of the two, field by field; the
	// kind's own limits are checked once the manifest is known. A zero Limits means the
	// defaults.
	Plugin, Canvas Limits
}

// Report is everything Package learned about a package. Problems holds every finding;
// the other fields are filled as far as the package could be read.
type Report struct {
	ID, Version, Kind string // Kind: "plugin" | "canvas" | "extension"; empty when unknown

	// SHA256 (lowercase hex) and Size are of the compressed package bytes. SHA256 is empty
	// when reading stopped at the compressed-size limit, since the digest would not be of
	// the whole file.
	SHA256 string
	Size   int64

	Manifest    *manifest.Manifest  // Kandev plugins and canvases
	ManifestRaw []byte              // the manifest file's exact bytes (manifest.yaml or curupira-extension.toml)
	Extension   *extension.Manifest // Curupira extensions

	Files manifest.Files // every regular file, by normalised slash path
	// Digests holds the lowercase hex sha256 of every file in Files, by the same path: what
	// checksums.txt was checked against, and what an extractor must reproduce.
	Digests map[string]string

	Checksums, ChecksumsSig []byte // raw checksums.txt / checksums.txt.sig when present

	// Icon is the manifest icon when the package ships it as an allowed image (PNG, JPEG,
	// WebP or SVG, by its bytes) of at most MaxIconSize bytes; nil otherwise. An icon that
	// is present but of another type or larger is an error (manifest.icon.type,
	// manifest.icon.size).
	Icon   *Asset
	README []byte // README.md (root, or package/ for npm-style extensions), at most 1 MiB
	// Changelog is CHANGELOG.md, beside README.md, at most 1 MiB; nil when absent or larger
	// (archive.changelog.size).
	Changelog []byte

	// Problems lists at most problem.MaxListed problems, then one summary per rule past
	// that (problem.Capped): a hostile package cannot make the report large.
	Problems problem.List
}

// Asset is a file kept from the package, such as the icon.
type Asset struct {
	Path        string // path inside the package
	ContentType string // sniffed from the bytes, e.g. "image/png"
	Ext         string // extension of ContentType (never the file's own), e.g. ".png"
	SHA256      string // lowercase hex of Data
	Data        []byte
}

// OK reports whether the package has no error-severity problem.
func (r *Report) OK() bool { return !r.Problems.HasErrors() }

// Package reads a package from r and checks it. It returns an error only when r fails or
// ctx ends; everything wrong with the package itself is in Report.Problems.
func Package(ctx context.Context, r io.Reader, opt Options) (*Report, error) {
	opt = opt.withDefaults()
	a, err := readArchive(ctx, r, loosest(opt.Plugin, opt.Canvas))
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	rep := &Report{
		SHA256:       a.sha256,
		Size:         a.size,
		Files:        a.files,
		Digests:      hexDigests(a.digests),
		Checksums:    a.keptBytes(checksumsName),
		ChecksumsSig: a.keptBytes(checksumsSigName),
	}
	if !a.fatal {
		inspect(rep, a, opt)
	}
	// One collector for the archive's problems and the inspection's, so the cap and its
	// per-rule counts cover the whole report.
	a.problems.AddAll(rep.Problems)
	rep.Problems = a.problems.List()
	return rep, nil
}

func hexDigests(sums map[string][sha256Size]byte) map[string]string {
	out := make(map[string]string, len(sums))
	for name, sum := range sums {
		out[name] = hex.EncodeToString(sum[:])
	}
	return out
}

func (o Options) withDefaults() Options {
	if o.Plugin == (Limits{}) {
		o.Plugin = PluginLimits()
	}
	if o.Canvas == (Limits{}) {
		o.Canvas = CanvasLimits()
	}
	return o
}
