// Package s3blob keeps blobs in an S3-compatible bucket: the same content-addressed
// contract as the local folder (store.Folder), objects named prefix/sha256/ab/abcdef….
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/pluginyard/registry/store"
)

// Bounds on one call when the bucket cannot be reached: each request is tried this many
// times in all (minio's backoff between tries is 200 ms doubling, capped at 1 s), a
// connection must be made within DialTimeout and a response's headers must start within
// ResponseHeaderTimeout of the request's last byte.
const (
	Attempts              = 3
	DialTimeout           = 5 * time.Second
	ResponseHeaderTimeout = 30 * time.Second
)

// Store is a bucket (or a prefix in one) holding blobs. Safe for concurrent use.
type Store struct {
	c   *minio.Client
	cfg Config

	beforeUpload func(sha string) // a test's hook between Put's HEAD and its PUT
}

// Open connects to the bucket a blob URL names (see Config), with credentials from the
// environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (or
// MINIO_ACCESS_KEY/MINIO_SECRET_KEY, ~/.aws/credentials, an instance role). It checks that
// the bucket exists; an unreachable one is an error wrapping store.ErrUnavailable.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
	return open(ctx, rawURL, creds)
}

// OpenKeys is Open with the given access key and secret instead of the environment's.
func OpenKeys(ctx context.Context, rawURL, accessKey, secretKey string) (*Store, error) {
	return open(ctx, rawURL, credentials.NewStaticV4(accessKey, secretKey, ""))
}

func open(ctx context.Context, rawURL string, creds *credentials.Credentials) (*Store, error) {
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:      creds,
		Secure:     cfg.Secure,
		Region:     cfg.Region,
		Transport:  transport(),
		MaxRetries: Attempts,
		// Needed to send x-amz-checksum-sha256, which has the server verify each upload.
		TrailingHeaders: true,
	})
	if err != nil {
		return nil, fmt.Errorf("s3blob: %s: %w", cfg, err)
	}
	s := &Store{c: c, cfg: cfg}
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// transport bounds connecting and waiting; a transfer itself is bounded by its context.
func transport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   64,
	}
}

// probe refuses a bucket that does not exist or does not let us in, at start rather than
// at the first publish.
func (s *Store) probe(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		if isDenied(err) {
			return fmt.Errorf("s3blob: %s: access denied (%w): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", s.cfg, err)
		}
		return s.fail("open bucket", "", err)
	}
	if !ok {
		return fmt.Errorf("s3blob: %s: bucket %q does not exist at %s: create it or fix the URL's bucket", s.cfg, s.cfg.Bucket, s.cfg.Endpoint)
	}
	return nil
}

// Config returns the parsed blob URL the store was opened with.
func (s *Store) Config() Config { return s.cfg }

// Key returns the object name of the blob with this digest: PREFIX/sha256/ab/abcdef….
func (s *Store) Key(sha string) string {
	shard := "00"
	if len(sha) >= 2 {
		shard = sha[:2]
	}
	return path.Join(s.keyPrefix(), shard, sha)
}

// keyPrefix is the folder every blob object is under.
func (s *Store) keyPrefix() string { return path.Join(s.cfg.Prefix, "sha256") }

// fail wraps an error of op on blob sha (or the bucket, for ""), marking it with
// store.ErrUnavailable when it says the bucket cannot be reached.
func (s *Store) fail(op, sha string, err error) error {
	what := op
	if sha != "" {
		what = op + " " + sha
	}
	if unreachable(err) {
		return fmt.Errorf("s3blob: %s: bucket %s at %s unreachable: %w: %w", what, s.cfg.Bucket, s.cfg.Endpoint, store.ErrUnavailable, err)
	}
	return fmt.Errorf("s3blob: %s: %w", what, err)
}

// unreachable reports whether err says the bucket could not be reached or answered with a
// server-side failure, as opposed to a refusal (denied, missing, precondition) or the
// caller giving up.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.StatusCode >= 500 || resp.Code == "SlowDown"
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

func errCode(err error) (code string, status int) {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code, resp.StatusCode
	}
	return "", 0
}

func isMissing(err error) bool {
	code, status := errCode(err)
	return code == "NoSuchKey" || code == "NotFound" || (status == http.StatusNotFound && code != "NoSuchBucket")
}

func isDenied(err error) bool {
	code, status := errCode(err)
	return code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || status == http.StatusForbidden
}

// lostRace reports whether a conditional create failed because the object exists (412), or
// because another conditional write of it was in flight (409).
func lostRace(err error) bool {
	code, status := errCode(err)
	return status == http.StatusPreconditionFailed || status == http.StatusConflict ||
		code == "PreconditionFailed" || code == "ConditionalRequestConflict"
}
