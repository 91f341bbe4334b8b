package verify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pluginyard/registry/problem"
)

// checkLimits applies the limits of the package's kind once the kind is known. Reading
// already stopped at the loosest limits, so this only reports what a tighter kind (a
// canvas) refuses; the counts are the ones tracked while streaming. kind is the Report's
// Kind ("plugin" when the manifest did not parse), named in every message.
func checkLimits(a *archive, lim Limits, kind, manifestFile string, compressed int64) problem.List {
	var probs problem.List
	add := func(rule, file, format string, args ...any) {
		probs.Errorf(rule, "", format, args...)
		probs[len(probs)-1].File = file
	}
	k := kindPhrase(kind)
	if compressed > lim.MaxCompressed {
		add("archive.limit.compressed", "", "the package is %s compressed; %s may be at most %s compressed", FormatSize(compressed), k, FormatSize(lim.MaxCompressed))
	}
	if a.total > lim.MaxTotalSize {
		add("archive.limit.total", "", "the files add up to %s decompressed; %s may hold at most %s decompressed", FormatSize(a.total), k, FormatSize(lim.MaxTotalSize))
	}
	if len(a.files) > lim.MaxFiles {
		add("archive.limit.files", "", "the package has %d files; %s may have at most %d", len(a.files), k, lim.MaxFiles)
	}
	if len(a.dirs) > lim.MaxFiles {
		add("archive.limit.files", "", "the package has %d directory entries; %s may have at most %d", len(a.dirs), k, lim.MaxFiles)
	}
	if n := a.files[manifestFile].Size; n > lim.MaxManifestSize {
		add("archive.limit.manifest", manifestFile, "the manifest is %s; in %s it may be at most %s", FormatSize(n), k, FormatSize(lim.MaxManifestSize))
	}
	for _, name := range sortedKeys(a.files) {
		if n := a.files[name].Size; n > lim.MaxFileSize {
			add("archive.limit.file", name, "the file is %s; %s may hold files of at most %s each", FormatSize(n), k, FormatSize(lim.MaxFileSize))
		}
	}
	for _, name := range append(sortedKeys(a.files), sortedKeys(a.dirs)...) {
		if len(name) > lim.MaxPathLen {
			add("archive.path.length", name, "the path is %d bytes long; %s may have paths of at most %d bytes", len(name), k, lim.MaxPathLen)
		}
	}
	return probs
}

// kindPhrase names the kind of package a limit applies to: "a canvas package".
func kindPhrase(kind string) string {
	switch kind {
	case KindCanvas:
		return "a canvas package"
	case KindExtension:
		return "an extension package"
	}
	return "a plugin package"
}

// FormatSize renders a byte count in the one style of every size message: whole bytes
// below 1 KiB ("512 bytes"), an exact KiB or MiB figure as it is ("64 KiB", "10 MiB"), and
// any other figure rounded to a tenth with the exact count beside it
// ("6.2 MiB (6 502 400 bytes)").
func FormatSize(n int64) string {
	const kib, mib = 1 << 10, 1 << 20
	switch {
	case n < kib:
		return fmt.Sprintf("%d bytes", n)
	case n%mib == 0:
		return fmt.Sprintf("%d MiB", n/mib)
	case n < mib && n%kib == 0:
		return fmt.Sprintf("%d KiB", n/kib)
	case n < mib:
		return fmt.Sprintf("%.1f KiB (%s bytes)", float64(n)/kib, groupDigits(n))
	}
	return fmt.Sprintf("%.1f MiB (%s bytes)", float64(n)/mib, groupDigits(n))
}

// groupDigits writes n with a space between groups of three digits: 6 502 400.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
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
