package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"

	"github.com/pluginyard/registry/extension"
	"github.com/pluginyard/registry/manifest"
	"github.com/pluginyard/registry/problem"
)

// inspect runs the checks that need the whole file list: which kind of package this is,
// its manifest, the limits of that kind, checksums.txt, the file name, and the icon.
func inspect(rep *Report, a *archive, opt Options) {
	switch base, kind := packageKind(a); kind {
	case KindPlugin:
		inspectKandev(rep, a, opt)
	case KindExtension:
		inspectExtension(rep, a, opt, base)
	default:
		rep.Problems.Errorf("archive.manifest.missing", "", "%s", missingManifest(a))
	}
}

// packageKind finds the manifest: manifest.yaml at the root makes a Kandev package
// (plugin or canvas); otherwise curupira-extension.toml at the root, or under package/
// as `npm pack` lays it out, makes a Curupira extension. base is the folder holding it.
func packageKind(a *archive) (base, kind string) {
	switch {
	case a.isFile(manifestName):
		return "", KindPlugin
	case a.isFile(extensionName):
		return "", KindExtension
	case a.isFile(npmPrefix + extensionName):
		return npmPrefix, KindExtension
	}
	return "", ""
}

func missingManifest(a *archive) string {
	for _, name := range sortedKeys(a.files) {
		if base := path.Base(name); base == manifestName || base == extensionName {
			return "no manifest.yaml at the archive root, but " + name + " is in a folder; put the package's files at the root of the archive, not under a top folder"
		}
	}
	return "the package has neither manifest.yaml (a Kandev plugin or canvas) nor curupira-extension.toml (a Curupira extension) at its root"
}

func inspectKandev(rep *Report, a *archive, opt Options) {
	data, ok := a.kept[manifestName]
	if !ok {
		rep.Problems.Errorf("archive.limit.manifest", "", "manifest.yaml is %s; at most %s are allowed", size(a.files[manifestName].Size), size(a.lim.MaxManifestSize))
		rep.Problems[len(rep.Problems)-1].File = manifestName
		return
	}
	rep.ManifestRaw = data
	m, probs := manifest.Check(data, a.files)
	lim := opt.Plugin
	if m != nil {
		rep.Manifest, rep.ID, rep.Version, rep.Kind = m, m.ID, m.Version, m.Kind()
		if rep.Kind == KindCanvas {
			lim = opt.Canvas
		}
	}
	var iconProbs problem.List
	examined := false
	if m != nil {
		rep.Icon, iconProbs = icon(a, m.Icon)
		examined = a.isFile(strings.TrimPrefix(m.Icon, "./"))
	}
	rep.Problems = append(rep.Problems, checkLimits(a, lim, rep.Kind, manifestName, rep.Size)...)
	rep.Problems = append(rep.Problems, supersede(probs.InFile(manifestName), examined)...)
	rep.Problems = append(rep.Problems, iconProbs...)
	rep.Problems = append(rep.Problems, packageChecksums(a, "", true)...)
	rep.Checksums, rep.ChecksumsSig = a.kept[checksumsName], a.kept[checksumsSigName]
	if m != nil {
		rep.Problems = append(rep.Problems, checkFileName(opt.FileName, m.ID, m.Version, "id")...)
	}
	rep.README = a.kept[readmeName]
	rep.Problems = append(rep.Problems, readmeSize(a, readmeName)...)
	rep.Changelog = a.kept[changelogName]
	rep.Problems = append(rep.Problems, changelogSize(a, changelogName)...)
}

func inspectExtension(rep *Report, a *archive, opt Options, base string) {
	file := base + extensionName
	rep.Kind = KindExtension
	data, ok := a.kept[file]
	if !ok {
		rep.Problems.Errorf("archive.limit.manifest", "", "%s is %s; at most %s are allowed", file, size(a.files[file].Size), size(a.lim.MaxManifestSize))
		rep.Problems[len(rep.Problems)-1].File = file
		return
	}
	rep.ManifestRaw = data
	m, probs := extension.Parse(data)
	for i := range probs {
		probs[i].File = file
	}
	rep.Problems = append(rep.Problems, checkLimits(a, opt.Plugin, KindExtension, file, rep.Size)...)
	rep.Problems = append(rep.Problems, probs...)
	if base != "" {
		rep.Problems = append(rep.Problems, outsideBase(a, base)...)
	}
	rep.Problems = append(rep.Problems, packageChecksums(a, base, false)...)
	rep.Checksums, rep.ChecksumsSig = a.kept[base+checksumsName], a.kept[base+checksumsSigName]
	if m != nil {
		rep.Extension, rep.ID, rep.Version = m, m.Name, m.Version
		rep.Problems = append(rep.Problems, checkFileName(opt.FileName, extension.FileID(m.Name), m.Version, "name")...)
	}
	rep.README = a.kept[base+readmeName]
	rep.Problems = append(rep.Problems, readmeSize(a, base+readmeName)...)
	rep.Changelog = a.kept[base+changelogName]
	rep.Problems = append(rep.Problems, changelogSize(a, base+changelogName)...)
}

