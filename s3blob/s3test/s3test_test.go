package s3test

import (
	"fmt"
	"go/build"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of ending the test.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Skip(args ...any)          { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any)         { r.fatal = fmt.Sprint(args...) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = fmt.Sprintf(f, a...) }

// Without versitygw the S3 tests skip, except with CI=true, where they fail saying how to
// install it.
func TestMissingServerSkipsOrFailsInCI(t *testing.T) {
	gopath := build.Default.GOPATH
	t.Cleanup(func() { build.Default.GOPATH = gopath })
	build.Default.GOPATH = t.TempDir()
	t.Setenv("PATH", t.TempDir())
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			binary(r)
			got, other := r.skipped, r.fatal
			if ci == "true" {
				got, other = r.fatal, r.skipped
			}
			if !strings.Contains(got, Install) || other != "" {
				t.Errorf("skipped %q, failed %q; want only the %s one, naming %q", r.skipped, r.fatal, map[string]string{"": "skip", "true": "failure"}[ci], Install)
			}
		})
	}
}
