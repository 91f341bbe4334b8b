package ingest

import (
	"fmt"
	"strings"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/verify/signature"
)

// pluginEntry maps a listed plugin or canvas to its Kandev index entry, from its card.
func (s *Service) pluginEntry(it *Item) index.Plugin {
	c, e, r := it.Card, it.Entry, it.Latest
	p := index.Plugin{
		ID: it.ID, Kind: it.Kind, Name: c.Name, Description: c.Description, Author: c.Author,
		Categories: it.Categories(), IconURL: it.IconURL, RepoURL: it.RepoURL(), Version: r.Version,
		MinKandevVersion: c.MinKandevVersion, PackageURL: s.PackageURL(it.ID, r.Version), PackageSHA256: r.SHA256,
		Stars: starsOf(it), UpdatedAt: it.UpdatedAt, Downloads: it.Downloads, Signature: signatureSummary(it.Signature),
		Featured: e.Featured, Official: e.Official, VersionsURL: fmt.Sprintf("%s/api/v1/plugins/%s", s.cfg.PublicURL, it.ID),
		License: c.License, APIVersion: c.APIVersion, Platforms: c.Platforms,
	}
	for _, pv := range e.Previews {
		ip := index.Preview{URL: pv.URL, Alt: pv.Alt}
		if rec, ok := s.Preview(pv.URL); ok && rec.Fetched() {
			ip.RegistryURL = s.cfg.PublicURL + PreviewPath(rec)
		}
		p.Previews = append(p.Previews, ip)
	}
	if c.Distribution && c.Permissions != nil {
		p.Permissions = &index.Permissions{Reads: c.Permissions.Reads, Writes: c.Permissions.Writes, Events: c.Permissions.Events,
			SharedState: c.Permissions.SharedState, ExternalOrigins: c.Permissions.ExternalOrigins}
	}
	if it.Signature != nil && it.Signature.Type == "sigstore" && it.Signature.RepositoryID != "" {
		owner, _, _ := strings.Cut(it.Signature.Repository, "/")
		p.Publisher = &index.Publisher{RepositoryID: it.Signature.RepositoryID, OwnerID: it.Signature.OwnerID,
			Login: owner, Repository: it.Signature.Repository, Official: e.Official}
	}
	if pk := it.Package; pk != nil && pk.DeprecatedReason != "" {
		p.Deprecated = &index.Deprecation{Reason: pk.DeprecatedReason, Replacement: pk.DeprecatedReplacement}
	}
	p.Archived = it.Archived()
	return p
}

func (s *Service) extensionEntry(it *Item) index.Extension {
	m, r := it.Extension, it.Latest
	return index.Extension{Name: m.Name, Version: m.Version, Description: m.Description, TriggerTypes: m.TriggerTypes,
		Runtime: m.Runtime, ProtocolVersion: m.ProtocolVersion,
		Launch:     index.Launch{Type: m.Launch.Type, Package: m.Launch.Package, Version: m.Launch.Version, Command: m.Launch.Command, Args: m.Launch.Args},
		PackageURL: s.PackageURL(it.ID, r.Version), PackageSHA256: r.SHA256, RepoURL: it.RepoURL(),
		Signature: signatureSummary(it.Signature), UpdatedAt: it.UpdatedAt}
}

func starsOf(it *Item) *int {
	if it.Package == nil {
		return nil
	}
	return it.Package.Stars
}

// SignatureSummary is the index's summary of a verified signature.
func signatureSummary(r *signature.Result) *index.Signature {
	if r == nil {
		return nil
	}
	id := r.SAN
	if r.Type == "ed25519" {
		id = r.KeyFingerprint
	}
	return &index.Signature{Type: r.Type, Identity: id, Issuer: r.Issuer, Repository: r.Repository, Workflow: r.Workflow,
		Ref: r.Ref, CommitSHA: r.CommitSHA, LogIndex: r.LogIndex, IntegratedTime: r.IntegratedTime}
}
