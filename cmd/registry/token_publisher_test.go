package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

// TestTokenCreateRefusesAnInvalidPublisher: `registry token create` refuses a publisher
// name no owner in plugins.yaml can have, naming the flag, the pattern and the fix.
func TestTokenCreateRefusesAnInvalidPublisher(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	c, out, errOut := testCLI(nil)
	if code := cmdToken(ctx, c, []string{"create", "--publisher", "al ice", "--data", dir}); code != exitUsage {
		t.Fatalf("create --publisher \"al ice\": exit %d, want %d; stderr %s", code, exitUsage, errOut)
	}
	if out.String() != "" {
		t.Errorf("a secret was printed for a refused publisher: %q", out)
	}
	for _, want := range []string{"--publisher", `"al ice"`, "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", "as plugins.yaml lists it"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr %q does not name %q", errOut, want)
		}
	}
}
