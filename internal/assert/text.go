package assert

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// Match reports whether actual satisfies every matcher of t, after expanding
// the ${...} references of t through expand (nil expands nothing). err is set
// when t cannot be evaluated at all: a reference expand cannot resolve or a
// pattern that does not compile; ok is then false.
func (t *Text) Match(actual string, expand Expander) (ok bool, err error) {
	r, err := t.resolve(expand)
	if err != nil {
		return false, err
	}
	m, err := r.eval(actual, false, "value", nil)
	return m == nil && err == nil, err
}

// Describe says in plain words what t expects, as failure messages and step
// definitions print it: `contains "how many" (ignoring case)`,
// `is one of "yes", "no"`, `any of [contains "a" | matches /b+/]`. A zero
// Text describes itself as "anything".
func (t *Text) Describe() string {
	if t == nil {
		return "anything"
	}
	return t.describe(false)
}

// describe renders the matchers of t joined by "and"; folded says an
// enclosing matcher already ignores case, so it is not repeated.
func (t *Text) describe(folded bool) string {
	var parts []string
	fold := t.folds(folded)
	if t.Exact != nil {
		parts = append(parts, "is "+strconv.Quote(*t.Exact))
	}
	if t.Equals != nil {
		parts = append(parts, "equals "+strconv.Quote(*t.Equals)+" exactly")
	}
	if t.Contains != nil {
		parts = append(parts, "contains "+strconv.Quote(*t.Contains))
	}
	if t.NotContains != nil {
		parts = append(parts, "does not contain "+strconv.Quote(*t.NotContains))
	}
	if t.Matches != nil {
		parts = append(parts, "matches /"+*t.Matches+"/")
	}
	if t.NotMatches != nil {
		parts = append(parts, "does not match /"+*t.NotMatches+"/")
	}
	if t.OneOf != nil {
		parts = append(parts, "is one of "+quoteList(t.OneOf))
	}
	if t.Similar != nil {
		parts = append(parts, describeSimilar(t.Similar))
	}
	if len(t.Any) > 0 {
		parts = append(parts, "any of "+describeList(t.Any, fold))
	}
	if len(t.All) > 0 {
		parts = append(parts, "all of "+describeList(t.All, fold))
	}
	if t.Not != nil {
		parts = append(parts, "not ["+t.Not.describe(fold)+"]")
	}
	if len(parts) == 0 {
		return "anything"
	}
	return strings.Join(parts, " and ") + caseSuffix(folded, fold)
}

// folds says whether t compares texts folding case, inside a matcher that
// does (folded) or not.
func (t *Text) folds(folded bool) bool { return (folded || t.IgnoreCase) && !t.MatchCase }

// caseSuffix tells where a matcher changes what the one around it does
// with case: " (ignoring case)" where it starts folding, " (matching
// case)" where a nested one stops.
func caseSuffix(folded, fold bool) string {
	switch {
	case fold && !folded:
		return " (ignoring case)"
	case folded && !fold:
		return " (matching case)"
	}
	return ""
}

func describeSimilar(s *Similar) string {
	return fmt.Sprintf("is similar to %q (min %s)", s.To, formatMin(similarMin(s)))
}

// formatMin writes a similarity threshold with two decimals, or in full
// when it has more: rounded, a min of 0.855 would read "0.85" beside a
// failing score of 0.854.
func formatMin(want float64) string {
	s := strconv.FormatFloat(want, 'f', 2, 64)
	if v, _ := strconv.ParseFloat(s, 64); v == want {
		return s
	}
	return strconv.FormatFloat(want, 'f', -1, 64)
}

// scoreBelow writes a similarity that failed its threshold want with two
// decimals, or as many more as it takes to read below want: a score of
// 0.7971 against 0.8 reads "0.797", where two decimals would say the
// reply failed with "0.80, min 0.80".
func scoreBelow(got, want float64) string {
	for prec := 2; prec < 17; prec++ {
		s := strconv.FormatFloat(got, 'f', prec, 64)
		if v, _ := strconv.ParseFloat(s, 64); v < want {
			return s
		}
	}
	return strconv.FormatFloat(got, 'f', -1, 64)
}

func describeList(ts []*Text, folded bool) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.describe(folded)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

