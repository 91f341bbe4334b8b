package index

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Look-alike names. Two ids (or two extension names) are look-alikes when a person reading
// or typing one can land on the other. nameKeys computes, once per name, the three
// normalisations the check compares; each is coarser than the one before, so equal keys at
// one level imply equal keys at every later one:
//
//   - fold: Unicode case folding (cases.Fold), so "Acme" and "acme" match.
//   - sep: fold with the separators '-', '_' and '.' removed. crates.io treats '-' and '_'
//     as one character; npm goes further and ignores punctuation ("reactnative" is refused
//     next to "react-native"). Removing them (npm's rule) catches both "acme_hello" and
//     "acmehello" next to "acme-hello", which one shared separator would not.
//   - skel: a confusable skeleton in the manner of UTS #39: compatibility decomposition
//     (NFKD, so fullwidth, ligature and mathematical forms become plain letters), accents
//     and other combining marks and invisible format characters dropped, case folded, every
//     dash and connector removed like the separators, and the homoglyphs below mapped to one
//     Latin spelling.
//
// Why a small table rather than the whole of Unicode's confusables.txt: the only Go
// package of that table on the module proxy (github.com/mtibben/confusables) has had no
// change since 2021 and no release (Unicode 13 data, a pseudo-version), and an id here can
// hold nothing but [a-z0-9._-] (checkID) and an extension name nothing but npm's lowercase
// ASCII (checkExtensionName). So the confusables that reach a valid list are the ASCII ones,
// which the table below has in full as UTS #39 lists them (0→o, 1→l, I→l, m→rn) plus the
// two that typosquats use and UTS #39 leaves out (i→l, since the dot is all that tells "i"
// from "l" at small sizes, and w→vv). The Cyrillic and Greek letters that render as Latin
// ones are here for the names that do not pass through ParseList (a List built in Go and
// given to CheckLookalikes) and for the day either grammar widens; with NFKD and the marks
// dropped they cover what homograph attacks on package names have used (Cyrillic а, е, о,
// р, с, х, і in place of Latin).

// homoglyphs maps letters of other scripts that render as Latin letters, upper and lower
// case, to the Latin lowercase letter; it is applied before case folding, so that an upper
// case Greek Β still reads as b (folding would make it β, which looks like nothing Latin).
var homoglyphs = map[rune]string{
	// Cyrillic
	'А': "a", 'а': "a", 'В': "b", 'Е': "e", 'е': "e", 'Ѕ': "s", 'ѕ': "s", 'І': "l", 'і': "l",
	'Ј': "j", 'ј': "j", 'К': "k", 'М': "m", 'Н': "h", 'һ': "h", 'О': "o", 'о': "o", 'Р': "p",
	'р': "p", 'С': "c", 'с': "c", 'Т': "t", 'У': "y", 'у': "y", 'Х': "x", 'х': "x", 'Ӏ': "l",
	'ӏ': "l", 'ԁ': "d", 'Ԛ': "q", 'ԛ': "q", 'Ԝ': "w", 'ԝ': "w", 'Ү': "y", 'ү': "y",
	// Greek
	'Α': "a", 'α': "a", 'Β': "b", 'Ε': "e", 'Ζ': "z", 'Η': "h", 'Ι': "l", 'ι': "l", 'Κ': "k",
	'κ': "k", 'Μ': "m", 'Ν': "n", 'ν': "v", 'Ο': "o", 'ο': "o", 'Ρ': "p", 'ρ': "p", 'Τ': "t",
	'Υ': "y", 'υ': "u", 'Χ': "x", 'χ': "x", 'γ': "y", 'ϲ': "c", 'Ϲ': "c", 'ϳ': "j", 'ω': "w",
	// Latin letters outside ASCII that are not a base letter plus a mark
	'ı': "l", 'ɩ': "l", 'ǀ': "l", 'ɡ': "g", 'ɑ': "a", 'ʏ': "y", 'ᴏ': "o", 'ſ': "s",
}

// latinConfusables maps, after folding, the ASCII characters that render alike to one
// spelling: the UTS #39 mappings of ASCII plus i→l and w→vv (see above). A name's skeleton
// is for comparing only; it is shown as the reason, never used as a name.
var latinConfusables = map[rune]string{'0': "o", '1': "l", 'i': "l", 'm': "rn", 'w': "vv"}

// nameKeys are the normalisations of one name that the look-alike check compares.
type nameKeys struct {
	fold, sep, skel string
	short           bool // sep has minShortName to maxShortName runes: edit distance 1 applies
}

// The edit-distance check applies to names of minShortName to maxShortName runes, counted
// once case and separators are ignored. One edit in a short name is a large share of it,
// and short names are the ones people type from memory; past eight an id one edit from
// another is most often an honest family member ("acme-jira-board" and
// "acme-jira-boards", "kandev-plugin-tag" and "kandev-plugin-tags"), which would otherwise
// each need an allowance, and eight covers the short product names that typosquats target
// (requests, lodash, express, colors) once their separators are removed. Under four, one
// edit makes another word rather than a misspelling (ui and ai, ci and cd, git and gif),
// and every one- or two-letter name would be one edit from dozens of others.
const (
	minShortName = 4
	maxShortName = 8
)

