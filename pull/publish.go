package pull

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
)

// Size caps of the small release files read besides the package.
const (
	maxChecksums = 1 << 20
	maxBundle    = 1 << 20 // a Sigstore bundle is a few kilobytes
)

// ChecksumsAsset is the optional release-level checksums file.
const ChecksumsAsset = "checksums.txt"

// bundleSuffixes name the optional detached Sigstore bundle of an asset, in preference order.
var bundleSuffixes = []string{".sigstore.json", ".sigstore"}

// AssetName is the release asset sync takes for a package id and a release tag:
// <file id>-<version>.tar.gz, the version being the tag without a leading "v".
func AssetName(id, tag string) string {
	return ingest.FileID(id) + "-" + strings.TrimPrefix(tag, "v") + ".tar.gz"
}

// publishOne downloads id's asset of rel and publishes it.
func (s *Syncer) publishOne(ctx context.Context, c *check, rel *Release, id string, sums map[string]string) {
	name := AssetName(id, rel.TagName)
	asset, ok := rel.Asset(name)
	if !ok {
		c.fail("sync.asset.missing", "release %s of %s has no asset %s (expected <id>-<version>.tar.gz: id %s, version from tag %s); its assets are: %s. Attach the package `registry pack` builds under exactly that name",
			rel.TagName, c.t.repo, name, id, rel.TagName, assetNames(rel))
		return
	}
	if asset.Size > s.maxAsset {
		c.fail("sync.asset.too_large", "asset %s of release %s is %d bytes, over the %d-byte limit", name, rel.TagName, asset.Size, s.maxAsset)
		return
	}
	f, sum, err := s.download(ctx, asset)
	if err != nil {
		s.downloadFailed(c, name, rel.TagName, err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if want, ok := sums[name]; ok && want != sum {
		c.fail("sync.checksums.mismatch", "the release's checksums.txt lists sha256 %s for %s but the downloaded asset's sha256 is %s: the asset was replaced or checksums.txt is stale; upload matching files",
			want, name, sum)
		return
	}
	bundle, err := s.bundle(ctx, rel, name)
	if err != nil {
		s.downloadFailed(c, name, rel.TagName, err)
		return
	}
	res, err := s.svc.Publish(ctx, ingest.PublishInput{Package: f, FileName: name, Bundle: bundle,
		Actor: ingest.Actor{Name: Actor, Admin: true}})
	s.published(c, id, strings.TrimPrefix(rel.TagName, "v"), res, err)
}

// published records the pipeline's answer for one package.
func (s *Syncer) published(c *check, id, version string, res *ingest.PublishResult, err error) {
	target := id + "@" + version
	var rf *ingest.Refusal
	switch {
	case errors.As(err, &rf):
		c.failWith(refusalRules(rf), fmt.Sprintf("%s refused: %s", target, refusalText(rf)))
	case err != nil:
		c.errored(fmt.Errorf("publish %s: %w", target, err))
	case res.Created:
		c.res.Outcome = worse(c.res.Outcome, "published")
		c.res.Published = append(c.res.Published, target)
		c.next.Published = append(c.next.Published, target)
	default:
		c.res.Outcome = worse(c.res.Outcome, "unchanged")
		c.res.Unchanged = append(c.res.Unchanged, target)
		c.next.Published = append(c.next.Published, target)
	}
}

func (s *Syncer) downloadFailed(c *check, name, tag string, err error) {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		c.fail("sync.asset.too_large", "asset %s of release %s is over the %d-byte limit", name, tag, tl.Limit)
		return
	}
	c.errored(fmt.Errorf("download %s of release %s: %w", name, tag, err))
}

// download spools an asset to a file in ingest's spool folder and returns it rewound, with
// its sha256.
func (s *Syncer) download(ctx context.Context, a Asset) (*os.File, string, error) {
	f, err := s.svc.SpoolFile("sync-*")
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	_, err = s.gh.Download(ctx, a.BrowserDownloadURL, io.MultiWriter(f, h), s.maxAsset)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, "", err
	}
	return f, hex.EncodeToString(h.Sum(nil)), nil
}

// releaseChecksums reads the release's checksums.txt, when it has one, as sha256 by file
// base name.
func (s *Syncer) releaseChecksums(ctx context.Context, rel *Release) (map[string]string, error) {
	a, ok := rel.Asset(ChecksumsAsset)
	if !ok {
		return nil, nil
	}
	var buf bytes.Buffer
	if _, err := s.gh.Download(ctx, a.BrowserDownloadURL, &buf, maxChecksums); err != nil {
		return nil, fmt.Errorf("download %s of release %s: %w", ChecksumsAsset, rel.TagName, err)
	}
	return ParseChecksums(buf.Bytes()), nil
}

// bundle reads the asset's detached Sigstore bundle, when the release has one.
func (s *Syncer) bundle(ctx context.Context, rel *Release, name string) ([]byte, error) {
	for _, suffix := range bundleSuffixes {
		a, ok := rel.Asset(name + suffix)
		if !ok {
			continue
		}
		var buf bytes.Buffer
		if _, err := s.gh.Download(ctx, a.BrowserDownloadURL, &buf, maxBundle); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, nil
}

// ParseChecksums reads a release-level checksums file in sha256sum format ("<hex>  <path>"
// or "<hex> *<path>") and returns the lowercase digest of each file by base name. Real
// releases put either a line for the package there or the package-internal list, and
// sometimes other lines; lines that are not sha256 lines are ignored, since the package is
// verified on its own anyway: the file only matters when it names the package.
func ParseChecksums(data []byte) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		digest, rest, ok := strings.Cut(strings.TrimRight(line, "\r"), " ")
		if !ok || len(digest) != sha256.Size*2 {
			continue
		}
		if _, err := hex.DecodeString(digest); err != nil {
			continue
		}
		file := strings.TrimPrefix(strings.TrimLeft(rest, " "), "*")
		if name := path.Base(file); file != "" && name != "." && name != "/" {
			out[name] = strings.ToLower(digest)
		}
	}
	return out
}

func assetNames(rel *Release) string {
	if len(rel.Assets) == 0 {
		return "(none)"
	}
	names := make([]string, len(rel.Assets))
	for i, a := range rel.Assets {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

// refusalRules are the rule ids of a refusal's errors; a refusal without problems (not
// allowed, or a version conflict) gets a sync rule naming its kind.
func refusalRules(rf *ingest.Refusal) []string {
	if rules := rf.Problems.Errors().Rules(); len(rules) > 0 {
		return rules
	}
	switch {
	case errors.Is(rf, ingest.ErrConflict):
		return []string{"sync.version.conflict"}
	case errors.Is(rf, ingest.ErrForbidden):
		return []string{"sync.publish.forbidden"}
	}
	return []string{"sync.publish.refused"}
}

// refusalText is the refusal's message with its first few error messages.
func refusalText(rf *ingest.Refusal) string {
	const shown = 3
	errs := rf.Problems.Errors()
	msgs := make([]string, 0, shown)
	for _, p := range errs[:min(len(errs), shown)] {
		msgs = append(msgs, problemText(p))
	}
	text := rf.Message
	if len(msgs) > 0 {
		text += ": " + strings.Join(msgs, "; ")
	}
	if len(errs) > shown {
		text += fmt.Sprintf("; and %d more", len(errs)-shown)
	}
	return text
}

func problemText(p problem.Problem) string {
	if p.Path != "" {
		return p.Rule + " (" + p.Path + "): " + p.Message
	}
	return p.Rule + ": " + p.Message
}
