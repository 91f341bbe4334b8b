package extension

import "strings"

// FileID is the form of an extension name used in package file names and URL paths, as
// `npm pack` names tarballs: "@scope/name" becomes "scope-name"; other names (an "@" without a scope slash too) (and every
// Kandev plugin id) are unchanged.
func FileID(name string) string {
	if scoped, ok := strings.CutPrefix(name, "@"); ok {
		if scope, rest, ok := strings.Cut(scoped, "/"); ok {
			return scope + "-" + rest
		}
	}
	return name
}