func quoteList(items []string) string {
	if len(items) == 0 {
		return "(nothing)"
	}
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func similarMin(s *Similar) float64 {
	if s.Min == 0 {
		return DefaultSimilarity
	}
	return s.Min
}

// mismatch says which matcher of a Text failed and how.
type mismatch struct {
	// phrase completes a sentence whose subject is the checked value:
	// "does not contain the expected text".
	phrase string
	// expected is the expected value: the literal text for the matchers
	// that compare with a text (then literal is set and the failure shows
	// a diff of actual against it), otherwise a description of the
	// matcher.
	expected string
	literal  bool
	// nearest is the expected text closest to the actual one, when the
	// matcher offered several whole texts (see Failure.Nearest).
	nearest string
	// folded says the check that failed ignored case (Failure.IgnoreCase);
	// decided, that the matcher that failed has set it.
	folded, decided bool
}

// alternatives collects the whole texts a matcher accepts, for finding
// the nearest: a contains or matches alternative has no whole text to
// compare a reply with, and a not does not say what is wanted.
func (t *Text) alternatives(out []string) []string {
	if t.Exact != nil {
		out = append(out, *t.Exact)
	}
	if t.Equals != nil {
		out = append(out, *t.Equals)
	}
	out = append(out, t.OneOf...)
	if t.Similar != nil {
		out = append(out, t.Similar.To)
	}
	for _, alt := range t.Any {
		out = alt.alternatives(out)
	}
	return out
}

// nearestOf fills in m.nearest with the text of alts most similar to
// actual (the first on a tie) and gives its similarity in the phrase, so
// that a reply phrased unlike every listed phrasing shows which one it
// came closest to, how close, and a diff against it. With no whole text
// among the alternatives m stays as it is; with none sharing anything
// with actual, the phrase says so and there is no nearest.
func nearestOf(m *mismatch, actual string, alts []string) *mismatch {
	if len(alts) == 0 {
		return m
	}
	best, score := "", -1.0
	for _, a := range alts {
		if s := Similarity(actual, a); s > score {
			best, score = a, s
		}
	}
	if score == 0 {
		// A diff against a text that shares nothing with the reply is
		// noise: every word of both is marked. Say so instead.
		m.phrase += " (it shares no words with any of them)"
		return m
	}
	m.nearest = best
	m.phrase += fmt.Sprintf(" (the nearest is %.2f similar)", score)
	return m
}

// eval checks a resolved Text; it returns nil when actual passes. noun is
// "text" or "value", to word the equality failures naturally. sc, when
// not nil, collects the score of every similar matcher evaluated.
func (t *Text) eval(actual string, folded bool, noun string, sc *scoring) (*mismatch, error) {
	m, err := t.match(actual, folded, noun, sc)
	if m != nil && !m.decided {
		// A nested matcher's mismatch already says whether it folded
		// case, which a nested ignore_case: false may have turned off.
		m.folded, m.decided = t.folds(folded), true
	}
	return m, err
}

// match is eval without setting mismatch.folded.
func (t *Text) match(actual string, folded bool, noun string, sc *scoring) (*mismatch, error) {
	fold := t.folds(folded)
	// suffix says a check folded case, or stopped folding it. Expected
	// holds the describing matchers' words, but a literal text is
	// Expected itself (the diff's base), so for those the phrase says it.
	suffix := caseSuffix(folded, fold)
	if t.Exact != nil && !equal(strings.TrimSpace(actual), strings.TrimSpace(*t.Exact), fold) {
		caseOnly := !fold && equal(strings.TrimSpace(actual), strings.TrimSpace(*t.Exact), true)
		return &mismatch{phrase: "is not the expected " + noun + ifCaseIgnored(caseOnly, "it is") + suffix, expected: *t.Exact, literal: true}, nil
	}
	if t.Equals != nil && !equal(actual, *t.Equals, fold) {
		caseOnly := !fold && equal(actual, *t.Equals, true)
		return &mismatch{phrase: "is not exactly the expected " + noun + ifCaseIgnored(caseOnly, "it is") + suffix, expected: *t.Equals, literal: true}, nil
	}
	if t.Contains != nil && !contains(actual, *t.Contains, fold) {
		caseOnly := !fold && contains(actual, *t.Contains, true)
		return &mismatch{phrase: "does not contain the expected text" + ifCaseIgnored(caseOnly, "it does"), expected: "contains " + strconv.Quote(*t.Contains) + suffix}, nil
	}
	if t.NotContains != nil && contains(actual, *t.NotContains, fold) {
		return &mismatch{phrase: "contains forbidden text", expected: "does not contain " + strconv.Quote(*t.NotContains) + suffix}, nil
	}
	if t.Matches != nil {
		re, err := compile(*t.Matches, fold)
		if err != nil {
			return nil, err
		}
		if !re.MatchString(actual) {
			return &mismatch{phrase: "does not match the pattern", expected: "matches /" + *t.Matches + "/" + suffix}, nil
		}
	}
	if t.NotMatches != nil {
		re, err := compile(*t.NotMatches, fold)
		if err != nil {
			return nil, err
		}
		if re.MatchString(actual) {
			return &mismatch{phrase: "matches a forbidden pattern", expected: "does not match /" + *t.NotMatches + "/" + suffix}, nil
		}
	}
	if t.OneOf != nil && !oneOf(actual, t.OneOf, fold) {
		m := &mismatch{phrase: "is none of the expected values", expected: "is one of " + quoteList(t.OneOf) + suffix}
		if noun != "text" {
			// A node, a state value: short names, where a diff says no
			// more than expected and actual do.
			return m, nil
		}
		return nearestOf(m, actual, t.OneOf), nil
	}
	if t.Similar != nil {
		// Similarity already ignores case, so IgnoreCase changes nothing.
		got, want := Similarity(actual, t.Similar.To), similarMin(t.Similar)
		sc.add(t, t.Similar, got, want)
		if got < want {
			return &mismatch{
				phrase: fmt.Sprintf("is not similar enough to the expected text (%s, min %s)", scoreBelow(got, want), formatMin(want)),
				// The score and threshold are in the phrase; expected is
				// the text itself, so that every report diffs the same two
				// texts (the HTML report diffs Expected against Actual).
				expected: t.Similar.To,
				literal:  true,
			}, nil
		}
	}
	if len(t.Any) > 0 {
		passed := false
		for _, alt := range t.Any {
			m, err := alt.eval(actual, fold, noun, sc)
			if err != nil {
				return nil, err
			}
			if m == nil {
				passed = true
				break
			}
		}
		if !passed {
			m := &mismatch{phrase: "matches none of the alternatives", expected: "any of " + describeList(t.Any, fold) + suffix}
			if noun != "text" {
				return m, nil
			}
			var alts []string
			for _, alt := range t.Any {
				alts = alt.alternatives(alts)
			}
			return nearestOf(m, actual, alts), nil
		}
	}
	for i, each := range t.All {
		m, err := each.eval(actual, fold, noun, sc)
		if m != nil && suffix != "" && m.folded == fold {
			// The item's words say what it checks, not that this
			// matcher made it ignore case (or compare it again); an item
			// that set its own ignore_case says so itself.
			if m.literal {
				m.phrase += suffix
			} else {
				m.expected += suffix
			}
		}
		if err != nil {
			return nil, err
		}
		if m != nil {
			// The first item that fails is the failure, with its diff;
			// the others that fail too are named, so that one run shows
			// every item to fix.
			var also []string
			for _, rest := range t.All[i+1:] {
				if rm, err := rest.eval(actual, fold, noun, sc); err == nil && rm != nil {
					also = append(also, "["+rest.describe(fold)+"]")
				}
			}
			if n := len(also); n > 0 {
				list := also[0]
				if n > 1 {
					list = strings.Join(also[:n-1], ", ") + " and " + also[n-1]
				}
				m.phrase += "; all: also fails on " + list
			}
			return m, nil
		}
	}
	if t.Not != nil {
		sc.flip()
		m, err := t.Not.eval(actual, fold, noun, sc)
		sc.flip()
		if err != nil {
			return nil, err
		}
		if m == nil {
			return &mismatch{phrase: "matches what it must not", expected: "not [" + t.Not.describe(fold) + "]" + suffix}, nil
		}
	}
	return nil, nil
}

// ifCaseIgnored completes a failure's phrase when the texts differ in
// case alone: the fix is then one setting (ignore_case in YAML, "ignoring
// case" in a feature), and a reply that changed only its capitals (as an
// LLM agent's do) should read as that, not as a wrong answer.
func ifCaseIgnored(caseOnly bool, claim string) string {
	if !caseOnly {
		return ""
	}
	return " (" + claim + " if case is ignored)"
}

// equal and contains fold case the same way (foldRune), so that within
// one ignore_case mapping `is`, `equals`, `one_of` and `contains` agree on
// which letters are the same: "ΟΔΟΣ" contains "οδος" because it is
// "οδος" ignoring case.
func equal(a, b string, fold bool) bool {
	if !fold {
		return a == b
	}
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra == utf8.RuneError && na == 1 || rb == utf8.RuneError && nb == 1 {
			// An invalid byte equals only itself.
			if na != nb || a[0] != b[0] {
				return false
			}
		} else if foldRune(ra) != foldRune(rb) {
			return false
		}
		a, b = a[na:], b[nb:]
	}
	return a == b
}

