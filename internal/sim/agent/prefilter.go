package agent

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// pattern is a compiled regular expression with a literal prefilter: a set
// of lower-case strings at least one of which occurs in every text the
// expression matches. Most patterns fail on most messages, and a
// strings.Contains is two orders of magnitude cheaper than Go's
// backtracking matcher with case folding, which is what keeps a simulated
// turn in the microseconds.
type pattern struct {
	re *regexp.Regexp
	// need is nil when no literal is required (the regex always runs).
	need []string
}

func newPattern(re *regexp.Regexp) *pattern {
	p := &pattern{re: re}
	if tree, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		if set, ok := requiredLiterals(tree.Simplify()); ok && len(set) > 0 {
			p.need = set
		}
	}
	return p
}

// mayMatch reports whether the regex can match; lower is the message
// lower-cased and ascii whether the message is pure ASCII. The prefilter is
// only trusted on ASCII input, where lower-casing cannot disagree with the
// regex engine's Unicode case folding.
func (p *pattern) mayMatch(lower string, ascii bool) bool {
	if p.need == nil || !ascii {
		return true
	}
	for _, s := range p.need {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// maxClassRunes bounds the character classes expanded into literal sets;
// bigger classes (\d, \w) say too little to be worth it.
const maxClassRunes = 8

// requiredLiterals computes the prefilter set of a simplified regex tree
// (Simplify leaves no OpRepeat); ok is false when the tree requires no
// literal.
func requiredLiterals(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if s == "" || !isASCII(s) {
			return nil, false
		}
		return []string{strings.ToLower(s)}, true
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi >= 0x80 || int(hi-lo)+len(set) >= maxClassRunes {
				return nil, false
			}
			for r := lo; r <= hi; r++ {
				s := strings.ToLower(string(r))
				if !slices.Contains(set, s) {
					set = append(set, s)
				}
			}
		}
		return set, len(set) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			set, ok := requiredLiterals(sub)
			if ok && better(set, best) {
				best = set
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			set, ok := requiredLiterals(sub)
			if !ok {
				return nil, false
			}
			for _, s := range set {
				if !slices.Contains(all, s) {
					all = append(all, s)
				}
			}
		}
		return all, len(all) > 0
	}
	return nil, false
}

// better prefers the set whose shortest literal is longest (rarer in
// text), then the smaller set.
func better(a, b []string) bool {
	if b == nil {
		return true
	}
	ma, mb := minLen(a), minLen(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func minLen(set []string) int {
	m := -1
	for _, s := range set {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
