package signature_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pluginyard/registry/verify/signature"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
)

// Fulcio's GitHub extension OIDs (1.3.6.1.4.1.57264.1.*).
func fulcioOID(n int) asn1.ObjectIdentifier {
	return asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, n}
}

const (
	oidIssuerV1         = 1 // raw bytes (deprecated)
	oidWorkflowRepoV1   = 5 // raw bytes (deprecated)
	oidIssuerV2         = 8 // DER UTF8String, like all below
	oidSourceRepoURI    = 12
	oidSourceRepoDigest = 13
	oidSourceRepoRef    = 14
	oidSourceRepoID     = 15
	oidOwnerID          = 17
	oidBuildConfigURI   = 18
	oidRunInvocationURI = 21
)

// certSpec describes a Fulcio-like leaf certificate: a URI SAN and extension values by OID
// number; the deprecated OIDs are written raw, the others DER-encoded as Fulcio does.
type certSpec struct {
	san string
	ext map[int]string
}

func githubCert(san string) certSpec {
	return certSpec{san: san, ext: map[int]string{
		oidIssuerV2:         signature.GitHubActionsIssuer,
		oidSourceRepoURI:    "https://github.com/acme/kandev-plugin-hello",
		oidSourceRepoDigest: "0123456789abcdef0123456789abcdef01234567",
		oidSourceRepoRef:    "refs/tags/v1.2.0",
		oidSourceRepoID:     "123456",
		oidOwnerID:          "7890",
		oidBuildConfigURI:   "https://github.com/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/tags/v1.2.0",
		oidRunInvocationURI: "https://github.com/acme/kandev-plugin-hello/actions/runs/42/attempts/1",
	}}
}

func (c certSpec) with(oid int, value string) certSpec {
	ext := make(map[int]string, len(c.ext)+1)
	for k, v := range c.ext {
		ext[k] = v
	}
	if value == "" {
		delete(ext, oid)
	} else {
		ext[oid] = value
	}
	return certSpec{san: c.san, ext: ext}
}

