package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// exposure is everything a quarantine must take a package out of, as bytes and ids.
type exposure struct {
	Index    string   // index.json's entries array, verbatim
	Host     string   // the host-aware document's entries array, verbatim
	Search   []string // search hits for "hello"
	Listing  []string // the all-packages listing, by name
	Catalog  []string
	Document string // acme-hello's package document, verbatim
}

func exposed(t *testing.T, s *Service) exposure {
	t.Helper()
	ctx := context.Background()
	var e exposure
	e.Index = entriesOf(t, s.Documents().Kandev.Body.Bytes())
	h, err := ParseHost("0.95.0", "linux-amd64")
	if err != nil {
		t.Fatal(err)
	}
	hd, err := s.HostIndex(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	e.Host = entriesOf(t, hd.Kandev.Body.Bytes())
	if e.Search, _, err = s.db().Search(ctx, store.SearchQuery{Q: "hello", Limit: 50}); err != nil {
		t.Fatal(err)
	}
	items, _ := s.Catalog().Views().List("", "", SortName, 0, 50)
	for _, it := range items {
		e.Listing = append(e.Listing, it.ID)
	}
	for _, it := range s.Catalog().Items() {
		e.Catalog = append(e.Catalog, it.ID)
	}
	doc, err := s.PackageIndexByFile(ctx, "acme-hello")
	if err != nil {
		t.Fatal(err)
	}
	e.Document = string(doc.Body)
	return e
}

// entriesOf is the "plugins" array of an index document, as served.
func entriesOf(t *testing.T, body []byte) string {
	t.Helper()
	var d struct {
		Plugins json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("index document: %v", err)
	}
	return string(d.Plugins)
}

func newQuarantineService(t *testing.T) *Service {
	t.Helper()
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "says hello")
	publishOK(t, s, "acme-hello", "1.1.0", "says hello")
	publishOK(t, s, "acme-other", "1.0.0", "says hello too")
	return s
}

var (
	publisherAcme = Actor{Name: "publisher:acme", Publisher: "acme"}
	oidcAcme      = Actor{Name: "oidc:acme/acme-hello", Scope: []string{"acme-hello"}}
)

// TestQuarantinePackageTakesItOutOfEverythingAndReleaseRestoresIt: a package quarantine
// leaves index.json, the host-aware document, search, the listings and the catalog at
// once; its downloads are 410 quarantine.download with the reason; its package document
// shows it; every token is refused publish.quarantined; and releasing it gives back the
// same bytes everywhere.
func TestQuarantinePackageTakesItOutOfEverythingAndReleaseRestoresIt(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	before := exposed(t, s)
	if !strings.Contains(before.Index, `"acme-hello"`) || !strings.Contains(before.Host, `"acme-hello"`) || !slices.Contains(before.Search, "acme-hello") || !slices.Contains(before.Listing, "acme-hello") {
		t.Fatalf("acme-hello is not exposed before the quarantine: %+v", before)
	}
	const reason = "a leaked token published a credential stealer"
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "", reason); err != nil {
		t.Fatal(err)
	}
	during := exposed(t, s)
	if strings.Contains(during.Index, `"acme-hello"`) || strings.Contains(during.Host, `"acme-hello"`) {
		t.Errorf("acme-hello is still in an index document:\n%s\n%s", during.Index, during.Host)
	}
	for name, ids := range map[string][]string{"search": during.Search, "listing": during.Listing, "catalog": during.Catalog} {
		if slices.Contains(ids, "acme-hello") {
			t.Errorf("acme-hello is still in the %s: %q", name, ids)
		}
	}
	if !slices.Contains(during.Catalog, "acme-other") {
		t.Errorf("acme-other left the catalog with acme-hello: %q", during.Catalog)
	}
	if !strings.Contains(during.Document, `"quarantined":[{"version":"","reason":"`+reason+`"}]`) {
		t.Errorf("package document does not show the quarantine:\n%s", during.Document)
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		err := s.DownloadRefusal("acme-hello", v)
		if !errors.Is(err, ErrQuarantined) || ruleOf(err) != "quarantine.download" || !strings.Contains(err.Error(), reason) {
			t.Errorf("download of %s: %v (rule %q), want 410 quarantine.download with the reason", v, err, ruleOf(err))
		}
	}
	if err := s.DownloadRefusal("acme-other", "1.0.0"); err != nil {
		t.Errorf("download of acme-other: %v", err)
	}
	for _, a := range []Actor{anAdmin, publisherAcme, oidcAcme} {
		_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.2.0", "says hello")),
			FileName: PackageFileName("acme-hello", "1.2.0"), Actor: a})
		if !errors.Is(err, ErrForbidden) || ruleOf(err) != "publish.quarantined" {
			t.Errorf("publish by %s: %v (rule %q), want 403 publish.quarantined", a.Name, err, ruleOf(err))
		}
	}
	if it, err := s.QuarantinedItem(ctx, "acme-hello"); err != nil || it.Latest.Version != "1.1.0" {
		t.Errorf("QuarantinedItem = %v, %v; want the page's item at 1.1.0", it, err)
	}
	if had, err := s.ReleaseQuarantine(ctx, anAdmin, "acme-hello", ""); err != nil || !had {
		t.Fatalf("ReleaseQuarantine = %v, %v", had, err)
	}
	if diff := cmp.Diff(before, exposed(t, s)); diff != "" {
		t.Errorf("after the release (-before +after):\n%s", diff)
	}
	if err := s.DownloadRefusal("acme-hello", "1.1.0"); err != nil {
		t.Errorf("download after the release: %v", err)
	}
	publishOK(t, s, "acme-hello", "1.2.0", "says hello")
}

