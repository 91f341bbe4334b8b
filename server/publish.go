package server

import (
	"errors"
	"io"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
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

// handlePublish is POST /api/v1/packages: multipart field "package" (the .tar.gz) and an
// optional "bundle" (a detached Sigstore bundle). 201 when new, 200 when identical bytes
// were already published.
func (s *Server) handlePublish(c echo.Context) error {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxBodyBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return errf(http.StatusBadRequest, "expected a multipart/form-data body with a \"package\" file field")
	}
	var (
		bundle []byte
		res    *ingest.PublishResult
	)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadError(err)
		}
		switch part.FormName() {
		case "bundle":
			if res != nil {
				return errf(http.StatusBadRequest, "send the \"bundle\" field before the \"package\" field")
			}
			if bundle, err = io.ReadAll(io.LimitReader(part, maxBundleBytes+1)); err != nil {
				return uploadError(err)
			}
			if len(bundle) > maxBundleBytes {
				return errf(http.StatusRequestEntityTooLarge, "the bundle is over 1 MiB")
			}
		case "package":
			if res != nil {
				return errf(http.StatusBadRequest, "send one \"package\" field")
			}
			res, err = s.svc.Publish(r.Context(), ingest.PublishInput{Package: part, FileName: path.Base(part.FileName()),
				Bundle: bundle, Actor: actorOf(c)})
			if err != nil {
				return uploadError(err)
			}
		}
		_ = part.Close()
	}
	if res == nil {
		return errf(http.StatusBadRequest, "missing the \"package\" file field (multipart/form-data)")
	}
	status := http.StatusCreated
	if !res.Created {
		status = http.StatusOK
	}
	rel := res.Release
	warnings := []string{}
	for _, p := range res.Report.Problems.Warnings() {
		warnings = append(warnings, p.String())
	}
	return c.JSON(status, publishResponse{ID: rel.PackageID, Version: rel.Version, Kind: rel.Kind, SHA256: rel.SHA256,
		Size: rel.Size, PackageURL: res.PackageURL, Warnings: warnings})
}

// uploadError turns a body over the limit into 413, whatever layer noticed it.
func uploadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errf(http.StatusRequestEntityTooLarge, "the upload is over the registry's body limit")
	}
	return err
}
