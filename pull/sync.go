package pull

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// Actor is the audit and publish actor of every pulled release.
const Actor = "sync"

// Config configures a Syncer.
type Config struct {
	Client   ClientConfig
	MaxAsset int64 // largest package downloaded (default 100 MiB)
	// Progress, when set, is called with each repository's result as the round goes.
	Progress func(Result)
}

// Store is what a Syncer keeps in the metadata store beside the releases it publishes
// through ingest: each repository's sync state, the signer pins, the GitHub stats shown on
// pages, and its audit entries. *store.Store implements it.
type Store interface {
	SyncStates(ctx context.Context) ([]store.SyncState, error)
	PutSyncState(ctx context.Context, st store.SyncState) error
	PinOnFirstUse(ctx context.Context, p store.Pin) (*store.Pin, error)
	Package(ctx context.Context, id string) (*store.Package, error)
	SetRepoStats(ctx context.Context, id string, stars *int, pushedAt *time.Time) error
	Audit(ctx context.Context, e store.AuditEntry) error
}

// Syncer pulls the latest GitHub release of every repository the curated list names and
// publishes it through the ingest pipeline. Rounds never overlap; it is safe for
// concurrent use.
type Syncer struct {
	svc      *ingest.Service
	st       Store
	gh       *Client
	log      *slog.Logger
	now      func() time.Time
	maxAsset int64
	progress func(Result)

	mu sync.Mutex // one round at a time
}

// New returns a Syncer publishing through svc and keeping its state in st (the store svc
// runs over).
func New(svc *ingest.Service, st Store, cfg Config, log *slog.Logger) (*Syncer, error) {
	gh, err := NewClient(cfg.Client)
	if err != nil {
		return nil, err
	}
	if cfg.MaxAsset <= 0 {
		cfg.MaxAsset = DefaultMaxAsset
	}
	return &Syncer{svc: svc, st: st, gh: gh, log: log, maxAsset: cfg.MaxAsset, progress: cfg.Progress,
		now: func() time.Time { return time.Now().UTC() }}, nil
}

// target is one listed repository and the package ids released from it.
type target struct {
	repo string   // owner/name as first listed
	key  string   // owner lower-cased: GitHub logins are case-insensitive
	ids  []string // plugin ids and extension names, in list order
}

// targets groups the list's plugins and extensions by repository, in list order.
func targets(l *index.List) []target {
	var out []target
	pos := map[string]int{}
	add := func(repo, id string) {
		owner, name, ok := strings.Cut(repo, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return
		}
		key := strings.ToLower(owner) + "/" + name
		i, seen := pos[key]
		if !seen {
			i = len(out)
			pos[key] = i
			out = append(out, target{repo: repo, key: key})
		}
		out[i].ids = append(out[i].ids, id)
	}
	if l == nil {
		return nil
	}
	for _, e := range l.Plugins {
		add(e.Repo, e.ID)
	}
	for _, e := range l.Extensions {
		add(e.Repo, e.Name)
	}
	return out
}

// Round checks every listed repository once, in list order. A rate limit defers only the
// repository it was answered for: that one is skipped (reported rate limited, its state
// kept) until its own deadline, at most MaxRateLimitDelay away, and the others go on.
func (s *Syncer) Round(ctx context.Context) Summary {
	sum, _ := s.round(ctx)
	return sum
}

// reach is how many repositories of a round reached the GitHub API, and why the others
// could not.
type reach struct {
	reached, unreachable int
	cause                error // the first failure to reach the API
}

