package web

import "strconv"

// RepoStats are the source repository's forge statistics, as the last sync saw them.
type RepoStats struct {
	Stars    *int   // nil when not known
	PushedAt string // the last push, YYYY-MM-DD; "" when not known
}

// StoredChangelog wraps a release's stored changelog or release-notes HTML
// (store.Release.ChangelogHTML, NotesHTML), which readme.Render sanitized at publish.
func StoredChangelog(html []byte) HTML { return HTML{s: string(html)} }

func starsText(n int) string {
	if n == 1 {
		return "1 star on GitHub"
	}
	return fullCount(n) + " stars on GitHub"
}

func itoa(n int) string { return strconv.Itoa(n) }
