package verify

import (
	"strings"

	"github.com/pluginyard/registry/problem"
)

// checkLimits applies the limits of the package's kind once the kind is known. Reading
// already stopped at the loosest limits, so this only reports what a tighter kind (a
// canvas) refuses; the counts are the ones tracked while streaming.
func checkLimits(a *archive, lim Limits, manifestFile string, compressed int64) problem.List {
	var probs problem.List
	add := func(rule, file, format string, args ...any) {
		probs.Errorf(rule, "", format, args...)
		probs[len(probs)-1].File = file
	}
	if compressed > lim.MaxCompressed {
		add("archive.limit.compressed", "", "the package is %d bytes compressed; at most %s are allowed for this kind of package", compressed, size(lim.MaxCompressed))
	}
	if a.total > lim.MaxTotalSize {
		add("archive.limit.total", "", "the files add up to %d bytes decompressed; at most %s are allowed for this kind of package", a.total, size(lim.MaxTotalSize))
	}
	if len(a.files) > lim.MaxFiles {
		add("archive.limit.files", "", "the package has %d files; at most %d are allowed for this kind of package", len(a.files), lim.MaxFiles)
	}
	if len(a.dirs) > lim.MaxFiles {
		add("archive.limit.files", "", "the package has %d directory entries; at most %d are allowed for this kind of package", len(a.dirs), lim.MaxFiles)
	}
	if n := a.files[manifestFile].Size; n > lim.MaxManifestSize {
		add("archive.limit.manifest", manifestFile, "the manifest is %d bytes; at most %s are allowed for this kind of package", n, size(lim.MaxManifestSize))
	}
	for _, name := range sortedKeys(a.files) {
		if n := a.files[name].Size; n > lim.MaxFileSize {
			add("archive.limit.file", name, "the file is %d bytes; at most %s per file are allowed for this kind of package", n, size(lim.MaxFileSize))
		}
	}
	for _, name := range append(sortedKeys(a.files), sortedKeys(a.dirs)...) {
		if len(name) > lim.MaxPathLen {
			add("archive.path.length", name, "the path is %d bytes long; at most %d are allowed for this kind of package", len(name), lim.MaxPathLen)
		}
	}
	return probs
}

// loosest returns, field by field, the larger of two limits: what reading must allow
// before the package's kind is known.
func loosest(a, b Limits) Limits {
	return Limits{
		MaxCompressed:   max(a.MaxCompressed, b.MaxCompressed),
		MaxFileSize:     max(a.MaxFileSize, b.MaxFileSize),
		MaxTotalSize:    max(a.MaxTotalSize, b.MaxTotalSize),
		MaxFiles:        max(a.MaxFiles, b.MaxFiles),
		MaxPathLen:      max(a.MaxPathLen, b.MaxPathLen),
		MaxManifestSize: max(a.MaxManifestSize, b.MaxManifestSize),
	}
}

// checkFileName applies the file-name rule. A name ending in ".tar.gz" (or ".tgz", what
// `npm pack` writes) must be exactly "<id>-<version>" plus that suffix; any other name
// only draws a warning, since the registry stores packages under its own names. An empty
// name skips the rule. field names the manifest field holding id ("id" or "name").
func checkFileName(fileName, id, version, field string) problem.List {
	var probs problem.List
	if fileName == "" || id == "" || version == "" {
		return probs
	}
	want := id + "-" + version + ".tar.gz"
	for _, suffix := range []string{".tar.gz", ".tgz"} {
		if strings.HasSuffix(fileName, suffix) {
			if fileName != id+"-"+version+suffix {
				probs.Errorf("package.filename", "", "the file is named %q, but the manifest %s %q and version %q make %q; rename the file or fix the manifest", fileName, field, id, version, want)
			}
			return probs
		}
	}
	probs.Warnf("package.filename", "", "the file is named %q; packages are named \"<%s>-<version>.tar.gz\", here %q", fileName, field, want)
	return probs
}
