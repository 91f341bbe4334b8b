package ingest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
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
	store    OIDCStore
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
func NewTrustedPublishing(ctx context.Context, st OIDCStore, list func() *index.List, issuer, audience string, log *slog.Logger) *TrustedPublishing {
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
// scope. Each token is exchanged once: its jti is kept until it expires, and a token
// without one is refused. A bad or replayed token is an error wrapping ErrUnauthenticated
// (a replay or a missing jti is a *Refusal with rule oidc.jti.replayed or oidc.jti.missing); a valid token whose
// repository is not listed, or whose repository identity changed, is a *Refusal of kind
// ErrForbidden. Every verified identity leaves one "token.oidc" audit entry.
func (tp *TrustedPublishing) Exchange(ctx context.Context, raw string) (string, time.Time, []string, error) {
	c, err := tp.verify(ctx, raw)
	if err == nil && len(listedIDs(tp.list(), c.Repository)) == 0 {
		// Authorise before writing anything: a repository nothing is listed for does not
		// get to store its jti (it is audited, as every verified identity is).
		err = unlisted(c.Repository)
		tp.auditExchange(ctx, c, nil, err)
		return "", time.Time{}, nil, err
	}
	if err == nil {
		err = tp.consume(ctx, c)
	}
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

// consume makes a verified token single-use: its jti is kept in the store until the
// token expires, so a second exchange of the same token (a leaked log line, a replay
// from another job) is refused, after a restart and on every replica too.
func (tp *TrustedPublishing) consume(ctx context.Context, c *actionsClaims) error {
	err := tp.store.UseJTI(ctx, tp.issuer, c.JTI, c.expiry, tp.now())
	if errors.Is(err, store.ErrConflict) {
		return jtiRefusal("oidc.jti.replayed", fmt.Sprintf("replayed: this token (jti %q) was already exchanged, and an identity token is single-use; "+
			"request a fresh one in the publishing job for every exchange", c.JTI))
	}
	if err != nil {
		return fmt.Errorf("ingest: oidc: %w", err)
	}
	return nil
}

// jtiRefusal is a 401 refusal with its rule.
func jtiRefusal(rule, reason string) *Refusal {
	msg := (&tokenError{reason: reason}).Error()
	return refuse(ErrUnauthenticated, problem.List{{Rule: rule, Path: "jti", Severity: problem.Error, Message: msg}}, "%s", msg)
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
	JTI               string `json:"jti"`        // the token's unique id
	Repository        string `json:"repository"` // owner/name
	RepositoryID      string `json:"repository_id"`
	RepositoryOwnerID string `json:"repository_owner_id"`
	WorkflowRef       string `json:"workflow_ref"`
	Ref               string `json:"ref"`
	SHA               string `json:"sha"`

	expiry time.Time // the verified exp
}

// tokenError is a refused identity token; it wraps ErrUnauthenticated (401).
type tokenError struct{ reason string }

func (e *tokenError) Error() string { return "OIDC token refused: " + e.reason }

func (e *tokenError) Unwrap() error { return ErrUnauthenticated }

// verify checks the token's signature, issuer, audience, expiry and not-before, and
// returns its claims.
// ErrUnavailable is a dependency of trusted publishing (the OIDC issuer) that could not be
// reached: 503, retry later; not the client's fault.
var ErrUnavailable = errors.New("temporarily unavailable")

// jwtSyntax says why raw is not a compact JWS (three base64url segments, a JSON header and
// payload), or "": checked before discovery, so garbage is a 401 whatever the issuer's state.
func jwtSyntax(raw string) string {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return fmt.Sprintf("expected a signed JWT (three dot-separated base64url segments), found %d segment(s)", len(parts))
	}
	for i, name := range []string{"header", "payload"} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || !json.Valid(b) {
			return "expected a signed JWT: its " + name + " is not base64url-encoded JSON"
		}
	}
	if _, err := base64.RawURLEncoding.DecodeString(parts[2]); err != nil || parts[2] == "" {
		return "expected a signed JWT: its signature is missing or not base64url"
	}
	return ""
}

