package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/translog"
)

// writeLogFiles writes what an audit of the mirror reads, as static files at the paths the
// registry serves them: the documents' signatures, log/checkpoint, and every hash and data
// tile of the checkpoint's tree. Nothing when no log is wired.
func (s *Service) writeLogFiles(ctx context.Context, root string) ([]exportFile, error) {
	out := map[string][]byte{}
	for _, doc := range []string{KandevDocument, CurupiraDocument} {
		msg, err := s.IndexSignature(doc)
		if errors.Is(err, ErrIndexUnsigned) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ingest: export: %w", err)
		}
		out[doc+".sig"] = msg
	}
	if s.cfg.LogCheckpoint != nil && s.cfg.LogTile != nil {
		cp, err := s.cfg.LogCheckpoint(ctx)
		if err != nil {
			return nil, fmt.Errorf("ingest: export: %w", err)
		}
		out["log/checkpoint"] = cp.Note
		for _, t := range exportTiles(cp.Size) {
			data, err := s.cfg.LogTile(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("ingest: export log/%s: %w", t.Path(), err)
			}
			out["log/"+t.Path()] = data
		}
	}
	files := make([]exportFile, 0, len(out))
	for rel, data := range out {
		rel = filepath.FromSlash(rel)
		if err := writeExportFile(filepath.Join(root, rel), data); err != nil {
			return nil, err
		}
		files = append(files, exportFile{rel: rel, sha: hexSum(data), n: int64(len(data))})
	}
	return files, nil
}

// exportTiles are the tiles of a tree of size records: every hash tile (partial ones at its
// edge) and a data tile per 2^TileHeight records.
func exportTiles(size int64) []tlog.Tile {
	tiles := tlog.NewTiles(translog.TileHeight, 0, size)
	for n := int64(0); n<<translog.TileHeight < size; n++ {
		w := min(size-n<<translog.TileHeight, 1<<translog.TileHeight)
		tiles = append(tiles, tlog.Tile{H: translog.TileHeight, L: -1, N: n, W: int(w)})
	}
	return tiles
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