// outsideBase refuses files beside package/ in an npm-style package: the host installs
// package/ only, so they would be published but never installed.
func outsideBase(a *archive, base string) problem.List {
	var probs problem.List
	for _, name := range sortedKeys(a.files) {
		if !under(name, base) {
			probs.Errorf("archive.layout", "", "%q is outside %s; an npm-style package keeps every file under %s", name, base, base)
			probs[len(probs)-1].File = name
		}
	}
	return probs
}

// packageChecksums checks base+checksums.txt against the files under base.
func packageChecksums(a *archive, base string, required bool) problem.List {
	file := base + checksumsName
	var probs problem.List
	if !a.isFile(file) {
		if required {
			probs.Errorf("checksums.missing", "", "the package has no checksums.txt; generate it last, with `sha256sum` of every other file, sorted by path (the pack tool does this)")
		}
		return probs.InFile(file)
	}
	data, ok := a.kept[file]
	if !ok {
		probs.Errorf("checksums.size", "", "checksums.txt is %s, more than one line per allowed file (%s)", size(a.files[file].Size), size(checksumsLimit(a.lim)))
		return probs.InFile(file)
	}
	if a.isFile(base+checksumsSigName) && a.kept[base+checksumsSigName] == nil {
		probs.Errorf("checksums.sig.size", "", "checksums.txt.sig is %s; a signature is at most %s", size(a.files[base+checksumsSigName].Size), size(maxSigSize))
		probs = probs.InFile(base + checksumsSigName)
	}
	lines, parsed := ParseChecksums(data)
	probs = append(probs, parsed.InFile(file)...)
	return append(probs, checkChecksums(lines, a.digests, base).InFile(file)...)
}

// readmeSize warns when README.md is too large to keep: the registry shows no readme then.
func readmeSize(a *archive, name string) problem.List {
	var probs problem.List
	if a.isFile(name) && a.kept[name] == nil {
		probs.Warnf("archive.readme.size", "", "README.md is %s; the registry shows READMEs of at most %s, so this one is not shown", size(a.files[name].Size), size(maxReadmeSize))
	}
	return probs.InFile(name)
}

// changelogSize warns when CHANGELOG.md is too large to keep: the registry shows no
// changelog and no release notes then.
func changelogSize(a *archive, name string) problem.List {
	var probs problem.List
	if a.isFile(name) && a.kept[name] == nil {
		probs.Warnf("archive.changelog.size", "", "CHANGELOG.md is %s; the registry shows changelogs of at most %s, so this one and its release notes are not shown; move older entries into a separate file", size(a.files[name].Size), size(maxChangelogSize))
	}
	return probs.InFile(name)
}

// icon returns the manifest's icon p as an Asset, with the problems that refuse it: a
// type other than the allowed ones (sniffed from its bytes, whatever its name says), a size
// over MaxIconSize, or bytes the reader could not keep. A missing file or a bad path is the
// manifest package's finding (a warning: the card falls back to a letter tile).
func icon(a *archive, p string) (*Asset, problem.List) {
	p = strings.TrimPrefix(p, "./")
	f, ok := a.files[p]
	if p == "" || !ok {
		return nil, nil
	}
	var probs problem.List
	data, kept := a.kept[p]
	head := f.Head
	if kept {
		head = data
	}
	ct, ext := iconType(head)
	switch {
	case ct == "":
		probs.Errorf("manifest.icon.type", "icon", "the icon %q is %s by its content; icons must be PNG, JPEG, WebP or SVG (by content, whatever the file name says), so convert it", p, describeType(f.Head))
	case f.Size > MaxIconSize:
		probs.Errorf("manifest.icon.size", "icon", "the icon %q is %s; icons are at most %s, so shrink it (a 256x256 PNG or an optimised SVG is far smaller)", p, size(f.Size), size(MaxIconSize))
	case !kept:
		probs.Errorf("manifest.icon.kept", "icon", "the icon %q could not be kept: more than %s of image files come before it in the archive, and the registry keeps at most that while reading; put the icon earlier in the archive or ship fewer images", p, size(maxImagesTotal))
	}
	if len(probs) > 0 {
		return nil, probs.InFile(manifestName)
	}
	sum := sha256.Sum256(data)
	return &Asset{Path: p, ContentType: ct, Ext: ext, SHA256: hex.EncodeToString(sum[:]), Data: data}, nil
}

// supersede drops the manifest package's icon format and size warnings once verify has
// examined the icon file itself: its verdict, from the whole bytes rather than the first
// 512, replaces them (an error now refuses at publish), so the author reads it once.
func supersede(probs problem.List, examined bool) problem.List {
	if !examined {
		return probs
	}
	out := probs[:0:0]
	for _, p := range probs {
		if p.Severity == problem.Warning && (p.Rule == "manifest.icon.size" || p.Rule == "manifest.icon.format") {
			continue
		}
		out = append(out, p)
	}
	return out
}
