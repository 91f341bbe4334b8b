package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify/signature"
)

// Provenance never downgrades (OpenSSF build-provenance guidance). A package's first
// release with a verified Sigstore signature from GitHub Actions pins its repository (ids
// and name) and workflow. From then on every release must carry a Sigstore signature from
// the same repository ids and workflow, or it is refused until an admin allows the change
// explicitly:
//
//   - `registry pin reset ID` allows anything once: the next verified release pins again,
//     and an unsigned release in between is accepted;
//   - a plugins.yaml entry whose signing.sigstore block names the new repository or workflow
//     allows that move: the release re-pins, audited with actor "plugins.yaml". Only the
//     signing block counts, not the entry's repo field: a repo edit can ride along in a
//     large list change, a signing block naming a signer is a statement about signing.
//
// A checksums.txt.sig (ed25519) is not provenance: it proves a listed key signed the
// checksums, not which repository and workflow built the package, and it has no
// transparency log. So an ed25519-only release after a Sigstore one is a downgrade too.
// A re-created repository of the same name (new ids) stays signature.identity.changed:
// no list entry can vouch for new ids, only a pin reset.

// pinActor is the audit actor of a re-pin the list allowed.
const pinActor = "plugins.yaml"

// checkProvenance applies the rules above to a release of id whose verified signature is
// res (nil when unsigned).
func (s *Service) checkProvenance(ctx context.Context, id string, lst listing, res *signature.Result) *problem.Problem {
	pin, err := s.store.GetPin(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return pinProblem(err)
	}
	if pin != nil && pin.Source != signature.TypeSigstore {
		pin = nil // not a provenance pin (OIDC and sync pins have "repo:" subjects)
	}
	if res == nil || res.Type != signature.TypeSigstore {
		if pin == nil {
			return nil
		}
		return provenanceMissing(id, pin, res)
	}
	if res.RepositoryID == "" || res.OwnerID == "" {
		if pin == nil {
			return nil // not GitHub Actions: no ids to pin, hence no provenance pin
		}
		return repositoryChanged(id, pin, res)
	}
	if pin == nil {
		return s.pinFirst(ctx, id, res)
	}
	return s.comparePin(ctx, id, lst, pin, res)
}

// pinFirst pins a package's first verified Sigstore identity.
func (s *Service) pinFirst(ctx context.Context, id string, res *signature.Result) *problem.Problem {
	pin, err := s.store.PinOnFirstUse(ctx, pinOf(id, res))
	if err != nil {
		return pinProblem(err)
	}
	if pin.RepositoryID != res.RepositoryID || pin.OwnerID != res.OwnerID {
		return identityChangedProblem(id, pin, res) // another publish pinned first
	}
	return nil
}

// comparePin checks res against the package's pin, re-pinning when the list allows it.
func (s *Service) comparePin(ctx context.Context, id string, lst listing, pin *store.Pin, res *signature.Result) *problem.Problem {
	want := listedSigner(lst.Signing)
	sameIDs := pin.RepositoryID == res.RepositoryID && pin.OwnerID == res.OwnerID
	switch {
	case !sameIDs && strings.EqualFold(pin.Repository, res.Repository):
		return identityChangedProblem(id, pin, res)
	case !sameIDs && !strings.EqualFold(want.Repository, res.Repository):
		return repositoryChanged(id, pin, res)
	case !sameIDs:
		return s.repin(ctx, id, pin, res, pinActor, "signing.sigstore.repository names "+want.Repository)
	case pin.Workflow == "" && res.Workflow != "":
		return s.repin(ctx, id, pin, res, "registry", "the pin predates recorded workflows")
	case sameWorkflow(pin.Workflow, res.Workflow):
		return nil
	case want.Workflow != "" && sameWorkflow(want.Workflow, res.Workflow):
		return s.repin(ctx, id, pin, res, pinActor, "signing.sigstore.workflow names "+want.Workflow)
	}
	return workflowChanged(id, pin, res)
}

// repin replaces the pin with res's identity, audited as actor's, with why.
func (s *Service) repin(ctx context.Context, id string, old *store.Pin, res *signature.Result, actor, why string) *problem.Problem {
	audit := store.AuditEntry{Actor: actor, Action: "pin.replace", Target: id, Outcome: "ok", Detail: map[string]any{
		"why": why, "from_repository": old.Repository, "from_repository_id": old.RepositoryID, "from_workflow": old.Workflow,
		"repository": res.Repository, "repository_id": res.RepositoryID, "workflow": res.Workflow}}
	if err := s.store.ReplacePin(ctx, pinOf(id, res), audit); err != nil {
		return pinProblem(err)
	}
	return nil
}

