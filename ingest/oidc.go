package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
)

// OIDCTokenTTL is how long an upload token obtained by trusted publishing lives.
const OIDCTokenTTL = 15 * time.Minute

// discoveryTimeout bounds one OpenID discovery or key-set fetch.
const discoveryTimeout = 15 * time.Second

// TrustedPublishing exchanges a GitHub Actions OIDC identity token for a short-lived upload
// token scoped to the package ids that plugins.yaml lists for the token's repository.
// It is safe for concurrent use.
type TrustedPublishing struct {
	store    *store.Store
	list     func() *index.List
	issuer   string
	audience string
	log      *slog.Logger
	base     context.Context // values for the key-set fetches; its cancellation is ignored
	client   *http.Client
	now      func() time.Time

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier // nil until discovery succeeds
}

// NewTrustedPublishing returns an exchanger for tokens from issuer whose audience is
// audience. Nothing is fetched until the first Exchange: the issuer's discovery document
// (/.well-known/openid-configuration) and then its jwks_uri are the only URLs it reads.
// ctx carries values for the background key-set fetches; its cancellation is ignored.
func NewTrustedPublishing(ctx context.Context, st *store.Store, list func() *index.List, issuer, audience string, log *slog.Logger) *TrustedPublishing {
	return &TrustedPublishing{
		store: st, list: list, log: log,
		issuer:   strings.TrimSuffix(issuer, "/"),
		audience: audience,
		base:     context.WithoutCancel(ctx),
		client:   &http.Client{Timeout: discoveryTimeout},
		now:      time.Now,
	}
}

// Exchange verifies raw (a JWT) and returns an upload token secret, its expiry and its
// scope. A bad token is an error wrapping ErrUnauthenticated; a valid token whose
// repository is not listed, or whose repository identity changed, is a *Refusal of kind
// ErrForbidden. Every verified identity leaves one "token.oidc" audit entry.
func (tp *TrustedPublishing) Exchange(ctx context.Context, raw string) (string, time.Time, []string, error) {
	c, err := tp.verify(ctx, raw)
	if err != nil {
		if errors.Is(err, ErrUnauthenticated) {
			tp.log.Info("oidc token refused", "err", err)
		}
		return "", time.Time{}, nil, err
	}
	secret, exp, ids, err := tp.grant(ctx, c)
	tp.auditExchange(ctx, c, ids, err)
	if err != nil {
		return "", time.Time{}, nil, err
	}
	return secret, exp, ids, nil
}

// grant maps verified claims to listed ids, checks the pin and creates the upload token.
func (tp *TrustedPublishing) grant(ctx context.Context, c *actionsClaims) (string, time.Time, []string, error) {
	ids := listedIDs(tp.list(), c.Repository)
	if len(ids) == 0 {
		return "", time.Time{}, nil, unlisted(c.Repository)
	}
	if err := tp.checkPin(ctx, c); err != nil {
		return "", time.Time{}, ids, err
	}
	secret, tok, err := CreateToken(ctx, tp.store, TokenSpec{Kind: "upload", Scope: ids,
		Note: "oidc:" + c.Repository, TTL: OIDCTokenTTL}, "oidc:"+c.Repository)
	if err != nil {
		return "", time.Time{}, ids, fmt.Errorf("ingest: oidc: %w", err)
	}
	return secret, *tok.ExpiresAt, ids, nil
}

// listedIDs returns the plugin ids and extension names whose repo is repository: the owner
// compares case-insensitively (GitHub logins do), the name exactly.
func listedIDs(l *index.List, repository string) []string {
	if l == nil {
		return nil
	}
	var ids []string
	for _, e := range l.Plugins {
		if sameRepo(e.Repo, repository) {
			ids = append(ids, e.ID)
		}
	}
	for _, e := range l.Extensions {
		if sameRepo(e.Repo, repository) {
			ids = append(ids, e.Name)
		}
	}
	return ids
}

func sameRepo(listed, claimed string) bool {
	lo, ln, ok := strings.Cut(listed, "/")
	co, cn, ok2 := strings.Cut(claimed, "/")
	return ok && ok2 && strings.EqualFold(lo, co) && ln == cn
}

