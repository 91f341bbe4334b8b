package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/readme"
	"github.com/pluginyard/registry/version"
)

// RuleChangelogTruncated is the warning recorded on a release whose CHANGELOG.md was longer
// than readme.MaxMarkdown: pages show its start, with a note.
const RuleChangelogTruncated = "changelog.truncated"

// MaxNotes bounds the Markdown of one version's release notes: the versions table shows
// the notes of many releases on one page. Longer notes are cut at a line break, with a note.
const MaxNotes = 16 << 10

// MaxNotesHTML bounds the HTML of one version's release notes: a page shows up to
// MaxNotesVersions of them. Notes whose HTML is longer are replaced by a notice.
const MaxNotesHTML = 64 << 10

// NotesTruncatedClass marks the note appended to cut release notes.
const NotesTruncatedClass = "notes-truncated"

// SetChangelog records a release's CHANGELOG.md, rendered by readme.Render, and the section
// whose heading names the release's version (see ChangelogSection), rendered, as its
// release notes. Publish calls it once; pages show what it stored.
func (r *Release) SetChangelog(markdown []byte) error {
	r.Changelog, r.ChangelogHTML, r.NotesHTML = markdown, nil, nil
	if markdown == nil {
		return nil
	}
	res, err := readme.RenderLimited(markdown, readme.MaxHTML)
	if err != nil {
		return fmt.Errorf("store: %s@%s CHANGELOG.md: %w", r.PackageID, r.Version, err)
	}
	r.ChangelogHTML = res.HTML
	switch {
	case res.Oversize:
		r.ChangelogHTML = readme.OversizeNotice("CHANGELOG.md", len(markdown), readme.MaxHTML)
		r.Warnings = append(r.Warnings, oversizeWarning(RuleChangelogTruncated, "CHANGELOG.md", len(markdown)))
	case res.Truncated:
		r.Warnings = append(r.Warnings, problem.Problem{Rule: RuleChangelogTruncated, File: "CHANGELOG.md", Severity: problem.Warning,
			Message: fmt.Sprintf("CHANGELOG.md is %d bytes; pages show its first %d KiB of Markdown, cut at a line break, with a note; move older entries into a separate file",
				len(markdown), readme.MaxMarkdown>>10)})
	}
	notes := ChangelogSection(markdown, r.Version)
	if notes == nil {
		return nil
	}
	cut, clipped := clipLines(notes, MaxNotes)
	nr, err := readme.RenderLimited(cut, MaxNotesHTML)
	if err != nil {
		return fmt.Errorf("store: %s@%s release notes: %w", r.PackageID, r.Version, err)
	}
	if nr.Oversize {
		r.NotesHTML = readme.OversizeNotice("version's notes", len(notes), MaxNotesHTML)
		return nil
	}
	r.NotesHTML = nr.HTML
	if clipped {
		r.NotesHTML = fmt.Appendf(r.NotesHTML, `<p class="%s"><em>These notes are %d bytes long; the first %d are shown. The changelog below has the rest.</em></p>`+"\n",
			NotesTruncatedClass, len(notes), len(cut))
	}
	return nil
}

// ChangelogSection returns the body of the first ATX heading ("## [1.2.0] - 2026-01-31")
// whose first version-like word is v (a leading "v" and surrounding brackets ignored), up
// to the next heading of the same or a higher level, without surrounding blank lines; nil
// when no heading names v or its section is empty. Lines inside fenced code are not
// headings. It reads each line once.
func ChangelogSection(markdown []byte, v string) []byte {
	want := strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	if want == "" {
		return nil
	}
	start, level, fence := -1, 0, ""
	end := len(markdown)
	for pos := 0; pos < len(markdown); {
		line, next := nextLine(markdown, pos)
		if f := fenceOf(line); f != "" && (fence == "" || strings.HasPrefix(f, fence)) {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
		} else if fence == "" {
			if n, text := atxHeading(line); n > 0 {
				if start >= 0 && n <= level {
					end = pos
					break
				}
				if start < 0 && headingVersion(text) == want {
					start, level = next, n
				}
			}
		}
		pos = next
	}
	if start < 0 {
		return nil
	}
	body := bytes.Trim(markdown[start:end], "\r\n \t")
	if len(body) == 0 {
		return nil
	}
	return body
}

