package manifest

import (
	"strconv"
	"strings"
)

// releaseVersion parses a min_kandev_version: up to three dot-separated non-negative
// integers with an optional leading "v". Prerelease and build suffixes are not release
// values and are refused, as the host's compatibility check refuses them.
func releaseVersion(raw string) ([]int, bool) {
	v := raw
	if strings.HasPrefix(v, "v") || strings.HasPrefix(v, "V") {
		v = v[1:]
	}
	parts := strings.Split(v, ".")
	if len(parts) > 3 {
		return nil, false
	}
	out := make([]int, 3)
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" || len(p) > 9 {
			return nil, false
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// atLeast reports whether release version a is at least b.
func atLeast(a, b []int) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}
