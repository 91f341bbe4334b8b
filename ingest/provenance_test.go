package ingest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

// signed is a verified Sigstore result from GitHub Actions.
func signed(repo, repoID, workflow string) *signature.Result {
	return &signature.Result{Type: signature.TypeSigstore, Repository: repo, RepositoryID: repoID, OwnerID: "7",
		Workflow: workflow, Ref: "refs/tags/v1.0.0", SAN: "https://github.com/" + repo + "/" + workflow + "@refs/tags/v1.0.0",
		Issuer: signature.GitHubActionsIssuer}
}

const release = ".github/workflows/release.yml"

func TestProvenanceNeverDowngrades(t *testing.T) {
	plain := listing{Repo: "acme/plugin"}
	namesWorkflow := listing{Repo: "acme/plugin", Signing: &index.Signing{Sigstore: &index.SigstoreIdentity{Workflow: "publish.yml"}}}
	namesRepo := listing{Repo: "acme/moved", Signing: &index.Signing{Sigstore: &index.SigstoreIdentity{Repository: "acme/moved"}}}
	ed := &signature.Result{Type: signature.TypeEd25519, KeyFingerprint: "SHA256:abc"}
	tests := []struct {
		name      string
		lst       listing
		next      *signature.Result
		wantRule  string
		wantInMsg []string
		wantPin   store.Pin // the pin after the release
	}{
		{"same signer", plain, signed("acme/plugin", "100", release), "", nil,
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"a new tag of the same workflow", plain, func() *signature.Result {
			r := signed("acme/plugin", "100", release)
			r.Ref = "refs/tags/v2.0.0"
			return r
		}(), "", nil, store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"unsigned", plain, nil, "provenance.missing",
			[]string{"expected a Sigstore signature from acme/plugin (repository id 100", release, "found no signature", "registry pin reset acme-plugin"},
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"ed25519 only", plain, ed, "provenance.missing", []string{"only an ed25519 signature", "SHA256:abc", "registry pin reset acme-plugin"},
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"another workflow", plain, signed("acme/plugin", "100", ".github/workflows/publish.yml"), "provenance.workflow_changed",
			[]string{"expected a Sigstore signature made by workflow " + release, `found workflow ".github/workflows/publish.yml"`,
				"signing.sigstore.workflow: .github/workflows/publish.yml", "registry pin reset acme-plugin"},
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"another workflow the list names", namesWorkflow, signed("acme/plugin", "100", ".github/workflows/publish.yml"), "", nil,
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: ".github/workflows/publish.yml"}},
		{"another repository", listing{Repo: "acme/moved"}, signed("acme/moved", "300", release), "provenance.repository_changed",
			[]string{"expected a Sigstore signature from acme/plugin (repository id 100", "found acme/moved (repository id 300", "signing.sigstore.repository", "registry pin reset acme-plugin"},
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"another repository the signing block names", namesRepo, signed("acme/moved", "300", release), "", nil,
			store.Pin{Repository: "acme/moved", RepositoryID: "300", Workflow: release}},
		{"a certificate without repository ids", plain, &signature.Result{Type: signature.TypeSigstore, SAN: "someone@example.com", Issuer: "https://accounts.example"},
			"provenance.repository_changed", []string{"no GitHub repository ids", "someone@example.com"},
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"a re-created repository of the same name", plain, signed("acme/plugin", "200", release), "signature.identity.changed",
			[]string{"expected a signer from repository id 100", "found repository id 200"},
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
		{"a renamed repository keeps its ids", plain, signed("acme/renamed", "100", release), "", nil,
			store.Pin{Repository: "acme/plugin", RepositoryID: "100", Workflow: release}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := New(mustStore(t), &index.List{}, Config{PublicURL: "http://x"}, discard())
			if p := s.checkProvenance(ctx, "acme-plugin", plain, signed("acme/plugin", "100", release)); p != nil {
				t.Fatalf("first verified release refused: %v", p)
			}
			p := s.checkProvenance(ctx, "acme-plugin", tt.lst, tt.next)
			gotRule := ""
			if p != nil {
				gotRule = p.Rule
				for _, w := range tt.wantInMsg {
					if !strings.Contains(p.Message, w) {
						t.Errorf("message %q does not say %q", p.Message, w)
					}
				}
			}
			if gotRule != tt.wantRule {
				t.Fatalf("rule = %q (%v), want %q", gotRule, p, tt.wantRule)
			}
			pin, err := s.store.GetPin(ctx, "acme-plugin")
			if err != nil {
				t.Fatal(err)
			}
			tt.wantPin.Subject, tt.wantPin.OwnerID, tt.wantPin.Source = "acme-plugin", "7", "sigstore"
			if d := cmp.Diff(tt.wantPin, *pin, cmpopts.IgnoreFields(store.Pin{}, "PinnedAt")); d != "" {
				t.Errorf("pin (-want +got):\n%s", d)
			}
		})
	}
}

