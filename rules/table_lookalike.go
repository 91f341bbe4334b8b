package rules

// lookalikeRules are the look-alike name rules of plugins.yaml (index/confusable*.go).
var lookalikeRules = []Rule{
	e("registry.id.confusable", "No plugin id looks like an earlier one, and no extension name like an earlier extension name: "+
		"not the same once letter case is ignored, nor once the separators '-', '_' and '.' are (npm's rule, stricter than crates.io's), "+
		"nor once look-alike characters are mapped to one spelling (a UTS #39-style skeleton: 0/o, 1/i/l, rn/m, vv/w, Cyrillic and Greek letters that render as Latin, accents, fullwidth forms), "+
		"nor, for names of 4 to 8 characters without separators, one edit apart (one character added, removed or replaced, or two neighbours swapped; one digit for another does not count). "+
		"The message names both entries and the reason; `similar_to_allowed` on either entry allows the pair.",
		"Look-alike names catch installs: a person copies the wrong id from a page, or types one letter wrong, and gets another publisher's code.",
		"plugins:\n  - id: acme-tools\n    repo: acme/kandev-tools\n  - id: acme-too1s\n    repo: mallory/kandev-tools",
		"plugins:\n  - id: acme-tools\n    repo: acme/kandev-tools\n  - id: acme-toolbox\n    repo: other/kandev-toolbox"),
	e("registry.similar_to_allowed", "`similar_to_allowed` is one id (an extension name under extensions:) or a list of at most 16, each valid as an id, none the entry's own.",
		"It names the entries this one may resemble; an entry that resembles more than a handful needs a distinct name.",
		"  - id: acme-ui\n    repo: acme/ui\n    similar_to_allowed: acme-ui",
		"  - id: acme-ux\n    repo: acme/ux\n    similar_to_allowed: acme-ui"),
	e("registry.similar_to_allowed.unknown", "Every `similar_to_allowed` value names an entry listed in the same section (plugins: or extensions:).",
		"An allowance for a name that is not listed would silently allow a look-alike of it listed later.",
		"  - id: acme-ux\n    repo: acme/ux\n    similar_to_allowed: acme-iu",
		"  - id: acme-ux\n    repo: acme/ux\n    similar_to_allowed: acme-ui"),
	w("registry.similar_to_allowed.unused", "Every `similar_to_allowed` value names an entry this one does resemble.",
		"An allowance that allows nothing is most likely a misspelt name, or left behind by a rename.",
		"  - id: acme-stats\n    repo: acme/stats\n    similar_to_allowed: acme-board",
		"  - id: acme-stats\n    repo: acme/stats"),
}