// TestQuarantineReleaseHidesOneVersion: a release quarantine leaves the other versions
// in force (the index offers the newest other one), refuses that version's download and
// its re-publication even with the same bytes, lets a fixed version be published, and
// its release restores the bytes.
func TestQuarantineReleaseHidesOneVersion(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	before := exposed(t, s)
	if !strings.Contains(before.Host, `"version":"1.1.0"`) {
		t.Fatalf("the host-aware document does not offer 1.1.0 before the quarantine:\n%s", before.Host)
	}
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "1.1.0", "steals tokens"); err != nil {
		t.Fatal(err)
	}
	during := exposed(t, s)
	if !strings.Contains(during.Index, `"version":"1.0.0"`) || strings.Contains(during.Index, `"version":"1.1.0"`) {
		t.Errorf("index.json should offer acme-hello 1.0.0, not 1.1.0:\n%s", during.Index)
	}
	if strings.Contains(during.Host, `"version":"1.1.0"`) || !strings.Contains(during.Host, `"version":"1.0.0"`) {
		t.Errorf("the host-aware document still offers 1.1.0:\n%s", during.Host)
	}
	if !slices.Contains(during.Search, "acme-hello") {
		t.Errorf("a release quarantine took the whole package out of search: %q", during.Search)
	}
	rep, err := s.Compatibility(ctx, "acme-hello", mustHost(t, "0.95.0", "linux-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if codes := reasonCodes(rep.Releases[0]); rep.Releases[0].Version != "1.1.0" || !slices.Contains(codes, ReasonQuarantined) {
		t.Errorf("compatibility of 1.1.0 = %s %q, want reason %q", rep.Releases[0].Version, codes, ReasonQuarantined)
	}
	if err := s.DownloadRefusal("acme-hello", "1.1.0"); ruleOf(err) != "quarantine.download" {
		t.Errorf("download of 1.1.0: %v, want quarantine.download", err)
	}
	if err := s.DownloadRefusal("acme-hello", "1.0.0"); err != nil {
		t.Errorf("download of 1.0.0: %v", err)
	}
	_, err = s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.1.0", "says hello")),
		FileName: PackageFileName("acme-hello", "1.1.0"), Actor: publisherAcme})
	if ruleOf(err) != "publish.quarantined" {
		t.Errorf("re-publishing the quarantined bytes: %v, want publish.quarantined", err)
	}
	if _, err := s.ReleaseQuarantine(ctx, anAdmin, "acme-hello", "1.1.0"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, exposed(t, s)); diff != "" {
		t.Errorf("after the release (-before +after):\n%s", diff)
	}
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "1.1.0", "steals tokens"); err != nil {
		t.Fatal(err)
	}
	publishOK(t, s, "acme-hello", "1.1.1", "the fix")
}

