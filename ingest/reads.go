package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/pluginyard/registry/store"

	"github.com/pluginyard/registry/translog"
)

// Accessors the HTTP layer calls instead of reaching into the store: what they hand out
// is the service's (its token check, its blob folder, its log), so that the server never
// names the concrete store (see docs/architecture.md).

// Authenticator returns an Authenticator over the service's tokens; adminSecret is
// REGISTRY_ADMIN_TOKEN ("" for none).
func (s *Service) Authenticator(adminSecret string) *Authenticator {
	return NewAuthenticator(s.store, adminSecret)
}

// OpenBlob opens the blob sha recorded with size bytes, refusing it when it is absent
// (store.ErrBlobMissing) or of another size (store.ErrBlobCorrupt). The caller closes it.
// From a blob folder the reader is the file itself, so that serving it can use sendfile;
// from a bucket, reads and seeks become ranged GETs.
func (s *Service) OpenBlob(ctx context.Context, sha string, size int64) (store.Blob, error) {
	return s.blobs.Open(ctx, sha, size)
}

// BlobSigner is a blob store that can hand out a short-lived URL of a blob (an S3
// bucket's pre-signed GET); filename is the attachment name the URL's response carries.
type BlobSigner interface {
	PresignGet(ctx context.Context, sha string, ttl time.Duration, filename string) (string, error)
}

// DefaultBlobRedirect is how long a pre-signed download URL of serve --blobs-redirect is
// valid: long enough to start a large download on a slow link, short enough that a shared
// link soon dies.
const DefaultBlobRedirect = 5 * time.Minute

// RedirectsDownloads reports whether package downloads are answered with a pre-signed URL
// (Config.BlobRedirect, a BlobSigner's) instead of streamed.
func (s *Service) RedirectsDownloads() bool {
	_, ok := s.blobs.(BlobSigner)
	return ok && s.cfg.BlobRedirect > 0
}

// BlobRedirect returns a URL, valid for Config.BlobRedirect, that downloads the blob sha
// recorded with size bytes as filename, once a Stat found it whole: store.ErrBlobMissing
// or store.ErrBlobCorrupt otherwise, so a lost blob is reported, not redirected to.
func (s *Service) BlobRedirect(ctx context.Context, sha string, size int64, filename string) (string, error) {
	signer, ok := s.blobs.(BlobSigner)
	if !ok || s.cfg.BlobRedirect <= 0 {
		return "", fmt.Errorf("ingest: the blob store (%T) does not redirect downloads: serve streams them", s.blobs)
	}
	if err := s.blobs.Stat(ctx, sha, size); err != nil {
		return "", err
	}
	return signer.PresignGet(ctx, sha, s.cfg.BlobRedirect, filename)
}

// OpenLog returns the transparency log of the service's store, signed with the key in
// its data directory (generated there with keyName on first use), as `registry serve`
// opens it without --log-key.
func (s *Service) OpenLog(keyName string) (*translog.Log, error) {
	key, err := translog.LoadKey(s.store.Dir(), "", keyName)
	if err != nil {
		return nil, err
	}
	return translog.New(s.store, key), nil
}
