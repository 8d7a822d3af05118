package config

import "strings"

// Suggest returns the candidate closest to word, for "did you mean"
// hints, or "" when none is a plausible typo.
func Suggest(word string, candidates []string) string { return suggest(word, candidates) }

// suggest returns the candidate closest to s by edit distance, or "" when
// none is close enough to be a plausible typo (distance at most a third of
// the longer word, and at least 1 allowed).
func suggest(s string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		limit := max(len(s), len(c)) / 3
		if limit < 1 {
			limit = 1
		}
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b,
// in bytes: Levenshtein plus adjacent transpositions, the commonest typo
// ("rnu" for "run").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
