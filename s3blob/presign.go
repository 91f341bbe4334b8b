package s3blob

import (
	"context"
	"fmt"
	"mime"
	"net/url"
	"time"

	"github.com/pluginyard/registry/store"
)

// Bounds of a pre-signed URL's lifetime that S3 (signature V4) accepts.
const (
	MinPresignTTL = time.Second
	MaxPresignTTL = 7 * 24 * time.Hour
)

// PresignGet returns a URL that lets anyone GET the blob for ttl, without credentials;
// with a filename the response names it (Content-Disposition: attachment). It does not
// check that the blob exists.
func (s *Store) PresignGet(ctx context.Context, sha string, ttl time.Duration, filename string) (string, error) {
	if !store.ValidSHA256(sha) {
		return "", fmt.Errorf("s3blob: presign blob %q: not a sha256 digest (64 lowercase hex digits)", sha)
	}
	if ttl < MinPresignTTL || ttl > MaxPresignTTL {
		return "", fmt.Errorf("s3blob: presign blob %s: lifetime %s: want %s to %s", sha, ttl, MinPresignTTL, MaxPresignTTL)
	}
	params := url.Values{}
	if filename != "" {
		params.Set("response-content-disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	}
	u, err := s.c.PresignedGetObject(ctx, s.cfg.Bucket, s.Key(sha), ttl, params)
	if err != nil {
		return "", s.fail("presign blob", sha, err)
	}
	return u.String(), nil
}
