package ingest

import (
	"fmt"
	"strings"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/version"
)

// maxFileName bounds an upload's file name, as file systems do.
const maxFileName = 255

// packageSuffixes are the accepted endings of an upload's file name (`npm pack` writes .tgz).
var packageSuffixes = []string{".tar.gz", ".tgz"}

// PackageFileName is the name a package is uploaded and served under:
// "<file id>-<version>.tar.gz" (see FileID).
func PackageFileName(id, version string) string { return FileID(id) + "-" + version + ".tar.gz" }

// target is the listed package an upload's file name names, resolved from the name and
// the curated list alone, before any byte of the package is read.
type target struct {
	ID        string // the listed id (plugin id or extension name)
	Version   string
	Extension bool
	Listing   listing
	Allowed   bool // the actor may publish it
}

// resolveTarget authorises an upload from its file name: the name must be
// "<file id>-<version>.tar.gz", the file id a listed package (exactly one), and the actor
// allowed to publish it. Its cost depends on the name and the list, never on the package.
//
// A name can split at more than one "-" into a listed file id and a valid version when one
// listed id is another plus "-<version>" (kit and kit-1.0.0 in "kit-1.0.0-0.1.0.tar.gz").
// Every such split is returned, marked Allowed when the actor may publish it; the upload is
// refused unless one is. When more than one is listed, the package's manifest decides
// (matches), since nothing before it tells them apart.
func (s *Service) resolveTarget(a Actor, fileName string) ([]target, error) {
	stem, err := fileStem(fileName)
	if err != nil {
		return nil, err
	}
	l := s.List()
	var first string    // the first split with a valid version, for the refusal
	var listed []target // every split whose file id is listed
	for i := 0; i < len(stem); i++ {
		if stem[i] != '-' || !version.Valid(stem[i+1:]) {
			continue
		}
		fileID, ver := stem[:i], stem[i+1:]
		if first == "" {
			first = fileID
		}
		found := listedByFile(l, fileID)
		if len(found) > 1 {
			return nil, refuseOne(ErrConflict, "publish.file_id.collision", "", "the file id %q is shared by %s in plugins.yaml: their download URLs would be the same; rename one of them", fileID, strings.Join(describe(found), " and "))
		}
		for _, t := range found {
			t.Version = ver
			listed = append(listed, t)
		}
	}
	switch {
	case first == "":
		return nil, badFileName(fileName, "it does not end in \"-<version>\" with a SemVer 2.0.0 version (MAJOR.MINOR.PATCH[-PRERELEASE], no leading \"v\")"+nearestHint(stem))
	case len(listed) == 0:
		return nil, s.unlisted(fileName, stem, first)
	}
	allowed := 0
	for i := range listed {
		if listed[i].Allowed = mayPublish(a, listed[i].ID, listed[i].Listing.Owners); listed[i].Allowed {
			allowed++
		}
	}
	if allowed == 0 {
		return nil, forbidden(a, listed)
	}
	return listed, nil
}

// unlisted refuses a file name whose id (first, its first reading) no entry lists. It never
// proposes an entry that plugins.yaml would refuse: an id in upper case that is listed in
// lower case gets the corrected file name, any other invalid id the id pattern.
func (s *Service) unlisted(fileName, stem, first string) error {
	if lower := strings.ToLower(stem); lower != stem {
		for i := 0; i < len(lower); i++ {
			if lower[i] == '-' && version.Valid(stem[i+1:]) && len(listedByFile(s.List(), lower[:i])) > 0 {
				return refuseOne(ErrForbidden, "publish.unlisted", "", "%q (from the file name %q) is not listed in this registry's plugins.yaml, but %q is: ids are lower case; upload the package as %q", stem[:i], fileName, lower[:i], lower[:i]+"-"+stem[i+1:]+strings.TrimPrefix(fileName, stem))
			}
		}
	}
	if !index.ValidID(first) {
		return refuseOne(ErrForbidden, "publish.unlisted", "", "%q (from the file name %q) is not a listed id, nor can it be one: ids match %s (lower case letters, digits, '.', '_', '-'); name the file after the manifest's id, \"<id>-<version>.tar.gz\"", first, fileName, index.IDPattern)
	}
	return refuseOne(ErrForbidden, "publish.unlisted", "", "%q (from the file name %q) is not listed in this registry's plugins.yaml: add an entry (plugins: id: %s, or extensions: name: ...) with repo: owner/name, then reload (POST /api/v1/admin/reload or SIGHUP)", first, fileName, first)
}