func (s *Syncer) round(ctx context.Context) (Summary, reach) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, err := s.states(ctx)
	if err != nil {
		s.log.Error("sync: read state", "err", err)
	}
	now := s.now()
	var (
		sum   Summary
		rch   reach
		dirty bool
	)
	for _, t := range targets(s.svc.List()) {
		if ctx.Err() != nil {
			break
		}
		var r Result
		if until := deferredUntil(prev[t.key], now); until.IsZero() {
			var (
				changed bool
				cause   error
			)
			r, changed, cause = s.checkRepo(ctx, t, prev[t.key])
			dirty = dirty || changed
			rch.add(cause)
		} else {
			r = Result{Repo: t.repo, Outcome: store.SyncRateLimited, RateLimitedUntil: until, NotChecked: true}
		}
		if s.progress != nil && ctx.Err() == nil {
			s.progress(r)
		}
		sum.add(r)
	}
	if dirty {
		if err := s.svc.Rebuild(ctx); err != nil {
			s.log.Error("sync: rebuild after repository statistics", "err", err)
		}
	}
	return sum, rch
}

func (r *reach) add(cause error) {
	if cause == nil {
		r.reached++
		return
	}
	r.unreachable++
	if r.cause == nil {
		r.cause = cause
	}
}

// logRound is the one log line of a round (the per-repository results are at debug
// level, and in GET /api/v1/admin/sync): what it found, or that GitHub could not be
// reached at all, and when the next round is.
func (s *Syncer) logRound(sum Summary, r reach, next time.Duration) {
	n := len(sum.Results)
	if r.reached == 0 && r.unreachable > 0 {
		s.log.Warn(fmt.Sprintf("sync: %d repositories, 0 reachable: GitHub API %s unreachable (%s), retrying in %s",
			n, s.gh.base.Host, unreachableCause(r.cause), shortDuration(next)))
		return
	}
	line := "sync: " + sum.String() + publishedList(sum)
	if r.unreachable > 0 {
		line += fmt.Sprintf(" (%d of them could not reach the GitHub API: %s)", r.unreachable, unreachableCause(r.cause))
	}
	line += "; next round in " + shortDuration(next)
	if sum.Failed+sum.Errors > 0 {
		s.log.Warn(line + "; per repository: GET /api/v1/admin/sync")
		return
	}
	s.log.Info(line)
}

// publishedList names what a round published, the first few of it: " (published a@1.0.0, b@2.1.0)".
func publishedList(sum Summary) string {
	const shown = 5
	var all []string
	for _, r := range sum.Results {
		all = append(all, r.Published...)
	}
	if len(all) == 0 {
		return ""
	}
	if len(all) > shown {
		return fmt.Sprintf(" (published %s and %d more)", strings.Join(all[:shown], ", "), len(all)-shown)
	}
	return " (published " + strings.Join(all, ", ") + ")"
}

// isUnreachable reports whether err means no answer came from the API at all: a name
// that does not resolve, a refused or dropped connection, a timeout.
func isUnreachable(err error) bool {
	var (
		op  *net.OpError
		dns *net.DNSError
		ue  *url.Error
	)
	return errors.As(err, &op) || errors.As(err, &dns) || (errors.As(err, &ue) && ue.Timeout())
}

// unreachableCause is the network's own words, without the URL around them.
func unreachableCause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// shortDuration writes 15m rather than 15m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (s *Syncer) states(ctx context.Context) (map[string]store.SyncState, error) {
	list, err := s.st.SyncStates(ctx)
	out := make(map[string]store.SyncState, len(list))
	for _, st := range list {
		out[st.Repo] = st
	}
	return out, err
}

// deferredUntil is the repository's rate-limit deadline while it is in the future, else
// zero. A deadline recorded further than MaxRateLimitDelay after its check (by a version
// without the cap) counts as that much.
func deferredUntil(st store.SyncState, now time.Time) time.Time {
	if st.RateLimitedUntil == nil {
		return time.Time{}
	}
	until := *st.RateLimitedUntil
	if limit := st.CheckedAt.Add(MaxRateLimitDelay); until.After(limit) {
		until = limit
	}
	if !until.After(now) {
		return time.Time{}
	}
	return until.UTC()
}

