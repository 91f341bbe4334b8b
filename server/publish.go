package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/verify"
)

// maxBundleBytes bounds a detached Sigstore bundle (real ones are a few KiB).
const maxBundleBytes = 1 << 20

type publishResponse struct {
	ID         string   `json:"id"`
	Version    string   `json:"version"`
	Kind       string   `json:"kind"`
	SHA256     string   `json:"sha256"`
	Size       int64    `json:"size"`
	PackageURL string   `json:"package_url"`
	Warnings   []string `json:"warnings"`
}

// handlePublish is POST /api/v1/packages: multipart field "package" (the .tar.gz, with
// filename="<id>-<version>.tar.gz") and an optional "bundle" (a detached Sigstore bundle),
// in either order. The file name and token are checked when the package part's header
// arrives, before its bytes are read; the part is spooled, the rest of the body read, and
// only then is the package published. 201 when new, 200 when identical bytes were already
// published; an error answer means nothing was stored.
func (s *Server) handlePublish(c echo.Context) error {
	r := c.Request()
	if r.ContentLength > s.cfg.MaxBodyBytes {
		// Refused from the header, before a byte of the body is read; the connection
		// closes, so the rest is never read either.
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return errf(http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is %s; %s", verify.FormatSize(r.ContentLength), s.bodyLimit()))
	}
	s.extendUploadDeadline(c)
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxBodyBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return errf(http.StatusBadRequest, "expected a multipart/form-data body with a \"package\" file field")
	}
	var (
		up     *ingest.Upload
		bundle []byte
	)
	defer func() {
		if up != nil {
			_ = up.Close()
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.uploadError(&bodyError{err})
		}
		switch part.FormName() {
		case "bundle":
			if bundle != nil {
				return errf(http.StatusBadRequest, "send one \"bundle\" field")
			}
			if bundle, err = s.readBundle(part); err != nil {
				return err
			}
		case "package":
			if up != nil {
				return errf(http.StatusBadRequest, "send one \"package\" field")
			}
			if up, err = s.svc.BeginUpload(actorOf(c), part.FileName()); err != nil {
				return err
			}
			if _, err := up.ReadFrom(bodyReader{part}); err != nil {
				return s.uploadError(err)
			}
		}
		_ = part.Close()
	}
	if up == nil {
		return errf(http.StatusBadRequest, "missing the \"package\" file field (multipart/form-data)")
	}
	res, err := s.svc.PublishUpload(r.Context(), up, bundle)
	if err != nil {
		return err
	}
	return c.JSON(publishStatus(res), publishResponseOf(res))
}

// extendUploadDeadline lifts the server's short ReadTimeout (and the write deadline, for
// the answer after a long upload) to UploadTimeout, for this request only. Where the
// writer cannot (an httptest recorder), there is no deadline to lift.
func (s *Server) extendUploadDeadline(c echo.Context) {
	rc := http.NewResponseController(c.Response())
	deadline := time.Now().Add(s.cfg.UploadTimeout)
	if err := rc.SetReadDeadline(deadline); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.log.Warn("publish: extend the read deadline", "err", err)
	}
	if err := rc.SetWriteDeadline(deadline.Add(time.Minute)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.log.Warn("publish: extend the write deadline", "err", err)
	}
}

func (s *Server) readBundle(part io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(bodyReader{part}, maxBundleBytes+1))
	if err != nil {
		return nil, s.uploadError(err)
	}
	if len(b) > maxBundleBytes {
		return nil, errf(http.StatusRequestEntityTooLarge, fmt.Sprintf("the bundle is over %s; a detached Sigstore bundle may be at most that", verify.FormatSize(maxBundleBytes)))
	}
	return b, nil
}

// bodyLimit is the second half of every 413 for the publish body: the limit, and the
// setting that changes it.
func (s *Server) bodyLimit() string {
	return fmt.Sprintf("this registry accepts at most %s (--max-body)", verify.FormatSize(s.cfg.MaxBodyBytes))
}

func publishStatus(res *ingest.PublishResult) int {
	if res.Created {
		return http.StatusCreated
	}
	return http.StatusOK
}

func publishResponseOf(res *ingest.PublishResult) publishResponse {
	rel := res.Release
	warnings := []string{}
	for _, p := range rel.Warnings { // the report's warnings and those of rendering (readme.truncated)
		warnings = append(warnings, p.String())
	}
	return publishResponse{ID: rel.PackageID, Version: rel.Version, Kind: rel.Kind, SHA256: rel.SHA256,
		Size: rel.Size, PackageURL: res.PackageURL, Warnings: warnings}
}

// bodyError is a failure reading the request body: the client's (truncated or malformed
// multipart), unless it is the body limit.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// bodyReader marks read errors as the body's, so that they are told from spool write
// errors (a full disk) that come back through the same copy.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &bodyError{err}
	}
	return n, err
}

// uploadError turns a body over the limit into 413 and any other body read failure into
// 400, whatever layer noticed it; other errors (a full disk: 507) pass through. A body
// over the limit without a Content-Length (chunked) stops here, at the limit.
func (s *Server) uploadError(err error) error {
	var (
		mbe *http.MaxBytesError
		be  *bodyError
	)
	switch {
	case errors.As(err, &mbe):
		return errf(http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is over %s; %s", verify.FormatSize(s.cfg.MaxBodyBytes), s.bodyLimit()))
	case errors.As(err, &be):
		return errf(http.StatusBadRequest, fmt.Sprintf("the multipart body is truncated or malformed (%v): send a complete multipart/form-data body", be.err))
	}
	return err
}
