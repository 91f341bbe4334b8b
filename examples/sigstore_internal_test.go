package examples

import (
	"bytes"
	"strings"
	"testing"
)

// TestStaleSigstoreBundle: when the example no longer packs to the signed bytes, the demo
// gets the package without a bundle and a message naming the fix, not a refusal.
func TestStaleSigstoreBundle(t *testing.T) {
	var other bytes.Buffer
	if err := Pack("pr-insights", &other); err != nil {
		t.Fatal(err)
	}
	rel, err := sigstoreRelease(other.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if rel.Bundle != nil || !bytes.Equal(rel.Package, other.Bytes()) {
		t.Errorf("stale release: bundle %d bytes, package changed %v; want no bundle and the package as given", len(rel.Bundle), !bytes.Equal(rel.Package, other.Bytes()))
	}
	if rel.Stale == nil || !strings.Contains(rel.Stale.Error(), "-run TestDemoSigstoreBundle -update") {
		t.Errorf("Stale = %v, want the regeneration command", rel.Stale)
	}
}