func (c certSpec) summary(tb testing.TB) certificate.Summary {
	tb.Helper()
	u, err := url.Parse(c.san)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Unix(1700000000, 0),
		NotAfter:     time.Unix(1700000600, 0),
		URIs:         []*url.URL{u},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	for oid, v := range c.ext {
		value := []byte(v)
		if oid != oidIssuerV1 && oid != oidWorkflowRepoV1 {
			if value, err = asn1.MarshalWithParams(v, "utf8"); err != nil {
				tb.Fatal(err)
			}
		}
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: fulcioOID(oid), Value: value})
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := certificate.SummarizeCertificate(cert)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestIdentityRules(t *testing.T) {
	hello := githubCert(helloSAN)
	tests := []struct {
		name     string
		cert     certSpec
		id       signature.Identity
		wantRule string // "" accepts
	}{
		{"exact identity", hello, signature.Identity{Repository: helloRepo, Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1.2.0"}, ""},
		{"any workflow and ref", hello, signature.Identity{Repository: helloRepo}, ""},
		{"bare workflow file name", hello, signature.Identity{Repository: helloRepo, Workflow: "release.yml"}, ""},
		{"ref glob", hello, signature.Identity{Repository: helloRepo, Ref: "refs/tags/v*"}, ""},
		{"ref glob single char", hello, signature.Identity{Repository: helloRepo, Ref: "refs/tags/v?.2.0"}, ""},
		{"deprecated extensions", certSpec{san: helloSAN, ext: map[int]string{oidIssuerV1: signature.GitHubActionsIssuer, oidWorkflowRepoV1: helloRepo}},
			signature.Identity{Repository: helloRepo}, ""},
		{"no source repository extension", hello.with(oidSourceRepoURI, ""), signature.Identity{Repository: helloRepo}, ""},

		{"other repository", hello, signature.Identity{Repository: "acme/other"}, signature.RuleRepository},
		{"other owner", hello, signature.Identity{Repository: "evil/kandev-plugin-hello"}, signature.RuleRepository},
		{"expected is a prefix", hello, signature.Identity{Repository: "acme/kandev-plugin-hel"}, signature.RuleRepository},
		{"case differs", hello, signature.Identity{Repository: "acme/Kandev-Plugin-Hello"}, signature.RuleRepository},
		{"look-alike SAN", githubCert("https://github.com/acme/kandev-plugin-hello-evil/.github/workflows/release.yml@refs/tags/v1.2.0"),
			signature.Identity{Repository: helloRepo}, signature.RuleRepository},
		{"look-alike host", githubCert("https://github.com.evil.example/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/tags/v1.2.0"),
			signature.Identity{Repository: helloRepo}, signature.RuleRepository},
		{"reusable workflow of another repository", githubCert("https://github.com/acme/shared/.github/workflows/release.yml@refs/heads/main"),
			signature.Identity{Repository: helloRepo}, signature.RuleRepository},
		{"SAN right, source repository extension look-alike", hello.with(oidSourceRepoURI, "https://github.com/acme/kandev-plugin-hello-evil"),
			signature.Identity{Repository: helloRepo}, signature.RuleRepository},
		{"SAN right, source repository extension case differs", hello.with(oidSourceRepoURI, "https://github.com/acme/KANDEV-plugin-hello"),
			signature.Identity{Repository: helloRepo}, signature.RuleRepository},
		{"SAN right, deprecated repository extension differs", hello.with(oidWorkflowRepoV1, "acme/kandev-plugin-hello2"),
			signature.Identity{Repository: helloRepo}, signature.RuleRepository},
		{"other workflow", hello, signature.Identity{Repository: helloRepo, Workflow: "ci.yml"}, signature.RuleWorkflow},
		{"workflow is a prefix", hello, signature.Identity{Repository: helloRepo, Workflow: ".github/workflows/release"}, signature.RuleWorkflow},
		{"other ref", hello, signature.Identity{Repository: helloRepo, Ref: "refs/heads/main"}, signature.RuleRef},
		{"ref dot is literal", githubCert("https://github.com/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/tags/v1x2x0"),
			signature.Identity{Repository: helloRepo, Ref: "refs/tags/v1.2.0"}, signature.RuleRef},
		{"ref glob on a branch", githubCert("https://github.com/acme/kandev-plugin-hello/.github/workflows/release.yml@refs/heads/v1"),
			signature.Identity{Repository: helloRepo, Ref: "refs/tags/v*"}, signature.RuleRef},
		{"second @ in SAN", githubCert(helloSAN + "@refs/heads/evil"), signature.Identity{Repository: helloRepo}, signature.RuleRef},
		{"other issuer", hello.with(oidIssuerV2, "https://gitlab.com"), signature.Identity{Repository: helloRepo}, signature.RuleIssuer},
		{"no issuer", hello.with(oidIssuerV2, ""), signature.Identity{Repository: helloRepo}, signature.RuleIssuer},
		{"expected issuer not the default", hello, signature.Identity{Repository: helloRepo, Issuer: "https://gitlab.com"}, signature.RuleIssuer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := signature.NewMatcher(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			e := m.Check(tt.cert.summary(t))
			var got string
			if e != nil {
				got = e.Rule
			}
			if got != tt.wantRule {
				t.Errorf("rule = %q, want %q (%v)", got, tt.wantRule, e)
			}
		})
	}
}

func TestRefusalNamesExpectedAndFound(t *testing.T) {
	m, err := signature.NewMatcher(signature.Identity{Repository: helloRepo, Workflow: "release.yml", Ref: "refs/tags/v*"})
	if err != nil {
		t.Fatal(err)
	}
	got := m.Check(githubCert("https://github.com/acme/kandev-plugin-hello-evil/.github/workflows/release.yml@refs/tags/v1").summary(t))
	want := &signature.Error{Rule: signature.RuleRepository, Expected: helloRepo, Found: "acme/kandev-plugin-hello-evil",
		Message: "the signing workflow ran in another repository (certificate SAN " +
			"https://github.com/acme/kandev-plugin-hello-evil/.github/workflows/release.yml@refs/tags/v1, want " +
			`^https://github\.com/acme/kandev-plugin-hello/\.github/workflows/release\.yml@refs/tags/v[^@]*$)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSANPattern(t *testing.T) {
	tests := []struct {
		id   signature.Identity
		want string
	}{
		{signature.Identity{Repository: "acme/hello.go"}, `^https://github\.com/acme/hello\.go/[^@]+@[^@]+$`},
		{signature.Identity{Repository: "acme/x", Workflow: "release.yml", Ref: "refs/tags/v*"},
			`^https://github\.com/acme/x/\.github/workflows/release\.yml@refs/tags/v[^@]*$`},
		{signature.Identity{Repository: "acme/x", Workflow: "ci/build.yaml", Ref: "refs/tags/v1.0+rc?"},
			`^https://github\.com/acme/x/ci/build\.yaml@refs/tags/v1\.0\+rc[^@]$`},
	}
	for _, tt := range tests {
		if got := signature.SANPattern(tt.id); got != tt.want {
			t.Errorf("SANPattern(%+v) = %s, want %s", tt.id, got, tt.want)
		}
	}
}

func TestNewMatcherRejectsBadIdentity(t *testing.T) {
	for _, id := range []signature.Identity{
		{Repository: "acme"}, {Repository: "acme/"}, {Repository: "/hello"}, {Repository: "acme/hello/extra"},
		{Repository: "acme/.."}, {Repository: "ac me/hello"}, {Repository: "acme/hel(lo"}, {Repository: "-acme/hello"},
		{Repository: "acme/hello", Workflow: "release.yml@main"}, {Repository: "acme/hello", Ref: "refs/tags/v1@x"},
		{Repository: "acme/hello", Workflow: "\xed"}, {Repository: "acme/hello", Ref: "refs/tags/v1\n"},
	} {
		if _, err := signature.NewMatcher(id); !errors.Is(err, signature.ErrInvalidIdentity) {
			t.Errorf("NewMatcher(%+v) = %v, want ErrInvalidIdentity", id, err)
		}
	}
}

func TestResultFromSummary(t *testing.T) {
	got := signature.ResultFromSummary(githubCert(helloSAN).summary(t))
	want := &signature.Result{
		Type: signature.TypeSigstore, SAN: helloSAN, Issuer: signature.GitHubActionsIssuer,
		Repository: helloRepo, RepositoryID: "123456", OwnerID: "7890",
		Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1.2.0",
		CommitSHA: "0123456789abcdef0123456789abcdef01234567",
		RunURL:    "https://github.com/acme/kandev-plugin-hello/actions/runs/42/attempts/1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
