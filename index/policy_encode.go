package index

import "fmt"

// compactEntry is a Kandev entry in compact form: every field the contract (§1) names,
// the description cut to the policy's rune budget, the cover preview only, and of the
// registry's additive fields only what hosts filter by (api_version, platforms) and where
// the rest is (details_url, the per-plugin document).
type compactEntry struct {
	contractEntry
	APIVersion int      `json:"api_version,omitempty"`
	Platforms  []string `json:"platforms"`
	DetailsURL string   `json:"details_url,omitempty"`
}

// EncodePlugin serialises one Kandev entry in full and compact form under p.
func EncodePlugin(pl Plugin, p Policy) (*Encoded, error) {
	e, err := kandevEntryOf(pl)
	if err != nil {
		return nil, err
	}
	full, err := marshalSegment(e)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", pl.ID, err)
	}
	c := compactEntry{contractEntry: e.contractEntry, APIVersion: e.APIVersion, Platforms: e.Platforms}
	c.Description = TruncateRunes(e.Description, p.descriptionMax())
	c.Previews = e.Previews[:min(len(e.Previews), 1)]
	if p.BaseURL != "" {
		c.DetailsURL = p.BaseURL + "/api/v1/index/" + e.ID + ".json"
	}
	compact, err := marshalSegment(c)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", pl.ID, err)
	}
	return newEncoded(&Encoded{ID: e.ID, Categories: e.Categories, Official: pl.Official, Featured: pl.Featured, Archived: pl.Archived,
		Downloads: pl.Downloads, UpdatedAt: pl.UpdatedAt}, full, compact), nil
}

// EncodeExtension serialises one Curupira entry in full and compact form (the description
// cut, the signature summary left to the per-package document).
func EncodeExtension(x Extension, p Policy) (*Encoded, error) {
	if x.Name == "" {
		return nil, fmt.Errorf("an extension has an empty name")
	}
	e := curupiraEntry{
		Name: x.Name, Version: x.Version, Description: x.Description,
		TriggerTypes: nonNil(x.TriggerTypes), Runtime: x.Runtime, ProtocolVersion: x.ProtocolVersion,
		Launch: x.Launch, PackageURL: x.PackageURL, PackageSHA256: nullable(x.PackageSHA256),
		RepoURL: x.RepoURL, Signature: signatureOf(x.Signature), UpdatedAt: nullableTime(x.UpdatedAt),
	}
	full, err := marshalSegment(e)
	if err != nil {
		return nil, fmt.Errorf("extension %q: %w", x.Name, err)
	}
	e.Description, e.Signature = TruncateRunes(e.Description, p.descriptionMax()), nil
	compact, err := marshalSegment(e)
	if err != nil {
		return nil, fmt.Errorf("extension %q: %w", x.Name, err)
	}
	return newEncoded(&Encoded{ID: x.Name, UpdatedAt: x.UpdatedAt}, full, compact), nil
}

// newEncoded sets e's two forms (Full, Compact) from their segments ("," + each form, as
// marshalSegment makes them) and what documents need of each (form), the forms sharing
// the segments' bytes, and returns e.
func newEncoded(e *Encoded, fullSeg, compactSeg []byte) *Encoded {
	ff, cf := formOfSegment(fullSeg), formOfSegment(compactSeg)
	e.Full, e.Compact = ff.seg[1:], cf.seg[1:]
	e.fullForm.Store(ff)
	e.compactForm.Store(cf)
	return e
}