// keyer computes nameKeys; it holds a case folder, which is not safe for concurrent use, so
// each check makes its own.
type keyer struct{ fold cases.Caser }

func newKeyer() *keyer { return &keyer{fold: cases.Fold()} }

func (k *keyer) keys(name string) nameKeys {
	var nk nameKeys
	if isASCII(name) {
		nk.fold = strings.ToLower(name) // ASCII case folding is lowercasing
		nk.skel = k.asciiSkeleton(nk.fold)
	} else {
		nk.fold = k.fold.String(name)
		nk.skel = k.skeleton(name)
	}
	nk.sep = stripSeparators(nk.fold)
	n := utf8.RuneCountInString(nk.sep)
	nk.short = minShortName <= n && n <= maxShortName
	return nk
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isSeparator reports the characters a look-alike ignores: the id separators and, for
// the skeleton, every dash and connector punctuation of Unicode.
func isSeparator(r rune) bool {
	return r == '-' || r == '_' || r == '.' || unicode.In(r, unicode.Pd, unicode.Pc) || r == '·' || r == '・'
}

func stripSeparators(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' {
			return -1
		}
		return r
	}, s)
}

// asciiSkeleton is skeleton for a lowercase ASCII name: no decomposition, marks or other
// scripts to deal with, and the only ASCII dash and connector are '-' and '_'. It is the
// path every valid id takes, so it looks characters up in an array rather than a map.
func (k *keyer) asciiSkeleton(lower string) string {
	var b strings.Builder
	b.Grow(len(lower) + 4)
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		switch {
		case c == '-' || c == '_' || c == '.':
		case asciiConfusables[c] != "":
			b.WriteString(asciiConfusables[c])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// asciiConfusables is latinConfusables as an array indexed by byte.
var asciiConfusables = func() (out [utf8.RuneSelf]string) {
	for r, m := range latinConfusables {
		out[r] = m
	}
	return out
}()

// skeleton is the confusable skeleton of any name (see the comment at the top).
func (k *keyer) skeleton(name string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(name) {
		if m, ok := homoglyphs[r]; ok {
			b.WriteString(m)
			continue
		}
		b.WriteRune(r)
	}
	folded := norm.NFKD.String(k.fold.String(b.String()))
	b.Reset()
	for _, r := range folded {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || isSeparator(r) {
			continue
		}
		if h, ok := homoglyphs[r]; ok { // a lowercase form that folding produced
			for _, l := range h {
				writeLatin(&b, l)
			}
			continue
		}
		writeLatin(&b, r)
	}
	return b.String()
}

// writeLatin writes r as the skeleton spells it.
func writeLatin(b *strings.Builder, r rune) {
	if m, ok := latinConfusables[r]; ok {
		b.WriteString(m)
		return
	}
	b.WriteRune(r)
}

// oneEditApart reports whether a and b differ by exactly one edit: one rune inserted,
// deleted or replaced, or two neighbouring runes swapped (the optimal-string-alignment
// distance 1). A swap is one slip of the fingers, which is why typosquatting studies count
// it as one edit where plain Levenshtein counts two. One digit replaced by another, or two
// neighbouring digits swapped, does not count: "page-01", "page-02" and "page-10", "acme-v1"
// and "acme-v2" read as the different numbers they are, which is how siblings are
// numbered, and the digits that do look like letters (0, 1) are the skeleton's business.
func oneEditApart(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	if len(ra)-len(rb) > 1 {
		return false
	}
	i := 0
	for i < len(rb) && ra[i] == rb[i] {
		i++
	}
	if len(ra) != len(rb) { // one rune more in ra, at i
		return slices.Equal(ra[i+1:], rb[i:])
	}
	if i == len(ra) {
		return false // equal
	}
	if slices.Equal(ra[i+1:], rb[i+1:]) {
		return !(isDigit(ra[i]) && isDigit(rb[i])) // replaced
	}
	swapped := i+1 < len(ra) && ra[i] == rb[i+1] && ra[i+1] == rb[i] && slices.Equal(ra[i+2:], rb[i+2:])
	return swapped && !(isDigit(ra[i]) && isDigit(ra[i+1])) // "page-12" and "page-21" are two numbers
}

func isDigit(r rune) bool { return '0' <= r && r <= '9' }

// deletions returns s and every string made from s by deleting one rune: two strings are
// at most one edit apart (as oneEditApart counts) only if their deletion sets meet, so an
// index of these keys finds the candidates without comparing all pairs.
func deletions(s string, into []string) []string {
	into = append(into[:0], s)
	for i, r := range s {
		into = append(into, s[:i]+s[i+utf8.RuneLen(r):])
	}
	return into
}
