package signature_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/verify/signature"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
)

// FuzzMatcher checks, for any literal workflow and ref, that the identity accepts the SAN it
// describes and refuses the same SAN from look-alike repositories.
func FuzzMatcher(f *testing.F) {
	f.Add("release.yml", "refs/tags/v1.2.0")
	f.Add("", "")
	f.Add(".github/workflows/a.b+c.yml", "refs/heads/(main)|x")
	f.Add("x/../y.yml", "refs/tags/v1\\d")
	f.Fuzz(func(t *testing.T, workflow, ref string) {
		if strings.ContainsAny(ref, "*?") {
			return // globs are covered by the table tests
		}
		id := signature.Identity{Repository: "acme/hello", Workflow: workflow, Ref: ref}
		m, err := signature.NewMatcher(id)
		if err != nil {
			return
		}
		w, r := signature.NormalizeWorkflow(workflow), ref
		if w == "" {
			w = ".github/workflows/release.yml"
		}
		if r == "" {
			r = "refs/tags/v1"
		}
		summary := func(repo string) certificate.Summary {
			return certificate.Summary{
				SubjectAlternativeName: "https://github.com/" + repo + "/" + w + "@" + r,
				Extensions:             certificate.Extensions{Issuer: signature.GitHubActionsIssuer},
			}
		}
		if e := m.Check(summary("acme/hello")); e != nil {
			t.Fatalf("own SAN refused: %v", e)
		}
		for _, other := range []string{"acme/hello-evil", "acme/hell", "acme/Hello", "acme-x/hello", "acmex/hello"} {
			if e := m.Check(summary(other)); e == nil {
				t.Fatalf("SAN of %s accepted for %+v", other, id)
			}
		}
	})
}
