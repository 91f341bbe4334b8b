package verify

// Content scanning: secrets and credential files in a package are refused at publish.
//
// Choice of rules: a hand-kept list of vendor-documented token formats, not a scanning
// library. gitleaks (MIT, github.com/zricethezav/gitleaks/v8 v8.30.1, served by the module
// proxy) was weighed first, as the issue prefers:
//   - its detect package reads sources itself (files, git, archives through
//     github.com/mholt/archives: 7z, rar, brotli, lz4, xz ...); the registry must not
//     decompress a package twice, and verify already streams every file once;
//   - its config package alone (just the rule table) brings 22 modules into the build
//     (spf13/viper with afero, cast, hcl, ini, properties, gotenv, fsnotify; rs/zerolog;
//     golang.org/x/exp; measured with `go list -deps`), loads its 222 rules through viper's
//     global instance, and +4.5 MiB on a binary;
//   - its rules match whole fragments held in memory (the private-key rule needs the whole
//     PEM block in one string), while the registry scans 256 KiB chunks as they stream.
//
// The issue names twelve formats, each a fixed, vendor-documented prefix (ghp_, glpat-,
// npm_, pypi-AgEIcHlwaS5vcmc, AKIA, xoxb-, ...). Their patterns below follow gitleaks'
// rules of the same formats (rule ids in the comments, gitleaks.toml v8.30.1) and its
// technique: a literal keyword finds a candidate, an anchored regular expression confirms
// it, and a Shannon-entropy floor turns placeholders (ghp_xxxx…) away; this registry's own
// tokens are confirmed by their checksum (package token). The rule ids are the registry's
// own (scan.*), so a later switch to a library changes no author-facing id. Cost, measured
// by BenchmarkScanner: about 2.5 ms of CPU per MiB of text, 6 ms per MiB of text made of
// near misses that the pre-filters turn away; BenchmarkScannerWorstCase, text made of
// matches that fail only at the entropy floor or checksum, 25 to 40 ms per MiB (so at
// most about 8 s for a plugin's 200 MiB), linear in the size; binary files are not
// scanned (docs/scanning.md).
//
// Documented example keys pass: AWS publishes AKIAIOSFODNN7EXAMPLE and
// wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for its docs, and a README quoting them leaks
// nothing (gitleaks allows them too). So do public keys, `.env.example` and `.env.sample`.

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/pluginyard/registry/token"
)

// secretRule is one content rule: a match starts at one of keywords and is confirmed by re
// (anchored at the keyword).
type secretRule struct {
	id, what string
	keywords []string
	re       *regexp.Regexp
	// group is the submatch whose entropy is measured (0: the whole match).
	group      int
	minEntropy float64
	// wordStart: the byte before the keyword must not be a letter or digit, so that
	// base64 or hex that merely contains AKIA is not a key id.
	wordStart bool
	// example reports a documented example value that passes.
	example func(m []byte) bool
	// valid, when set, confirms a match (a checksum).
	valid func(m []byte) bool
	// pre is a cheap check of the bytes after the token's fixed prefix (prefix bytes, or
	// the keyword when 0) that most near misses fail (ghp_xxxx, AKIA in prose), so the
	// expression runs only on likely matches.
	pre    func(after []byte) bool
	prefix int
	// tail, when set, finds the rest of a match in the window after re's match: how many
	// bytes it takes, or -1. It is for a long bounded gap, which an expression runs as a
	// slow NFA (a key block's BEGIN line followed by 300 bytes of anything cost 440 ms per
	// MiB that way) and a loop runs in one pass.
	tail func(rest []byte) int
}

// byteSet is set as a lookup table.
func byteSet(set string) *[256]bool {
	var in [256]bool
	for i := 0; i < len(set); i++ {
		in[set[i]] = true
	}
	return &in
}

// runOf passes when at least n bytes of set follow the keyword.
func runOf(set string, n int) func([]byte) bool {
	in := byteSet(set)
	return func(after []byte) bool {
		if len(after) < n {
			return false
		}
		for _, c := range after[:n] {
			if !in[c] {
				return false
			}
		}
		return true
	}
}

// runWithin finds the first run of n bytes of set that starts in the first gap+1 bytes
// of rest, as the expression [\s\S]{0,gap}?[set]{n} would, and returns the length up
// to the run's end, or -1.
func runWithin(set string, gap, n int) func([]byte) int {
	in := byteSet(set)
	return func(rest []byte) int {
		run := 0
		for i, c := range rest[:min(len(rest), gap+n)] {
			if !in[c] {
				run = 0
				continue
			}
			if run++; run == n {
				return i + 1
			}
		}
		return -1
	}
}

// within passes when lit occurs in the first n bytes after the keyword.
func within(lit string, n int) func([]byte) bool {
	return func(after []byte) bool { return bytes.Contains(after[:min(len(after), n)], []byte(lit)) }
}

