package problem

import "strings"

// maxSuggestDistance is the largest edit distance Suggest accepts: beyond three edits a
// "did you mean" guesses more than it helps.
const maxSuggestDistance = 3

// maxSuggestLen is the longest name Suggest considers: field names are far shorter, and
// a longer (hostile) name then costs nothing.
const maxSuggestLen = 64

// Suggest returns the known name an author most likely meant by name, or "": the target of
// an alias (e.g. "name" → "display_name") when that target is known, else the known name
// nearest by edit distance (case-insensitive) when it is within a third of name's length
// (one edit at least, three at most). Ties go to the earlier name in known.
//
// Its cost is bounded: a name longer than maxSuggestLen gets no suggestion, and a known
// name whose length differs from name's by more than the distance allowed is skipped
// without comparing.
func Suggest(name string, known []string, aliases map[string]string) string {
	if len(name) > maxSuggestLen {
		return ""
	}
	lower := strings.ToLower(name)
	if target, ok := aliases[lower]; ok && contains(known, target) {
		return target
	}
	limit := min(maxSuggestDistance, max(1, len(lower)/3))
	best, bestDist := "", limit+1
	for _, k := range known {
		if k == name || abs(len(k)-len(lower)) > limit {
			continue
		}
		if d := editDistance(lower, strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// DidYouMean is Suggest phrased for a message: " did you mean `x`?" or "".
func DidYouMean(name string, known []string, aliases map[string]string) string {
	if s := Suggest(name, known, aliases); s != "" {
		return "did you mean `" + s + "`?"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance of a and b in bytes, in two rows.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
