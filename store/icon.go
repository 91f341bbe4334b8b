package store

import (
	"context"
	"fmt"
)

// IconUse is one release that ships a blob as its icon, with the content type decided when
// it was published and the size recorded for the blob.
type IconUse struct {
	PackageID string
	Version   string
	Type      string // e.g. image/png, as sniffed at publish
	Ext       string // e.g. png, without the dot
	Size      int64
}

// IconUses returns every release whose icon is the blob sha (none: an empty list, not an
// error), newest first. A blob that is only some release's package is not an icon.
func (s *Store) IconUses(ctx context.Context, sha string) ([]IconUse, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.package_id, r.version, coalesce(r.icon_type, ''), r.icon_ext, b.size
		FROM releases r JOIN blobs b ON b.sha256 = r.icon_sha256
		WHERE r.icon_sha256 = ? ORDER BY r.id DESC`, sha)
	if err != nil {
		return nil, fmt.Errorf("store: icon %s: %w", sha, err)
	}
	defer rows.Close()
	var out []IconUse
	for rows.Next() {
		var u IconUse
		if err := rows.Scan(&u.PackageID, &u.Version, &u.Type, &u.Ext, &u.Size); err != nil {
			return nil, fmt.Errorf("store: icon %s: %w", sha, err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: icon %s: %w", sha, err)
	}
	return out, nil
}
