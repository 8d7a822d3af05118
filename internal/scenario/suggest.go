package scenario

import (
	"fmt"
	"strings"
)

// suggest returns the candidate closest to word when it is close enough to
// be a likely typo, or "". Comparison ignores case, '_' and '-' so that
// "ignoreCase" and "ignore-case" both find "ignore_case".
func suggest(word string, candidates []string) string {
	w := normaliseKey(word)
	best, bestDist := "", -1
	for _, c := range candidates {
		dist := editDistance(w, normaliseKey(c))
		if bestDist < 0 || dist < bestDist {
			best, bestDist = c, dist
		}
	}
	if bestDist < 0 {
		return ""
	}
	// Short words are too easily "close" to everything: allow one edit
	// below five letters, two up to eight, three beyond.
	limit := 1
	switch n := len(w); {
	case n > 8:
		limit = 3
	case n > 4:
		limit = 2
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// didYouMean formats a suggestion as a diagnostic hint, or "" when there is
// none.
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return ""
}

func normaliseKey(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("_", "", "-", "").Replace(s)
}

// editDistance is the Levenshtein distance over runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