func (tp *TrustedPublishing) verify(ctx context.Context, raw string) (*actionsClaims, error) {
	if why := jwtSyntax(raw); why != "" {
		return nil, &tokenError{reason: why}
	}
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
	switch {
	case c.JTI == "":
		return nil, jtiRefusal("oidc.jti.missing", "it has no jti (token id) claim, so it could not be made single-use; GitHub Actions tokens always carry one")
	case len(c.JTI) > store.MaxJTILen:
		return nil, jtiRefusal("oidc.jti.length", fmt.Sprintf("its jti claim is %d bytes, over the %d-byte limit", len(c.JTI), store.MaxJTILen))
	}
	c.expiry = tok.Expiry
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
	var meta struct {
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err == nil {
		err = p.Claims(&meta)
	}
	if err == nil && meta.JWKSURI == "" {
		err = errors.New("the discovery document names no jwks_uri")
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: oidc: discovery of issuer %s (%s/.well-known/openid-configuration) failed; trusted publishing is %w until it succeeds: %w",
			tp.issuer, tp.issuer, ErrUnavailable, err)
	}
	keys := &keySet{uri: meta.JWKSURI, client: tp.client, base: tp.base, now: func() time.Time { return tp.now() }}
	tp.verifier = oidc.NewVerifier(tp.issuer, keys, &oidc.Config{ClientID: tp.audience, Now: tp.now, SupportedSigningAlgs: signingAlgs(meta.Algs)})
	return tp.verifier, nil
}

// signingAlgs keeps the advertised algorithms this registry verifies; none leaves go-oidc's
// default (RS256).
func signingAlgs(advertised []string) []string {
	var out []string
	for _, a := range advertised {
		if slices.Contains(jwtAlgs, jose.SignatureAlgorithm(a)) {
			out = append(out, a)
		}
	}
	return out
}

// jwksMinInterval is the least time between two fetches of the issuer's key set. A token
// signed with an unknown key id triggers a refresh (keys rotate), but made-up key ids must
// not make every request a fetch: the registry would amplify a flood onto the issuer.
const jwksMinInterval = time.Minute

// maxJWKSBody bounds a key-set answer; GitHub's is a few KB.
const maxJWKSBody = 1 << 20

// keySet is the issuer's JSON Web Key Set (jwks_uri), cached and refreshed at most once
// per jwksMinInterval, whether or not the last fetch succeeded. It implements oidc.KeySet.
type keySet struct {
	uri    string
	client *http.Client
	base   context.Context // values for the fetches; never cancelled
	now    func() time.Time

	fetchMu sync.Mutex // one fetch at a time; held across the request
	mu      sync.Mutex // guards the fields below
	keys    []jose.JSONWebKey
	fetched time.Time // the last attempt
	lastErr error     // its failure, if it failed
}

// VerifySignature returns the payload of raw when a key of the set verifies it, trying the
// cached keys first and a refreshed set only when none does.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, jwtAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, fmt.Errorf("expected one signature, found %d", len(jws.Signatures))
	}
	kid := jws.Signatures[0].Header.KeyID
	k.mu.Lock()
	cached := k.keys
	k.mu.Unlock()
	if payload, ok := verifyWith(jws, cached, kid); ok {
		return payload, nil
	}
	keys, at, err := k.refresh()
	if err != nil {
		return nil, err
	}
	if payload, ok := verifyWith(jws, keys, kid); ok {
		return payload, nil
	}
	return nil, fmt.Errorf("no key of the issuer's key set (fetched %s, refreshed at most once a minute) verifies it (key id %q)",
		at.UTC().Format(time.RFC3339), kid)
}

func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) ([]byte, bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// refresh fetches the key set unless the last attempt is younger than jwksMinInterval; it
// returns the keys then known and when they were fetched.
func (k *keySet) refresh() ([]jose.JSONWebKey, time.Time, error) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.Lock()
	last, lastErr := k.fetched, k.lastErr
	k.mu.Unlock()
	if now := k.now(); last.IsZero() || now.Sub(last) >= jwksMinInterval {
		keys, err := k.fetch()
		k.mu.Lock()
		k.fetched, k.lastErr = now, err
		if err == nil {
			k.keys = keys
		}
		k.mu.Unlock()
		last, lastErr = now, err
	}
	if lastErr != nil {
		return nil, last, fmt.Errorf("the issuer's key set %s could not be fetched at %s (%w); the next attempt is at %s",
			k.uri, last.UTC().Format(time.RFC3339), lastErr, last.Add(jwksMinInterval).UTC().Format(time.RFC3339))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys, last, nil
}

// fetch reads the key set; keys of types or algorithms go-jose does not know are skipped
// (RFC 7517 §5), not fatal.
func (k *keySet) fetch() ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(k.base, discoveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.uri, nil)
	if err != nil {
		return nil, err
	}
	res, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxJWKSBody+1))
	switch {
	case err != nil:
		return nil, err
	case res.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s answered %s", k.uri, res.Status)
	case len(body) > maxJWKSBody:
		return nil, fmt.Errorf("GET %s answered more than %d bytes", k.uri, maxJWKSBody)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("GET %s: not a JSON Web Key Set: %w", k.uri, err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if key.UnmarshalJSON(raw) == nil {
			keys = append(keys, key)
		}
	}
	return keys, nil
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
