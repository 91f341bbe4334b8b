package signature

import (
	"strings"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
)

// ResultFromSummary fills a Sigstore Result from a verified certificate summary, preferring
// Fulcio's current extensions and falling back to the deprecated GitHub ones and the SAN.
func ResultFromSummary(s certificate.Summary) *Result {
	x := s.Extensions
	r := &Result{
		Type:         TypeSigstore,
		SAN:          s.SubjectAlternativeName,
		Issuer:       x.Issuer,
		RepositoryID: x.SourceRepositoryIdentifier,
		OwnerID:      x.SourceRepositoryOwnerIdentifier,
		CommitSHA:    first(x.SourceRepositoryDigest, x.GithubWorkflowSHA),
		RunURL:       x.RunInvocationURI,
	}
	r.Repository = first(strings.TrimPrefix(x.SourceRepositoryURI, githubURL), x.GithubWorkflowRepository)
	if r.Repository == "" && strings.HasPrefix(s.SubjectAlternativeName, githubURL) {
		r.Repository = repositoryFromSAN(s.SubjectAlternativeName)
	}
	sanWorkflow, sanRef := splitWorkflowURI(s.SubjectAlternativeName)
	cfgWorkflow, _ := splitWorkflowURI(x.BuildConfigURI)
	r.Workflow = first(cfgWorkflow, sanWorkflow)
	r.Ref = first(x.SourceRepositoryRef, x.GithubWorkflowRef, sanRef)
	return r
}

// splitWorkflowURI splits "https://github.com/o/r/.github/workflows/x.yml@refs/tags/v1" into
// the workflow path and the ref; anything else gives empty strings.
func splitWorkflowURI(u string) (workflow, ref string) {
	rest, ok := strings.CutPrefix(u, githubURL)
	if !ok {
		return "", ""
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 {
		return "", ""
	}
	workflow, ref, _ = strings.Cut(parts[2], "@")
	return workflow, ref
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