func unlisted(repository string) *Refusal {
	msg := fmt.Sprintf("repository %s is not listed in this registry's plugins.yaml: no plugins: or extensions: entry has repo: %s. "+
		"Ask the registry's curators to add one (id or name, repo: %s), then reload (POST /api/v1/admin/reload or SIGHUP)",
		repository, repository, repository)
	return refuse(ErrForbidden, problem.List{{Rule: "oidc.repository.unlisted", Path: "repository", Severity: problem.Error, Message: msg}},
		"repository %s is not listed in this registry's plugins.yaml", repository)
}

// PinSubject is the pin subject of a repository used for trusted publishing:
// "repo:" followed by owner/name with the owner lower-cased, e.g. "repo:acme/kandev-plugin-hello".
// `registry pin show|reset` take it as their argument.
func PinSubject(repository string) string {
	owner, name, _ := strings.Cut(repository, "/")
	return "repo:" + strings.ToLower(owner) + "/" + name
}

// checkPin pins the repository's ids on first use and refuses a token whose ids differ
// from the pinned ones: a deleted and re-created repository, or a name now held by
// another account.
func (tp *TrustedPublishing) checkPin(ctx context.Context, c *actionsClaims) error {
	subject := PinSubject(c.Repository)
	pin, err := tp.store.PinOnFirstUse(ctx, store.Pin{Subject: subject, Repository: c.Repository,
		RepositoryID: c.RepositoryID, OwnerID: c.RepositoryOwnerID, Source: "oidc"})
	if err != nil {
		return fmt.Errorf("ingest: oidc: %w", err)
	}
	var probs problem.List
	if pin.RepositoryID != c.RepositoryID {
		probs = append(probs, identityChanged(pin, subject, "repository_id", "repository id", pin.RepositoryID, c.RepositoryID))
	}
	if pin.OwnerID != c.RepositoryOwnerID {
		probs = append(probs, identityChanged(pin, subject, "repository_owner_id", "owner id", pin.OwnerID, c.RepositoryOwnerID))
	}
	if len(probs) == 0 {
		return nil
	}
	return refuse(ErrForbidden, probs, "the identity of repository %s changed since it was pinned as %s", c.Repository, subject)
}

func identityChanged(pin *store.Pin, subject, claim, what, want, got string) problem.Problem {
	return problem.Problem{Rule: "oidc.identity.changed", Path: claim, Severity: problem.Error, Message: fmt.Sprintf(
		"expected %s %s (pinned for %s on %s), found %s: the repository was deleted and re-created or its name now belongs to another account. "+
			"If the change is legitimate, a registry admin runs `registry pin reset %s` and the next publish pins the new ids",
		what, want, pin.Repository, pin.PinnedAt.Format(time.DateOnly), got, subject)}
}

// auditExchange records one exchange of a verified identity.
func (tp *TrustedPublishing) auditExchange(ctx context.Context, c *actionsClaims, ids []string, err error) {
	detail := map[string]any{"repository_id": c.RepositoryID, "owner_id": c.RepositoryOwnerID,
		"workflow_ref": c.WorkflowRef, "ref": c.Ref, "sha": c.SHA, "scope": ids}
	e := store.AuditEntry{Actor: "oidc:" + c.Repository, Action: "token.oidc", Target: c.Repository, Outcome: "ok", Detail: detail}
	var rf *Refusal
	switch {
	case errors.As(err, &rf):
		e.Outcome, detail["reason"], detail["rules"] = "refused", rf.Message, rf.Problems.Rules()
	case err != nil:
		e.Outcome, detail["reason"] = "error", err.Error()
	}
	if aerr := tp.store.Audit(ctx, e); aerr != nil {
		tp.log.Error("audit write failed", "action", e.Action, "target", e.Target, "err", aerr)
	}
}

// actionsClaims are the GitHub Actions claims the exchange reads.
type actionsClaims struct {
	Repository        string `json:"repository"` // owner/name
	RepositoryID      string `json:"repository_id"`
	RepositoryOwnerID string `json:"repository_owner_id"`
	WorkflowRef       string `json:"workflow_ref"`
	Ref               string `json:"ref"`
	SHA               string `json:"sha"`
}

