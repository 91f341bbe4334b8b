package replicas

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/pluginyard/registry/s3blob/s3test"
)

// Bucket is the S3 bucket the replicas share: a versitygw of s3test, which the replicas
// reach through a Proxy, so that a test can make it unreachable in the middle of an upload
// (CutAfter) as well as stop the server itself (Stop).
type Bucket struct {
	S3    *s3test.Server
	proxy *Proxy
}

// StartBucket starts the S3 server (skipping tb without versitygw, failing it with
// CI=true) and the proxy in front of it.
func StartBucket(tb testing.TB) *Bucket {
	tb.Helper()
	s := s3test.Start(tb)
	p, err := StartProxy(s.Endpoint)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return &Bucket{S3: s, proxy: p}
}

// URL is what --blobs takes: the bucket, reached through the proxy.
func (b *Bucket) URL() string {
	q := url.Values{"endpoint": {b.proxy.Addr()}, "region": {"us-east-1"}, "insecure": {"1"}}
	return (&url.URL{Scheme: "s3", Host: b.S3.Bucket, RawQuery: q.Encode()}).String()
}

// Env is the environment the replicas reach the bucket with (its credentials).
func (b *Bucket) Env() []string { return b.S3.Env() }

// Cut makes the bucket unreachable now: open connections are closed, new ones refused.
func (b *Bucket) Cut() error {
	b.proxy.Cut()
	return nil
}

// CutAfter makes the bucket unreachable once n more bytes were sent to it.
func (b *Bucket) CutAfter(n int64) error {
	b.proxy.CutAfter(n)
	return nil
}

// CutOff says whether the proxy cuts the bucket off now (after Cut, or once a CutAfter's
// bytes went through).
func (b *Bucket) CutOff() bool { return b.proxy.Down() }

// Stop stops the S3 server itself (SIGKILL).
func (b *Bucket) Stop() error { return b.S3.Stop() }

// Restore makes the bucket reachable again: the proxy lets connections through and the
// server runs.
func (b *Bucket) Restore() error {
	b.proxy.Restore()
	return b.S3.Start()
}

// Objects lists the keys of the objects in the bucket and of its unfinished multipart
// uploads, read directly from the server (not through the proxy).
func (b *Bucket) Objects() (objects, incomplete []string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := b.S3.Client()
	for o := range c.ListObjects(ctx, b.S3.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			return nil, nil, fmt.Errorf("replicas: list bucket %s: %w", b.S3.Bucket, o.Err)
		}
		objects = append(objects, o.Key)
	}
	for u := range c.ListIncompleteUploads(ctx, b.S3.Bucket, "", true) {
		if u.Err != nil {
			return nil, nil, fmt.Errorf("replicas: list unfinished uploads of %s: %w", b.S3.Bucket, u.Err)
		}
		incomplete = append(incomplete, u.Key)
	}
	return objects, incomplete, nil
}
