package assert

import (
	"math"
	"strings"
	"unicode"
)

// Similarity is the measure of the `similar` matcher: the mean of the cosine
// similarity of the word-count vectors of a and b (English function words
// such as "the" and "you" left out, see stopwords) and the Dice coefficient
// of their character trigrams, after lower-casing, spelling "n't" as " not",
// turning punctuation into spaces and dropping a plural "s" from words longer
// than three letters.
// It is deterministic, symmetric, and lies in [0, 1]: 1 for the same text
// (ignoring case and punctuation), 0 for texts sharing no word and no
// trigram. Two empty texts score 1; one empty text against another scores 0.
func Similarity(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	s := (wordCosine(content(wa), content(wb)) + trigramDice(wa, wb)) / 2
	// Rounding noise must not push identical texts below 1 or above it.
	return math.Min(1, math.Max(0, s))
}

// words normalises a text into its word tokens.
func words(s string) []string {
	s = strings.ToLower(s)
	// "didn't" and "did not" are the same words.
	s = strings.ReplaceAll(strings.ReplaceAll(s, "n't", " not"), "n’t", " not")
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range fields {
		fields[i] = foldPlural(w)
	}
	return fields
}

// stopwords are the English function words left out of the word cosine:
// two replies do not resemble each other because both say "the" and "you".
// Negations (no, not, never, cannot) are deliberately absent: they change
// what a reply means. The trigram part still sees every word.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "but": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true,
	"he": true, "she": true, "it": true, "its": true, "they": true, "them": true, "their": true,
	"this": true, "that": true, "these": true, "those": true,
	"is": true, "am": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"do": true, "doe": true, "did": true, "have": true, "ha": true, "had": true,
	"will": true, "would": true, "can": true, "could": true, "shall": true, "should": true, "may": true, "might": true,
	"to": true, "of": true, "in": true, "on": true, "at": true, "for": true, "with": true,
	"by": true, "from": true, "as": true, "so": true, "if": true, "there": true, "here": true,
	"what": true, "which": true, "who": true, "how": true, "s": true, "ll": true, "ve": true, "re": true, "d": true, "m": true,
}

// content drops the stopwords of a word list, unless nothing would remain:
// "Yes, it is." must still be comparable to "It is."
func content(ws []string) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if !stopwords[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return ws
	}
	return out
}

// foldPlural drops a trailing "s" so that "tables" and "table" count as one
// word. Short words ("is", "was", "yes") and words ending in "ss" are kept:
// they are rarely plurals.
func foldPlural(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// wordCosine is the cosine of the two word-count vectors.
func wordCosine(a, b []string) float64 {
	ca, cb := counts(a), counts(b)
	var dot, na, nb float64
	for w, n := range ca {
		na += float64(n * n)
		dot += float64(n * cb[w])
	}
	for _, n := range cb {
		nb += float64(n * n)
	}
	return dot / math.Sqrt(na*nb)
}

func counts(ws []string) map[string]int {
	c := make(map[string]int, len(ws))
	for _, w := range ws {
		c[w]++
	}
	return c
}

// trigramDice is the Dice coefficient of the multisets of character
// trigrams of the normalised texts (words joined by one space, padded by a
// space on each side so that single-letter and two-letter words count).
func trigramDice(a, b []string) float64 {
	ta, tb := trigrams(a), trigrams(b)
	var shared, na, nb int
	for g, n := range ta {
		na += n
		shared += min(n, tb[g])
	}
	for _, n := range tb {
		nb += n
	}
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(shared) / float64(na+nb)
}

func trigrams(ws []string) map[string]int {
	r := []rune(" " + strings.Join(ws, " ") + " ")
	out := make(map[string]int, len(r))
	for i := 0; i+3 <= len(r); i++ {
		out[string(r[i:i+3])]++
	}
	return out
}
