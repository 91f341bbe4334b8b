package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pluginyard/registry/verify/signature"
)

var checkSignatureHelp = help{
	Summary: "verify a file against a Sigstore bundle and an expected repository",
	Usage: "registry check-signature FILE --bundle B --trusted-root T --repo OWNER/NAME [--workflow W] [--ref R] [--issuer I] [--json]\n" +
		"registry check-signature --digest sha512:HEX --bundle B --trusted-root T --repo OWNER/NAME ...",
	About: `Verifies a Sigstore bundle (cosign sign-blob --bundle, or a GitHub build provenance
attestation) over FILE (or the file known by its --digest), offline against the trusted root
T, and checks that it was signed by a GitHub Actions workflow of OWNER/NAME; prints the
signer identity.
Exit status: 0 verified, 1 refused, 2 on usage or I/O errors.`,
	Example: "registry check-signature acme-hello-1.0.0.tar.gz --bundle acme-hello-1.0.0.sigstore.json \\\n" +
		"    --trusted-root trusted_root.json --repo acme/kandev-plugin-hello --workflow release.yml",
}

// checkSignatureArgs are the parsed flags of check-signature.
type checkSignatureArgs struct {
	file, digest, bundle, root string
	id                         signature.Identity
	th                         signature.Thresholds
	json                       bool
}

// cmdCheckSignature runs `registry check-signature`: it verifies a file against a Sigstore
// bundle and an expected GitHub repository, and prints the signer identity.
func cmdCheckSignature(ctx context.Context, c *cli, args []string) int {
	a, err := parseCheckSignature(c, args)
	var pe parseError
	switch {
	case errors.As(err, &pe):
		return parseExit(pe.err)
	case err != nil:
		return c.usageError("check-signature", "%v", err)
	}
	res, err := runCheckSignature(ctx, a)
	var refusal *signature.Error
	switch {
	case errors.As(err, &refusal):
		return printSignatureRefusal(c, a, refusal)
	case err != nil:
		fmt.Fprintf(c.stderr, "check-signature: %v\n", err)
		return exitUsage
	}
	return printSignatureVerified(c, a, res)
}

// parseError is a flag error (or -h) that parse already reported.
type parseError struct{ err error }

func (e parseError) Error() string { return e.err.Error() }

func parseCheckSignature(c *cli, args []string) (*checkSignatureArgs, error) {
	fs := c.flags("check-signature")
	a := &checkSignatureArgs{}
	fs.StringVar(&a.bundle, "bundle", "", "Sigstore bundle (.sigstore.json)")
	fs.StringVar(&a.root, "trusted-root", "", "Sigstore trusted_root.json (default $REGISTRY_SIGSTORE_TRUSTED_ROOT)")
	fs.StringVar(&a.id.Repository, "repo", "", "expected GitHub repository OWNER/NAME")
	fs.StringVar(&a.id.Workflow, "workflow", "", "expected workflow (release.yml or .github/workflows/release.yml); any if empty")
	fs.StringVar(&a.id.Ref, "ref", "", "expected git ref, exact or a glob (refs/tags/v*); any if empty")
	fs.StringVar(&a.id.Issuer, "issuer", signature.GitHubActionsIssuer, "expected OIDC issuer")
	fs.StringVar(&a.digest, "digest", "", "ALG:HEX digest of the file, instead of FILE")
	d := signature.DefaultThresholds()
	fs.IntVar(&a.th.TransparencyLog, "tlog-threshold", d.TransparencyLog, "transparency log entries required")
	fs.IntVar(&a.th.Timestamps, "timestamp-threshold", d.Timestamps, "timestamps required")
	fs.IntVar(&a.th.SCTs, "sct-threshold", d.SCTs, "signed certificate timestamps required")
	fs.BoolVar(&a.json, "json", false, "print the result as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return nil, parseError{err}
	}
	if a.root == "" && c.getenv != nil {
		a.root = c.getenv("REGISTRY_SIGSTORE_TRUSTED_ROOT")
	}
	switch {
	case len(pos) > 1:
		return nil, fmt.Errorf("one FILE expected, got %d", len(pos))
	case len(pos) == 1 && a.digest != "":
		return nil, errors.New("give FILE or --digest, not both")
	case len(pos) == 0 && a.digest == "":
		return nil, errors.New("FILE (or --digest) is required")
	case a.bundle == "" || a.root == "" || a.id.Repository == "":
		return nil, errors.New("--bundle, --trusted-root and --repo are required")
	}
	if len(pos) == 1 {
		a.file = pos[0]
	}
	return a, nil
}