// forbidden refuses actor a every one of ts, the listed packages a file name can name.
func forbidden(a Actor, ts []target) error {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = fmt.Sprintf("%q", t.ID)
	}
	return refuseOne(ErrForbidden, "publish.forbidden", "", "%s may not publish %s: a publisher token needs its publisher in the entry's owners, an upload token needs the id in its scope", a.Name, strings.Join(ids, " or "))
}

// fileStem checks the file name's form and returns it without its suffix.
func fileStem(name string) (string, error) {
	switch {
	case name == "":
		return "", refuseOne(ErrInvalid, "publish.filename", "", "the upload has no file name: send the package as the file part \"package\" with filename=\"<id>-<version>.tar.gz\", e.g. \"acme-hello-1.2.0.tar.gz\" (an extension @scope/name as \"scope-name-1.2.0.tar.gz\")")
	case len(name) > maxFileName:
		return "", badFileName(name[:32]+"...", fmt.Sprintf("it is %d bytes long, the limit is %d", len(name), maxFileName))
	case strings.ContainsAny(name, "/\\"):
		return "", badFileName(name, "it holds a path separator")
	}
	for _, suffix := range packageSuffixes {
		if stem, ok := strings.CutSuffix(name, suffix); ok {
			return stem, nil
		}
	}
	return "", badFileName(name, "it does not end in .tar.gz")
}

// claimedTarget names what a file name claims, "id@version" when it parses, for the audit
// log of a refusal that came before the package was read.
func claimedTarget(fileName string) string {
	stem, err := fileStem(fileName)
	if err != nil {
		return fileName
	}
	for i := 0; i < len(stem); i++ {
		if stem[i] == '-' && version.Valid(stem[i+1:]) {
			return stem[:i] + "@" + stem[i+1:]
		}
	}
	return fileName
}

func badFileName(name, why string) *Refusal {
	return refuseOne(ErrInvalid, "publish.filename", "", "the upload's file name %q is not accepted: %s; packages are uploaded as \"<id>-<version>.tar.gz\", e.g. \"acme-hello-1.2.0.tar.gz\" (an extension @scope/name as \"scope-name-1.2.0.tar.gz\")", name, why)
}

// nearestHint proposes the valid version closest to what follows the first "-<digit>" or
// "-v<digit>" of stem.
func nearestHint(stem string) string {
	for i := 0; i+1 < len(stem); i++ {
		if stem[i] != '-' {
			continue
		}
		rest := stem[i+1:]
		if c := strings.TrimLeft(rest, "vV"); c != "" && c[0] >= '0' && c[0] <= '9' {
			if n := version.Nearest(rest); n != "" {
				return fmt.Sprintf("; did you mean %q?", stem[:i]+"-"+n+".tar.gz")
			}
			return ""
		}
	}
	return ""
}

// listedByFile returns every listed package whose file id is fileID: a plugin id, or an
// extension name in its file form.
func listedByFile(l *index.List, fileID string) []target {
	if l == nil {
		return nil
	}
	var out []target
	if e, ok := l.Plugin(fileID); ok {
		out = append(out, target{ID: e.ID, Listing: listing{Kind: e.Kind, Repo: e.Repo, Owners: e.Owners, Signing: e.Signing}})
	}
	for i := range l.Extensions {
		if e := &l.Extensions[i]; FileID(e.Name) == fileID {
			out = append(out, target{ID: e.Name, Extension: true, Listing: listing{Repo: e.Repo, Owners: e.Owners, Signing: e.Signing}})
		}
	}
	return out
}

func describe(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		kind := "plugin"
		if t.Extension {
			kind = "extension"
		}
		out[i] = fmt.Sprintf("%s %q", kind, t.ID)
	}
	return out
}