func pinOf(id string, res *signature.Result) store.Pin {
	return store.Pin{Subject: id, Repository: res.Repository, RepositoryID: res.RepositoryID, OwnerID: res.OwnerID,
		Workflow: signature.NormalizeWorkflow(res.Workflow), Source: signature.TypeSigstore}
}

// listedSigner is what the entry's signing.sigstore block names explicitly (normalized).
func listedSigner(sg *index.Signing) index.SigstoreIdentity {
	if sg == nil || sg.Sigstore == nil {
		return index.SigstoreIdentity{}
	}
	id := *sg.Sigstore
	id.Workflow = signature.NormalizeWorkflow(id.Workflow)
	return id
}

func sameWorkflow(a, b string) bool {
	return signature.NormalizeWorkflow(a) == signature.NormalizeWorkflow(b)
}

// pinned describes a pin for messages: "acme/x (repository id 1, owner id 2), workflow
// .github/workflows/release.yml, pinned on 2026-12-01".
func pinned(p *store.Pin) string {
	wf := ""
	if p.Workflow != "" {
		wf = ", workflow " + p.Workflow
	}
	return fmt.Sprintf("%s (repository id %s, owner id %s)%s, pinned on %s", p.Repository, p.RepositoryID, p.OwnerID, wf,
		p.PinnedAt.Format(time.DateOnly))
}

func provenanceMissing(id string, pin *store.Pin, res *signature.Result) *problem.Problem {
	found := "no signature"
	if res != nil && res.Type == signature.TypeEd25519 {
		found = "only an ed25519 signature of checksums.txt (key " + res.KeyFingerprint + "), which says who holds a key, not which repository and workflow built the package"
	}
	return &problem.Problem{Rule: "provenance.missing", Path: "bundle", Severity: problem.Error, Message: fmt.Sprintf(
		"expected a Sigstore signature from %s, as every release of %s carries since its first verified one; found %s. "+
			"Attach the bundle of actions/attest-build-provenance (form field \"bundle\", or attest: true in the publish Action); "+
			"if %s really stops signing, an admin runs `registry pin reset %s`",
		pinned(pin), id, found, id, id)}
}

func repositoryChanged(id string, pin *store.Pin, res *signature.Result) *problem.Problem {
	found := fmt.Sprintf("%s (repository id %s, owner id %s)", res.Repository, res.RepositoryID, res.OwnerID)
	if res.RepositoryID == "" {
		found = fmt.Sprintf("a certificate from %s with no GitHub repository ids (issuer %s)", res.SAN, res.Issuer)
	}
	return &problem.Problem{Rule: "provenance.repository_changed", Path: "bundle", Severity: problem.Error, Message: fmt.Sprintf(
		"expected a Sigstore signature from %s, the repository of the last verified release of %s; found %s. "+
			"If the package moved legitimately, name the new repository in its plugins.yaml entry (signing.sigstore.repository) "+
			"or an admin runs `registry pin reset %s`", pinned(pin), id, found, id)}
}

func workflowChanged(id string, pin *store.Pin, res *signature.Result) *problem.Problem {
	return &problem.Problem{Rule: "provenance.workflow_changed", Path: "bundle", Severity: problem.Error, Message: fmt.Sprintf(
		"expected a Sigstore signature made by workflow %s of %s, the workflow of the last verified release of %s; found workflow %q. "+
			"Publish from %s, or, if the release workflow changed legitimately, name it in the plugins.yaml entry "+
			"(signing.sigstore.workflow: %s) or an admin runs `registry pin reset %s`",
		pin.Workflow, pinned(pin), id, res.Workflow, pin.Workflow, res.Workflow, id)}
}

func identityChangedProblem(id string, pin *store.Pin, res *signature.Result) *problem.Problem {
	return &problem.Problem{Rule: "signature.identity.changed", Path: "bundle", Severity: problem.Error, Message: fmt.Sprintf(
		"expected a signer from repository id %s (owner id %s), pinned from %s on first use; found repository id %s (owner id %s) for %s. "+
			"A deleted and re-created or transferred repository is refused until an admin runs `registry pin reset %s`",
		pin.RepositoryID, pin.OwnerID, pin.Repository, res.RepositoryID, res.OwnerID, res.Repository, id)}
}

func pinProblem(err error) *problem.Problem {
	return &problem.Problem{Rule: "signature.pin", Path: "bundle", Severity: problem.Error, Message: err.Error()}
}
