package ingest

import (
	"io"

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

// OpenBlob opens the blob sha recorded with size bytes, refusing it when its file is
// absent (store.ErrBlobMissing) or of another size (store.ErrBlobCorrupt). The caller
// closes it. The reader is the blob file itself, so that serving it can use sendfile.
func (s *Service) OpenBlob(sha string, size int64) (io.ReadSeekCloser, error) {
	f, err := s.store.Blobs.OpenVerified(sha, size)
	if err != nil {
		return nil, err // not f: a nil *os.File in an interface is not nil
	}
	return f, nil
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
