package signature

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
)

const githubURL = "https://github.com/"

// GitHub's rules for names, loosely: an owner is letters, digits and '-'; a repository
// name also allows '.' and '_'. Anything else cannot be a GitHub repository.
var (
	ownerRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// Matcher is an Identity compiled into the exact checks applied to a certificate.
type Matcher struct {
	id        Identity // normalized: Issuer and Workflow filled in
	owner     string
	name      string
	san       *regexp.Regexp
	workflow  *regexp.Regexp
	ref       *regexp.Regexp
	repoURI   string
	sanPrefix string
}

// NewMatcher validates id and compiles its policy. It fails with ErrInvalidIdentity.
func NewMatcher(id Identity) (*Matcher, error) {
	owner, name, ok := strings.Cut(id.Repository, "/")
	if !ok || !ownerRE.MatchString(owner) || !repoRE.MatchString(name) || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: repository %q is not \"owner/name\"", ErrInvalidIdentity, id.Repository)
	}
	if id.Issuer == "" {
		id.Issuer = GitHubActionsIssuer
	}
	id.Workflow = NormalizeWorkflow(id.Workflow)
	for _, v := range []string{id.Workflow, id.Ref, id.Issuer} {
		if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
			return nil, fmt.Errorf("%w: %q is not printable text", ErrInvalidIdentity, v)
		}
	}
	if strings.Contains(id.Workflow, "@") || strings.Contains(id.Ref, "@") {
		return nil, fmt.Errorf("%w: workflow and ref cannot contain '@'", ErrInvalidIdentity)
	}
	m := &Matcher{id: id, owner: owner, name: name, repoURI: githubURL + owner + "/" + name,
		sanPrefix: githubURL + owner + "/" + name + "/"}
	var err error
	if m.workflow, err = compile("^" + workflowPattern(id.Workflow) + "$"); err != nil {
		return nil, err
	}
	if m.ref, err = compile("^" + refPattern(id.Ref) + "$"); err != nil {
		return nil, err
	}
	if m.san, err = compile(SANPattern(id)); err != nil {
		return nil, err
	}
	return m, nil
}

func compile(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidIdentity, err)
	}
	return re, nil
}

// Identity returns the normalized identity the matcher checks (default issuer filled in).
func (m *Matcher) Identity() Identity { return m.id }

// NormalizeWorkflow turns a bare workflow file name ("release.yml") into its path in the
// repository (".github/workflows/release.yml"); a path or an empty string is kept.
func NormalizeWorkflow(w string) string {
	if w == "" || strings.Contains(w, "/") {
		return w
	}
	return ".github/workflows/" + w
}

// SANPattern is the anchored regular expression a certificate SAN must match for id:
// ^https://github\.com/<owner>/<repo>/<workflow>@<ref>$ with the owner, repository and
// workflow escaped, an empty workflow or ref as a wildcard that cannot contain '@', and '*'
// and '?' in the ref as glob wildcards. The repository part is literal, so a look-alike
// ("owner/repo-evil", "owner/rep") never matches.
func SANPattern(id Identity) string {
	return "^" + regexp.QuoteMeta(githubURL+id.Repository+"/") +
		workflowPattern(NormalizeWorkflow(id.Workflow)) + "@" + refPattern(id.Ref) + "$"
}

func workflowPattern(w string) string {
	if w == "" {
		return `[^@]+`
	}
	return regexp.QuoteMeta(w)
}

// refPattern translates a ref glob: '*' is any run of characters but '@', '?' one such
// character; everything else is literal.
func refPattern(ref string) string {
	if ref == "" {
		return `[^@]+`
	}
	var b strings.Builder
	for _, r := range ref {
		switch r {
		case '*':
			b.WriteString(`[^@]*`)
		case '?':
			b.WriteString(`[^@]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// Check applies the policy to a verified certificate summary: the OIDC issuer exactly, the
// SAN against SANPattern, and the Fulcio source-repository extensions, when present,
// against the expected repository exactly. The first failing rule is returned.
func (m *Matcher) Check(s certificate.Summary) *Error {
	if s.Extensions.Issuer != m.id.Issuer {
		return refuse(RuleIssuer, m.id.Issuer, s.Extensions.Issuer,
			"the certificate was issued for another OIDC issuer")
	}
	if e := m.checkSAN(s.SubjectAlternativeName); e != nil {
		return e
	}
	return m.checkExtensions(s.Extensions)
}

func (m *Matcher) checkSAN(san string) *Error {
	if m.san.MatchString(san) {
		return nil
	}
	want := SANPattern(m.id)
	rest, ok := strings.CutPrefix(san, m.sanPrefix)
	if !ok {
		return refuse(RuleRepository, m.id.Repository, repositoryFromSAN(san),
			"the signing workflow ran in another repository (certificate SAN %s, want %s)", san, want)
	}
	workflow, ref, _ := strings.Cut(rest, "@")
	if !m.workflow.MatchString(workflow) {
		return refuse(RuleWorkflow, m.id.Workflow, workflow,
			"the release was signed by another workflow (certificate SAN %s)", san)
	}
	expected := m.id.Ref
	if expected == "" {
		expected = "any ref"
	}
	return refuse(RuleRef, expected, ref, "the release was signed from another ref (certificate SAN %s)", san)
}

func (m *Matcher) checkExtensions(x certificate.Extensions) *Error {
	if x.SourceRepositoryURI != "" && x.SourceRepositoryURI != m.repoURI {
		return refuse(RuleRepository, m.repoURI, x.SourceRepositoryURI,
			"the certificate's source repository is another repository")
	}
	if x.GithubWorkflowRepository != "" && x.GithubWorkflowRepository != m.id.Repository {
		return refuse(RuleRepository, m.id.Repository, x.GithubWorkflowRepository,
			"the certificate's workflow repository is another repository")
	}
	return nil
}

// repositoryFromSAN extracts "owner/name" from a GitHub workflow SAN, or returns the SAN.
func repositoryFromSAN(san string) string {
	rest, ok := strings.CutPrefix(san, githubURL)
	if !ok {
		return san
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return san
	}
	return parts[0] + "/" + parts[1]
}