// TestQuarantineRefusals: only admins; the reason is required, bounded and one line;
// the target must be stored. Nothing is recorded for a refusal.
func TestQuarantineRefusals(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	serial, _ := s.store.Serial(ctx)
	tests := []struct {
		name, id, version, reason string
		actor                     Actor
		kind                      error
		rule, says                string
	}{
		{"owner's token", "acme-hello", "", "x", publisherAcme, ErrForbidden, "quarantine.forbidden", "admins"},
		{"upload token", "acme-hello", "", "x", oidcAcme, ErrForbidden, "quarantine.forbidden", "admins"},
		{"no reason", "acme-hello", "", "  ", anAdmin, ErrInvalid, "quarantine.reason", "required"},
		{"reason too long", "acme-hello", "", strings.Repeat("é", 501), anAdmin, ErrInvalid, "quarantine.reason", "501 characters; the limit is 500"},
		{"two lines", "acme-hello", "", "one\ntwo", anAdmin, ErrInvalid, "quarantine.reason", "one line"},
		{"no such release", "acme-hello", "9.0.0", "x", anAdmin, ErrNotFound, "", "not stored"},
		{"no such package", "acme-nope", "", "x", anAdmin, ErrNotFound, "", "no release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Quarantine(ctx, tt.actor, tt.id, tt.version, tt.reason)
			if !errors.Is(err, tt.kind) || ruleOf(err) != tt.rule || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v (rule %q), want %v %q saying %q", err, ruleOf(err), tt.kind, tt.rule, tt.says)
			}
		})
	}
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "", strings.Repeat("é", 500)); err != nil {
		t.Errorf("a reason of exactly 500 characters: %v", err)
	}
	if _, err := s.ReleaseQuarantine(ctx, publisherAcme, "acme-hello", ""); ruleOf(err) != "quarantine.forbidden" {
		t.Errorf("an owner releasing the quarantine: %v, want quarantine.forbidden", err)
	}
	if got, _ := s.store.Serial(ctx); got != serial+1 {
		t.Errorf("serial %d, want %d: only the one accepted quarantine is recorded", got, serial+1)
	}
}

// TestQuarantineSetOfflineHoldsAtStart: a quarantine committed behind the service's back
// (registry quarantine set, with the server stopped) is in force after the next start's
// build, downloads and publishes included.
func TestQuarantineSetOfflineHoldsAtStart(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	q := store.Quarantine{PackageID: "acme-hello", Reason: "offline", SetBy: "cli"}
	if err := s.store.SetQuarantine(ctx, q, store.AuditEntry{Actor: "cli", Action: "quarantine", Target: "acme-hello"}); err != nil {
		t.Fatal(err)
	}
	next := New(s.store, publishList(), s.cfg, discard())
	t.Cleanup(next.Close)
	if err := next.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := next.Catalog().Item("acme-hello"); ok {
		t.Error("acme-hello is in the catalog after a start with it quarantined")
	}
	if err := next.DownloadRefusal("acme-hello", "1.0.0"); ruleOf(err) != "quarantine.download" {
		t.Errorf("download: %v, want quarantine.download", err)
	}
}