func contains(s, sub string, fold bool) bool {
	if !fold {
		return strings.Contains(s, sub)
	}
	if found, ok := containsASCIIFold(s, sub); ok {
		return found
	}
	return strings.Contains(foldString(s), foldString(sub))
}

// foldString is s with every rune mapped by foldRune. An invalid byte
// stays itself, where strings.Map writes U+FFFD for it: ignoring case, an
// invalid byte equals only itself, as in equal, so that `contains` finds
// "a\xffb" where `is` does, and not in "a\xfeb".
func foldString(s string) string {
	if utf8.ValidString(s) {
		return strings.Map(foldRune, s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(s[i])
		} else {
			b.WriteRune(foldRune(r))
		}
		i += n
	}
	return b.String()
}

// foldBuf is the longest text containsASCIIFold folds on the stack: a
// reply of the usual size (a longer one takes the general path).
const foldBuf = 1024

// containsASCIIFold is contains ignoring case for ASCII s and sub, where
// foldRune only lowers A to Z, folded into buffers on the stack instead
// of through strings.Map's rune-by-rune copies. ok is false when either
// holds another byte or is longer than foldBuf: a non-ASCII letter folds
// to an ASCII one (the Kelvin sign to k, ſ to s), so those take the
// general path.
func containsASCIIFold(s, sub string) (found, ok bool) {
	if len(s) > foldBuf || len(sub) > foldBuf {
		return false, false
	}
	var bs, bsub [foldBuf]byte
	ls, lsub := bs[:len(s)], bsub[:len(sub)]
	if !foldASCII(ls, s) || !foldASCII(lsub, sub) {
		return false, false
	}
	return bytes.Contains(ls, lsub), true
}

