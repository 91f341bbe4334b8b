package verify_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/verify"
)

// TestPassesShareNoState: a pass reuses the buffers and the gzip reader of the passes
// before it (archive.go), so each package is checked in two orders, one after another on
// the same goroutine, between packages that failed in the gzip layer at different points;
// every package gets the same findings, digest and size in both orders, as on its own.
func TestPassesShareNoState(t *testing.T) {
	valid := buildTarGz(t, validPlugin(t))
	corrupt := bytes.Clone(valid)
	for i := len(corrupt) / 3; i < len(corrupt)/2; i++ {
		corrupt[i] ^= 0x5a
	}
	truncated := valid[:len(valid)*2/3]
	trailing := append(bytes.Clone(valid), gz(t, []byte("appended after the end"))...)
	other := buildTarGz(t, append(validPlugin(t)[:0:0], validPlugin(t)[1:]...)) // manifest missing
	packages := map[string][]byte{"valid": valid, "corrupt": corrupt, "truncated": truncated, "trailing": trailing, "other": other}
	order := []string{"valid", "corrupt", "valid", "truncated", "trailing", "valid", "other", "corrupt", "valid"}
	type outcome struct {
		Findings []finding
		SHA256   string
		Size     int64
	}
	check := func(name string) outcome {
		rep := mustPackage(t, packages[name], verify.Options{})
		return outcome{ownFindings(rep.Problems), rep.SHA256, rep.Size}
	}
	alone := map[string]outcome{}
	for name := range packages {
		alone[name] = check(name)
	}
	if len(alone["valid"].Findings) != 0 || len(alone["corrupt"].Findings) == 0 || len(alone["truncated"].Findings) == 0 ||
		len(alone["trailing"].Findings) == 0 {
		t.Fatalf("the packages do not fail as the test needs: %+v", alone)
	}
	for round, names := range [][]string{order, reversed(order)} {
		for i, name := range names {
			if d := cmp.Diff(alone[name], check(name), sortFindings); d != "" {
				t.Errorf("round %d, package %d (%s) after %v (-alone +here):\n%s", round, i, name, names[:i], d)
			}
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