// TestQuarantineRefusesPublishAtBothChecks: the upload of a quarantined package is refused
// when it begins, before any byte is read; and a quarantine that lands while a package
// uploads (or an in-process publish that skips the early check) is refused at the commit.
func TestQuarantineRefusesPublishAtBothChecks(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	u, err := s.BeginUpload(publisherAcme, PackageFileName("acme-hello", "1.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "", "malware"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginUpload(publisherAcme, PackageFileName("acme-hello", "1.2.0")); ruleOf(err) != "publish.quarantined" {
		t.Errorf("BeginUpload after the quarantine: %v, want publish.quarantined before the package is read", err)
	}
	if _, err := u.ReadFrom(bytes.NewReader(plugin(t, "acme-hello", "1.2.0", "says hello"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishUpload(ctx, u, nil); ruleOf(err) != "publish.quarantined" {
		t.Errorf("an upload begun before the quarantine: %v, want publish.quarantined at the commit", err)
	}
	_, err = s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.3.0", "says hello")), Actor: anAdmin})
	if ruleOf(err) != "publish.quarantined" {
		t.Errorf("an in-process admin publish without a file name: %v, want publish.quarantined", err)
	}
	if rels, _ := s.store.Releases(ctx, "acme-hello"); len(rels) != 2 {
		t.Errorf("acme-hello has %d releases, want the 2 from before the quarantine", len(rels))
	}
}

// TestQuarantineLeavesTheShards: with a host limit that shards the index, a quarantined
// package leaves every shard too, and its release puts the shards' bytes back.
func TestQuarantineLeavesTheShards(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	for _, id := range []string{"filler-a", "filler-b", "filler-c"} {
		publishOK(t, s, id, "1.0.0", strings.Repeat("a filler that takes room ", 8))
	}
	setLimit(t, s, len(s.Documents().Kandev.Body.Bytes())/2, 0)
	before := shardText(t, s)
	if !strings.Contains(before, `"acme-hello"`) {
		t.Fatalf("no shard holds acme-hello under the limit (mode %q):\n%s", s.Documents().Mode, before)
	}
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "", "malware"); err != nil {
		t.Fatal(err)
	}
	if got := shardText(t, s); strings.Contains(got, `"acme-hello"`) {
		t.Errorf("a shard still holds acme-hello:\n%s", got)
	}
	if _, err := s.ReleaseQuarantine(ctx, anAdmin, "acme-hello", ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, shardText(t, s)); diff != "" {
		t.Errorf("shards after the release (-before +after):\n%s", diff)
	}
}

// shardText is the entries of every shard document, in URL order.
func shardText(t *testing.T, s *Service) string {
	t.Helper()
	ids, cats := s.Documents().ShardURLs()
	var out strings.Builder
	for _, u := range append(ids, cats...) {
		name := u[strings.LastIndex(u, "/")+1:]
		d, ok, err := s.Documents().Shard(name)
		if err != nil || !ok {
			t.Fatalf("shard %s: %v %v", name, ok, err)
		}
		out.WriteString(name + " " + entriesOf(t, d.Body.Bytes()) + "\n")
	}
	return out.String()
}

// TestQuarantineLeavesTheExport: a static export (registry export) holds no package file
// of a quarantined release, while the package document tells the mirror why.
func TestQuarantineLeavesTheExport(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "1.1.0", "steals tokens"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mirror")
	if err := s.Export(ctx, out, nil); err != nil {
		t.Fatal(err)
	}
	pkgs := filepath.Join(out, "packages", "acme-hello")
	if _, err := os.Stat(filepath.Join(pkgs, "acme-hello-1.1.0.tar.gz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the export holds the quarantined acme-hello 1.1.0 (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(pkgs, "acme-hello-1.0.0.tar.gz")); err != nil {
		t.Errorf("the export lacks acme-hello 1.0.0: %v", err)
	}
}

// TestQuarantineOfAReleaseUnderAPackageQuarantineAnswersItself: a release quarantined while
// its whole package is answers with the release's own quarantine, not the package's that
// covers it.
func TestQuarantineOfAReleaseUnderAPackageQuarantineAnswersItself(t *testing.T) {
	ctx := context.Background()
	s := newQuarantineService(t)
	if _, err := s.Quarantine(ctx, anAdmin, "acme-hello", "", "the whole package"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Quarantine(ctx, anAdmin, "acme-hello", "1.1.0", "this release")
	if err != nil {
		t.Fatal(err)
	}
	if got.Target() != "acme-hello@1.1.0" || got.Reason != "this release" {
		t.Errorf("Quarantine(acme-hello@1.1.0) = %s %q, want acme-hello@1.1.0 \"this release\"", got.Target(), got.Reason)
	}
}
