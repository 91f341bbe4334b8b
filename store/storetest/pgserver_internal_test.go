package storetest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// outcome records how StartPostgres ended a test: failed, skipped or neither.
type outcome struct {
	testing.TB
	fatal, skip string
}

func (o *outcome) Helper() {}

func (o *outcome) Fatalf(format string, args ...any) {
	o.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcome) Skipf(format string, args ...any) {
	o.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// startWithoutBinaries runs StartPostgres where no PostgreSQL binaries can be found.
func startWithoutBinaries(t *testing.T, ci string) *outcome {
	old := binGlob
	binGlob = t.TempDir() + "/*/bin"
	t.Cleanup(func() { binGlob = old })
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", ci)
	o := &outcome{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		StartPostgres(o)
	}()
	<-done
	return o
}

// TestStartPostgresWithoutBinaries: without the server binaries the harness skips, naming
// what to install, except with CI=true, where it fails instead.
func TestStartPostgresWithoutBinaries(t *testing.T) {
	for _, tt := range []struct {
		ci         string
		fatal      bool
		wantInText string
	}{
		{"true", true, "with CI=true the PostgreSQL tests must run"},
		{"", false, "apt-get install postgresql"},
		{"false", false, "apt-get install postgresql"},
	} {
		o := startWithoutBinaries(t, tt.ci)
		got := o.skip
		if tt.fatal {
			got = o.fatal
		}
		if (o.fatal != "") != tt.fatal || (o.skip != "") == tt.fatal || !strings.Contains(got, tt.wantInText) {
			t.Errorf("CI=%q: failed with %q, skipped with %q; want it to %s, saying %q", tt.ci, o.fatal, o.skip,
				map[bool]string{true: "fail", false: "skip"}[tt.fatal], tt.wantInText)
		}
	}
}
