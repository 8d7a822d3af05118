package assert

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/reply"
)

// vars is an Expander over a fixed map, erroring on unknown names like the
// runner's does.
func vars(m map[string]string) Expander {
	return func(s string) (string, error) {
		var b strings.Builder
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				b.WriteString(s)
				return b.String(), nil
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return "", errors.New("unterminated reference")
			}
			name := s[i+2 : i+j]
			v, ok := m[name]
			if !ok {
				return "", fmt.Errorf("unknown variable %q", name)
			}
			b.WriteString(s[:i])
			b.WriteString(v)
			s = s[i+j+1:]
		}
	}
}

func TestTextMatch(t *testing.T) {
	type testCase struct {
		name   string
		text   Text
		actual string
		want   bool
	}
	run := func(t *testing.T, tc testCase) {
		ok, err := tc.text.Match(tc.actual, vars(map[string]string{"ref": "A+B (2)", "n": "4"}))
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if ok != tc.want {
			t.Errorf("Match(%q) with %s = %v, want %v", tc.actual, tc.text.Describe(), ok, tc.want)
		}
	}
	cases := []testCase{
		{"zero matches anything", Text{}, "whatever", true},
		{"exact trims", Text{Exact: new(" Hello ")}, "Hello\n", true},
		{"exact differs", Text{Exact: new("Hello")}, "Hello!", false},
		// A reference is expanded wherever it is written, and only there.
		{"one_of expanded", Text{OneOf: []string{"Table for ${n}"}}, "Table for 4", true},
		{"similar expanded", Text{Similar: &Similar{To: "Table for ${n} people"}}, "table for 4 people", true},
		{"similar expanded keeps its min", Text{Similar: &Similar{To: "Your table for ${n} people is booked", Min: 0.4}}, "Booked: a table for 4", true},
		{"not_matches expanded", Text{NotMatches: new("^${n}$")}, "4", false},
		{"any expanded", Text{Any: []*Text{{Exact: new("${n}")}}}, "4", true},
		{"all expanded", Text{All: []*Text{{Exact: new("${n}")}}}, "4", true},
		{"not expanded", Text{Not: &Text{Exact: new("${n}")}}, "4", false},
		{"not_matches ignoring case", Text{NotMatches: new("hello"), IgnoreCase: true}, "HELLO there", false},
		{"similar at a min of 1", Text{Similar: &Similar{To: "Hello there", Min: 1}}, "hello, there!", true},
		{"all ignoring case", Text{IgnoreCase: true, All: []*Text{{Contains: new("GREAT")}}}, "great", true},
		{"one_of trims its items", Text{OneOf: []string{" yes "}}, "yes", true},
		// Ignoring case, an invalid byte equals only itself: not the
		// letter it starts, not the U+FFFD it is read as.
		{"invalid byte is no letter ignoring case", Text{Exact: new("\xc3z"), IgnoreCase: true}, "éz", false},
		{"invalid byte is no U+FFFD ignoring case", Text{Exact: new("\xff"), IgnoreCase: true}, "\ufffd", false},
		{"exact is case sensitive", Text{Exact: new("hello")}, "Hello", false},
		{"exact ignoring case", Text{Exact: new("hello"), IgnoreCase: true}, "HELLO", true},
		{"equals does not trim", Text{Equals: new("Hello")}, "Hello ", false},
		{"equals", Text{Equals: new("Hello ")}, "Hello ", true},
		{"contains", Text{Contains: new("how many")}, "So, how many people?", true},
		{"contains fails", Text{Contains: new("how many")}, "How many people?", false},
		{"contains ignoring case", Text{Contains: new("how many"), IgnoreCase: true}, "How Many people?", true},
		{"not contains", Text{NotContains: new("sorry")}, "Sure!", true},
		{"not contains fails", Text{NotContains: new("sorry")}, "I'm sorry", false},
		{"matches", Text{Matches: new(`\d+ people`)}, "for 4 people", true},
		{"matches fails", Text{Matches: new(`^\d+ people`)}, "for 4 people", false},
		{"matches ignoring case", Text{Matches: new(`PEOPLE`), IgnoreCase: true}, "people", true},
		{"not matches", Text{NotMatches: new(`error|fail`)}, "all good", true},
		{"not matches fails", Text{NotMatches: new(`error|fail`)}, "an error", false},
		{"one of", Text{OneOf: []string{"yes", "no"}}, " no ", true},
		{"one of fails", Text{OneOf: []string{"yes", "no"}}, "maybe", false},
		{"one of ignoring case", Text{OneOf: []string{"yes"}, IgnoreCase: true}, "YES", true},
		{"similar", Text{Similar: &Similar{To: "How many people are joining you?"}}, "How many people will be joining you?", true},
		{"similar fails", Text{Similar: &Similar{To: "How many people are joining you?"}}, "Our opening hours are 9am to 5pm.", false},
		{"similar with min", Text{Similar: &Similar{To: "Your table for 4 is booked for 7pm.", Min: 0.6}}, "I've booked your table for four at 7pm.", true},
		{"any", Text{Any: []*Text{{Contains: new("yes")}, {Contains: new("sure")}}}, "sure thing", true},
		{"any fails", Text{Any: []*Text{{Contains: new("yes")}, {Contains: new("sure")}}}, "no", false},
		{"all", Text{All: []*Text{{Contains: new("table")}, {Contains: new("7pm")}}}, "table at 7pm", true},
		{"all fails", Text{All: []*Text{{Contains: new("table")}, {Contains: new("7pm")}}}, "table at 8pm", false},
		{"not", Text{Not: &Text{Contains: new("sorry")}}, "fine", true},
		{"not fails", Text{Not: &Text{Contains: new("sorry")}}, "sorry", false},
		{"ignore case reaches nested", Text{IgnoreCase: true, Any: []*Text{{Contains: new("YES")}}}, "yes", true},
		{"several matchers must all hold", Text{Contains: new("table"), NotContains: new("sorry")}, "sorry, no table", false},
		{"expanded contains", Text{Contains: new("for ${n} people")}, "a table for 4 people", true},
		{"expanded pattern is literal", Text{Matches: new(`code ${ref}$`)}, "code A+B (2)", true},
		{"expanded pattern does not become syntax", Text{Matches: new(`code ${ref}$`)}, "code AAB 2", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestIgnoreCaseAgrees checks that ignore_case means one thing in every
// comparison of a mapping: a reply that is the expected text ignoring case
// also contains it ignoring case, and the other way round.
func TestIgnoreCaseAgrees(t *testing.T) {
	type testCase struct {
		name, expected, actual string
		want                   bool
		// regex: a (?i) pattern of the expected text agrees too; Go's
		// regular expressions do not take İ as i.
		regex bool
	}
	run := func(t *testing.T, tc testCase) {
		forms := map[string]Text{
			"is":           {Exact: new(tc.expected), IgnoreCase: true},
			"equals":       {Equals: new(tc.expected), IgnoreCase: true},
			"one_of":       {OneOf: []string{"nothing like it", tc.expected}, IgnoreCase: true},
			"contains":     {Contains: new(tc.expected), IgnoreCase: true},
			"not_contains": {Not: &Text{NotContains: new(tc.expected)}, IgnoreCase: true},
		}
		if tc.regex {
			forms["matches"] = Text{Matches: new("^" + regexp.QuoteMeta(tc.expected) + "$"), IgnoreCase: true}
		}
		for name, text := range forms {
			ok, err := text.Match(tc.actual, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ok != tc.want {
				t.Errorf("%s %q ignoring case, on %q = %v, want %v", name, tc.expected, tc.actual, ok, tc.want)
			}
		}
		// Without ignore_case, the failure says case alone is the
		// difference exactly when it is.
		m, _ := (&Text{Contains: new(tc.expected)}).eval(tc.actual, false, "text", nil)
		if hint := m != nil && strings.Contains(m.phrase, "if case is ignored"); tc.want && tc.expected != tc.actual && !hint {
			t.Errorf("contains %q on %q: phrase %q does not say case is the difference", tc.expected, tc.actual, m.phrase)
		}
	}
	cases := []testCase{
		{"ascii", "how many", "HOW MANY", true, true},
		{"accents", "réservée", "RÉSERVÉE", true, true},
		{"greek final sigma", "οδος", "ΟΔΟΣ", true, true},
		{"greek sigma in capitals of a lower word", "ΟΔΟΣ", "οδος", true, true},
		{"long s", "ſtraße", "STRAßE", true, true},
		{"kelvin sign", "\u212a", "k", true, true},
		{"turkish dotted capital I", "istanbul", "İSTANBUL", true, false},
		{"different letters", "οδος", "ΟΔΟΙ", false, true},
		{"sharp s is not ss", "straße", "STRASSE", false, true},
		{"an invalid byte equals itself", "a\xffB", "A\xffb", true, false},
		{"an invalid byte equals no other", "a\xffb", "a\xfeb", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestExpandPattern(t *testing.T) {
	got, err := expandPattern(`a$${x}b${n}.c${ref}`, vars(map[string]string{"n": "4", "ref": "A+B"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `a${x}b4.cA\+B`; got != want {
		t.Errorf("expandPattern = %q, want %q", got, want)
	}
}

func TestTextMatchErrors(t *testing.T) {
	type testCase struct {
		name    string
		text    Text
		wantErr string
	}
	run := func(t *testing.T, tc testCase) {
		ok, err := tc.text.Match("anything", vars(nil))
		if ok || err == nil {
			t.Fatalf("Match = %v, %v; want false and an error", ok, err)
		}
		if err.Error() != tc.wantErr {
			t.Errorf("error = %q, want %q", err, tc.wantErr)
		}
	}
	cases := []testCase{
		{"unknown reference", Text{Contains: new("${ref}")}, `cannot expand expected value: unknown variable "ref"`},
		{"unknown reference in pattern", Text{Matches: new("x${ref}")}, `cannot expand expected value: unknown variable "ref"`},
		{"unterminated reference in pattern", Text{Matches: new("x${ref")}, `cannot expand expected value: unterminated reference`},
		{"first of two unknown references", Text{Exact: new("${ref}"), Contains: new("${n}")}, `cannot expand expected value: unknown variable "ref"`},
		{"unknown reference nested", Text{Any: []*Text{{Exact: new("a")}, {Exact: new("${b}")}}}, `cannot expand expected value: unknown variable "b"`},
		{"bad pattern", Text{Matches: new("(a")}, "invalid pattern /(a/: error parsing regexp: missing closing ): `(a`"},
		// A pattern that cannot run is an error wherever it is, also
		// beside an alternative that passes.
		{"bad pattern before a passing alternative", Text{Any: []*Text{{Matches: new("(a")}, {Contains: new("any")}}}, "invalid pattern /(a/: error parsing regexp: missing closing ): `(a`"},
		{"bad pattern in all", Text{All: []*Text{{Matches: new("(a")}}}, "invalid pattern /(a/: error parsing regexp: missing closing ): `(a`"},
		{"bad pattern in not", Text{Not: &Text{Matches: new("(a")}}, "invalid pattern /(a/: error parsing regexp: missing closing ): `(a`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestTextDescribe(t *testing.T) {
	type testCase struct {
		text Text
		want string
	}
	cases := []testCase{
		{Text{}, "anything"},
		{Text{Exact: new("Hi")}, `is "Hi"`},
		{Text{Equals: new("Hi ")}, `equals "Hi " exactly`},
		{Text{Contains: new("how many"), IgnoreCase: true}, `contains "how many" (ignoring case)`},
		{Text{Contains: new("a"), NotContains: new("b")}, `contains "a" and does not contain "b"`},
		{Text{Matches: new(`\d+`)}, `matches /\d+/`},
		{Text{NotMatches: new(`x`)}, `does not match /x/`},
		{Text{OneOf: []string{"yes", "no"}}, `is one of "yes", "no"`},
		{Text{Similar: &Similar{To: "Hello"}}, `is similar to "Hello" (min 0.80)`},
		{Text{Similar: &Similar{To: "Hello", Min: 0.5}}, `is similar to "Hello" (min 0.50)`},
		{Text{Similar: &Similar{To: "Hello", Min: 0.855}}, `is similar to "Hello" (min 0.855)`},
		{Text{Any: []*Text{{Contains: new("a")}, {Matches: new("b+")}}}, `any of [contains "a" | matches /b+/]`},
		{Text{All: []*Text{{Contains: new("a")}, {Contains: new("b")}}, IgnoreCase: true}, `all of [contains "a" | contains "b"] (ignoring case)`},
		{Text{Not: &Text{Contains: new("sorry")}}, `not [contains "sorry"]`},
		// Ignoring case is said once, by the matcher that says it.
		{Text{Any: []*Text{{Contains: new("a"), IgnoreCase: true}, {Not: &Text{Contains: new("b"), IgnoreCase: true}}}, IgnoreCase: true},
			`any of [contains "a" | not [contains "b"]] (ignoring case)`},
		{Text{Any: []*Text{{Contains: new("a"), IgnoreCase: true}, {Contains: new("b")}}}, `any of [contains "a" (ignoring case) | contains "b"]`},
		{Text{OneOf: []string{}}, `is one of (nothing)`},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.text.Describe(); got != tc.want {
				t.Errorf("Describe() = %q, want %q", got, tc.want)
			}
		})
	}
	var nilText *Text
	if got := nilText.Describe(); got != "anything" {
		t.Errorf("nil Describe() = %q", got)
	}
}

func TestRegexCacheConcurrent(t *testing.T) {
	// Many goroutines compiling the same and different patterns: run with
	// -race to prove the cache is safe.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				p := fmt.Sprintf(`^x%d$`, i%(10+g))
				re, err := compile(p, g%2 == 0)
				if err != nil || !re.MatchString(fmt.Sprintf("x%d", i%(10+g))) {
					t.Errorf("compile(%q) = %v, %v", p, re, err)
					return
				}
			}
		})
	}
	wg.Wait()
	a, _ := compile(`^same$`, false)
	b, _ := compile(`^same$`, false)
	if a != b {
		t.Error("the same pattern was compiled twice")
	}
	c, _ := compile(`^same$`, true)
	if c == a || !c.MatchString("SAME") {
		t.Error("case folding must be part of the cache key")
	}
}

func TestRegexCacheBounded(t *testing.T) {
	c := &regexCache{entries: make(map[regexKey]regexEntry)}
	for i := range maxCachedPatterns + 10 {
		if _, err := c.get(regexKey{pattern: fmt.Sprintf("p%d", i)}); err != nil {
			t.Fatal(err)
		}
		if n := len(c.entries); n > maxCachedPatterns {
			t.Fatalf("cache holds %d entries, more than %d", n, maxCachedPatterns)
		}
	}
}

func TestNumber(t *testing.T) {
	type testCase struct {
		n      *Number
		actual float64
		want   bool
		desc   string
	}
	cases := []testCase{
		{&Number{Value: new(3.0)}, 3, true, "is 3"},
		{&Number{Value: new(3.0)}, 4, false, "is 3"},
		{&Number{Min: new(2.0)}, 2, true, "at least 2"},
		{&Number{Min: new(2.0)}, 1, false, "at least 2"},
		{&Number{Max: new(10.0)}, 10, true, "at most 10"},
		{&Number{Max: new(10.0)}, 10.5, false, "at most 10"},
		{&Number{Min: new(2.0), Max: new(5.0)}, 5, true, "between 2 and 5"},
		{&Number{Min: new(2.0), Max: new(5.0)}, 6, false, "between 2 and 5"},
		{&Number{Min: new(0.5)}, 0.25, false, "at least 0.5"},
		{&Number{}, -1, true, "any number"},
		{nil, 7, true, "any number"},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := tc.n.Match(tc.actual); got != tc.want {
				t.Errorf("%s: Match(%v) = %v, want %v", tc.desc, tc.actual, got, tc.want)
			}
			if got := tc.n.Describe(); got != tc.desc {
				t.Errorf("Describe() = %q, want %q", got, tc.desc)
			}
		})
	}
}

// TestNearestAlternative: a reply that fails every whole text of an
// any: or a one_of: is diffed against the nearest of them, whichever
// matcher offered it, and against the first of several as near.
func TestNearestAlternative(t *testing.T) {
	const answer = "Great, a table for 4. What time would you like?"
	near := "Great, a table for 4. When would you like it?"
	type testCase struct {
		name  string
		text  Text
		want  string
		score string
	}
	far := &Text{Exact: new("Our opening hours are 9 to 5.")}
	cases := []testCase{
		{"an is alternative", Text{Any: []*Text{far, {Exact: &near}}}, near, "0.81"},
		{"an equals alternative", Text{Any: []*Text{far, {Equals: &near}}}, near, "0.81"},
		{"a one_of alternative", Text{Any: []*Text{far, {OneOf: []string{near}}}}, near, "0.81"},
		{"a nested any", Text{Any: []*Text{far, {Any: []*Text{{Contains: new("nope")}, {Exact: &near}}}}}, near, "0.81"},
		{"the first of two as near", Text{OneOf: []string{"Sure, four people!", "sure; FOUR people"}}, "Sure, four people!", "0.05"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := Check(&Expect{Response: &tc.text}, Observation{Result: &reply.TurnResult{Response: answer}}, nil)
			if len(fs) != 1 {
				t.Fatalf("got %d failures, want 1: %#v", len(fs), fs)
			}
			if fs[0].Nearest != tc.want || !strings.HasSuffix(fs[0].Message, "(the nearest is "+tc.score+" similar)") {
				t.Errorf("nearest %q in %q, want %q at %s", fs[0].Nearest, fs[0].Message, tc.want, tc.score)
			}
		})
	}
}

// TestNoNearAlternative: when no listed text shares anything with the
// reply, the failure says so and diffs against none of them, rather than
// "the nearest is 0.00 similar" over a diff that marks every word.
func TestNoNearAlternative(t *testing.T) {
	fs := Check(&Expect{Response: &Text{OneOf: []string{"Zzz", "Qqq"}}}, Observation{Result: &reply.TurnResult{Response: "Great, a table for 4."}}, nil)
	if len(fs) != 1 {
		t.Fatalf("got %d failures, want 1: %#v", len(fs), fs)
	}
	if fs[0].Nearest != "" || fs[0].Message != "reply is none of the expected values (it shares no words with any of them)" {
		t.Errorf("got nearest %q, message %q", fs[0].Nearest, fs[0].Message)
	}
}
