package assert

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestPatternMatchesAll: lint warns of a matches: every text satisfies
// (an empty branch, a pattern that may match nothing, an anchor alone);
// each pattern it names does match every text it is tried on, the empty
// one included, and one that asks for anything of the text is not named.
func TestPatternMatchesAll(t *testing.T) {
	t.Parallel()
	texts := []string{"", "Sorry, I didn't understand that.", "a\nb\n", "\n", "x"}
	for _, tc := range []struct {
		pattern string
		want    bool
	}{
		{`.*`, true},
		{``, true},
		{`(?:)`, true},
		{`foo|`, true},
		{`|foo`, true},
		{`(book)?`, true},
		{`x*`, true},
		{`^`, true},
		{`$`, true},
		{`(?m)^`, true},
		{`(?i)(table)*`, true},
		{`(x*)`, true},
		{`(a|)`, true},
		{`^.*$`, false}, // (?s) is off: "a\nb\n" has a line break
		{`${ref}|`, true},
		{`${ref}`, false},
		// A quantifier after a reference applies to its last letter.
		{`${ref}?`, false},
		{`${ref}*`, false},
		{`(${ref})?`, true},
		{`.+`, false},
		{`^$`, false},
		{`\b`, false},
		{`table`, false},
		{`^reference [A-Z]{6}$`, false},
		{`(`, false}, // invalid: CheckPattern says so
	} {
		if got := PatternMatchesAll(tc.pattern); got != tc.want {
			t.Errorf("PatternMatchesAll(%q) = %v, want %v", tc.pattern, got, tc.want)
		}
		if !tc.want {
			continue
		}
		p, _ := expandPattern(tc.pattern, func(string) (string, error) { return "", nil })
		re := regexp.MustCompile(p)
		for _, s := range texts {
			if !re.MatchString(s) {
				t.Errorf("%q is said to match every text, and does not match %q", tc.pattern, s)
			}
		}
	}
}

