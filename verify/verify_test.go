package verify_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/pluginyard/registry/verify"
)

func mustPackage(tb testing.TB, data []byte, opt verify.Options) *verify.Report {
	tb.Helper()
	rep, err := verify.Package(context.Background(), bytes.NewReader(data), opt)
	if err != nil {
		tb.Fatalf("Package: %v", err)
	}
	return rep
}

func TestSmoke(t *testing.T) {
	for _, es := range [][]entry{validPlugin(t), validCanvas(t), npmExtension(), rootExtension()} {
		rep := mustPackage(t, buildTarGz(t, es), verify.Options{})
		t.Log(rep.Kind, rep.ID, rep.Version, rep.Icon != nil, len(rep.README))
		for _, p := range rep.Problems {
			t.Log(p)
		}
	}
}
