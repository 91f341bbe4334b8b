package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
	"github.com/pluginyard/registry/verify/signature"
)

// checkSignatures applies the entry's signing policy: a bundle, when given, must verify
// against the expected identity (required or not: a bad signature is never ignored); a
// checksums.txt.sig must verify against the listed ed25519 keys; a required signature must
// be present. Provenance never downgrades (provenance.go): the first verified Sigstore
// identity of a package pins its repository ids and workflow, and later releases keep them.
func (s *Service) checkSignatures(ctx context.Context, rep *verify.Report, lst listing, bundle []byte, pkgPath string) (*signature.Result, problem.List) {
	var (
		probs   problem.List
		res     *signature.Result
		signing = lst.Signing
	)
	if signing == nil {
		signing = &index.Signing{}
	}
	if len(bundle) > 0 {
		r, p := s.checkBundle(signing, lst.Repo, bundle, pkgPath)
		probs = append(probs, p...)
		res = r
	}
	if len(rep.ChecksumsSig) > 0 {
		r, p := checkEd25519(rep, signing)
		probs = append(probs, p...)
		if res == nil {
			res = r
		}
	}
	if probs.HasErrors() {
		return nil, probs
	}
	if res == nil && signing.Required {
		probs.Errorf("signature.required", "signing.required",
			"plugins.yaml requires a signature for %q but none came with the package: attach a Sigstore bundle (form field \"bundle\") or ship checksums.txt.sig signed by a listed ed25519 key", rep.ID)
		return nil, probs
	}
	if p := s.checkProvenance(ctx, rep.ID, lst, res); p != nil {
		return nil, append(probs, *p)
	}
	return res, probs
}

func (s *Service) checkBundle(signing *index.Signing, repo string, bundle []byte, pkgPath string) (*signature.Result, problem.List) {
	var probs problem.List
	if s.cfg.Sigstore == nil {
		probs.Errorf("signature.root.missing", "bundle",
			"a Sigstore bundle came with the package but this registry has no trusted root configured: the operator must set --sigstore-trusted-root (REGISTRY_SIGSTORE_TRUSTED_ROOT)")
		return nil, probs
	}
	f, err := os.Open(pkgPath)
	if err != nil {
		probs.Errorf("signature.io", "bundle", "could not re-read the package to check its signature: %v", err)
		return nil, probs
	}
	defer f.Close()
	res, err := s.cfg.Sigstore.VerifyBundle(bundle, f, identityFor(signing, repo))
	if err != nil {
		return nil, signatureProblem(err, "bundle")
	}
	return res, nil
}

func checkEd25519(rep *verify.Report, signing *index.Signing) (*signature.Result, problem.List) {
	var probs problem.List
	if len(signing.Ed25519Keys) == 0 {
		probs.Warnf("signature.ed25519.unverifiable", "checksums.txt.sig",
			"the package carries checksums.txt.sig but plugins.yaml lists no ed25519_keys for %q, so it cannot be checked; add the public key under signing.ed25519_keys", rep.ID)
		return nil, probs
	}
	res, err := signature.VerifyEd25519(rep.Checksums, rep.ChecksumsSig, signing.Ed25519Keys)
	if err != nil {
		return nil, signatureProblem(err, "checksums.txt.sig")
	}
	return res, nil
}

func identityFor(signing *index.Signing, repo string) signature.Identity {
	id := signature.Identity{Repository: repo}
	if sg := signing.Sigstore; sg != nil {
		if sg.Repository != "" {
			id.Repository = sg.Repository
		}
		id.Workflow, id.Ref, id.Issuer = sg.Workflow, sg.Ref, sg.Issuer
	}
	return id
}

func signatureProblem(err error, path string) problem.List {
	var se *signature.Error
	if errors.As(err, &se) {
		msg := se.Message
		if se.Expected != "" || se.Found != "" {
			msg = fmt.Sprintf("%s (expected %s; found %s)", se.Message, se.Expected, se.Found)
		}
		return problem.List{{Rule: se.Rule, Path: path, Severity: problem.Error, Message: msg}}
	}
	return problem.List{{Rule: "signature.invalid", Path: path, Severity: problem.Error, Message: err.Error()}}
}
