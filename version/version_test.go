package version_test

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/version"
)

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", "v1.0.0", "V1.0.0", "1.0.0+build", "1.0.0.0", "01.0.0", "1.01.0", "1.0.01",
		"1.0", "1", "1.0.0-", "1.0.0-a..b", "1.0.0-01", "1.0.0?x#y", `1.0.0";evil="`, "1.0.0-\u202e", "1.0.0\x1b",
		"1.0.0-" + string(make([]byte, 60)), "a.b.c", "1.0.0 ", " 1.0.0", "18446744073709551616.0.0"} {
		if version.Valid(s) {
			t.Errorf("Valid(%q) = true, want false", s)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	for _, s := range []string{"0.0.0", "1.0.0", "1.2.3-alpha", "1.2.3-alpha.1", "1.2.3-0.3.7", "1.2.3-x-y-z.--", "10.20.30-rc.1"} {
		v, err := version.Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if v.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, v.String())
		}
	}
}

func TestNearest(t *testing.T) {
	for in, want := range map[string]string{
		"v1.0.0": "1.0.0", "1.0.0+build": "1.0.0", "1.0.0.0": "1.0.0", "01.0.0": "1.0.0", "1.0": "1.0.0",
		"1.0.0?x#y": "1.0.0", `1.0.0";evil="`: "1.0.0", "1.2.3-rc_1": "1.2.3-rc1", "1.0.0-\u202e": "1.0.0",
		"banana": "", "1.2.3": "1.2.3", "00.92.0": "0.92.0", "1.00.3": "1.0.3", "0.000.7-rc.1": "0.0.7-rc.1",
	} {
		if got := version.Nearest(in); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCompareOrder is the SemVer 2.0.0 §11 example list plus stored legacy versions, which
// sort below every valid one.
func TestCompareOrder(t *testing.T) {
	want := []string{"1.0.0.0", "v2.0.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.9.0", "1.10.0", "2.0.0"}
	got := append([]string(nil), want...)
	sort.Slice(got, func(i, j int) bool { return got[len(got)-1-i] < got[len(got)-1-j] }) // scramble
	sort.SliceStable(got, func(i, j int) bool { return version.Compare(got[i], got[j]) < 0 })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if version.Compare("1.0.0", "1.0.0") != 0 || version.Compare("2.0.0", "10.0.0") != -1 {
		t.Error("Compare on equal or numeric versions is wrong")
	}
}
