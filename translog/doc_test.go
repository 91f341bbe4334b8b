package translog_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pluginyard/registry/translog"
)

// TestKindsAreDocumented ties docs/transparency.md to the record kinds: each kind the
// registry writes has a row in its table, and a checkpoint's route and tile height are
// the ones served.
func TestKindsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/transparency.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range translog.Kinds {
		if !strings.Contains(doc, "`"+string(k)+"`") {
			t.Errorf("docs/transparency.md does not name the record kind `%s`", k)
		}
	}
	if !strings.Contains(doc, "/log/tile/"+string(rune('0'+translog.TileHeight))+"/") {
		t.Errorf("docs/transparency.md does not give the tile height %d", translog.TileHeight)
	}
}