func TestProvenanceAllowedByPinReset(t *testing.T) {
	ctx := context.Background()
	s := New(mustStore(t), &index.List{}, Config{PublicURL: "http://x"}, discard())
	lst := listing{Repo: "acme/plugin"}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, signed("acme/plugin", "100", release)); p != nil {
		t.Fatal(p)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, nil); p == nil || p.Rule != "provenance.missing" {
		t.Fatalf("unsigned after a signed release: %v, want provenance.missing", p)
	}
	if err := s.db().DeletePin(ctx, "acme-plugin", store.AuditEntry{Actor: "cli", Action: "pin.reset", Target: "acme-plugin", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, nil); p != nil {
		t.Fatalf("unsigned after the reset: %v", p)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, signed("acme/plugin", "200", ".github/workflows/other.yml")); p != nil {
		t.Fatalf("a new signer after the reset: %v", p)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, signed("acme/plugin", "200", release)); p == nil || p.Rule != "provenance.workflow_changed" {
		t.Fatalf("the new pin is not in force: %v", p)
	}
}

func TestProvenanceRepinIsAudited(t *testing.T) {
	ctx := context.Background()
	s := New(mustStore(t), &index.List{}, Config{PublicURL: "http://x"}, discard())
	if p := s.checkProvenance(ctx, "acme-plugin", listing{Repo: "acme/plugin"}, signed("acme/plugin", "100", release)); p != nil {
		t.Fatal(p)
	}
	lst := listing{Repo: "acme/plugin", Signing: &index.Signing{Sigstore: &index.SigstoreIdentity{Workflow: "publish.yml"}}}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, signed("acme/plugin", "100", ".github/workflows/publish.yml")); p != nil {
		t.Fatal(p)
	}
	entries, err := s.db().AuditLog(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Action == "pin.replace" && e.Actor == "plugins.yaml" && e.Target == "acme-plugin" &&
			e.Detail["from_workflow"] == release && e.Detail["workflow"] == ".github/workflows/publish.yml" {
			return
		}
	}
	t.Fatalf("no pin.replace audit entry by plugins.yaml naming both workflows in %+v", entries)
}

// A pin made before workflows were recorded learns the workflow of the next verified
// release, and enforces it from then on.
func TestProvenanceLegacyPinLearnsWorkflow(t *testing.T) {
	ctx := context.Background()
	s := New(mustStore(t), &index.List{}, Config{PublicURL: "http://x"}, discard())
	if _, err := s.store.PinOnFirstUse(ctx, store.Pin{Subject: "acme-plugin", Repository: "acme/plugin", RepositoryID: "100", OwnerID: "7", Source: "sigstore"}); err != nil {
		t.Fatal(err)
	}
	lst := listing{Repo: "acme/plugin"}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, signed("acme/plugin", "100", release)); p != nil {
		t.Fatalf("legacy pin: %v", p)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", lst, signed("acme/plugin", "100", ".github/workflows/x.yml")); p == nil || p.Rule != "provenance.workflow_changed" {
		t.Fatalf("after learning the workflow: %v, want provenance.workflow_changed", p)
	}
}

// OIDC and sync pins are about the publishing repository, not provenance: a package
// whose only pin is one of those publishes unsigned.
func TestProvenanceIgnoresOtherPins(t *testing.T) {
	ctx := context.Background()
	s := New(mustStore(t), &index.List{}, Config{PublicURL: "http://x"}, discard())
	if _, err := s.store.PinOnFirstUse(ctx, store.Pin{Subject: "acme-plugin", Repository: "acme/plugin", RepositoryID: "100", OwnerID: "7", Source: "oidc"}); err != nil {
		t.Fatal(err)
	}
	if p := s.checkProvenance(ctx, "acme-plugin", listing{Repo: "acme/plugin"}, nil); p != nil {
		t.Fatalf("unsigned with an oidc pin: %v", p)
	}
}

// Through Publish: an unsigned release of a package with a Sigstore pin is a 422
// (ErrInvalid) naming provenance.missing, and nothing is stored.
func TestPublishRefusesProvenanceDowngrade(t *testing.T) {
	ctx := context.Background()
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "first")
	if _, err := s.store.PinOnFirstUse(ctx, store.Pin{Subject: "acme-hello", Repository: "acme/acme-hello", RepositoryID: "100", OwnerID: "7",
		Workflow: release, Source: "sigstore"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publish(ctx, PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.1.0", "unsigned")),
		FileName: PackageFileName("acme-hello", "1.1.0"), Actor: anAdmin})
	if !errors.Is(err, ErrInvalid) || ruleOf(err) != "provenance.missing" {
		t.Fatalf("unsigned after a pin: %v (rule %q), want ErrInvalid with provenance.missing", err, ruleOf(err))
	}
	if _, err := s.store.Release(ctx, "acme-hello", "1.1.0"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused release was stored: %v", err)
	}
}