func runCheckSignature(ctx context.Context, a *checkSignatureArgs) (*signature.Result, error) {
	bundleJSON, err := readBundleFile(a.bundle)
	if err != nil {
		return nil, err
	}
	tm, err := signature.LoadTrustedRoot(a.root)
	if err != nil {
		return nil, err
	}
	v := signature.NewVerifier(tm, a.th)
	if a.digest != "" {
		alg, sum, err := parseDigestFlag(a.digest)
		if err != nil {
			return nil, err
		}
		return v.VerifyBundleDigest(bundleJSON, alg, sum, a.id)
	}
	f, err := os.Open(a.file)
	if err != nil {
		return nil, fmt.Errorf("open file: %w", err)
	}
	defer f.Close()
	return v.VerifyBundle(bundleJSON, ctxReadSeeker{ctx: ctx, ReadSeeker: f}, a.id)
}

func readBundleFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open bundle: %w", err)
	}
	defer f.Close()
	// One byte over the limit lets the signature package report the size.
	b, err := io.ReadAll(io.LimitReader(f, signature.MaxBundleSize+1))
	if err != nil {
		return nil, fmt.Errorf("read bundle %s: %w", path, err)
	}
	return b, nil
}

// parseDigestFlag reads "sha256:HEX", "sha384:HEX" or "sha512:HEX".
func parseDigestFlag(s string) (string, []byte, error) {
	alg, h, ok := strings.Cut(s, ":")
	alg = strings.ToLower(alg)
	sizes := map[string]int{"sha256": 32, "sha384": 48, "sha512": 64}
	size, known := sizes[alg]
	if !ok || !known {
		return "", nil, fmt.Errorf("--digest %q: want sha256:HEX, sha384:HEX or sha512:HEX", s)
	}
	sum, err := hex.DecodeString(h)
	if err != nil || len(sum) != size {
		return "", nil, fmt.Errorf("--digest %q: want %d hex-encoded bytes", s, size)
	}
	return alg, sum, nil
}

// ctxReadSeeker stops reading a large file once the context is done.
type ctxReadSeeker struct {
	ctx context.Context
	io.ReadSeeker
}

func (r ctxReadSeeker) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.ReadSeeker.Read(p)
}

// checkSignatureOutput is the --json document.
type checkSignatureOutput struct {
	Verified bool               `json:"verified"`
	File     string             `json:"file,omitempty"`
	Digest   string             `json:"digest,omitempty"`
	Expected signature.Identity `json:"expected"`
	Signer   *signature.Result  `json:"signer,omitempty"`
	Refusal  *signature.Error   `json:"refusal,omitempty"`
}

func printSignatureVerified(c *cli, a *checkSignatureArgs, r *signature.Result) int {
	if a.json {
		return checkSigJSON(c, checkSignatureOutput{Verified: true, File: a.file, Digest: a.digest, Expected: a.id, Signer: r}, exitOK)
	}
	w := c.stdout
	fmt.Fprintf(w, "verified: %s\n", a.subject())
	fmt.Fprintf(w, "  signer:      %s\n", r.SAN)
	fmt.Fprintf(w, "  issuer:      %s\n", r.Issuer)
	fmt.Fprintf(w, "  repository:  %s%s\n", r.Repository, checkSigIDs(r))
	checkSigField(w, "workflow", r.Workflow)
	checkSigField(w, "ref", r.Ref)
	checkSigField(w, "commit", r.CommitSHA)
	checkSigField(w, "run", r.RunURL)
	checkSigField(w, "bundle", r.BundleType)
	if !r.IntegratedTime.IsZero() {
		fmt.Fprintf(w, "  log entry:   %d, integrated %s\n", r.LogIndex, r.IntegratedTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return exitOK
}

func printSignatureRefusal(c *cli, a *checkSignatureArgs, e *signature.Error) int {
	if a.json {
		return checkSigJSON(c, checkSignatureOutput{File: a.file, Digest: a.digest, Expected: a.id, Refusal: e}, exitInvalid)
	}
	w := c.stdout
	fmt.Fprintf(w, "refused: %s\n", a.subject())
	fmt.Fprintf(w, "  rule:        %s\n", e.Rule)
	fmt.Fprintf(w, "  reason:      %s\n", e.Message)
	checkSigField(w, "expected", e.Expected)
	checkSigField(w, "found", e.Found)
	return exitInvalid
}

func checkSigJSON(c *cli, v any, code int) int {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(c.stderr, "check-signature: write: %v\n", err)
		return exitUsage
	}
	return code
}

func checkSigField(w io.Writer, name, value string) {
	if value != "" {
		fmt.Fprintf(w, "  %-12s %s\n", name+":", value)
	}
}

func checkSigIDs(r *signature.Result) string {
	if r.RepositoryID == "" && r.OwnerID == "" {
		return ""
	}
	return fmt.Sprintf(" (repository id %s, owner id %s)", r.RepositoryID, r.OwnerID)
}

func (a *checkSignatureArgs) subject() string {
	if a.file != "" {
		return a.file
	}
	return a.digest
}
