package ingest

import (
	"slices"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/version"
)

// sameVersion reports whether a stored version and a new one name the same release: equal
// by version.Compare, or a stored version outside the grammar (a legacy "v1.0.0",
// "1.0.0+build", "01.0.0") whose nearest valid form is the new one. Publishing it again
// would give two immutable releases a host cannot tell apart.
func sameVersion(stored, v string) bool {
	if version.Compare(stored, v) == 0 {
		return true
	}
	return !version.Valid(stored) && version.Nearest(stored) != "" && version.Nearest(stored) == version.Nearest(v)
}

// Legacy reports whether a stored release's version is outside the version grammar: it
// was published before the grammar was enforced, stays downloadable by its exact URL, and
// sorts below every valid version.
func Legacy(r *store.Release) bool { return !version.Valid(r.Version) }

// SortReleases orders releases newest version first, by version.Compare (the order of
// "latest"), ties by publication.
func SortReleases(rels []*store.Release) {
	slices.SortStableFunc(rels, func(a, b *store.Release) int {
		if c := version.Compare(b.Version, a.Version); c != 0 {
			return c
		}
		return b.CreatedAt.Compare(a.CreatedAt)
	})
}