// foldASCII writes s with A to Z lowered into dst, as long as s, and
// reports whether s is all ASCII. It folds 8 bytes at a time
// (lowerLanes): a reply is checked ignoring case on most turns.
func foldASCII(dst []byte, s string) bool {
	dst = dst[:len(s)]
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&laneHigh != 0 {
			return false
		}
		binary.LittleEndian.PutUint64(dst[i:], lowerLanes(w))
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return true
}

// Word-at-a-time constants of lowerLanes: a byte of ones in each byte
// lane, and the high bit of each.
const (
	laneOnes = 0x0101010101010101
	laneHigh = 0x8080808080808080
)

// lowerLanes lowers the bytes A to Z of w, 8 ASCII bytes (no high bit
// set). In every lane v, v + 0x80-'A' has its high bit set from 'A' up,
// and v + 0x80-'Z'-1 from past 'Z' up, with no carry out of the lane
// (v + 0x3f is below 0x100): their xor has it set for A to Z alone, and
// that bit shifted to 0x20 lowers the letter.
func lowerLanes(w uint64) uint64 {
	upper := ((w + (0x80-'A')*laneOnes) ^ (w + (0x80-'Z'-1)*laneOnes)) & laneHigh
	return w | upper>>2
}

// foldRune maps every case of a letter to one rune: the smallest of its
// Unicode simple case folding orbit (the letters strings.EqualFold and a
// regular expression's (?i) take as one: Σ, σ and the final ς; S, s and
// ſ), after lowercasing, which also takes the Turkish İ as i. An ASCII
// letter maps to its lower case, so lower-case text maps to itself and
// strings.Map does not copy it.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	r = unicode.ToLower(r)
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if 'A' <= least && least <= 'Z' {
		least += 'a' - 'A' // the Kelvin sign is k, ſ is s
	}
	return least
}

