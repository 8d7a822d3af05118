package agent

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestPrefilter(t *testing.T) {
	type testCase struct {
		re   string
		need []string // nil: the regex always runs
	}
	for _, tc := range []testCase{
		{`(?i)\bbook(ing)?\b`, []string{"book"}},
		{`(?i)booking (code|number)`, []string{"booking "}},
		{`(?i)\bbye\b|that'?s all`, []string{"bye", "s all"}},
		{`(?i)Chest Pain`, []string{"chest pain"}},
		{`\d+`, nil},
		{`(?i)[ap]m`, []string{"m"}},
		{`(?i)x*|y`, nil},
		{`(?i)café`, nil},
	} {
		got := newPattern(regexp.MustCompile(tc.re)).need
		if !reflect.DeepEqual(got, tc.need) {
			t.Errorf("need(%s) = %q, want %q", tc.re, got, tc.need)
		}
	}
}

// The prefilter must never reject a message its regex matches.
func TestPrefilterIsConservative(t *testing.T) {
	msgs := []string{
		"I'd like to BOOK a table", "Booking Code please", "That's all, BYE", "4 People at 7PM",
		"table for SIX", "café au lait", "ACCOUNT 12345678 SW1A 1AA", "chest pain!", "",
	}
	defs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var pats []*pattern
	for _, d := range defs {
		for _, in := range d.intents {
			pats = append(pats, in.patterns...)
		}
		for _, e := range d.entities {
			pats = append(pats, e.patterns...)
		}
	}
	for _, p := range pats {
		for _, m := range msgs {
			if p.re.MatchString(m) && !p.mayMatch(strings.ToLower(m), isASCII(m)) {
				t.Errorf("prefilter of %s rejects matching %q", p.re, m)
			}
		}
	}
}

// On non-ASCII text lower-casing and the regex engine's case folding
// disagree (the long s folds to s but lower-cases to itself), so the
// prefilter stands aside; on ASCII text it rejects what lacks its literal.
func TestPrefilterTrustsOnlyASCII(t *testing.T) {
	p := newPattern(regexp.MustCompile(`(?i)yes`))
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{"ye\u017f", true},
		{"YES", true},
		{"no", false},
	} {
		if got := p.mayMatch(strings.ToLower(tc.msg), isASCII(tc.msg)); got != tc.want {
			t.Errorf("mayMatch(%q) = %v, want %v", tc.msg, got, tc.want)
		}
		if tc.want && !p.re.MatchString(tc.msg) {
			t.Errorf("%s does not match %q", p.re, tc.msg)
		}
	}
}
