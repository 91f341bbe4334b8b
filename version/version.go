// Package version is the registry's one version grammar and order: SemVer 2.0.0 without
// build metadata (MAJOR.MINOR.PATCH[-PRERELEASE]), at most MaxLen bytes. Publish refuses
// every other form with the nearest valid version as the fix, and every surface (index,
// API, pages, "latest", sync, CLI) orders versions with Compare.
//
// Build metadata ("+build") is refused rather than ignored: SemVer gives it no precedence,
// so "1.0.0" and "1.0.0+b" would be two immutable releases that compare equal.
package version

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxLen bounds a version's length in bytes (it appears in URLs, file names and headers).
const MaxLen = 64

// V is a parsed version.
type V struct {
	Major, Minor, Patch uint64
	Pre                 []string // dot-separated prerelease identifiers; nil for a release
}

// String renders v in canonical form.
func (v V) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if len(v.Pre) > 0 {
		s += "-" + strings.Join(v.Pre, ".")
	}
	return s
}

// Parse parses s as a strict SemVer 2.0.0 version without build metadata. The error says
// what is wrong in words an author can act on.
func Parse(s string) (V, error) {
	var v V
	if s == "" {
		return v, fmt.Errorf("the version is empty")
	}
	if len(s) > MaxLen {
		return v, fmt.Errorf("the version is %d bytes long, the limit is %d", len(s), MaxLen)
	}
	if strings.HasPrefix(s, "v") || strings.HasPrefix(s, "V") {
		return v, fmt.Errorf("a leading %q is not part of a SemVer version", s[:1])
	}
	if strings.Contains(s, "+") {
		return v, fmt.Errorf("build metadata (\"+...\") is not accepted: it does not change precedence, so two releases would compare equal")
	}
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("expected exactly three dot-separated numbers MAJOR.MINOR.PATCH, found %d", len(parts))
	}
	nums := make([]uint64, 3)
	for i, p := range parts {
		n, err := numeric(p)
		if err != nil {
			return v, fmt.Errorf("%s %q: %v", [3]string{"major", "minor", "patch"}[i], p, err)
		}
		nums[i] = n
	}
	v.Major, v.Minor, v.Patch = nums[0], nums[1], nums[2]
	if hasPre {
		ids := strings.Split(pre, ".")
		for _, id := range ids {
			if err := prereleaseID(id); err != nil {
				return V{}, err
			}
		}
		v.Pre = ids
	}
	return v, nil
}

func numeric(p string) (uint64, error) {
	if p == "" {
		return 0, fmt.Errorf("is empty")
	}
	if strings.TrimLeft(p, "0123456789") != "" {
		return 0, fmt.Errorf("is not a number")
	}
	if len(p) > 1 && p[0] == '0' {
		return 0, fmt.Errorf("has a leading zero")
	}
	n, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("is too large")
	}
	return n, nil
}

func prereleaseID(id string) error {
	if id == "" {
		return fmt.Errorf("a prerelease identifier is empty (two dots, or a trailing dot or dash)")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return fmt.Errorf("prerelease identifier %q may hold only ASCII letters, digits and '-'", id)
		}
	}
	if isDigits(id) && len(id) > 1 && id[0] == '0' {
		return fmt.Errorf("numeric prerelease identifier %q has a leading zero", id)
	}
	return nil
}

func isDigits(s string) bool { return s != "" && strings.TrimLeft(s, "0123456789") == "" }

// Valid reports whether s is in the registry's version grammar.
func Valid(s string) bool {
	_, err := Parse(s)
	return err == nil
}

// Nearest proposes the valid version an author most likely meant: a leading "v" and build
// metadata dropped, leading zeros trimmed, missing MINOR/PATCH filled with 0, a fourth
// number dropped, invalid prerelease characters replaced. It returns "" when nothing close
// exists (no leading number at all).
func Nearest(s string) string {
	if v, err := Parse(s); err == nil {
		return v.String()
	}
	t := strings.TrimSpace(s)
	t = strings.TrimLeft(t, "vV=")
	t, _, _ = strings.Cut(t, "+")
	core, pre, hasPre := strings.Cut(t, "-")
	parts := strings.Split(core, ".")
	nums := make([]string, 0, 3)
	for _, p := range parts {
		d := leadingDigits(p)
		if d == "" {
			break
		}
		d = strings.TrimLeft(d, "0")
		if d == "" {
			d = "0"
		}
		if len(d) > 18 {
			return ""
		}
		nums = append(nums, d)
		if len(nums) == 3 || !isDigits(p) { // a part with more after its digits ends the core
			break
		}
	}
	if len(nums) == 0 {
		return ""
	}
	for len(nums) < 3 {
		nums = append(nums, "0")
	}
	out := strings.Join(nums, ".")
	if hasPre {
		var ids []string
		for _, id := range strings.Split(pre, ".") {
			id = strings.Map(func(r rune) rune {
				if r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
					return r
				}
				return -1
			}, id)
			if isDigits(id) {
				id = strings.TrimLeft(id, "0")
				if id == "" {
					id = "0"
				}
			}
			if id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			out += "-" + strings.Join(ids, ".")
		}
	}
	if len(out) > MaxLen || !Valid(out) {
		return ""
	}
	return out
}

func leadingDigits(p string) string {
	i := 0
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	return p[:i]
}

// Compare orders a and b by SemVer 2.0.0 precedence and returns -1, 0 or 1. Versions outside
// the grammar (releases stored before it was enforced) sort below every valid version and
// among themselves byte-wise, so the order is total and "latest" is always a valid version
// when one exists.
func Compare(a, b string) int {
	va, ea := Parse(a)
	vb, eb := Parse(b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return va.Compare(vb)
}

// Compare orders v and w by SemVer precedence.
func (v V) Compare(w V) int {
	for _, d := range [3][2]uint64{{v.Major, w.Major}, {v.Minor, w.Minor}, {v.Patch, w.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(v.Pre) == 0 && len(w.Pre) == 0:
		return 0
	case len(v.Pre) == 0:
		return 1
	case len(w.Pre) == 0:
		return -1
	}
	for i := 0; i < min(len(v.Pre), len(w.Pre)); i++ {
		if c := compareID(v.Pre[i], w.Pre[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(v.Pre) < len(w.Pre):
		return -1
	case len(v.Pre) > len(w.Pre):
		return 1
	}
	return 0
}

func compareID(a, b string) int {
	an, bn := isDigits(a), isDigits(b)
	switch {
	case an && bn:
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}
