package extension

import (
	"strconv"
	"strings"
)

// npmNameProblem explains why name is not a valid npm package name, or returns "".
// Rules: at most 214 characters; lower case; an optional "@scope/" prefix; each part
// non-empty, made of a-z 0-9 - . _ ~, and not starting with '.' or '_'.
func npmNameProblem(name string) string {
	if len(name) > 214 {
		return "it is longer than 214 characters"
	}
	if strings.ToLower(name) != name {
		return "it has upper-case letters; npm names are lower case"
	}
	rest := name
	if strings.HasPrefix(name, "@") {
		scope, pkg, ok := strings.Cut(name[1:], "/")
		if !ok {
			return "a scoped name is \"@scope/name\""
		}
		if why := npmPartProblem(scope, "scope"); why != "" {
			return why
		}
		rest = pkg
	}
	return npmPartProblem(rest, "name")
}

func npmPartProblem(part, what string) string {
	if part == "" {
		return "the " + what + " is empty"
	}
	if part[0] == '.' || part[0] == '_' {
		return "the " + what + " starts with '.' or '_'"
	}
	for _, r := range part {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return "the " + what + " holds " + strconv.QuoteRune(r) + "; use a-z, 0-9, '-', '.', '_' or '~'"
		}
	}
	return ""
}

// isIdentifier reports whether s is identifier-like: a letter, then letters, digits,
// '-' or '_', at most 64 characters.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(r >= '0' && r <= '9') && r != '-' && r != '_' {
			return false
		}
	}
	return true
}