const (
	alnum  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)

// maxMatch bounds how far past a keyword a match may reach; chunks overlap by this much.
const maxMatch = 512

// secretRules are the content rules, checked in every text file.
var secretRules = []secretRule{
	{ // gitleaks: private-key
		id: "scan.private_key", what: "a private key block",
		keywords: []string{"-----BEGIN"},
		re:       regexp.MustCompile(`\A-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`),
		pre:      within("PRIVATE KEY", 120),
		tail:     runWithin("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 300, 40),
	},
	{ // gitleaks: github-pat, github-oauth, github-app-token, github-refresh-token
		id: "scan.token.github", what: "a GitHub token",
		keywords: []string{"gh"}, prefix: len("ghp_"),
		re: regexp.MustCompile(`\Agh[pousr]_[0-9A-Za-z]{36}\b`), minEntropy: 3, wordStart: true,
		pre: runOf(alnum, 36),
	},
	{ // gitleaks: github-fine-grained-pat
		id: "scan.token.github", what: "a GitHub fine-grained token",
		keywords: []string{"github_pat_"},
		re:       regexp.MustCompile(`\Agithub_pat_[0-9A-Za-z_]{82}\b`), minEntropy: 3, wordStart: true,
		pre: runOf(alnum+"_", 82),
	},
	{ // gitleaks: gitlab-pat, gitlab-pat-routable
		id: "scan.token.gitlab", what: "a GitLab token",
		keywords: []string{"glpat-"},
		re:       regexp.MustCompile(`\Aglpat-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?`), minEntropy: 3, wordStart: true,
		pre: runOf(alnum+"_-", 20),
	},
	{ // gitleaks: npm-access-token
		id: "scan.token.npm", what: "an npm token",
		keywords: []string{"npm_"},
		re:       regexp.MustCompile(`\Anpm_[0-9A-Za-z]{36}\b`), minEntropy: 3, wordStart: true,
		pre: runOf(alnum, 36),
	},
	{ // gitleaks: pypi-upload-token (and its test.pypi.org twin)
		id: "scan.token.pypi", what: "a PyPI token",
		keywords: []string{"pypi-AgE"}, prefix: len("pypi-AgEIcHlwaS5vcmc"),
		re: regexp.MustCompile(`\Apypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[0-9A-Za-z_-]{50,}`), minEntropy: 3, wordStart: true,
		pre: runOf(alnum+"_-", 50),
	},
	{ // gitleaks: aws-access-token (long-term AKIA and temporary ASIA key ids)
		id: "scan.token.aws", what: "an AWS access key id",
		keywords: []string{"AKIA", "ASIA"},
		re:       regexp.MustCompile(`\A(?:AKIA|ASIA)[A-Z2-7]{16}\b`), minEntropy: 3, wordStart: true,
		pre:     runOf(base32, 16),
		example: func(m []byte) bool { return bytes.HasSuffix(m, []byte("EXAMPLE")) },
	},
	{ // gitleaks: aws-secret-key-like assignments; a key named for what it is
		id: "scan.token.aws_secret", what: "an AWS secret access key",
		keywords: []string{"secret_access_key", "SECRET_ACCESS_KEY", "SecretAccessKey"},
		re:       regexp.MustCompile(`\A(?:secret_access_key|SECRET_ACCESS_KEY|SecretAccessKey)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|\z)`),
		group:    1, minEntropy: 4,
		example: func(m []byte) bool { return bytes.Contains(m, []byte("EXAMPLEKEY")) },
	},
	{ // gitleaks: slack-bot-token, slack-user-token, slack-app-token, slack-legacy-*
		id: "scan.token.slack", what: "a Slack token",
		keywords: []string{"xox"}, prefix: len("xoxb-"),
		re: regexp.MustCompile(`\Axox[abprs]-[0-9A-Za-z]{1,40}-[0-9A-Za-z-]{20,250}`), minEntropy: 3, wordStart: true,
		pre: runOf(alnum+"-", 22),
	},
	{ // gitleaks: slack-webhook-url
		id: "scan.token.slack_webhook", what: "a Slack webhook URL",
		keywords: []string{"hooks.slack.com/"},
		re:       regexp.MustCompile(`\Ahooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,120}`), minEntropy: 3.5,
		pre: runOf(alnum+"_/+-", 28),
	},
	{ // this registry's tokens (package token): the prefix, 30 random base62 characters
		// and a CRC-32 checksum, which token.Valid checks, so near misses never refuse
		id: "scan.token.registry", what: "a token of this registry",
		keywords: []string{token.Prefix},
		re:       regexp.MustCompile(`\A` + token.Prefix + `[0-9A-Za-z]{36}\b`), wordStart: true,
		pre:   runOf(alnum, 36),
		valid: func(m []byte) bool { return token.Valid(string(m)) },
	},
	{ // this registry's tokens made before checksums: the prefix and 40 base32 characters
		id: "scan.token.registry", what: "a token of this registry (the format before checksums)",
		keywords: []string{token.Prefix},
		re:       regexp.MustCompile(`\A` + token.Prefix + `[a-z2-7]{40}\b`), minEntropy: 3, wordStart: true,
		pre:   runOf("abcdefghijklmnopqrstuvwxyz234567", 40),
		valid: func(m []byte) bool { return token.Legacy(string(m)) },
	},
}

// keyword is one literal the scanner searches for, with the rules that start with it (the
// registry's two token formats share "pyr_"; GitHub's five classic prefixes are one "gh",
// Slack's five one "xox"): one pass over the bytes per keyword, not per rule or prefix.
type keyword struct {
	text  string
	rules []*secretRule
}

// keywords are the distinct keywords of secretRules, in the rules' order.
var keywords = func() []keyword {
	var out []keyword
	at := map[string]int{}
	for i := range secretRules {
		r := &secretRules[i]
		for _, kw := range r.keywords {
			j, ok := at[kw]
			if !ok {
				j = len(out)
				at[kw] = j
				out = append(out, keyword{text: kw})
			}
			out[j].rules = append(out[j].rules, r)
		}
	}
	return out
}()

// match tries rule r on data at i, where its keyword kw starts. It returns the match's
// length, or 0.
func (r *secretRule) match(data []byte, i int, kw string) int {
	if r.wordStart && i > 0 && isAlnum(data[i-1]) {
		return 0
	}
	window := data[i:min(len(data), i+maxMatch)]
	skip := r.prefix
	if skip == 0 {
		skip = len(kw)
	}
	if r.pre != nil && !r.pre(window[min(skip, len(window)):]) {
		return 0
	}
	loc := r.re.FindSubmatchIndex(window)
	if loc == nil {
		return 0
	}
	end := loc[1]
	if r.tail != nil {
		t := r.tail(window[end:])
		if t < 0 {
			return 0
		}
		end += t
	}
	m := window[loc[0]:end]
	secret := m
	if r.group > 0 {
		secret = window[loc[2*r.group]:loc[2*r.group+1]]
	}
	if entropy(secret) < r.minEntropy || r.example != nil && r.example(m) || r.valid != nil && !r.valid(m) {
		return 0
	}
	return end
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// entropy is the Shannon entropy of b in bits per byte.
func entropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	var h float64
	n := float64(len(b))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// nameRule refuses a file by its base name: files that hold credentials by convention.
type nameRule struct {
	id, what string
	matches  func(base string) bool
}

var nameRules = []nameRule{
	{"scan.file.env", "a dotenv file (environment secrets)", isDotenv},
	{"scan.file.npmrc", "an npm configuration file (it holds registry tokens)", equals(".npmrc")},
	{"scan.file.pypirc", "a PyPI configuration file (it holds upload tokens)", equals(".pypirc")},
	{"scan.file.ssh_key", "an SSH private key file", equals("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")},
}

func equals(names ...string) func(string) bool {
	return func(base string) bool {
		for _, n := range names {
			if base == n {
				return true
			}
		}
		return false
	}
}

// isDotenv: `.env` and `.env.<anything>`, except the templates projects commit on
// purpose (.env.example, .env.sample).
func isDotenv(base string) bool {
	switch base {
	case ".env":
		return true
	case ".env.example", ".env.sample":
		return false
	}
	return strings.HasPrefix(base, ".env.")
}

// scanName checks a file's name against nameRules.
func (a *archive) scanName(name string) {
	base := name[strings.LastIndexByte(name, '/')+1:]
	for _, r := range nameRules {
		if r.matches(base) {
			a.errorf(r.id, name, "the package contains %s, %q; remove it from the package (build from a clean checkout, or exclude it), and if it ever held real secrets, revoke them. A false positive is allowed by the plugins.yaml entry's scan_allow: [{path: %q, rule: %s}]", r.what, base, name, r.id)
		}
	}
}

// ScanRules returns the ids of the content and file-name rules, sorted: the rules a
// plugins.yaml entry's scan_allow may allow for one path. The blocklist's rules are not
// among them; an admin removes a block instead. The list is computed once (every
// scan_allow of a list load asks for it); each caller gets its own copy.
func ScanRules() []string { return slices.Clone(scanRuleIDs) }

var scanRuleIDs = func() []string {
	var out []string
	for _, r := range secretRules {
		out = append(out, r.id)
	}
	for _, r := range nameRules {
		out = append(out, r.id)
	}
	slices.Sort(out)
	return slices.Compact(out)
}()
