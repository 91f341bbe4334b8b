package rules

import "github.com/pluginyard/registry/problem"

// table is every rule, section by section. Bad may be empty for a manifest rule whose
// invalid fixture supplies it (fixtures_gen.go); Lang defaults by section.
var table = concat(
	in(Kandev, kandevRules),
	in(Distribution, distributionRules),
	in(Curupira, curupiraRules),
	in(List, listRules),
	in(List, lookalikeRules),
	in(List, scanListRules),
	in(Package, packageRules),
	in(Package, scanRules),
	in(Signature, signatureRules),
	in(Signature, provenanceRules),
	in(Publish, publishRules),
	in(Publish, quarantineRules),
	in(Publish, archiveRules),
	in(Sync, syncRules),
	in(Index, indexRules),
	in(HostAware, hostRules),
	in(Reports, reportRules),
	in(Webhooks, webhookRules),
)

func in(section string, rs []Rule) []Rule {
	out := make([]Rule, len(rs))
	for i, r := range rs {
		r.Section = section
		out[i] = r
	}
	return out
}

func concat(parts ...[]Rule) []Rule {
	var out []Rule
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// e is an error rule: it refuses the package.
func e(id, checks, why, bad, good string) Rule {
	return Rule{ID: id, Severity: problem.Error, Checks: checks, Why: why, Bad: bad, Good: good}
}

// w is a warning rule: it is listed, the package is accepted.
func w(id, checks, why, bad, good string) Rule {
	return Rule{ID: id, Severity: problem.Warning, Checks: checks, Why: why, Bad: bad, Good: good}
}
