package ingest

import (
	"strconv"
	"strings"
)

// CompareVersions orders versions the way Kandev hosts do: dotted numeric segments
// (a leading "v" ignored) compared as numbers, a release above its prereleases, and a
// whole-string comparison when either side is not numeric. It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
	an, apre, aok := splitVersion(a)
	bn, bpre, bok := splitVersion(b)
	if !aok || !bok {
		return strings.Compare(a, b)
	}
	for i := 0; i < max(len(an), len(bn)); i++ {
		x, y := seg(an, i), seg(bn, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case apre == bpre:
		return 0
	case apre == "":
		return 1
	case bpre == "":
		return -1
	}
	return strings.Compare(apre, bpre)
}

func seg(s []int, i int) int {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func splitVersion(v string) ([]int, string, bool) {
	v = strings.TrimPrefix(v, "v")
	v, _, _ = strings.Cut(v, "+")
	core, pre, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, "", false
		}
		nums[i] = n
	}
	return nums, pre, true
}