// SyncStates returns the state of every listed repository, in list order; a repository
// never checked has outcome "pending".
func (s *Syncer) SyncStates(ctx context.Context) ([]store.SyncState, error) {
	prev, err := s.states(ctx)
	if err != nil {
		return nil, err
	}
	ts := targets(s.svc.List())
	out := make([]store.SyncState, 0, len(ts))
	for _, t := range ts {
		st, ok := prev[t.key]
		if !ok {
			st = store.SyncState{Repo: t.key, Outcome: "pending", IDs: t.ids, Rules: []string{}, Published: []string{}}
		}
		out = append(out, st)
	}
	return out, nil
}

// Run does a round now and then every interval until ctx ends, logging one summary line
// and calling report (when set) after each. A rate-limited repository sits rounds out
// until its own deadline; the others keep the interval.
func (s *Syncer) Run(ctx context.Context, every time.Duration, report func(Summary)) {
	for {
		sum, rch := s.round(ctx)
		if ctx.Err() != nil {
			return
		}
		s.logRound(sum, rch, every)
		if report != nil {
			report(sum)
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// check is one repository being checked: what was known, what is learnt, what to report.
type check struct {
	t         target
	prev      store.SyncState
	next      store.SyncState
	res       Result
	concluded bool     // the latest release was evaluated (or was unchanged)
	syncRules []string // failures found by sync itself, before the pipeline (audited here)
	// unreachable is set when the API gave no answer at all (see isUnreachable).
	unreachable error
}

// checkRepo checks one repository, records the state, and reports whether repository
// statistics changed, and, when the GitHub API could not be reached, why.
func (s *Syncer) checkRepo(ctx context.Context, t target, prev store.SyncState) (Result, bool, error) {
	c := &check{t: t, prev: prev, next: prev, res: Result{Repo: t.repo}}
	c.next.Repo, c.next.CheckedAt = t.key, s.now()
	c.next.Error, c.next.Rules, c.next.RateLimitedUntil = "", nil, nil
	changed := false
	if s.refreshRepo(ctx, c) && s.checkIdentity(ctx, c) {
		s.syncRelease(ctx, c)
		changed = s.applyStats(ctx, c)
	}
	if c.res.Outcome == "" {
		c.res.Outcome = store.SyncUnchanged
	}
	s.finish(ctx, c)
	return c.res, changed, c.unreachable
}

// refreshRepo reads the repository's ids and statistics; false when the check cannot go on.
func (s *Syncer) refreshRepo(ctx context.Context, c *check) bool {
	repo, etag, modified, err := s.gh.Repository(ctx, c.t.repo, c.prev.RepoETag)
	if err != nil {
		c.apiError(err, "sync.repo.missing", "the repository %s does not exist on GitHub or is private (GET /repos/%s answered 404): fix repo: in plugins.yaml", c.t.repo, c.t.repo)
		return false
	}
	if !modified {
		return true
	}
	c.next.RepoETag = etag
	c.next.RepositoryID, c.next.OwnerID = strconv.FormatInt(repo.ID, 10), strconv.FormatInt(repo.Owner.ID, 10)
	c.next.FullName = repo.FullName
	stars := repo.StargazersCount
	c.next.Stars, c.next.PushedAt = &stars, repo.PushedAt
	if repo.ID == 0 || repo.Owner.ID == 0 {
		c.fail("sync.repo.identity", "GET /repos/%s answered without the repository id or owner id, so its identity cannot be checked", c.t.repo)
		return false
	}
	return true
}

// checkIdentity pins the repository's ids on first use (the subject trusted publishing
// uses) and refuses a repository whose ids differ from the pinned ones.
func (s *Syncer) checkIdentity(ctx context.Context, c *check) bool {
	if c.next.RepositoryID == "" {
		c.errored(fmt.Errorf("no repository ids recorded for %s: the next round reads them again", c.t.repo))
		c.next.RepoETag = ""
		return false
	}
	subject := ingest.PinSubject(c.t.repo)
	pin, err := s.st.PinOnFirstUse(ctx, store.Pin{Subject: subject, Repository: c.t.repo,
		RepositoryID: c.next.RepositoryID, OwnerID: c.next.OwnerID, Source: Actor})
	if err != nil {
		c.errored(err)
		return false
	}
	if pin.RepositoryID == c.next.RepositoryID && pin.OwnerID == c.next.OwnerID {
		if c.next.FullName != "" && !strings.EqualFold(c.next.FullName, c.t.repo) {
			c.res.RenamedTo = c.next.FullName
		}
		return true
	}
	c.fail("sync.identity.changed", "expected repository id %s and owner id %s (pinned for %s from %s on %s), found repository id %s and owner id %s (GitHub names it %s): "+
		"the repository was deleted and re-created, transferred, or its name now belongs to another account, so nothing was pulled. "+
		"If the change is legitimate, an admin runs `registry pin reset %s` and the next round pins the new ids",
		pin.RepositoryID, pin.OwnerID, pin.Repository, pin.Source, pin.PinnedAt.Format(time.DateOnly),
		c.next.RepositoryID, c.next.OwnerID, c.next.FullName, subject)
	return false
}

// syncRelease reads the latest release and publishes each listed id's asset.
func (s *Syncer) syncRelease(ctx context.Context, c *check) {
	etag := c.prev.ReleaseETag
	if !slices.Equal(c.prev.IDs, c.t.ids) {
		etag = "" // a newly listed id needs the release read again
	}
	rel, newETag, modified, err := s.gh.LatestRelease(ctx, c.t.repo, etag)
	if err != nil {
		c.apiError(err, "sync.release.missing", "%s has no published release (GET /repos/%s/releases/latest answered 404; drafts and prereleases do not count): publish a release tagged vX.Y.Z with the package attached", c.t.repo, c.t.repo)
		return
	}
	if !modified {
		c.notModified()
		return
	}
	c.next.Tag, c.next.IDs, c.next.Published = rel.TagName, c.t.ids, nil
	c.res.Tag = rel.TagName
	sums, err := s.releaseChecksums(ctx, rel)
	if err != nil {
		c.errored(err)
		return
	}
	for _, id := range c.t.ids {
		s.publishOne(ctx, c, rel, id, sums)
	}
	if c.res.Outcome != store.SyncError && c.res.Outcome != store.SyncRateLimited {
		c.concluded, c.next.ReleaseETag = true, newETag
	}
}

// notModified carries the previous evaluation of an unchanged release.
func (c *check) notModified() {
	c.concluded, c.res.NotModified = true, true
	c.res.Tag = c.prev.Tag
	if c.prev.Outcome == store.SyncFailed {
		c.res.Outcome, c.res.Error, c.res.Rules = store.SyncFailed, c.prev.Error, c.prev.Rules
	}
}

// applyStats feeds stars and pushed_at to every listed id that has a release; true when
// anything changed.
func (s *Syncer) applyStats(ctx context.Context, c *check) bool {
	if c.next.Stars == nil && c.next.PushedAt == nil {
		return false
	}
	changed := false
	for _, id := range c.t.ids {
		p, err := s.st.Package(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue // no release yet: the next round sets them
		}
		if err != nil {
			s.log.Error("sync: read package", "id", id, "err", err)
			continue
		}
		if sameStats(p, c.next) {
			continue
		}
		if err := s.st.SetRepoStats(ctx, id, c.next.Stars, c.next.PushedAt); err != nil {
			s.log.Error("sync: repository statistics", "id", id, "err", err)
			continue
		}
		changed = true
	}
	return changed
}

func sameStats(p *store.Package, st store.SyncState) bool {
	sameStars := (p.Stars == nil) == (st.Stars == nil) && (p.Stars == nil || *p.Stars == *st.Stars)
	samePushed := (p.PushedAt == nil) == (st.PushedAt == nil) &&
		(p.PushedAt == nil || p.PushedAt.Unix() == st.PushedAt.Unix())
	return sameStars && samePushed
}

// finish records the check, unless it was interrupted, and audits failures found by sync
// itself (the pipeline audits its own refusals).
func (s *Syncer) finish(ctx context.Context, c *check) {
	if ctx.Err() != nil {
		return // interrupted, not failed: the next round checks again
	}
	n := &c.next
	n.Outcome, n.Error, n.Rules = c.res.Outcome, c.res.Error, c.res.Rules
	if c.res.Outcome == store.SyncRateLimited {
		until := c.res.RateLimitedUntil
		n.RateLimitedUntil = &until
	}
	if !c.concluded && !(transientOutcome(c.res.Outcome) && goodOutcome(c.prev.Outcome)) {
		// The stored ETag must only ever stand for a release evaluated as recorded.
		n.ReleaseETag = ""
	}
	if err := s.st.PutSyncState(ctx, *n); err != nil {
		s.log.Error("sync: record state", "repo", c.t.repo, "err", err)
	}
	s.logResult(c.res)
	if len(c.syncRules) > 0 && (c.prev.Outcome != n.Outcome || c.prev.Error != n.Error) {
		e := store.AuditEntry{Actor: Actor, Action: "sync", Target: c.t.repo, Outcome: "refused",
			Detail: map[string]any{"reason": n.Error, "rules": c.syncRules, "tag": n.Tag}}
		if err := s.st.Audit(ctx, e); err != nil {
			s.log.Error("audit write failed", "action", e.Action, "target", e.Target, "err", err)
		}
	}
}

// logResult logs one repository's result at debug level: the round's summary line
// (logRound) is what an operator reads at start and every interval after.
func (s *Syncer) logResult(r Result) {
	s.log.Debug("sync", "result", r.String(), "outcome", r.Outcome)
}

func transientOutcome(o string) bool { return o == store.SyncError || o == store.SyncRateLimited }

func goodOutcome(o string) bool { return o == store.SyncPublished || o == store.SyncUnchanged }

// fail records a refusal found by sync itself.
func (c *check) fail(rule, format string, args ...any) {
	c.syncRules = append(c.syncRules, rule)
	c.failWith([]string{rule}, fmt.Sprintf(format, args...))
}

func (c *check) failWith(rules []string, msg string) {
	c.res.Outcome = worse(c.res.Outcome, store.SyncFailed)
	for _, r := range rules {
		if !slices.Contains(c.res.Rules, r) {
			c.res.Rules = append(c.res.Rules, r)
		}
	}
	c.addError(msg)
}

func (c *check) errored(err error) {
	c.res.Outcome = worse(c.res.Outcome, store.SyncError)
	c.addError(err.Error())
}

func (c *check) addError(msg string) {
	if c.res.Error != "" {
		c.res.Error += "; "
	}
	c.res.Error += msg
}

// apiError sorts an API failure: a rate limit, a 404 (refused with rule and message), or a
// transient error.
func (c *check) apiError(err error, rule, format string, args ...any) {
	var (
		rl *RateLimitError
		se *StatusError
	)
	switch {
	case errors.As(err, &rl):
		c.res.Outcome, c.res.RateLimitedUntil = store.SyncRateLimited, rl.Until
		c.addError(rl.Error())
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		c.fail(rule, format, args...)
	default:
		if isUnreachable(err) {
			c.unreachable = err
		}
		c.errored(err)
	}
}

// worse orders outcomes: rate_limited > error > failed > published > unchanged.
func worse(a, b string) string {
	rank := func(o string) int {
		return slices.Index([]string{"", store.SyncUnchanged, store.SyncPublished, store.SyncFailed, store.SyncError, store.SyncRateLimited}, o)
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