func oneOf(actual string, items []string, fold bool) bool {
	a := strings.TrimSpace(actual)
	for _, it := range items {
		if equal(a, strings.TrimSpace(it), fold) {
			return true
		}
	}
	return false
}

// resolve returns t with its ${...} references expanded. When nothing needs
// expanding it returns t itself, so the common case costs no allocation.
func (t *Text) resolve(expand Expander) (*Text, error) {
	if expand == nil || !t.hasRefs() {
		return t, nil
	}
	r, err := t.expandRefs(expand)
	if err != nil {
		return nil, &ExpandError{fmt.Errorf("cannot expand expected value: %w", err)}
	}
	return r, nil
}

// ExpandError is an expected value or a capture's pattern whose ${...}
// references cannot be expanded: an unset environment variable, an
// unknown variable, more text than a reference may add. The scenario
// cannot be checked as written, whatever the agent says.
type ExpandError struct{ Err error }

func (e *ExpandError) Error() string { return e.Err.Error() }
func (e *ExpandError) Unwrap() error { return e.Err }

// expandRefs does the work of resolve, without wrapping errors so nested
// matchers do not repeat the context.
func (t *Text) expandRefs(expand Expander) (*Text, error) {
	r := *t
	var err error
	str := func(p *string) *string {
		if p == nil || err != nil || !strings.Contains(*p, "${") {
			return p
		}
		var s string
		s, err = expand(*p)
		return &s
	}
	pat := func(p *string) *string {
		if p == nil || err != nil || !strings.Contains(*p, "${") {
			return p
		}
		var s string
		s, err = expandPattern(*p, expand)
		return &s
	}
	r.Exact = str(t.Exact)
	r.Equals = str(t.Equals)
	r.Contains = str(t.Contains)
	r.NotContains = str(t.NotContains)
	r.Matches = pat(t.Matches)
	r.NotMatches = pat(t.NotMatches)
	if t.OneOf != nil {
		r.OneOf = make([]string, len(t.OneOf))
		for i := range t.OneOf {
			r.OneOf[i] = *str(&t.OneOf[i])
		}
	}
	if t.Similar != nil {
		r.Similar = &Similar{Pos: t.Similar.Pos, To: *str(&t.Similar.To), Min: t.Similar.Min}
	}
	sub := func(ts []*Text) []*Text {
		if ts == nil {
			return nil
		}
		out := make([]*Text, len(ts))
		for i, x := range ts {
			if err == nil {
				out[i], err = x.expandRefs(expand)
			}
		}
		return out
	}
	r.Any = sub(t.Any)
	r.All = sub(t.All)
	if t.Not != nil && err == nil {
		r.Not, err = t.Not.expandRefs(expand)
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// hasRefs reports whether any string of t, or of its nested matchers,
// contains "${".
func (t *Text) hasRefs() bool {
	has := func(p *string) bool { return p != nil && strings.Contains(*p, "${") }
	if has(t.Exact) || has(t.Equals) || has(t.Contains) || has(t.NotContains) || has(t.Matches) || has(t.NotMatches) {
		return true
	}
	for i := range t.OneOf {
		if has(&t.OneOf[i]) {
			return true
		}
	}
	if t.Similar != nil && has(&t.Similar.To) {
		return true
	}
	for _, x := range t.Any {
		if x.hasRefs() {
			return true
		}
	}
	for _, x := range t.All {
		if x.hasRefs() {
			return true
		}
	}
	return t.Not != nil && t.Not.hasRefs()
}

// expandPattern expands the ${...} references of a regular expression one
// by one and quotes what they expand to, so a captured "A+B (2)" matches
// itself instead of becoming pattern syntax. "$${" stays a literal "${", as
// in every other string of a scenario.
func expandPattern(p string, expand Expander) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(p, "${")
		if i < 0 {
			b.WriteString(p)
			return b.String(), nil
		}
		if i > 0 && p[i-1] == '$' {
			b.WriteString(p[:i-1])
			b.WriteString("${")
			p = p[i+2:]
			continue
		}
		b.WriteString(p[:i])
		end := strings.IndexByte(p[i:], '}')
		if end < 0 {
			// An unterminated reference: let the expander report it.
			s, err := expand(p[i:])
			if err != nil {
				return "", err
			}
			b.WriteString(regexp.QuoteMeta(s))
			return b.String(), nil
		}
		s, err := expand(p[i : i+end+1])
		if err != nil {
			return "", err
		}
		b.WriteString(regexp.QuoteMeta(s))
		p = p[i+end+1:]
	}
}

