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

// semverProblem explains why v is not a SemVer 2.0.0 version, or returns "".
func semverProblem(v string) string {
	core, build, hasBuild := strings.Cut(v, "+")
	if hasBuild {
		if why := identifiers(build, "build metadata", false); why != "" {
			return why
		}
	}
	core, pre, hasPre := strings.Cut(core, "-")
	if hasPre {
		if why := identifiers(pre, "pre-release", true); why != "" {
			return why
		}
	}
	nums := strings.Split(core, ".")
	if len(nums) != 3 {
		return "it needs exactly three numbers MAJOR.MINOR.PATCH"
	}
	for _, n := range nums {
		if !isNumeric(n) {
			return "MAJOR, MINOR and PATCH must be non-negative integers"
		}
		if len(n) > 1 && n[0] == '0' {
			return "numbers must not have leading zeros"
		}
	}
	return ""
}

// identifiers checks a dot-separated pre-release or build list; numeric pre-release
// identifiers must not have leading zeros.
func identifiers(s, what string, numericRule bool) string {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return what + " has an empty identifier"
		}
		for _, r := range id {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return what + " identifiers use only 0-9, A-Z, a-z and '-'"
			}
		}
		if numericRule && isNumeric(id) && len(id) > 1 && id[0] == '0' {
			return what + " numeric identifiers must not have leading zeros"
		}
	}
	return ""
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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