// tokenError is a refused identity token; it wraps ErrUnauthenticated (401).
type tokenError struct{ reason string }

func (e *tokenError) Error() string { return "OIDC token refused: " + e.reason }

func (e *tokenError) Unwrap() error { return ErrUnauthenticated }

// verify checks the token's signature, issuer, audience, expiry and not-before, and
// returns its claims.
func (tp *TrustedPublishing) verify(ctx context.Context, raw string) (*actionsClaims, error) {
	v, err := tp.idVerifier(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		return nil, &tokenError{reason: tp.explain(raw, err)}
	}
	var c actionsClaims
	if err := tok.Claims(&c); err != nil {
		return nil, &tokenError{reason: "its claims are not GitHub Actions claims: " + err.Error()}
	}
	if _, name, ok := strings.Cut(c.Repository, "/"); !ok || name == "" || c.RepositoryID == "" || c.RepositoryOwnerID == "" {
		return nil, &tokenError{reason: fmt.Sprintf("expected the GitHub Actions claims repository (owner/name), repository_id and repository_owner_id, found repository %q, repository_id %q, repository_owner_id %q",
			c.Repository, c.RepositoryID, c.RepositoryOwnerID)}
	}
	return &c, nil
}

// idVerifier discovers the issuer on first use; a failed discovery is retried by the next
// call, so the server starts (and serves everything else) without the network.
func (tp *TrustedPublishing) idVerifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.verifier != nil {
		return tp.verifier, nil
	}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(tp.base, tp.client), discoveryTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the request going away ends discovery too
	defer stop()
	p, err := oidc.NewProvider(dctx, tp.issuer)
	if err != nil {
		return nil, fmt.Errorf("ingest: oidc: discovery of issuer %s (%s/.well-known/openid-configuration) failed; trusted publishing is unavailable until it succeeds: %w",
			tp.issuer, tp.issuer, err)
	}
	tp.verifier = p.VerifierContext(oidc.ClientContext(tp.base, tp.client), &oidc.Config{ClientID: tp.audience, Now: tp.now})
	return tp.verifier, nil
}

// nbfLeeway is go-oidc's clock-skew allowance on "nbf", repeated here to explain refusals.
const nbfLeeway = 5 * time.Minute

var jwtAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512,
	jose.PS256, jose.PS384, jose.PS512, jose.EdDSA}

// explain turns a verification failure into what was expected and what was found. The
// decision is go-oidc's; the unverified claims are read only to say why.
func (tp *TrustedPublishing) explain(raw string, verr error) string {
	now := tp.now()
	var expired *oidc.TokenExpiredError
	if errors.As(verr, &expired) {
		return fmt.Sprintf("expired at %s (now %s): request a fresh token in the publishing job; GitHub's tokens live a few minutes",
			expired.Expiry.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	tok, err := jwt.ParseSigned(raw, jwtAlgs)
	var c jwt.Claims
	if err == nil {
		err = tok.UnsafeClaimsWithoutVerification(&c)
	}
	switch {
	case err != nil:
		return fmt.Sprintf("expected a signed JWT (header.payload.signature) from the GitHub Actions token endpoint: %v", err)
	case c.Issuer != tp.issuer:
		return fmt.Sprintf("wrong issuer: expected %q, found %q (this registry trusts tokens from --oidc-issuer only)", tp.issuer, c.Issuer)
	case !c.Audience.Contains(tp.audience):
		return fmt.Sprintf("wrong audience: expected %q, found %q: request the token with audience=%s (`registry publish --audience`)",
			tp.audience, []string(c.Audience), tp.audience)
	case c.NotBefore != nil && now.Add(nbfLeeway).Before(c.NotBefore.Time()):
		return fmt.Sprintf("not yet valid: its nbf is %s, now is %s: check the clocks of the issuer and the registry",
			c.NotBefore.Time().UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("its signature does not verify against the issuer's published keys (jwks_uri): it was signed by an unknown key, altered, or uses an algorithm the issuer does not publish (%v)", verr)
}
