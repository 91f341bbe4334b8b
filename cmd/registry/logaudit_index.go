package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
)

// listedRelease is an index entry as the audit reads it.
type listedRelease struct {
	ID, Version, SHA256, URL string
}

// checkDocument checks one index document: its signature, then each entry against the
// log (and with --packages, the package bytes). It returns the entries checked and the
// verified statement (nil when the signature failed).
func (a *auditor) checkDocument(ctx context.Context, doc string, probs *problem.List) (int, *ingest.IndexStatement) {
	body, st, ok := a.fetchSigned(ctx, doc, probs)
	if !ok {
		return 0, nil
	}
	entries, err := parseEntries(doc, body)
	if err != nil {
		probs.Errorf(ruleInclusion, doc, "%v", err)
		return 0, st
	}
	limit := a.cp.Size
	if st != nil {
		limit = st.LogSize
	}
	for _, e := range entries {
		a.checkEntry(doc, e, limit, probs)
	}
	if a.packages {
		a.checkPackages(ctx, doc, entries, probs)
	}
	return len(entries), st
}

// fetchSigned fetches doc and checks its signature (nil statement when that failed). A live
// registry may put a rebuild in force between the two requests, so a signature over other
// bytes is fetched once more, with the document, before it counts as a mismatch.
func (a *auditor) fetchSigned(ctx context.Context, doc string, probs *problem.List) ([]byte, *ingest.IndexStatement, bool) {
	for attempt := 1; ; attempt++ {
		body, err := a.fetch(ctx, doc)
		if err != nil {
			probs.Errorf(ruleFetch, doc, "%v", err)
			return nil, nil, false
		}
		sig, err := a.fetch(ctx, doc+".sig")
		if err != nil {
			probs.Errorf(ruleIndexSignature, doc+".sig", "%v; an unsigned index cannot be checked", err)
			return body, nil, true
		}
		seen := a.state.Documents[doc]
		st, err := ingest.VerifyIndexSignature(sig, ingest.IndexCheck{Document: doc, Body: body, Verifier: a.verifier,
			MinSerial: seen.Serial, MinGeneratedAt: seen.GeneratedAt, Now: a.now()})
		if errors.Is(err, ingest.ErrIndexMismatch) && attempt == 1 {
			fmt.Fprintf(a.progress, "index: %s changed while it was fetched; fetching it and its signature again\n", doc)
			continue
		}
		return body, a.checkStatement(doc, st, err, probs), true
	}
}

// checkStatement files err, the outcome of verifying doc's signature, under its rule, and
// checks that the checkpoint the statement names is this log's tree at that size; it
// records the serial seen.
func (a *auditor) checkStatement(doc string, st ingest.IndexStatement, err error, probs *problem.List) *ingest.IndexStatement {
	switch {
	case errors.Is(err, ingest.ErrIndexRollback):
		probs.Errorf(ruleRollback, doc, "%v", err)
		return nil
	case errors.Is(err, ingest.ErrIndexExpired):
		probs.Errorf(ruleExpired, doc+".sig", "%v", err)
		return nil
	case err != nil:
		probs.Errorf(ruleIndexSignature, doc+".sig", "%v", err)
		return nil
	}
	if !a.namesThisLog(st, doc, probs) {
		return nil
	}
	a.state.Documents[doc] = seenDocument{Serial: st.Serial, GeneratedAt: st.GeneratedAt}
	return &st
}

// namesThisLog checks that the statement's checkpoint is a tree of this log: same origin,
// no larger than the verified checkpoint, and the root the tiles give at that size.
func (a *auditor) namesThisLog(st ingest.IndexStatement, doc string, probs *problem.List) bool {
	if st.LogOrigin != a.cp.Origin || st.LogSize > a.cp.Size {
		probs.Errorf(ruleIndexLog, doc+".sig", "the signature names log %s at size %d, but the verified checkpoint is %s at size %d", st.LogOrigin, st.LogSize, a.cp.Origin, a.cp.Size)
		return false
	}
	root, err := tlog.TreeHash(st.LogSize, tlog.TileHashReader(tlog.Tree{N: a.cp.Size, Hash: a.cp.Hash}, a.tiles))
	if err != nil || root != st.LogRoot {
		probs.Errorf(ruleIndexLog, doc+".sig", "the signature names root %s at size %d, but this log's tree at that size has root %s (%v): the document was built from another log", st.LogRoot, st.LogSize, root, err)
		return false
	}
	return true
}

// checkEntry checks that the log recorded e's release, with e's sha256, within the first
// limit records (the checkpoint the document was built from).
func (a *auditor) checkEntry(doc string, e listedRelease, limit int64, probs *problem.List) {
	key := e.ID + "@" + e.Version
	path := doc + ": " + key
	rec, ok := a.state.Releases[key]
	switch {
	case !ok:
		probs.Errorf(ruleInclusion, path, "%s is listed, but the log has no publish record of it among its %d records: a release that bypassed the log", key, a.cp.Size)
	case rec.SHA256 != e.SHA256:
		probs.Errorf(ruleSHA256, path, "%s is listed with package_sha256 %s, but the log recorded sha256 %s at #%d: the package was swapped after it was published", key, e.SHA256, rec.SHA256, rec.Index)
	case rec.Index >= limit:
		probs.Errorf(ruleInclusion, path, "%s is recorded at #%d, after the checkpoint of size %d the document says it was built from", key, rec.Index, limit)
	}
}

// parseEntries reads the entries of an index document.
func parseEntries(doc string, body []byte) ([]listedRelease, error) {
	type entry struct {
		ID         string  `json:"id"`
		Name       string  `json:"name"`
		Version    string  `json:"version"`
		PackageURL string  `json:"package_url"`
		SHA256     *string `json:"package_sha256"`
	}
	var d struct {
		Plugins    []entry `json:"plugins"`
		Extensions []entry `json:"extensions"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, fmt.Errorf("%s does not decode: %w", doc, err)
	}
	var out []listedRelease
	for _, e := range append(d.Plugins, d.Extensions...) {
		id := e.ID
		if doc == ingest.CurupiraDocument {
			id = e.Name
		}
		if e.SHA256 == nil {
			return nil, fmt.Errorf("%s: %s@%s has no package_sha256, so it cannot be checked against the log", doc, id, e.Version)
		}
		out = append(out, listedRelease{ID: id, Version: e.Version, SHA256: *e.SHA256, URL: e.PackageURL})
	}
	return out, nil
}

// checkPackages downloads every listed package and compares its sha256 with the entry's
// (which checkEntry compared with the log's).
func (a *auditor) checkPackages(ctx context.Context, doc string, entries []listedRelease, probs *problem.List) {
	for i, e := range entries {
		fmt.Fprintf(a.progress, "packages: %s %d/%d %s@%s\n", doc, i+1, len(entries), e.ID, e.Version)
		got, n, err := a.hashURL(ctx, e.URL)
		if err != nil {
			probs.Errorf(ruleFetch, doc+": "+e.ID+"@"+e.Version, "%v", err)
			continue
		}
		if got != e.SHA256 {
			probs.Errorf(rulePackage, doc+": "+e.ID+"@"+e.Version, "%s (%d bytes) has sha256 %s, the index and the log say %s: the package served is not the one published", e.URL, n, got, e.SHA256)
		}
	}
}

func (a *auditor) hashURL(ctx context.Context, url string) (string, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	res, err := a.client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	h := sha256.New()
	n, err := io.Copy(h, res.Body)
	if err != nil {
		return "", n, fmt.Errorf("GET %s: %w", url, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