// regexKey identifies a compiled pattern: the same text compiles differently
// when case is folded.
type regexKey struct {
	pattern string
	fold    bool
}

type regexEntry struct {
	re  *regexp.Regexp
	err error
}

// regexCache memoises compiled patterns. A suite evaluates the same few
// patterns thousands of times, and compiling dominates the cost of a check.
// It is the package's only shared state and is pure memoisation: it changes
// no result, only the time taken. It is bounded because patterns expanded
// from captures differ per conversation.
type regexCache struct {
	mu      sync.RWMutex
	entries map[regexKey]regexEntry
}

// maxCachedPatterns bounds the cache; when full it starts over, which costs
// one recompilation per pattern and keeps memory flat.
const maxCachedPatterns = 1024

var patterns = &regexCache{entries: make(map[regexKey]regexEntry)}

// compile returns the compiled pattern, from the cache when possible.
func compile(pattern string, fold bool) (*regexp.Regexp, error) {
	return patterns.get(regexKey{pattern, fold})
}

func (c *regexCache) get(k regexKey) (*regexp.Regexp, error) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if ok {
		return e.re, e.err
	}
	src := k.pattern
	if k.fold {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		err = fmt.Errorf("invalid pattern /%s/: %w", k.pattern, err)
	}
	c.mu.Lock()
	if len(c.entries) >= maxCachedPatterns {
		c.entries = make(map[regexKey]regexEntry)
	}
	c.entries[k] = regexEntry{re, err}
	c.mu.Unlock()
	return re, err
}

// Number matches a numeric value, such as num_turns of a conversation
// record: `{value: 3}`, `{min: 2}`, `{max: 10}` or a range. Every bound that
// is set must hold; a zero Number matches any number.
type Number struct {
	// Pos is where the matcher was written.
	Pos diag.Pos
	// Value, when set, is the exact expected value.
	Value *float64
	// Min and Max are inclusive bounds.
	Min *float64
	Max *float64
}

// Match reports whether actual satisfies every bound of n.
func (n *Number) Match(actual float64) bool {
	if n == nil {
		return true
	}
	if n.Value != nil && actual != *n.Value {
		return false
	}
	if n.Min != nil && actual < *n.Min {
		return false
	}
	if n.Max != nil && actual > *n.Max {
		return false
	}
	return true
}

// CountBound says why v cannot bound a count of a conversation record
// (num_turns, num_ood, a duration in whole seconds, turns.count): the
// reference gives them as integers, so a bound that is not a whole number
// 0 or more never holds, or (a negative minimum) always does, and either
// way the check judged the agent on how it was written. Both front ends
// refuse such a bound when the file loads.
func CountBound(v float64) error {
	if v >= 0 && v == math.Trunc(v) && !math.IsInf(v, 0) {
		return nil
	}
	return fmt.Errorf("%s is not a whole number 0 or more (the record counts in whole numbers)", reply.Render(v))
}

// Describe says what n expects: "is 3", "at least 2", "at most 10",
// "between 2 and 10", or "any number".
func (n *Number) Describe() string {
	if n == nil {
		return "any number"
	}
	var parts []string
	if n.Value != nil {
		parts = append(parts, "is "+reply.Render(*n.Value))
	}
	switch {
	case n.Min != nil && n.Max != nil:
		parts = append(parts, "between "+reply.Render(*n.Min)+" and "+reply.Render(*n.Max))
	case n.Min != nil:
		parts = append(parts, "at least "+reply.Render(*n.Min))
	case n.Max != nil:
		parts = append(parts, "at most "+reply.Render(*n.Max))
	}
	if len(parts) == 0 {
		return "any number"
	}
	return strings.Join(parts, " and ")
}
