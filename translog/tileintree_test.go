package translog

import (
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// TestTileInTreeHighLevels: a tile whose level puts its first hash beyond the tree is out
// of range however high the level (a shift of 64 once wrapped to 0 and passed).
func TestTileInTreeHighLevels(t *testing.T) {
	for _, tt := range []struct {
		tile tlog.Tile
		size int64
		want bool
	}{
		{tlog.Tile{H: 8, L: 0, N: 0, W: 256}, 300, true},
		{tlog.Tile{H: 8, L: 0, N: 1, W: 44}, 300, true},
		{tlog.Tile{H: 8, L: 0, N: 1, W: 45}, 300, false},
		{tlog.Tile{H: 8, L: 1, N: 0, W: 1}, 300, true},
		{tlog.Tile{H: 8, L: 1, N: 0, W: 2}, 300, false},
		{tlog.Tile{H: 8, L: 8, N: 0, W: 1}, 300, false},
		{tlog.Tile{H: 8, L: 9, N: 0, W: 256}, 1 << 62, false},
		{tlog.Tile{H: 8, L: -1, N: 1, W: 44}, 300, true},
	} {
		if got := TileInTree(tt.tile, tt.size); got != tt.want {
			t.Errorf("TileInTree(%+v, %d) = %v, want %v", tt.tile, tt.size, got, tt.want)
		}
	}
}
