package manifest

import "slices"

// Categories returns the categories a manifest may name, the only ones Kandev hosts know:
// plugins.yaml's lint warns about any other curation tag.
func Categories() []string { return slices.Clone(knownCategories) }
