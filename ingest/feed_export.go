package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// writeFeedFiles writes what a tool syncs from, as static files at the paths the registry
// serves them (docs/sync-for-tools.md): api/v1/index.json (the listing), every listed
// package's api/v1/index/<file id>.json, and the change feed as fixed pages
// api/v1/changes/<since>.json of FeedPageSize serials each, up to the listing's serial.
func (s *Service) writeFeedFiles(ctx context.Context, root string) ([]exportFile, error) {
	lst, err := s.Listing(ctx)
	if err != nil {
		return nil, fmt.Errorf("ingest: export: %w", err)
	}
	out := map[string][]byte{}
	if out["/api/v1/index.json"], err = FeedJSON(lst); err != nil {
		return nil, fmt.Errorf("ingest: export: %w", err)
	}
	for _, p := range lst.Packages {
		pi, err := s.PackageIndexByFile(ctx, FileID(p.ID))
		if err != nil {
			return nil, fmt.Errorf("ingest: export %s: %w", PackageIndexPath(p.ID), err)
		}
		out[PackageIndexPath(p.ID)] = pi.Body
	}
	if err := s.staticFeed(ctx, lst.Serial, lst.CompleteSince, FeedPageSize, out); err != nil {
		return nil, err
	}
	files := make([]exportFile, 0, len(out))
	for path, data := range out {
		rel := filepath.FromSlash(strings.TrimPrefix(path, "/"))
		if err := writeExportFile(filepath.Join(root, rel), data); err != nil {
			return nil, err
		}
		files = append(files, exportFile{rel: rel, sha: hexSum(data), n: int64(len(data)), document: true})
	}
	return files, nil
}

// staticFeed adds the feed's pages, from the one holding the change after completeSince to
// the one holding the change after serial (empty until there is one): a mirror at serial S
// always finds page StaticFeedPage(S). Pages cover size serials (FeedPageSize; tests page
// by fewer).
func (s *Service) staticFeed(ctx context.Context, serial, completeSince, size int64, out map[string][]byte) error {
	for since := completeSince - completeSince%size; since <= serial-serial%size; since += size {
		page, err := s.staticPage(ctx, since, serial, completeSince, size)
		if err != nil {
			return fmt.Errorf("ingest: export: %w", err)
		}
		body, err := FeedJSON(page)
		if err != nil {
			return fmt.Errorf("ingest: export: %w", err)
		}
		out[StaticFeedPath(since)] = body
	}
	return nil
}

// staticPage is the feed page of the changes after since up to since+size (and at most
// serial, which it reports as the current one), with the URL of the next page unless it
// holds serial.
func (s *Service) staticPage(ctx context.Context, since, serial, completeSince, size int64) (*FeedPage, error) {
	from := max(since, completeSince)
	p, err := s.store.Changes(ctx, from, int(max(min(since+size, serial)-from, 0)))
	if err != nil {
		return nil, err
	}
	page := s.feedPage(p, since)
	page.Serial, page.CompleteSince = serial, completeSince
	if next := since + size; next <= serial {
		u := s.cfg.PublicURL + StaticFeedPath(next)
		page.Next = &u
	}
	return page, nil
}

// StaticFeed is the live answer to a static feed path (StaticFeedPath(since)), so that a
// tool reads the registry and its export alike: ErrNotFound unless since is a multiple of
// FeedPageSize, from the page holding the change after CompleteSince to the one holding
// the change after the current serial.
func (s *Service) StaticFeed(ctx context.Context, since int64) (*FeedPage, error) {
	serial, complete, err := s.store.FeedSerials(ctx)
	if err != nil {
		return nil, err
	}
	if since < 0 || since%FeedPageSize != 0 || since < complete-complete%FeedPageSize || since > serial-serial%FeedPageSize {
		return nil, fmt.Errorf("ingest: feed page %d: %w", since, ErrNotFound)
	}
	return s.staticPage(ctx, since, serial, complete, FeedPageSize)
}

// FeedJSON is how the listing and feed pages are written, by the registry and in an
// export alike: compact JSON and a newline.
func FeedJSON(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ingest: encode: %w", err)
	}
	return append(body, '\n'), nil
}
