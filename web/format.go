package web

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const defaultSiteName = "Plugin registry"

// cardDescriptionRunes bounds a card's description so a page of cards stays small.
const cardDescriptionRunes = 180

func siteName(m Meta) string {
	if m.SiteName == "" {
		return defaultSiteName
	}
	return m.SiteName
}

func fullTitle(m Meta) string {
	if m.Title == "" {
		return siteName(m)
	}
	return m.Title + " · " + siteName(m)
}

// SearchURL builds the URL of a home page search, leaving out empty values
// and page 1, so the server can make PrevURL and NextURL the same way the
// page makes its links.
func SearchURL(q, kind, category, sort string, page int) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", q)
	set("kind", kind)
	set("category", category)
	set("sort", sort)
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// CategoryURL is the path of a category page.
func CategoryURL(name string) string { return "/categories/" + url.PathEscape(name) }

// PublisherURL is the path of a publisher page.
func PublisherURL(name string) string { return "/publishers/" + url.PathEscape(name) }

// NewInstall fills an Install, with the one-line check that prints the
// package's sha256 for comparison.
func NewInstall(indexURL, packageURL, sha256 string) Install {
	return Install{
		IndexURL:   indexURL,
		PackageURL: packageURL,
		SHA256:     sha256,
		CurlCheck:  "curl -fsSL " + shellQuote(packageURL) + " | sha256sum",
	}
}

// shellQuote quotes s for a POSIX shell when it holds anything unusual.
func shellQuote(s string) string {
	safe := strings.IndexFunc(s, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./:@+=,%~", r)))
	}) < 0
	if safe && s != "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// compactCount shows 950, 1.2k, 34k, 1.5M.
func compactCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1000)) + "k"
	case n < 1_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1_000_000)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// fullCount shows 1,234,567.
func fullCount(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func downloadsText(n int64) string {
	if n == 1 {
		return "1 download"
	}
	return compactCount(n) + " downloads"
}

// humanSize shows bytes in binary units: 512 B, 4.0 KiB, 12.5 MiB.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}

// letterOf is the letter drawn on a tile when a package has no icon.
func letterOf(name string) string {
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return string(unicode.ToUpper(r))
		}
	}
	return "?"
}

// tileClass picks one of six tile colours from the id, stable across renders.
func tileClass(id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return "tile tile-" + strconv.Itoa(int(h.Sum32()%6))
}

// excerpt shortens s to at most n runes, cutting at a word when it can.
func excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…"
}

func kindLabel(kind string) string {
	switch kind {
	case KindCanvas:
		return "Canvas"
	case KindExtension:
		return "Curupira extension"
	default:
		return "Plugin"
	}
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// checksumsLabel says what the registry found of checksums.txt when it published the release.
func checksumsLabel(v Verification) string {
	switch v.Checksums {
	case ChecksumsVerified:
		if v.ChecksumFiles == 1 {
			return "✓ checksums.txt lists the package's 1 file, and it matches"
		}
		return "✓ checksums.txt lists all " + fullCount(v.ChecksumFiles) + " files, and each matches"
	case ChecksumsAbsent:
		return "No checksums.txt: the package ships none, so its files were not checked against one"
	default:
		return "Not recorded: this release was published before the registry kept what it checked"
	}
}

// checksumsState is the data-checksums value: the state, or "not-recorded".
func checksumsState(s string) string {
	if s == ChecksumsNotRecorded {
		return "not-recorded"
	}
	return s
}

// unsignedHint explains an unsigned release from what was checked.
func unsignedHint(v Verification) string {
	switch v.Checksums {
	case ChecksumsVerified:
		return "This release is not signed: the registry checked its files against checksums.txt, but cannot say who built it."
	case ChecksumsAbsent:
		return "This release is not signed and ships no checksums.txt: the registry checked its archive and manifest, but nothing ties its files to their author."
	default:
		return "This release is not signed: the registry cannot say who built it."
	}
}

func signatureLabel(t string) string {
	switch t {
	case "sigstore":
		return "Sigstore (keyless, GitHub Actions identity)"
	case "ed25519":
		return "ed25519 key over checksums.txt"
	case "":
		return "Not signed"
	default:
		return t
	}
}

// githubURL links a repository ("owner/name") on GitHub.
func githubURL(repo string) string { return "https://github.com/" + repo }

func commitURL(repo, sha string) string { return githubURL(repo) + "/commit/" + sha }

// logEntryURL links a Rekor transparency-log entry by index.
func logEntryURL(index int64) string {
	return "https://search.sigstore.dev/?logIndex=" + strconv.FormatInt(index, 10)
}

// signerSummary names who built a release: "owner/repo, release.yml at refs/tags/v1".
func signerSummary(v Verification) string {
	parts := []string{v.Repository}
	if v.Workflow != "" {
		w := v.Workflow
		if i := strings.LastIndexByte(w, '/'); i >= 0 {
			w = w[i+1:]
		}
		parts = append(parts, w)
	}
	s := strings.Join(parts, ", ")
	if v.Ref != "" {
		s += " at " + v.Ref
	}
	return s
}

// pageCount is the number of pages needed for total items.
func pageCount(total, perPage int) int {
	if perPage <= 0 || total <= 0 {
		return 1
	}
	return (total + perPage - 1) / perPage
}

// rangeText says which results a page shows: "1–24 of 1,000".
func rangeText(page, perPage, total, shown int) string {
	if page < 1 {
		page = 1
	}
	first := (page-1)*perPage + 1
	last := first + shown - 1
	return fullCount(first) + "–" + fullCount(last) + " of " + fullCount(total)
}

func resultsWord(total int) string {
	if total == 1 {
		return "1 result"
	}
	return fullCount(total) + " results"
}

func errorTitle(status int) string {
	switch status {
	case 404:
		return "Page not found"
	case 410:
		return "Gone"
	default:
		if status >= 500 {
			return "Something went wrong"
		}
		return "Request problem"
	}
}

func errorMessage(p ErrorPage) string {
	if p.Message != "" {
		return p.Message
	}
	if p.Status == 404 {
		return "We could not find that page. It may have been renamed, or the plugin may no longer be listed."
	}
	if p.Status >= 500 {
		return "The registry could not show this page. Try again in a moment; if it keeps happening, tell the operator."
	}
	return "The registry could not answer this request."
}

func resultsHeading(p HomePage) string {
	switch {
	case p.Query != "":
		return resultsWord(p.Total) + " for “" + p.Query + "”"
	case p.Category != "":
		return resultsWord(p.Total) + " in " + p.Category
	default:
		return "All packages"
	}
}

func hasRisky(perms []Permission) bool { return countRisky(perms) > 0 }

func countRisky(perms []Permission) int {
	n := 0
	for _, p := range perms {
		if p.Risky {
			n++
		}
	}
	return n
}

func resultsWordPackages(total int) string {
	if total == 1 {
		return "1 package"
	}
	return fullCount(total) + " packages"
}
