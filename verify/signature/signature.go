// Package signature verifies who signed a release: an ed25519 signature over checksums.txt
// against the keys a registry entry lists, or a Sigstore bundle (message signature or DSSE
// in-toto attestation) verified offline against a trusted root and bound to the GitHub
// repository, workflow, ref and OIDC issuer the entry expects.
//
// Every refusal is an *Error carrying a stable rule id and the expected and found identity,
// so that the registry can tell a publisher exactly why a signature was refused.
package signature

import (
	"errors"
	"fmt"
	"time"
)

// Rule ids of refusals. They are stable: tools and metrics key on them.
const (
	RuleRepository     = "signature.identity.repository"
	RuleWorkflow       = "signature.identity.workflow"
	RuleRef            = "signature.identity.ref"
	RuleIssuer         = "signature.identity.issuer"
	RuleChanged        = "signature.identity.changed"
	RuleBundleInvalid  = "signature.bundle.invalid"
	RuleArtifact       = "signature.artifact.mismatch"
	RuleRootUntrusted  = "signature.root.untrusted"
	RuleEd25519Invalid = "signature.ed25519.invalid"
	RuleEd25519Key     = "signature.ed25519.unknown_key"
)

// GitHubActionsIssuer is the OIDC issuer of GitHub Actions tokens, the default Identity.Issuer.
const GitHubActionsIssuer = "https://token.actions.githubusercontent.com"

// Result types and bundle shapes reported in Result.
const (
	TypeSigstore = "sigstore"
	TypeEd25519  = "ed25519"

	BundleMessageSignature = "message_signature"
	BundleDSSE             = "dsse"
)

// ErrInvalidIdentity reports an expected identity that cannot be turned into a policy
// (a malformed repository name, a ref pattern with an '@'). It is a configuration error,
// not a refusal of the signature.
var ErrInvalidIdentity = errors.New("signature: invalid expected identity")

// Identity is the signer a registry entry expects. Repository is "owner/name"; Workflow
// (".github/workflows/release.yml", or just "release.yml") and Ref ("refs/tags/v1.2.0", or a
// glob such as "refs/tags/v*") may be empty to accept any; Issuer defaults to
// GitHubActionsIssuer.
type Identity struct {
	Repository string `json:"repository"`
	Workflow   string `json:"workflow,omitempty"`
	Ref        string `json:"ref,omitempty"`
	Issuer     string `json:"issuer,omitempty"`
}

// Thresholds are how many independent proofs a Sigstore bundle must carry: verified
// transparency log entries, timestamps (log-integrated or RFC 3161, "observer" timestamps)
// and signed certificate timestamps embedded in the certificate. Zero disables a check.
type Thresholds struct {
	TransparencyLog int `json:"transparency_log"`
	Timestamps      int `json:"timestamps"`
	SCTs            int `json:"scts"`
}

// DefaultThresholds are the production values: one of each.
func DefaultThresholds() Thresholds {
	return Thresholds{TransparencyLog: 1, Timestamps: 1, SCTs: 1}
}

// Result describes a verified signature. For Sigstore the fields come from the verified
// certificate (SAN, issuer and Fulcio's GitHub extensions) and the transparency log entry;
// for ed25519 only Type and KeyFingerprint are set.
type Result struct {
	Type           string    `json:"type"`
	SAN            string    `json:"san,omitempty"`
	Issuer         string    `json:"issuer,omitempty"`
	Repository     string    `json:"repository,omitempty"`
	RepositoryID   string    `json:"repository_id,omitempty"`
	OwnerID        string    `json:"owner_id,omitempty"`
	Workflow       string    `json:"workflow,omitempty"`
	Ref            string    `json:"ref,omitempty"`
	CommitSHA      string    `json:"commit_sha,omitempty"`
	RunURL         string    `json:"run_url,omitempty"`
	LogIndex       int64     `json:"log_index,omitempty"`
	IntegratedTime time.Time `json:"integrated_time,omitzero"`
	KeyFingerprint string    `json:"key_fingerprint,omitempty"`
	BundleType     string    `json:"bundle_type,omitempty"`
}

// Error is a refused signature: Rule is one of the Rule constants, Expected and Found are
// the expected and the actual identity (or digest, or key), Message says what to do.
type Error struct {
	Rule     string `json:"rule"`
	Expected string `json:"expected,omitempty"`
	Found    string `json:"found,omitempty"`
	Message  string `json:"message"`
	// Cause is the underlying verification error, when there is one.
	Cause error `json:"-"`
}

// Error renders the refusal on one line with the expected and found values.
func (e *Error) Error() string {
	s := e.Rule + ": " + e.Message
	if e.Expected != "" || e.Found != "" {
		s += fmt.Sprintf(" (expected %q, found %q)", e.Expected, e.Found)
	}
	return s
}

// Unwrap returns the underlying verification error.
func (e *Error) Unwrap() error { return e.Cause }

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func refuse(rule, expected, found, format string, args ...any) *Error {
	return &Error{Rule: rule, Expected: expected, Found: found, Message: fmt.Sprintf(format, args...)}
}
