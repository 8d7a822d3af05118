package assert

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
)

// PatternMatchesAll reports whether the regular expression pattern, as a
// matches: runs it (unanchored, its ${...} references literal text),
// matches every text: it matches the empty text with no more than the
// start of the text, or its end, around it (.*, x|, (?:), ^, $, a?). Such
// a check passes whatever the agent says, an empty reply included. An
// invalid pattern is not (CheckPattern says what is wrong with it). A
// pattern that matches every text in a way this does not see (\b|\B) is
// not reported: it answers for the patterns people write by mistake.
//
// A reference stands for a placeholder of two letters: a path that
// matches the empty text passes no letter, so it does so whatever the
// reference expands to. Two, because a quantifier after a reference
// applies to its last letter only: "${code}?" run as "AB12?" needs
// "AB1", where a one-letter placeholder ("x?") would match nothing.
func PatternMatchesAll(pattern string) bool {
	p := pattern
	if strings.Contains(p, "${") {
		p, _ = expandPattern(p, func(string) (string, error) { return "xx", nil })
	}
	// A pattern that matches every text matches the empty one. Most do
	// not, and a check that runs them has them compiled already (its
	// references expanded): the check of every turn asks this of them,
	// and parsing them again here cost it several times the match.
	if re, err := compile(p, false); err != nil || !re.MatchString("") {
		return false
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return false
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return false
	}
	// Where every text starts, and where every text ends, these empty
	// widths hold, whatever the text.
	return matchesEmpty(prog, syntax.EmptyBeginText|syntax.EmptyBeginLine) ||
		matchesEmpty(prog, syntax.EmptyEndText|syntax.EmptyEndLine)
}

// matchesEmpty reports whether prog reaches its match from its start
// without reading a rune, through empty-width assertions of hold only.
func matchesEmpty(prog *syntax.Prog, hold syntax.EmptyOp) bool {
	seen := make([]bool, len(prog.Inst))
	stack := []uint32{uint32(prog.Start)}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		switch in := prog.Inst[pc]; in.Op {
		case syntax.InstMatch:
			return true
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^hold == 0 {
				stack = append(stack, in.Out)
			}
		}
	}
	return false
}

// MatchesAll reports whether every text satisfies t as written: each of
// its matchers does, and it has at least one: contains "", a matches:
// whose pattern matches every text (PatternMatchesAll), an any: with such
// an alternative, an all: of such matchers, a not: of a matcher no text
// satisfies (matchesNone). A check of it passes whatever the agent says,
// so lint warns of it. A matcher that compares with a text (is, equals,
// one_of, similar) or forbids one (not_contains, not_matches) is not such
// a matcher, whatever its text.
func (t *Text) MatchesAll() bool {
	if t == nil || t.Exact != nil || t.Equals != nil || t.NotContains != nil || t.NotMatches != nil ||
		t.OneOf != nil || t.Similar != nil {
		return false
	}
	if t.Contains != nil && *t.Contains != "" || t.Matches != nil && !PatternMatchesAll(*t.Matches) ||
		t.Not != nil && !t.Not.matchesNone() {
		return false
	}
	if len(t.Any) > 0 && !slices.ContainsFunc(t.Any, (*Text).MatchesAll) {
		return false
	}
	for _, each := range t.All {
		if !each.MatchesAll() {
			return false
		}
	}
	return t.Contains != nil || t.Matches != nil || t.Not != nil || len(t.Any) > 0 || len(t.All) > 0
}

// matchesNone reports whether no text satisfies t as written: one of its
// matchers forbids what every text has (not_contains "", a not_matches:
// whose pattern matches every text, a not: of a matcher every text
// satisfies), every alternative of its any: is such a matcher, or an
// item of its all: is.
func (t *Text) matchesNone() bool {
	switch {
	case t == nil:
		return false
	case t.NotContains != nil && *t.NotContains == "",
		t.NotMatches != nil && PatternMatchesAll(*t.NotMatches),
		t.Not != nil && t.Not.MatchesAll(),
		len(t.Any) > 0 && !slices.ContainsFunc(t.Any, func(alt *Text) bool { return !alt.matchesNone() }),
		slices.ContainsFunc(t.All, (*Text).matchesNone):
		return true
	}
	return false
}

// Unfailing is a check of an expectation that cannot fail: its key
// (response, node, lang.asr, ...), where it is written and its matcher,
// which every text satisfies.
type Unfailing struct {
	KeyAt
	Text *Text
}

// Unfailing lists the checks of e whose matcher every text satisfies
// (Text.MatchesAll) and that check nothing else: of the reply, the node,
// the flow, the step, the languages and the cited topic, each read as ""
// when the reply has none. A matcher of a state or metadata key, a
// metric, a handoff's destination or a system message is left out: it
// still asks for the key, the handoff or the message to be there.
func (e *Expect) Unfailing() []Unfailing {
	if e == nil {
		return nil
	}
	var out []Unfailing
	add := func(key string, t *Text) {
		if t.MatchesAll() {
			out = append(out, Unfailing{KeyAt{Key: key, Pos: e.at(t.Pos)}, t})
		}
	}
	add("response", e.Response)
	add("node", e.Node)
	add("flow", e.Flow)
	add("step", e.Step)
	if e.Lang != nil {
		add("lang.asr", e.Lang.ASR)
		add("lang.tts", e.Lang.TTS)
	}
	if e.Topics != nil {
		add("topics.cited", e.Topics.Cited)
	}
	return out
}

// PointlessThreshold says what a `similar` matcher held to min (a share
// of 1; 0 for DefaultSimilarity) does when it checks next to nothing, or
// "" when its threshold is useful; negated is true under an odd number of
// not:. The loaders put the threshold as written before it. At 1 the
// matcher passes only the text's own words after normalisation, which an
// LLM agent rewords, so negated it passes nearly every reply; at or below
// UnrelatedSimilarity it passes nearly any reply, so negated it fails
// nearly every one. Lint warns of it: the check is valid but not what
// its writer meant.
func PointlessThreshold(min float64, negated bool) string {
	useful := fmt.Sprintf("a threshold above %v and below 1 (the default is %v)", UnrelatedSimilarity, DefaultSimilarity)
	switch {
	case min >= 1 && negated:
		return "under not passes every reply but one with the very words of the text: " +
			"to forbid those words, check that the reply is not equal to the text; to forbid replies like it, give " + useful
	case min >= 1:
		return "passes only a reply with the very words of the text, which an LLM agent rewords: " +
			"to ask for those words, check that the reply equals the text; to let the agent reword it, give " + useful
	case min > 0 && min <= UnrelatedSimilarity && negated:
		return fmt.Sprintf("under not fails nearly every reply: unrelated replies score up to %v; give %s", UnrelatedSimilarity, useful)
	case min > 0 && min <= UnrelatedSimilarity:
		return fmt.Sprintf("passes nearly any reply: unrelated replies score up to %v; give %s", UnrelatedSimilarity, useful)
	}
	return ""
}
