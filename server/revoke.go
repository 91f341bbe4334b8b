package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
)

// Bounds of a public revocation request: a secret-scanning service may report a batch (a
// JSON array, GitHub's partner format), but a token is 40 bytes and a batch of 32 with
// their URLs fits well within 16 KiB.
const (
	maxRevokeBody   = 16 << 10
	maxRevokeTokens = 32
)

// revokeAnswer is the answer to every well-formed report: the same whether the token was
// live, already revoked or never issued.
type revokeAnswer struct {
	Status  string `json:"status"`
	Tokens  int    `json:"tokens"`
	Message string `json:"message"`
}

// handleTokenRevoke is POST /api/v1/tokens/revoke: anyone who finds a leaked registry
// token hands it in, as {"token": "pyr_…"}, a JSON array of such objects, a form field
// token=, or plain text (one token per line), and it is revoked at once. It needs no
// authentication: holding the secret is the proof, and revoking a leaked token is what
// its owner wants too. It is rate limited per address with the OIDC exchange (the auth
// class), so a bearer header cannot buy a fresh budget.
//
// Every well-formed token gets 202 and the same body, live, already revoked or unknown:
// the answer never confirms that a string someone found is a working credential (a
// scanner's report is often relayed by third parties), and there is nothing the reporter
// must do differently either way. Only a string that is not a registry token at all (no
// pyr_ prefix, a wrong checksum) answers 400, which anyone can compute offline anyway.
func (s *Server) handleTokenRevoke(auth *ingest.Authenticator) echo.HandlerFunc {
	return func(c echo.Context) error { return s.revokeLeaked(c, auth) }
}

func (s *Server) revokeLeaked(c echo.Context, auth *ingest.Authenticator) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxRevokeBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errf(http.StatusRequestEntityTooLarge, fmt.Sprintf("expected a body of at most %d bytes (at most %d tokens), found more; send fewer tokens per request", maxRevokeBody, maxRevokeTokens))
	}
	if err != nil {
		return errf(http.StatusBadRequest, "could not read the request body")
	}
	secrets, err := leakedTokens(c.Request().Header.Get(echo.HeaderContentType), body)
	if err != nil {
		return errf(http.StatusBadRequest, err.Error())
	}
	var malformed []string
	for i, secret := range secrets {
		what, err := auth.RevokeLeaked(c.Request().Context(), secret)
		switch {
		case errors.Is(err, ingest.ErrMalformedToken):
			malformed = append(malformed, fmt.Sprintf("token %d (%d characters)", i+1, len(secret)))
			continue
		case err != nil:
			return err
		}
		s.logLeaked(what)
	}
	if len(malformed) > 0 {
		return errf(http.StatusBadRequest, fmt.Sprintf("%s: expected a registry token, pyr_ and 36 letters and digits whose last 6 are its checksum "+
			"(or an older token: pyr_ and 40 lowercase letters and digits 2-7); any others in this request were processed", strings.Join(malformed, ", ")))
	}
	return c.JSON(http.StatusAccepted, revokeAnswer{Status: "accepted", Tokens: len(secrets),
		Message: "if this is a live token of this registry, it is revoked now; the answer is the same either way"})
}

// logLeaked tells the operator what a report did; the audit log has the token's id.
func (s *Server) logLeaked(what ingest.Leaked) {
	switch what {
	case ingest.LeakedRevoked:
		s.log.Warn("a token was reported leaked and is revoked (POST /api/v1/tokens/revoke); see the audit log for its id")
	case ingest.LeakedEnvAdmin:
		s.log.Error("REGISTRY_ADMIN_TOKEN was reported leaked (POST /api/v1/tokens/revoke); it is configuration, not revocable here: set a new one and restart")
	}
}

// leakedToken is one reported token: {"token": "…"}, with whatever else a scanner sends
// (type, url, source), which is ignored.
type leakedToken struct {
	Token string `json:"token"`
}

// leakedTokens reads the reported tokens from a body of the given content type.
func leakedTokens(contentType string, body []byte) ([]string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	var out []string
	switch mt {
	case "application/json":
		var many []leakedToken
		if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
			if err := json.Unmarshal(trimmed, &many); err != nil {
				return nil, errors.New(`expected a JSON object {"token": "pyr_…"} or an array of them, found JSON that does not decode as either`)
			}
		} else {
			var one leakedToken
			if err := json.Unmarshal(trimmed, &one); err != nil {
				return nil, errors.New(`expected a JSON object {"token": "pyr_…"} or an array of them, found a body that is not`)
			}
			many = []leakedToken{one}
		}
		for _, t := range many {
			out = append(out, strings.TrimSpace(t.Token))
		}
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("expected a form with a token field, found a body that does not parse as a form")
		}
		for _, t := range form["token"] {
			out = append(out, strings.TrimSpace(t))
		}
	default: // text/plain, or none: one token per line
		out = strings.Fields(string(body))
	}
	return checkLeakedCount(out)
}

func checkLeakedCount(secrets []string) ([]string, error) {
	switch {
	case len(secrets) == 0 || (len(secrets) == 1 && secrets[0] == ""):
		return nil, errors.New(`expected a token: send {"token": "pyr_…"} as JSON, token=pyr_… as a form, or the token as plain text`)
	case len(secrets) > maxRevokeTokens:
		return nil, fmt.Errorf("expected at most %d tokens in one request, found %d; send them in several", maxRevokeTokens, len(secrets))
	}
	return secrets, nil
}
