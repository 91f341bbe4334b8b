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

// FuzzParseBundle checks that any input is either a bundle or a RuleBundleInvalid refusal.
func FuzzParseBundle(f *testing.F) {
	f.Add(mustRead(f, realBundle))
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bundle, err := signature.ParseBundle(b)
		if err == nil {
			if bundle == nil {
				t.Fatal("nil bundle without error")
			}
			return
		}
		if e, ok := signature.AsError(err); !ok || e.Rule != signature.RuleBundleInvalid {
			t.Fatalf("err = %v, want a %s refusal", err, signature.RuleBundleInvalid)
		}
	})
}

// FuzzDecodeEd25519Signature checks that decoding yields 64 bytes or a RuleEd25519Invalid
// refusal.
func FuzzDecodeEd25519Signature(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add([]byte("AAAA\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sig, err := signature.DecodeEd25519Signature(b)
		if err == nil {
			if len(sig) != 64 {
				t.Fatalf("decoded %d bytes", len(sig))
			}
			return
		}
		if e, ok := signature.AsError(err); !ok || e.Rule != signature.RuleEd25519Invalid {
			t.Fatalf("err = %v, want a %s refusal", err, signature.RuleEd25519Invalid)
		}
	})
}
