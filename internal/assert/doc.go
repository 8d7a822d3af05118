// Package assert evaluates the expectations of agenttest: every check on an
// agent's reply goes through here, whether it was written in a YAML scenario
// (decoded into Expect by internal/scenario) or in a Gherkin step (which
// builds the same values). There is exactly one implementation of each check.
//
// A runner checks one reply with Check and keeps the failures:
//
//	fails := assert.Check(turn.Expect, assert.Observation{Result: res, Latency: took}, expand)
//	for _, f := range fails {
//		fmt.Printf("%s: %s\n", f.Pos, f.Message) // suites/a.yaml:12:9: reply does not contain the expected text
//	}
//
// Failures come back in the order the keys were written. Each names the key
// as the user wrote it ("state.party_size"), says in one lower-case line what
// is wrong, and carries the expected value (described in words when it is a
// matcher rather than a plain value), the actual value and, for text
// comparisons, a plain-text diff (see Diff).
//
// Matchers (Text for strings, Number for counts) can also be used on their
// own through Match and Describe, so step definitions and API confirmations
// say things the same way the YAML checks do.
//
// # Similarity
//
// The `similar` matcher uses Similarity, a deterministic measure in [0, 1]
// that needs no model and no network:
//
//	Similarity(a, b) = (cosine of the word-count vectors + Dice coefficient of the character trigrams) / 2
//
// Both texts are first normalised: lower-cased, "n't" spelled " not", every
// run of characters that are not letters or digits becomes one space, and a
// trailing plural "s" is dropped from words longer than three letters
// ("tables" and "table" are the same word). The word cosine leaves out common
// English function words ("the", "you", "is", "how"; never negations), so two
// replies are not alike merely for sharing them; it rewards shared vocabulary
// regardless of order;
// the trigram Dice (over the normalised text with its spaces) rewards shared
// spelling, so inflections and small edits still count. Identical texts
// (after normalisation) score 1, texts with no word and no trigram in common
// score 0, and two empty texts score 1. Typical values (from the tests):
//
//	0.91  "How many people will be joining you?" / "How many people are joining you?"
//	0.71  "Your table for 4 is booked for 7pm." / "I've booked your table for four at 7pm."
//	0.48  "How many people will be joining you?" / "For how many people should I book the table?"
//	0.05  "How many people will be joining you?" / "Our opening hours are 9am to 5pm on weekdays."
//
// The measure sees words, not meaning: a rewording that keeps most words
// scores high, a paraphrase in other words scores low, and a negation costs
// little. The default threshold is DefaultSimilarity (0.8), which accepts
// small rewordings; use a lower min (0.6) for looser paraphrases.
package assert