// TestRunningPatternParsesNothing: every turn's check of a pattern with
// references asks whether what it expands to matches every text. A
// pattern that does not match the empty text, as most do not, is
// answered from the pattern compiled for the check, allocating nothing;
// it was parsed and compiled again on each check, 8 times the check's
// cost and some 40 allocations.
func TestRunningPatternParsesNothing(t *testing.T) {
	r, err := (&Text{Matches: new(`^Great, a table for ${n}\. (What|When) time`)}).resolve(vars(map[string]string{"n": "4"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.eval("Great, a table for 4. What time would you like?", false, "text", nil); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if r.MatchesAll() {
			t.Fatal("a pattern that asks for text is said to match every text")
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// TestMatchesAll: a matcher every text satisfies is one whose matchers
// all do, contains "" and such patterns, through any: (one alternative
// is enough) and all: (every item); one that compares with a text or
// forbids one is not, whatever its text.
func TestMatchesAll(t *testing.T) {
	t.Parallel()
	empty, dot, word := "", ".*", "table"
	for _, tc := range []struct {
		name string
		t    *Text
		want bool
	}{
		{"contains empty", &Text{Contains: &empty}, true},
		{"contains empty ignoring case", &Text{Contains: &empty, IgnoreCase: true}, true},
		{"matches everything", &Text{Matches: &dot}, true},
		{"contains a word", &Text{Contains: &word}, false},
		{"and a word", &Text{Contains: &empty, Matches: &word}, false},
		{"any with an empty alternative", &Text{Any: []*Text{{Contains: &word}, {Contains: &empty}}}, true},
		{"any of words", &Text{Any: []*Text{{Contains: &word}, {Matches: &word}}}, false},
		{"all empty", &Text{All: []*Text{{Contains: &empty}, {Matches: &dot}}}, true},
		{"all with a word", &Text{All: []*Text{{Contains: &empty}, {Contains: &word}}}, false},
		{"exact empty: the text must be empty", &Text{Exact: &empty}, false},
		{"equals empty", &Text{Equals: &empty}, false},
		{"not_contains empty: fails every text", &Text{NotContains: &empty}, false},
		{"not of contains empty", &Text{Not: &Text{Contains: &empty}}, false},
		{"not of not_contains empty", &Text{Not: &Text{NotContains: &empty}}, true},
		{"not of not_matches everything", &Text{Not: &Text{NotMatches: &dot}}, true},
		{"not of not of contains empty", &Text{Not: &Text{Not: &Text{Contains: &empty}}}, true},
		{"not of not of a word", &Text{Not: &Text{Not: &Text{Contains: &word}}}, false},
		{"not of any of nothing", &Text{Not: &Text{Any: []*Text{{NotContains: &empty}, {Not: &Text{Matches: &dot}}}}}, true},
		{"not of any with a word", &Text{Not: &Text{Any: []*Text{{NotContains: &empty}, {Contains: &word}}}}, false},
		{"not of all with nothing", &Text{Not: &Text{All: []*Text{{Contains: &word}, {NotContains: &empty}}}}, true},
		{"not of a word", &Text{Not: &Text{Contains: &word}}, false},
		{"not of not_contains a word", &Text{Not: &Text{NotContains: &word}}, false},
		{"one_of empty", &Text{OneOf: []string{""}}, false},
		// Beside contains "", a matcher that checks something is checked.
		{"contains empty and equals", &Text{Contains: &empty, Equals: &word}, false},
		{"contains empty and not_contains", &Text{Contains: &empty, NotContains: &word}, false},
		{"contains empty and not_matches", &Text{Contains: &empty, NotMatches: &word}, false},
		{"contains empty and one_of", &Text{Contains: &empty, OneOf: []string{word}}, false},
		{"contains empty and similar", &Text{Contains: &empty, Similar: &Similar{To: word}}, false},
		{"nothing", &Text{}, false},
		{"nil", nil, false},
	} {
		if got := tc.t.MatchesAll(); got != tc.want {
			t.Errorf("%s: MatchesAll() = %v, want %v", tc.name, got, tc.want)
		}
		if tc.want {
			for _, s := range []string{"", "Sorry, I didn't understand that."} {
				if ok, err := tc.t.Match(s, nil); !ok || err != nil {
					t.Errorf("%s: said to match every text, and Match(%q) = %v, %v", tc.name, s, ok, err)
				}
			}
		}
	}
}

// TestUnfailing lists the checks that pass whatever the agent says, each
// at its own position (or the expect's), under the key lint names: the
// reply, node, flow, step, languages and cited topic, nested keys too.
func TestUnfailing(t *testing.T) {
	t.Parallel()
	empty, dot, word := "", ".*", "table"
	exp := &Expect{
		Pos:      at(2),
		Response: &Text{Pos: at(3), Contains: &empty},
		Node:     &Text{Pos: at(4), Contains: &word},
		Flow:     &Text{Matches: &dot},
		Step:     &Text{Pos: at(5), Matches: &dot},
		Lang:     &Lang{Pos: at(6), ASR: &Text{Pos: at(7), Matches: &dot}, TTS: &Text{Pos: at(8), Contains: &empty}},
		Topics:   &Topics{Pos: at(9), Cited: &Text{Pos: at(10), Contains: &empty}},
	}
	got := keysAt(exp.Unfailing(), func(u Unfailing) KeyAt { return u.KeyAt })
	want := []string{
		"response@suites/booking.yaml:3:7",
		"flow@suites/booking.yaml:2:7",
		"step@suites/booking.yaml:5:7",
		"lang.asr@suites/booking.yaml:7:7",
		"lang.tts@suites/booking.yaml:8:7",
		"topics.cited@suites/booking.yaml:10:7",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unfailing:\n got  %v\n want %v", got, want)
	}
	if u := (*Expect)(nil).Unfailing(); u != nil {
		t.Errorf("nil expect: Unfailing() = %v, want nil", u)
	}
}

func TestPointlessThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		min     float64
		negated bool
		want    string // a part of the reason, "" for none
	}{
		{min: 0, want: ""}, // the default
		{min: 0, negated: true, want: ""},
		{min: DefaultSimilarity, want: ""},
		{min: 0.6, negated: true, want: ""},
		{min: 0.99, want: ""},
		{min: 0.11, want: ""},
		{min: 1, want: "passes only a reply with the very words of the text"},
		{min: 1, negated: true, want: "under not passes every reply but one with the very words"},
		{min: UnrelatedSimilarity, want: "passes nearly any reply: unrelated replies score up to 0.1"},
		{min: 0.05, want: "passes nearly any reply"},
		{min: 0.05, negated: true, want: "under not fails nearly every reply"},
		{min: UnrelatedSimilarity, negated: true, want: "under not fails nearly every reply"},
	} {
		got := PointlessThreshold(tc.min, tc.negated)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("PointlessThreshold(%v, %v) = %q, want one containing %q", tc.min, tc.negated, got, tc.want)
		}
		if got != "" && !strings.Contains(got, "give a threshold above 0.1 and below 1 (the default is 0.8)") {
			t.Errorf("PointlessThreshold(%v, %v) = %q: says nothing of the threshold to write", tc.min, tc.negated, got)
		}
	}
}

// TestUnrelatedSimilarity holds the bound to what it stands for: replies
// about different things, from the examples, score at or below it, and
// a rewording of one reply scores well above it.
func TestUnrelatedSimilarity(t *testing.T) {
	t.Parallel()
	unrelated := [][2]string{
		{"How many guests?", "Goodbye!"},
		{"Our opening hours are nine to five.", "Your table for four is booked for 7pm on Friday."},
		{"That sounds urgent. I'm putting you through to our on-call nurse right now.", "Sorry, I didn't catch that. Could you say it again?"},
		{"We're open Tuesday to Sunday, from noon to 10pm.", "Hello, you've reached Riverside Clinic."},
	}
	for _, p := range unrelated {
		if s := Similarity(p[0], p[1]); s > UnrelatedSimilarity {
			t.Errorf("Similarity(%q, %q) = %.3f, above UnrelatedSimilarity %v", p[0], p[1], s, UnrelatedSimilarity)
		}
	}
	if s := Similarity("We're open Tuesday to Sunday, from noon to 10pm.", "We are open from noon to 10pm, Tuesday to Sunday."); s < 3*UnrelatedSimilarity {
		t.Errorf("a rewording scores %.3f, not well above UnrelatedSimilarity %v", s, UnrelatedSimilarity)
	}
}