func nextLine(b []byte, pos int) (line []byte, next int) {
	i := bytes.IndexByte(b[pos:], '\n')
	if i < 0 {
		return b[pos:], len(b)
	}
	return b[pos : pos+i], pos + i + 1
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, possibly longer), or "".
func fenceOf(line []byte) string {
	t := string(line)
	for i := 0; i < 3 && strings.HasPrefix(t, " "); i++ {
		t = t[1:]
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}

// atxHeading returns the level and text of an ATX heading line, or 0.
func atxHeading(line []byte) (int, string) {
	t := string(bytes.TrimRight(line, "\r"))
	indent := len(t) - len(strings.TrimLeft(t, " "))
	if indent > 3 {
		return 0, ""
	}
	t = t[indent:]
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, ""
	}
	return n, t[n:]
}

// headingVersion is the first word of a heading that is the version it names: a word in
// the version grammar, after a leading "v" and brackets, emphasis and link syntax around it
// are dropped. "" when the heading names none.
func headingVersion(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("[]()<>,;:*_`|", r)
	})
	for _, w := range words {
		w = strings.TrimPrefix(strings.TrimPrefix(w, "v"), "V")
		if w != "" && w[0] >= '0' && w[0] <= '9' && version.Valid(w) { // Valid formats an error for every other word
			return w
		}
	}
	return ""
}

// clipLines returns at most limit bytes of src, cut after its last line break in range
// (or at limit when there is none, moved back to a UTF-8 boundary).
func clipLines(src []byte, limit int) ([]byte, bool) {
	if len(src) <= limit {
		return src, false
	}
	head := src[:limit]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1], true
	}
	cut := limit
	for cut > 0 && src[cut]&0xC0 == 0x80 {
		cut--
	}
	return src[:cut], true
}

// changelogHTMLColumn is the rendered changelog, NULL only without a CHANGELOG.md.
func changelogHTMLColumn(rel *Release) any {
	switch {
	case rel.Changelog == nil:
		return nil
	case rel.ChangelogHTML == nil:
		return []byte{}
	}
	return rel.ChangelogHTML
}

// ChangelogHTML returns the rendered CHANGELOG.md of one release; nil when it has none.
func (s *Store) ChangelogHTML(ctx context.Context, releaseID int64) ([]byte, error) {
	return s.renderedHTML(ctx, "changelog_html", "changelog", releaseID)
}

// MaxNotesVersions bounds the versions one ReleaseNotes call looks up.
const MaxNotesVersions = 100

// ReleaseNotes returns the rendered release notes of the named versions of a package that
// have any, by version. At most MaxNotesVersions versions are looked up.
func (s *Store) ReleaseNotes(ctx context.Context, packageID string, versions []string) (map[string][]byte, error) {
	versions = versions[:min(len(versions), MaxNotesVersions)]
	out := map[string][]byte{}
	if len(versions) == 0 {
		return out, nil
	}
	args := []any{packageID}
	for _, v := range versions {
		args = append(args, v)
	}
	q := "SELECT version, notes_html FROM releases WHERE package_id = ? AND notes_html IS NOT NULL AND version IN (?" +
		strings.Repeat(", ?", len(versions)-1) + ")"
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: release notes of %s: %w", packageID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			v    string
			html []byte
		)
		if err := rows.Scan(&v, &html); err != nil {
			return nil, fmt.Errorf("store: release notes of %s: %w", packageID, err)
		}
		if len(html) > 0 {
			out[v] = html
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: release notes of %s: %w", packageID, err)
	}
	return out, nil
}
