package diag

import (
	"fmt"
	"slices"
	"strings"
)

// Suggest returns the candidate closest to word when it is close enough to
// be a likely typo, or "" when none is. It is the one "did you mean" rule
// of agenttest: YAML keys of suites, targets and agent definitions, tag
// parameters, subcommands and node names all go through it, so a typo is
// caught (or not) the same way everywhere.
//
// Comparison ignores case, '_' and '-' ("ignoreCase" and "ignore-case"
// find "ignore_case"). The distance is the optimal string alignment
// distance over runes: Levenshtein plus the swap of two neighbours, the
// commonest typo ("evn" for "env"). Short words are too easily close to
// everything, so the budget grows with the word: one edit up to four
// letters, two up to eight, three beyond. Ties go to the candidate that
// sorts first, so the hint does not depend on the order of a map.
//
// Before the distance, a word is looked up in synonyms: "expect_text" is
// nowhere near "response" by spelling, only by meaning.
func Suggest(word string, candidates []string) string {
	if s := Synonym(word); s != "" && slices.Contains(candidates, s) {
		return s
	}
	w := normalise(word)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := EditDistance(w, normalise(c))
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	limit := 1
	switch n := len([]rune(w)); {
	case n > 8:
		limit = 3
	case n > 4:
		limit = 2
	}
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// DidYouMean formats Suggest's answer as a diagnostic hint, `did you mean
// "x"?`, or "" when there is nothing to suggest.
func DidYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return ""
}

// synonyms are the names other test tools and platforms give a check of
// agenttest's, normalised as Suggest compares them, with the key they
// mean. Only words that can mean one check are here: "message" (the user's
// or the agent's?) and "slots" are not. A synonym is offered only where its
// key is known (Suggest's candidates), so "text" is taken for "response"
// in expect: and for nothing in a target.
var synonyms = map[string]string{
	// The agent's reply text.
	"expecttext": "response", "text": "response", "reply": "response",
	"answer": "response", "responsetext": "response", "replytext": "response",
	// The nodes the turn went through.
	"nodetrace": "trace", "nodes": "trace", "path": "trace", "nodepath": "trace",
	// The node the turn ended in.
	"currentnode": "node", "endnode": "node",
	// The agent's variables.
	"variables": "state", "vars": "state",
	// The handoff to a human.
	"handoffto": "handoff", "handover": "handoff", "transfer": "handoff",
}

// Synonym is the key word is another name for (synonyms), or "".
func Synonym(word string) string { return synonyms[normalise(word)] }

var keySeparators = strings.NewReplacer("_", "", "-", "")

func normalise(s string) string { return keySeparators.Replace(strings.ToLower(s)) }

// EditDistance is the optimal string alignment distance between a and b,
// over runes: insertions, deletions, substitutions and swaps of two
// neighbouring runes each cost one.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// List is words in a sentence, the last two joined by conj: "a", "a or
// b", "a, b or c".
func List(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
