package ingest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/pluginyard/registry/hostlist"
	"github.com/pluginyard/registry/verify"
)

// previewFetcher fetches one image under the configured limits.
type previewFetcher struct {
	client  *http.Client
	hosts   hostlist.List
	timeout time.Duration
	max     int64
}

func newPreviewFetcher(cfg PreviewConfig) *previewFetcher {
	f := &previewFetcher{hosts: hostlist.New(cfg.Hosts), timeout: cfg.Timeout, max: cfg.MaxSize}
	if f.timeout <= 0 {
		f.timeout = DefaultPreviewTimeout
	}
	if f.max <= 0 {
		f.max = MaxPreviewSize
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f
}

// checkURL refuses, before any connection, a URL that is not https or whose host is not
// allow-listed.
func (f *previewFetcher) checkURL(rule string, u *url.URL) *PreviewError {
	if u.Scheme != "https" || u.Host == "" || u.User != nil {
		return previewErrorf(RulePreviewURL, "expected an absolute https URL without credentials, found %s; "+
			"previews are fetched over https only", u.Redacted())
	}
	if !f.hosts.Allows(u) {
		return previewErrorf(rule, "host %q is not on the preview host allow-list %s, so it was not contacted; "+
			"host the image on one of those, or ask the operator to add the host to %s", u.Host, f.hosts, PreviewHostsSetting)
	}
	return nil
}

// checkRedirect holds every redirect hop to the rules of the first URL.
func (f *previewFetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxPreviewRedirects {
		return previewErrorf(RulePreviewRedirect, "more than %d redirects (the last to %s); link the image itself", maxPreviewRedirects, req.URL.Redacted())
	}
	if err := f.checkURL(RulePreviewRedirect, req.URL); err != nil {
		err.Rule = RulePreviewRedirect
		err.Message = "redirect to " + req.URL.Redacted() + " refused: " + err.Message
		return err
	}
	return nil
}

// fetch returns the bytes of the image at raw and their sniffed content type.
func (f *previewFetcher) fetch(ctx context.Context, raw string) ([]byte, string, *PreviewError) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", previewErrorf(RulePreviewURL, "expected an absolute https URL, found %q: %v", raw, err)
	}
	if perr := f.checkURL(RulePreviewHost, u); perr != nil {
		return nil, "", perr
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", previewErrorf(RulePreviewURL, "cannot request %s: %v", u.Redacted(), err)
	}
	req.Header.Set("Accept", "image/png, image/jpeg, image/webp")
	req.Header.Set("User-Agent", "pluginyard-registry-previews")
	res, err := f.client.Do(req)
	if err != nil {
		var perr *PreviewError
		if errors.As(err, &perr) {
			return nil, "", perr
		}
		return nil, "", previewErrorf(RulePreviewFetch, "GET %s failed (retried after a while): %v", u.Redacted(), err)
	}
	defer res.Body.Close()
	return f.read(res)
}

// read checks the answer and reads at most max bytes of it.
func (f *previewFetcher) read(res *http.Response) ([]byte, string, *PreviewError) {
	where := res.Request.URL.Redacted()
	if res.StatusCode != http.StatusOK {
		return nil, "", previewErrorf(RulePreviewStatus, "GET %s answered %s, expected 200 OK; check that the URL serves the image itself", where, res.Status)
	}
	if res.ContentLength > f.max {
		return nil, "", f.tooLarge(where, res.ContentLength, "announces")
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, f.max+1))
	if err != nil {
		return nil, "", previewErrorf(RulePreviewFetch, "reading %s failed (retried after a while): %v", where, err)
	}
	if int64(len(data)) > f.max {
		return nil, "", f.tooLarge(where, int64(len(data)), "sent at least")
	}
	ct, _ := verify.SniffImage(data) // the sniffer publish uses for icons; PreviewExt keeps raster types only
	if PreviewExt(ct) == "" {
		found := ct
		if found == "" {
			found = http.DetectContentType(data)
		}
		return nil, "", previewErrorf(RulePreviewType, "%s is %s by its bytes, expected a PNG, JPEG or WebP image; convert it to one of those", where, found)
	}
	return data, ct, nil
}

func (f *previewFetcher) tooLarge(where string, n int64, verb string) *PreviewError {
	return previewErrorf(RulePreviewSize, "%s %s %s, over the %s preview limit; make the image smaller: a lower resolution, or WebP or JPEG instead of PNG",
		where, verb, verify.FormatSize(n), verify.FormatSize(f.max))
}
