package steps

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/reply"
)

// exampleInput turns a definition's example into the step it stands for.
func exampleInput(t *testing.T, d Def) Input {
	t.Helper()
	kw, text, ok := strings.Cut(d.Example, " ")
	if !ok {
		t.Fatalf("example %q has no keyword", d.Example)
	}
	in := Input{Pos: diag.Pos{File: "x.feature", Line: 3, Col: 5}, Keyword: kw + " ", Text: text}
	switch d.Arg {
	case DocStringArg:
		doc := strings.Trim(strings.TrimSuffix(strings.TrimPrefix(d.ExampleArg, `"""`), `"""`), "\n")
		in.DocString = &doc
	case TableArg:
		for line := range strings.SplitSeq(d.ExampleArg, "\n") {
			var row []string
			for cell := range strings.SplitSeq(strings.Trim(line, "| "), "|") {
				row = append(row, strings.TrimSpace(cell))
			}
			in.Table = append(in.Table, row)
		}
	}
	return in
}

// TestExamplesMatchOnlyTheirDefinition is the ambiguity check: every
// definition has an example, and that example matches it and nothing else.
func TestExamplesMatchOnlyTheirDefinition(t *testing.T) {
	lib := New()
	for i, d := range lib.Defs() {
		if d.Example == "" || d.Doc == "" {
			t.Errorf("definition %s has no example or no doc", d.Pattern)
			continue
		}
		if (d.Arg == NoArg) != (d.ExampleArg == "") {
			t.Errorf("definition %s: example argument does not fit its argument kind", d.Pattern)
		}
		in := exampleInput(t, d)
		got := lib.Match(in.Text)
		if len(got) != 1 || got[0] != i {
			var pats []string
			for _, j := range got {
				pats = append(pats, lib.Defs()[j].Pattern.String())
			}
			t.Errorf("example %q matches %v, want only %s", d.Example, pats, d.Pattern)
			continue
		}
		op, err := lib.Compile(in)
		if err != nil {
			t.Errorf("example %q does not compile: %v", d.Example, err)
			continue
		}
		if op.Text != d.Example || op.Pos != in.Pos {
			t.Errorf("example %q compiled to step %q at %v", d.Example, op.Text, op.Pos)
		}
	}
}

// TestIssueVocabulary holds the contract of the issue: these steps exist,
// with this wording, in every keyword position.
func TestIssueVocabulary(t *testing.T) {
	vocabulary := []struct {
		step string
		kind Kind
		arg  ArgKind
	}{
		{`Given the agent "restaurant"`, Setup, NoArg},
		{`Given the environment "sandbox"`, Setup, NoArg},
		{`Given the channel "VOICE-SIP"`, Setup, NoArg},
		{`Given the variant "spring"`, Setup, NoArg},
		{`Given the ASR language "en-GB"`, Setup, NoArg},
		{`Given the TTS language "en-GB"`, Setup, NoArg},
		{`Given the integration attribute "tier" is "gold"`, Setup, NoArg},
		{`Given the integration attributes:`, Setup, TableArg},
		{`Given the conversation has started`, Open, NoArg},
		{`When the user says "I want a table"`, Say, NoArg},
		{`When the user says:`, Say, DocStringArg},
		{`When the user stays silent`, Say, NoArg},
		{`Then the greeting contains "Welcome"`, Check, NoArg},
		{`Then the agent says "Hello"`, Check, NoArg},
		{`Then the agent says:`, Check, DocStringArg},
		{`Then the agent's reply contains "how many"`, Check, NoArg},
		{`Then the agent's reply contains:`, Check, DocStringArg},
		{`Then the agent's reply contains "how many" ignoring case`, Check, NoArg},
		{`Then the agent's reply contains one of:`, Check, TableArg},
		{`Then the agent says "Hello" ignoring case`, Check, NoArg},
		{`Then the greeting contains "welcome" ignoring case`, Check, NoArg},
		{`Then the agent's reply does not contain "sorry" ignoring case`, Check, NoArg},
		{`Then the agent's reply does not contain "sorry"`, Check, NoArg},
		{`Then the agent's reply matches "\d+ people"`, Check, NoArg},
		{`Then the agent's reply is similar to "How many?"`, Check, NoArg},
		{`Then the agent's reply is similar to "How many?" with at least 0.8`, Check, NoArg},
		{`Then the node trace includes "start"`, Check, NoArg},
		{`Then the node trace does not include "handoff"`, Check, NoArg},
		{`Then the node trace passes through:`, Check, TableArg},
		{`Then the current node is "ask"`, Check, NoArg},
		{`Then the flow is "booking"`, Check, NoArg},
		{`Then the step is "collect"`, Check, NoArg},
		{`Then the state "key" is "value"`, Check, NoArg},
		{`Then the state "key" matches "^v"`, Check, NoArg},
		{`Then the state has no "key"`, Check, NoArg},
		{`Then the state includes:`, Check, TableArg},
		{`Then the agent hands off to "billing"`, Check, NoArg},
		{`Then the agent does not hand off`, Check, NoArg},
		{`Then the conversation ends`, Check, NoArg},
		{`Then the conversation continues`, Check, NoArg},
		{`Then the reply is delayed`, Check, NoArg},
		{`Then the ASR language is "en-GB"`, Check, NoArg},
		{`And the TTS language is "cy-GB"`, Check, NoArg},
		{`Given the ASR language "en-GB"`, Setup, NoArg},
		{`Then the metric "M" is "1"`, Check, NoArg},
		{`Then the metric "M" was written 3 times`, Check, NoArg},
		{`Then the function "f" was called`, Check, NoArg},
		{`Then the function "f" failed`, Check, NoArg},
		{`Then no function failed`, Check, NoArg},
		{`Then the topic "t" was retrieved`, Check, NoArg},
		{`Then the topic "t" was cited`, Check, NoArg},
		{`Then the reply came within 500 ms`, Check, NoArg},
		{`Then I remember "name" from the reply matching "ref (\w+)"`, Capture, NoArg},
		{`Then the conversation record shows:`, Confirm, TableArg},
		{`Then the handoff state "reason" is "urgent"`, Confirm, NoArg},
		{`Then a "conversation.completed" webhook arrives`, Confirm, NoArg},
		{`Then an "alerts.triggered" webhook arrives`, Confirm, NoArg},
		{`When an outbound call is placed to "+447700900001"`, Probe, NoArg},
		{`Then the call ends with status "success"`, CallStatus, NoArg},
		{`Then the call ends with status "failure"`, CallStatus, NoArg},
		{`When the SMS "Reply YES" is sent to "+447700900002"`, Probe, NoArg},
	}
	lib := New()
	for _, v := range vocabulary {
		for _, kw := range []string{"", "And ", "But ", "* "} {
			kwd, text, _ := strings.Cut(v.step, " ")
			in := Input{Keyword: kwd + " ", Text: text}
			if kw != "" {
				in.Keyword = kw
			}
			doc := "hello\nthere"
			switch v.arg {
			case DocStringArg:
				in.DocString = &doc
			case TableArg:
				in.Table = [][]string{{"a", "b"}}
				if strings.Contains(text, "record shows") {
					in.Table = [][]string{{"num_turns", "2"}}
				}
				if strings.Contains(text, "passes through") || strings.Contains(text, "one of") {
					in.Table = [][]string{{"a"}}
				}
			}
			op, err := lib.Compile(in)
			if err != nil {
				t.Errorf("%s%s: %v", in.Keyword, text, err)
				continue
			}
			if op.Kind != v.kind {
				t.Errorf("%s: kind %v, want %v", v.step, op.Kind, v.kind)
			}
		}
	}
}

func TestCompileErrors(t *testing.T) {
	type testCase struct {
		name  string
		in    Input
		want  string
		hints []string
	}
	doc := "x"
	run := func(t *testing.T, tc testCase) {
		_, err := New().Compile(tc.in)
		if err == nil {
			t.Fatalf("no error, want %q", tc.want)
		}
		se, ok := err.(*Error)
		if !ok {
			t.Fatalf("error %T, want *Error", err)
		}
		if !strings.Contains(se.Message, tc.want) {
			t.Errorf("message %q, want it to contain %q", se.Message, tc.want)
		}
		for _, h := range tc.hints {
			if !strings.Contains(se.Hint, h) {
				t.Errorf("hint %q, want it to contain %q", se.Hint, h)
			}
		}
	}
	for _, tc := range []testCase{
		{"undefined", Input{Keyword: "Then ", Text: `the agents reply contain "x"`}, `undefined step "Then the agents reply contain \"x\""`,
			[]string{`closest defined steps: Then the agent's reply contains "x"; `, "agenttest steps"}},
		{"undefined user", Input{Keyword: "When ", Text: `the user types "x"`}, "undefined step", []string{`closest defined steps: When the user says "x"; `}},
		{"undefined user, the step's words", Input{Keyword: "When ", Text: `the user say "I want a table"`}, "undefined step",
			[]string{`closest defined steps: When the user says "I want a table"; `}},
		// Mistakes with a certain fix get it, not the closest wordings.
		{"ignoring case on a node", Input{Keyword: "Then ", Text: `the current node is "x" ignoring case`},
			`step "Then the current node is \"x\" ignoring case" does not take "ignoring case"`, []string{"contains and does not contain"}},
		{"ignoring case on a pattern", Input{Keyword: "And ", Text: `the agent's reply matches "how many" ignoring case`},
			`does not take "ignoring case"`, []string{"(?i)"}},
		{"single quotes", Input{Keyword: "Then ", Text: `the agent's reply contains 'How many'`},
			`undefined step`, []string{`did you mean Then the agent's reply contains "How many"?`, "straight double quotes"}},
		{"single quotes, two texts", Input{Keyword: "And ", Text: `the state 'party_size' is '4'`},
			`undefined step`, []string{`did you mean And the state "party_size" is "4"?`}},
		{"typographic quotes", Input{Keyword: "When ", Text: `the user says “I'd like a table”`},
			`undefined step`, []string{`did you mean When the user says "I'd like a table"?`}},
		{"typographic single quotes", Input{Keyword: "Then ", Text: `the agent’s reply contains ‘table’`},
			`undefined step`, []string{`did you mean Then the agent’s reply contains "table"?`}},
		{"comment after the step", Input{Keyword: "Given ", Text: `the channel "WEB" # the web widget`},
			`undefined step`, []string{`did you mean Given the channel "WEB"?`, "a comment takes a line of its own"}},
		{"comment after a text with a #", Input{Keyword: "When ", Text: `the user says "table #4 #5" # asks twice`},
			`undefined step`, []string{`did you mean When the user says "table #4 #5"?`}},
		{"comment after a text with a # further on", Input{Keyword: "When ", Text: `the user says "a #bc" # note`},
			`undefined step`, []string{`did you mean When the user says "a #bc"?`}},
		{"comment after a text with # #", Input{Keyword: "When ", Text: `the user says "a # #b" # note`},
			`undefined step`, []string{`did you mean When the user says "a # #b"?`}},
		// A quote at either end of the text, or one never closed, is no
		// reason to stop at the undefined step.
		{"quote first", Input{Keyword: "When ", Text: `'hi' the user says`}, `undefined step "When 'hi' the user says"`, nil},
		{"quote never closed", Input{Keyword: "When ", Text: `the user says 'hi`}, `undefined step "When the user says 'hi"`, nil},
		{"text without quotes", Input{Keyword: "When ", Text: `the user says can I speak to a pharmacist`},
			`undefined step`, []string{`did you mean When the user says "can I speak to a pharmacist"?`, "written in double quotes"}},
		{"last text without quotes", Input{Keyword: "And ", Text: `the state "rx" is RX123456`},
			`undefined step`, []string{`did you mean And the state "rx" is "RX123456"?`}},
		{"no step quotes to", Input{Keyword: "Then ", Text: `the reply contains hello`}, `undefined step "Then the reply contains hello"`,
			[]string{"closest defined steps"}},
		// In a file of another language, its keywords start the steps; a
		// step worded in it too is told the wording stays English.
		{"worded in the file's language", Input{Keyword: "Quand ", Text: `l'utilisateur dit "bonjour"`,
			Keywords: map[string][]string{"given": {"Soit "}, "when": {"Quand "}, "then": {"Alors "}, "and": {"Et "}, "but": {"Mais "}}},
			`undefined step "Quand l'utilisateur dit \"bonjour\""`, []string{`Quand the user says`, "# language: sets the keywords only: the words after them are agenttest's, in English"}},
		{"full stop", Input{Keyword: "Then ", Text: `the agent's reply contains "x".`},
			`undefined step`, []string{`did you mean Then the agent's reply contains "x"?`, "without punctuation"}},
		{"bad regex", Input{Keyword: "Then ", Text: `the agent's reply matches "("`}, "invalid regular expression", nil},
		{"bad state regex", Input{Keyword: "Then ", Text: `the state "k" matches "[a"`}, "invalid regular expression", nil},
		{"bad similarity", Input{Keyword: "Then ", Text: `the agent's reply is similar to "x" with at least 1.5`}, "similarity 1.5", nil},
		{"similarity as a percentage", Input{Keyword: "Then ", Text: `the agent's reply is similar to "x" with at least 70`}, "similarity 70", []string{"write 0.7 or 70%: the threshold is a share of 1"}},
		{"empty handoff destination", Input{Keyword: "Then ", Text: `the agent hands off to ""`}, "an empty destination matches no handoff", []string{`write "Then the agent does not hand off" for none`}},
		{"missing docstring", Input{Keyword: "When ", Text: `the user says:`}, "needs a DocString", nil},
		{"missing table", Input{Keyword: "Then ", Text: `the state includes:`}, "needs a table", nil},
		{"unexpected docstring", Input{Keyword: "Then ", Text: `the conversation ends`, DocString: &doc}, "takes no DocString", nil},
		// A table under a step that takes none would be dropped unread.
		{"unexpected table", Input{Keyword: "Then ", Text: `the agent says "x"`, Table: [][]string{{"y"}}}, `step "Then the agent says \"x\"" takes no table`, nil},
		// Words before a step's wording make another step, not this one.
		{"words before the step", Input{Keyword: "Then ", Text: `I hope the agent says "x"`}, `undefined step "Then I hope the agent says \"x\""`, nil},
		{"table shape", Input{Keyword: "Then ", Text: `the state includes:`, Table: [][]string{{"a", "b", "c"}}}, "has 3 cells, want 2", nil},
		{"header only", Input{Keyword: "Then ", Text: `the state includes:`, Table: [][]string{{"key", "value"}}}, "no rows", nil},
		{"bad capture name", Input{Keyword: "Then ", Text: `I remember "1x" from the reply matching "a"`}, "invalid variable name", nil},
		// What the YAML decoder refuses in capture: {NAME: {state.KEY: ...}}
		// and latency_ms: {max: 0}, the steps refuse too.
		{"capture state key", Input{Keyword: "Then ", Text: `I remember "r" from the state "a..b"`}, `invalid state key "a..b"`, nil},
		{"capture state key reference", Input{Keyword: "Then ", Text: `I remember "r" from the state "${k}."`}, `invalid state key "${k}."`, nil},
		{"zero milliseconds", Input{Keyword: "Then ", Text: `the reply came within 0 ms`}, "must be above 0, not 0", nil},
		{"unterminated ref", Input{Keyword: "Then ", Text: `the node trace includes "${x"`}, "unterminated", nil},
		{"unknown record field", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"num_turn", "4"}}},
			`row | num_turn | 4 |: unknown field "num_turn"`, []string{`did you mean "num_turns"?`}},
		{"record number", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"num_turns", "four"}}},
			`"four" is not a number`, []string{"at least 1"}},
		{"record range", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"num_turns", "between 5 and 2"}}},
			"first bound is above the second", nil},
		// The record counts in whole numbers: a bound that is not one
		// never holds (or, negative, always does), and judged the agent.
		{"record fraction", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"num_turns", "2.5"}}},
			"num_turns: 2.5 is not a whole number 0 or more", nil},
		{"record negative bound", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"num_ood", "at least -1"}}},
			"num_ood: -1 is not a whole number 0 or more", nil},
		{"record not a number", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"total_duration", "NaN"}}},
			"total_duration: NaN is not a whole number 0 or more", nil},
		{"record fraction at most", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"vendor_duration", "at most 2.5"}}},
			"vendor_duration: 2.5 is not a whole number 0 or more", nil},
		{"record turns count fraction", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"turns.count", "between 0.5 and 0.7"}}},
			"turns.count: 0.5 is not a whole number 0 or more", nil},
		{"record boolean", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"handoff", "yes"}}},
			`handoff is true or false, not "yes"`, nil},
		{"record whole metrics", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"metrics", "x"}}},
			"metrics is checked member by member", []string{"metrics.NAME"}},
		{"record member of a scalar", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"channel.x", "x"}}},
			"channel has no members", nil},
		{"record turns member", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"turns.total", "1"}}},
			"unknown field turns.total", []string{"turns.count"}},
		{"record state key", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"state.a..b", "1"}}},
			`invalid state key "a..b"`, nil},
		// The state checks refuse it as YAML's expect: {state: ...} does.
		{"state check key", Input{Keyword: "Then ", Text: `the state "a..b" is "1"`}, `invalid state key "a..b"`, nil},
		{"state pattern key", Input{Keyword: "Then ", Text: `the state " " matches "1"`}, `invalid state key " "`, nil},
		{"state absence key", Input{Keyword: "Then ", Text: `the state has no ".a"`}, `invalid state key ".a"`, nil},
		{"state absence key reference", Input{Keyword: "Then ", Text: `the state has no "${k}."`}, `invalid state key "${k}."`, nil},
		{"state table key", Input{Keyword: "Then ", Text: `the state includes:`, Table: [][]string{{"ok", "1"}, {"a.", "2"}}},
			`invalid state key "a."`, nil},
		{"call status", Input{Keyword: "Then ", Text: `the call ends with status "calling"`}, `"calling" is not a final call status`, []string{"success or failure"}},
		{"empty sms", Input{Keyword: "When ", Text: `the SMS " " is sent to "+447700900002"`}, "SMS text must not be empty", nil},
		// As YAML's agent: "" and env: "" are refused: the target's would
		// be used in silence.
		{"empty agent", Input{Keyword: "Given ", Text: `the agent ""`}, `step "Given the agent \"\"": the agent must not be empty`, []string{"the agent id"}},
		{"blank environment", Input{Keyword: "Given ", Text: `the environment " "`}, "the environment must not be empty", []string{"one of sandbox, pre-release, live"}},
		{"webhook reference", Input{Keyword: "Then ", Text: `a "${ev}" webhook arrives`}, "the event must be written out", nil},
		{"probe reference", Input{Keyword: "When ", Text: `an outbound call is placed to "${n"`}, "unterminated", nil},
		{"semicolon", Input{Keyword: "Then ", Text: `the agent's reply contains "x";`},
			`undefined step`, []string{`did you mean Then the agent's reply contains "x"?`, "without punctuation"}},
		{"low typographic quotes", Input{Keyword: "When ", Text: `the user says „Hallo“`},
			`undefined step`, []string{`did you mean When the user says "Hallo"?`}},
		// The quotes inside a quoted text are its own.
		{"quotes inside typographic quotes", Input{Keyword: "When ", Text: `the user says “say ‘hi’ now”`},
			`undefined step`, []string{`did you mean When the user says "say ‘hi’ now"?`}},
		{"apostrophe inside single quotes", Input{Keyword: "When ", Text: `the user says 'I'd like a table'`},
			`undefined step`, []string{`did you mean When the user says "I'd like a table"?`}},
		{"comment after two spaces", Input{Keyword: "Given ", Text: `the channel "WEB"  # the web widget`},
			`undefined step`, []string{`did you mean Given the channel "WEB"?`}},
		{"reference in a pattern", Input{Keyword: "Then ", Text: `the agent's reply matches "${x"`}, "unterminated", nil},
		{"one-column table row", Input{Keyword: "Then ", Text: `the node trace passes through:`, Table: [][]string{{"a", "b"}}}, "table row 1 has 2 cells, want 1", nil},
		{"one-column header only", Input{Keyword: "Then ", Text: `the node trace passes through:`, Table: [][]string{{"node"}}}, "table has no rows", nil},
		{"capture state name", Input{Keyword: "Then ", Text: `I remember "1x" from the state "k"`}, `invalid variable name "1x"`, nil},
		// The wording is a contract: no alias is accepted unless defined.
		{"record member missing", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"metrics.", "1"}}},
			"metrics. names no member", []string{"metrics.NAME"}},
		{"record intents empty", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"turns.intents", " , "}}},
			"turns.intents lists no intent", nil},
		{"record responses empty", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"turns.responses", " "}}},
			"turns.responses has no text", nil},
		{"record boolean as a number", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"handoff", "1"}}},
			`handoff is true or false, not "1"`, nil},
		{"record field unlike any", Input{Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{{"zzzzzzzzzzzz", "1"}}},
			`unknown field "zzzzzzzzzzzz"`, []string{"the fields are those of the Conversation summary"}},
		{"web chat", Input{Keyword: "Given ", Text: `the conversation is over web chat`}, `undefined step`, []string{`Given the conversation is over messaging`}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestCheckBuildsTheYAMLExpect(t *testing.T) {
	lib := New()
	pos := diag.Pos{File: "f.feature", Line: 9, Col: 5}
	op, err := lib.Compile(Input{Pos: pos, Keyword: "And ", Text: `the state includes:`, Table: [][]string{{"key", "value"}, {"party_size", "4"}, {"${k}", "${v}"}}})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := op.Expect(func(s string) (string, error) { return strings.ReplaceAll(s, "${k}", "time"), nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.State) != 2 || exp.State[0].Key != "party_size" || *exp.State[0].Match.Exact != "4" || exp.State[1].Key != "time" || *exp.State[1].Match.Exact != "${v}" {
		t.Fatalf("state checks %+v", exp.State)
	}
	if exp.Pos != pos || exp.State[0].Pos != pos {
		t.Errorf("positions %v %v, want %v", exp.Pos, exp.State[0].Pos, pos)
	}
	// The matcher text keeps its reference for assert.Check to expand.
	res := assert.Check(exp, assert.Observation{Result: nil}, nil)
	if len(res) != 1 {
		t.Errorf("check without a reply: %v", res)
	}
}

// TestTableRowsCheckWhereWritten: with the cells' positions, each row of
// a state or record table is checked at its first cell, the last row's
// too; a row without positions falls back to the step's.
func TestTableRowsCheckWhereWritten(t *testing.T) {
	lib := New()
	pos := diag.Pos{File: "f.feature", Line: 9, Col: 5}
	cell := func(line, col int) diag.Pos { return diag.Pos{File: "f.feature", Line: line, Col: col} }
	at := [][]diag.Pos{{cell(10, 7), cell(10, 14)}, {cell(11, 7), cell(11, 20)}, {cell(12, 7), cell(12, 20)}, nil}
	table := [][]string{{"key", "value"}, {"party_size", "4"}, {"time", "19:00"}, {"day", "friday"}}
	op, err := lib.Compile(Input{Pos: pos, Keyword: "And ", Text: `the state includes:`, Table: table, TableAt: at})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := op.Expect(func(s string) (string, error) { return s, nil })
	if err != nil {
		t.Fatal(err)
	}
	var got []diag.Pos
	for _, s := range exp.State {
		got = append(got, s.Pos, s.Match.Pos)
	}
	if want := []diag.Pos{cell(11, 7), cell(11, 7), cell(12, 7), cell(12, 7), pos, pos}; !slices.Equal(got, want) {
		t.Errorf("state check positions %v, want %v", got, want)
	}
	op, err = lib.Compile(Input{Pos: pos, Keyword: "And ", Text: `the conversation record shows:`,
		Table: [][]string{{"channel", "WEBCHAT"}, {"num_turns", "2"}}, TableAt: at[1:3]})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := op.Confirm(func(s string) (string, error) { return s, nil })
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range cf.Conversation.Fields {
		got = append(got, f.Pos)
	}
	if want := []diag.Pos{cell(11, 7), cell(12, 7)}; !slices.Equal(got, want) {
		t.Errorf("record field positions %v, want %v", got, want)
	}
}

// checkReply compiles the Then step in (at f.feature:3:5) and checks a
// reply of text against it, ${...} references expanded by expand.
func checkReply(t *testing.T, in Input, text string, expand assert.Expander) []assert.Failure {
	t.Helper()
	in.Pos, in.Keyword = diag.Pos{File: "f.feature", Line: 3, Col: 5}, "Then "
	op, err := New().Compile(in)
	if err != nil {
		t.Fatalf("%s: %v", in.Text, err)
	}
	exp, err := op.Expect(func(s string) (string, error) { return s, nil })
	if err != nil {
		t.Fatal(err)
	}
	return assert.Check(exp, assert.Observation{Result: &reply.TurnResult{Response: text}}, expand)
}

// TestReplyChecksTakeADocString: the DocString forms check the reply
// against every line of the DocString, as the quoted forms check theirs.
func TestReplyChecksTakeADocString(t *testing.T) {
	doc := "Your table for 4 is booked.\nYour reference is ${ref}."
	booked := "Your table for 4 is booked.\nYour reference is R1234."
	expand := func(s string) (string, error) { return strings.ReplaceAll(s, "${ref}", "R1234"), nil }
	for _, tc := range []struct {
		step  string
		reply string
		pass  bool
	}{
		{`the agent says:`, booked, true},
		{`the agent says:`, "Your table for 4 is booked. Your reference is R1234.", false},
		{`the agent says:`, booked + "\nAnything else?", false},
		{`the agent's reply contains:`, "Lovely! " + booked + "\nAnything else?", true},
		{`the agent's reply contains:`, "Your table for 4 is booked.", false},
	} {
		fails := checkReply(t, Input{Text: tc.step, DocString: &doc}, tc.reply, expand)
		if (len(fails) == 0) != tc.pass {
			t.Errorf("%s against %q: %v, want pass %v", tc.step, tc.reply, fails, tc.pass)
		}
	}
}

// TestIgnoringCase: "ignoring case" at the end of a quoted text check
// (", ignoring case" before the colon of a DocString one) folds case, as
// ignore_case does in YAML; without it case counts.
func TestIgnoringCase(t *testing.T) {
	for _, tc := range []struct {
		step  string
		doc   string
		reply string
		pass  bool
	}{
		{`the agent's reply contains:`, "YOUR TABLE\nis booked", "Your table\nis booked.", false},
		{`the agent's reply contains, ignoring case:`, "YOUR TABLE\nis booked", "Your table\nis booked.", true},
		{`the agent says, ignoring case:`, "your table\nis booked.", "  Your Table\nIs Booked.  ", true},
		{`the agent says:`, "your table\nis booked.", "Your table\nis booked.", false},
		{`the agent's reply contains "how many"`, "", "How many people?", false},
		{`the agent's reply contains "how many" ignoring case`, "", "How many people?", true},
		{`the agent says "how many people?" ignoring case`, "", "  How Many People?  ", true},
		{`the agent says "how many people?"`, "", "How many people?", false},
		{`the agent's reply does not contain "sorry" ignoring case`, "", "Sorry, I didn't get that.", false},
		{`the agent's reply does not contain "sorry"`, "", "Sorry, I didn't get that.", true},
		{`the agent's reply contains "ignoring case"`, "", "text ignoring case", true},
	} {
		in := Input{Text: tc.step}
		if tc.doc != "" {
			in.DocString = &tc.doc
		}
		fails := checkReply(t, in, tc.reply, func(s string) (string, error) { return s, nil })
		if (len(fails) == 0) != tc.pass {
			t.Errorf("%s against %q: %v, want pass %v", tc.step, tc.reply, fails, tc.pass)
		}
	}
}

// TestContainsOneOf: the reply passes when it contains any row of the
// table, a header row aside, and the failure lists them all.
func TestContainsOneOf(t *testing.T) {
	in := Input{Text: `the agent's reply contains one of:`, Table: [][]string{{"text"}, {"how many"}, {"party of ${n}"}}}
	expand := func(s string) (string, error) { return strings.ReplaceAll(s, "${n}", "4"), nil }
	for text, pass := range map[string]bool{
		"Lovely! how many of you?":     true,
		"A party of 4, at what time?":  true,
		"A party of 5, at what time?":  false,
		"When would you like to come?": false,
	} {
		fails := checkReply(t, in, text, expand)
		if (len(fails) == 0) != pass {
			t.Errorf("%q: %v, want pass %v", text, fails, pass)
		}
		if len(fails) == 1 && fails[0].Expected != `any of [contains "how many" | contains "party of 4"]` {
			t.Errorf("expected %q", fails[0].Expected)
		}
	}
}

func TestWriteGolden(t *testing.T) {
	var b bytes.Buffer
	if err := New().Write(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "steps.golden"), b.Bytes())
	for _, d := range New().Defs() {
		if !strings.Contains(b.String(), d.Example) {
			t.Errorf("output lacks the example %q", d.Example)
		}
	}
}

// TestRecordTableBuildsTheYAMLConfirm: each row becomes the check the
// same key of `confirm: conversation:` decodes to, by the field's kind.
// TestTableHeaders: only a first row naming the columns is a header; a
// later row of the same words, or a first row naming one column only, is
// a row to check.
func TestTableHeaders(t *testing.T) {
	for _, tc := range []struct {
		text  string
		table [][]string
		want  string
	}{
		{`the state includes:`, [][]string{{"key", "value"}, {"a", "1"}}, `[[a 1]]`},
		{`the state includes:`, [][]string{{"a", "1"}, {"key", "value"}}, `[[a 1] [key value]]`},
		{`the state includes:`, [][]string{{"key", "1"}, {"a", "value"}}, `[[key 1] [a value]]`},
		{`the state includes:`, [][]string{{"a", "value"}}, `[[a value]]`},
		{`the state includes:`, [][]string{{"Name", "Value"}, {"a", "1"}}, `[[a 1]]`},
		{`the state includes:`, [][]string{{"attribute", "value"}, {"a", "1"}}, `[[a 1]]`},
		{`the node trace passes through:`, [][]string{{"Nodes"}, {"start"}}, `[start]`},
		{`the node trace passes through:`, [][]string{{"start"}, {"node"}}, `[start node]`},
	} {
		op, err := New().Compile(Input{Keyword: "Then ", Text: tc.text, Table: tc.table})
		if err != nil {
			t.Fatalf("%s %v: %v", tc.text, tc.table, err)
		}
		exp, err := op.Expect(syntaxOnly)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if exp.Trace != nil {
			got = fmt.Sprint(exp.Trace.Sequence)
		} else {
			var kv [][2]string
			for _, sc := range exp.State {
				kv = append(kv, [2]string{sc.Key, *sc.Match.Exact})
			}
			got = fmt.Sprint(kv)
		}
		if got != tc.want {
			t.Errorf("%s %v: checks %s, want %s", tc.text, tc.table, got, tc.want)
		}
	}
}

// TestSimilarityBounds: a threshold is above 0 (0 passes any reply) and
// at most 1 (1 is the text itself).
func TestSimilarityBounds(t *testing.T) {
	for _, tc := range []struct {
		min  string
		want string // the threshold, or the error
	}{
		{"1", "1"},
		{"0.01", "0.01"},
		{"0", `step "Then the agent's reply is similar to \"x\" with at least 0": similarity 0 must be above 0 and at most 1`},
		{"1.01", `step "Then the agent's reply is similar to \"x\" with at least 1.01": similarity 1.01 must be above 0 and at most 1`},
		// A percentage, as YAML's min: "70%" takes it.
		{"70%", "0.7"},
		{"100%", "1"},
		{"0.5%", "0.005"},
		{"0%", `step "Then the agent's reply is similar to \"x\" with at least 0%": similarity 0% must be above 0% and at most 100%`},
		{"101%", `step "Then the agent's reply is similar to \"x\" with at least 101%": similarity 101% must be above 0% and at most 100%`},
	} {
		op, err := New().Compile(Input{Keyword: "Then ", Text: `the agent's reply is similar to "x" with at least ` + tc.min})
		got := fmt.Sprint(err)
		if err == nil {
			exp, err := op.Expect(syntaxOnly)
			if err != nil {
				t.Fatal(err)
			}
			got = fmt.Sprint(exp.Response.Similar.Min)
		}
		if got != tc.want {
			t.Errorf("at least %s: %s, want %s", tc.min, got, tc.want)
		}
	}
}

func TestRecordTableBuildsTheYAMLConfirm(t *testing.T) {
	pos := diag.Pos{File: "f.feature", Line: 7, Col: 5}
	op, err := New().Compile(Input{Pos: pos, Keyword: "Then ", Text: `the conversation record shows:`, Table: [][]string{
		{"field", "value"},
		{"channel", "WEBCHAT"},
		{"num_turns", "4"},
		{"num_ood", "at most 1"},
		{"total_duration", "between 1 and ${max}"},
		{"handoff", "true"},
		{"in_progress", "${b}"},
		{"metrics.BOOKED", "true"},
		{"state.${k}", "${v}"},
		{"turns.count", "At least ${min}"},
		{"turns.intents", "urgent, , book"},
		{"turns.responses", "Riverside ${v}"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if op.Kind != Confirm || op.Confirm == nil {
		t.Fatalf("op %+v", op)
	}
	x := func(s string) (string, error) {
		return strings.NewReplacer("${k}", "booking.code", "${max}", "90", "${min}", "2", "${b}", "false ").Replace(s), nil
	}
	cf, err := op.Confirm(x)
	if err != nil {
		t.Fatal(err)
	}
	cc := cf.Conversation
	if cf.Pos != pos || cc == nil || cc.Pos != pos {
		t.Fatalf("confirm %+v", cf)
	}
	var got []string
	for _, f := range cc.Fields {
		switch {
		case f.Text != nil:
			got = append(got, f.Field+"=text:"+*f.Text.Exact)
		case f.Number != nil:
			got = append(got, f.Field+"=number:"+f.Number.Describe())
		case f.Bool != nil:
			got = append(got, fmt.Sprintf("%s=bool:%t", f.Field, f.Bool.Value))
		}
	}
	want := "channel=text:WEBCHAT num_turns=number:" + (&assert.Number{Value: new(4.0)}).Describe() +
		" num_ood=number:" + (&assert.Number{Max: new(1.0)}).Describe() +
		" total_duration=number:" + (&assert.Number{Min: new(1.0), Max: new(90.0)}).Describe() +
		" handoff=bool:true in_progress=bool:false"
	if strings.Join(got, " ") != want {
		t.Errorf("fields\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if v := cc.InProgress(); v == nil || *v {
		t.Errorf("InProgress() = %v, want false", v)
	}
	if len(cc.Metrics) != 1 || cc.Metrics[0].Name != "BOOKED" || *cc.Metrics[0].Match.Exact != "true" {
		t.Errorf("metrics %+v", cc.Metrics)
	}
	// The state key is expanded now; the value keeps its reference for
	// assert to expand.
	if len(cc.State) != 1 || cc.State[0].Key != "booking.code" || *cc.State[0].Match.Exact != "${v}" {
		t.Errorf("state %+v", cc.State)
	}
	if cc.Turns == nil || cc.Turns.Count == nil || *cc.Turns.Count.Min != 2 || cc.Turns.Intents == nil || strings.Join(cc.Turns.Intents.Includes, ",") != "urgent,book" {
		t.Errorf("turns %+v", cc.Turns)
	}
	// What the agent said in some turn: contained, its reference left
	// for assert to expand.
	if r := cc.Turns.Responses; r == nil || r.Contains == nil || *r.Contains != "Riverside ${v}" || r.Exact != nil || r.Pos != pos {
		t.Errorf("turns.responses %+v", cc.Turns.Responses)
	}
}

func TestProbeAndConfirmOps(t *testing.T) {
	lib := New()
	compile := func(text string) *Step {
		t.Helper()
		op, err := lib.Compile(Input{Keyword: "When ", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	if op := compile(`the SMS "Reply \"YES\"" is sent to "+447700900002"`); op.Kind != Probe || op.Probe.SMS == nil || op.Probe.SMS.To != "+447700900002" || op.Probe.SMS.Message != `Reply "YES"` {
		t.Errorf("sms op %+v", op)
	}
	if op := compile(`an outbound call is placed to "${number}"`); op.Kind != Probe || op.Probe.Call == nil || op.Probe.Call.To != "${number}" || op.Probe.Within != DefaultProbeWithin {
		t.Errorf("call op %+v", op)
	}
	if op := compile(`the call ends with status "failure"`); op.Kind != CallStatus || op.Status.Want != "failure" || op.Status.Pos != op.Pos {
		t.Errorf("status op %+v", op)
	}
	op := compile(`a "handoff.created" webhook arrives`)
	cf, err := op.Confirm(syntaxOnly)
	if err != nil || len(op.Webhooks) != 1 || op.Webhooks[0] != "handoff.created" || len(cf.Webhooks) != 1 || cf.Webhooks[0].Event != "handoff.created" || cf.Conversation != nil {
		t.Errorf("webhook op %+v, confirm %+v, %v", op, cf, err)
	}
	op = compile(`the handoff state "${k}" is "${v}"`)
	cf, err = op.Confirm(func(s string) (string, error) { return strings.ReplaceAll(s, "${k}", "reason"), nil })
	if err != nil || cf.HandoffState == nil || len(cf.HandoffState.Data) != 1 || cf.HandoffState.Data[0].Key != "reason" || *cf.HandoffState.Data[0].Match.Exact != "${v}" {
		t.Errorf("handoff state confirm %+v, %v", cf, err)
	}
}

// TestErrorColumn: an invalid argument is reported at its opening quote,
// where the designer must look, not at the step's keyword.
func TestErrorColumn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   Input
		col  int
	}{
		{"reply pattern", Input{Keyword: "Then ", Text: `the agent's reply matches "("`}, 27},
		{"state pattern", Input{Keyword: "Then ", Text: `the state "k" matches "[a"`}, 23},
		{"capture pattern", Input{Keyword: "And ", Text: `I remember "r" from the reply matching "a("`}, 40},
		{"after a typographic apostrophe", Input{Keyword: "Then ", Text: `the agent’s reply matches "("`}, 27},
		{"ignoring case it does not take", Input{Keyword: "Then ", Text: `the current node is "x" ignoring case`}, 25},
		{"comment after the step", Input{Keyword: "Given ", Text: `the channel "WEB" # the web widget`}, 19},
		{"full stop", Input{Keyword: "Then ", Text: `the agent's reply contains "x".`}, 31},
		{"the step as a whole", Input{Keyword: "Then ", Text: `the state includes:`, Table: [][]string{{"a", "b", "c"}}}, 0},
		// Each argument refused for its value is reported at it.
		{"similarity threshold", Input{Keyword: "Then ", Text: `the agent's reply is similar to "hi" with at least 2`}, 52},
		{"call status", Input{Keyword: "Then ", Text: `the call ends with status "calling"`}, 27},
		{"capture name", Input{Keyword: "Then ", Text: `I remember "1x" from the reply matching "a"`}, 12},
		{"capture name from the state", Input{Keyword: "Then ", Text: `I remember "1x" from the state "k"`}, 12},
		{"handoff state key", Input{Keyword: "Then ", Text: `the handoff state "a..b" is "c"`}, 19},
		{"webhook event", Input{Keyword: "Then ", Text: `a "" webhook arrives`}, 3},
		{"SMS text", Input{Keyword: "When ", Text: `the SMS " " is sent to "+447700900002"`}, 9},
		{"capture state key", Input{Keyword: "And ", Text: `I remember "r" from the state "a..b"`}, 31},
		{"zero milliseconds", Input{Keyword: "Then ", Text: `the reply came within 0 ms`}, 23},
		{"count out of range", Input{Keyword: "Then ", Text: `the metric "M" was written 99999999999 times`}, 28},
		{"comment after a text with a #", Input{Keyword: "When ", Text: `the user says "a #bc" # note`}, 23},
		{"text without quotes", Input{Keyword: "When ", Text: `the user says it's rx123456`}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New().Compile(tc.in)
			se, ok := err.(*Error)
			if !ok {
				t.Fatalf("error %v, want *Error", err)
			}
			if se.Col != tc.col {
				t.Errorf("column %d, want %d (%s)", se.Col, tc.col, se)
			}
		})
	}
}

// TestRefusedCaptureKeepsItsName: a capture step refused for its pattern
// or its state key names the variable it would have set, so that the
// loader reports the one mistake and not every later ${name} too.
func TestRefusedCaptureKeepsItsName(t *testing.T) {
	t.Parallel()
	for _, text := range []string{`I remember "r" from the reply matching "a("`, `I remember "r" from the state "a..b"`} {
		_, err := New().Compile(Input{Keyword: "Then ", Text: text})
		se, ok := err.(*Error)
		if !ok || se.Captures != "r" {
			t.Errorf("%s: error %#v, want one that captures r", text, err)
		}
	}
}

// mustCompile compiles a step that must compile.
func mustCompile(t *testing.T, in Input) *Step {
	t.Helper()
	op, err := New().Compile(in)
	if err != nil {
		t.Fatalf("%s%s: %v", in.Keyword, in.Text, err)
	}
	return op
}

// refusingBad is a session's expander that replaces references by r and
// cannot expand ${bad}.
func refusingBad(r *strings.Replacer) Expander {
	return func(s string) (string, error) {
		if strings.Contains(s, "${bad}") {
			return "", fmt.Errorf("cannot expand %s", s)
		}
		return r.Replace(s), nil
	}
}

// TestSetupSteps: a setup step applies its arguments expanded, an
// integration attributes table skips a first row naming its columns, and
// a reference the expander refuses is an error, not an empty value.
func TestSetupSteps(t *testing.T) {
	t.Parallel()
	type testCase struct {
		text  string
		table [][]string
		want  string // the parameters set, or the error
	}
	expand := refusingBad(strings.NewReplacer("${v}", "gold"))
	run := func(t *testing.T, tc testCase) {
		op := mustCompile(t, Input{Keyword: "Given ", Text: tc.text, Table: tc.table})
		var p Params
		got := fmt.Sprint(op.Setup(&p, expand))
		if got == "<nil>" {
			got = fmt.Sprintf("agent=%s via=%s attrs=%v", p.Agent, p.Via, p.Attributes)
		}
		if got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.text, tc.table, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{`the agent "${v}"`, nil, "agent=gold via= attrs=map[]"},
		{`the agent "${bad}"`, nil, "cannot expand ${bad}"},
		{`the conversation is over messaging`, nil, "agent= via=messaging attrs=map[]"},
		{`the conversation is over debug chat`, nil, "agent= via=debug_chat attrs=map[]"},
		{`the integration attributes:`, [][]string{{"attribute", "value"}, {"tier", "${v}"}}, "agent= via= attrs=map[tier:gold]"},
		{`the integration attributes:`, [][]string{{"Name", "Value"}, {"tier", "${v}"}}, "agent= via= attrs=map[tier:gold]"},
		{`the integration attributes:`, [][]string{{"tier", "${bad}"}}, "cannot expand ${bad}"},
		{`the integration attributes:`, [][]string{{"${bad}", "gold"}}, "cannot expand ${bad}"},
	} {
		t.Run(tc.text, func(t *testing.T) { run(t, tc) })
	}
}

// TestCheckExpandsPlainArguments: a check's plain arguments (node names,
// state keys, metric, function, topic and event names) are expanded with
// the session's expander when the step runs, and one the expander
// refuses fails the step; matcher texts, and the rows of a trace or
// events table, keep their references for assert.Check, which fails a
// row it cannot expand at that row.
func TestCheckExpandsPlainArguments(t *testing.T) {
	t.Parallel()
	type testCase struct {
		text  string
		table [][]string
		got   func(e *assert.Expect) any
		want  string
	}
	expand := refusingBad(strings.NewReplacer("${k}", "K"))
	run := func(t *testing.T, tc testCase) {
		op := mustCompile(t, Input{Keyword: "Then ", Text: tc.text, Table: tc.table})
		e, err := op.Expect(expand)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if got := fmt.Sprint(tc.got(e)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.text, got, tc.want)
		}
		// The same step with a reference the expander refuses.
		bad := Input{Keyword: "Then ", Text: strings.Replace(tc.text, "${k}", "${bad}", 1), Table: tc.table}
		if tc.table != nil {
			bad.Table = [][]string{{strings.Replace(tc.table[0][0], "${k}", "${bad}", 1)}}
		}
		_, err = mustCompile(t, bad).Expect(expand)
		if kept := tc.table != nil; err == nil && !kept {
			t.Errorf("%s %v: no error, want the expander's", bad.Text, bad.Table)
		} else if err != nil && kept {
			t.Errorf("%s %v: %v, want the row kept for the check", bad.Text, bad.Table, err)
		}
	}
	for _, tc := range []testCase{
		{`the node trace includes "${k}"`, nil, func(e *assert.Expect) any { return e.Trace.Includes }, "[K]"},
		{`the node trace passes through:`, [][]string{{"${k}"}}, func(e *assert.Expect) any { return e.Trace.Sequence }, "[${k}]"},
		{`the state "${k}" is "${k}"`, nil, func(e *assert.Expect) any { return e.State[0].Key + "=" + *e.State[0].Match.Exact }, "K=${k}"},
		{`the metric "${k}" is "${k}"`, nil, func(e *assert.Expect) any { return e.Metrics[0].Name + "=" + *e.Metrics[0].Match.Exact }, "K=${k}"},
		{`the metric "${k}" was written 2 times`, nil, func(e *assert.Expect) any { return e.Metrics[0].Name }, "K"},
		{`the function "${k}" was called`, nil, func(e *assert.Expect) any { return e.Functions.Called }, "[K]"},
		{`the topic "${k}" was retrieved`, nil, func(e *assert.Expect) any { return e.Topics.Retrieved }, "[K]"},
		{`the events include "${k}"`, nil, func(e *assert.Expect) any { return e.Events.Includes }, "[K]"},
		{`the events arrive in this order:`, [][]string{{"${k}"}}, func(e *assert.Expect) any { return e.Events.Sequence }, "[${k}]"},
	} {
		t.Run(tc.text, func(t *testing.T) { run(t, tc) })
	}
}

// shapes is a list of steps as Closest ranks them: their quoted texts
// and numbers blanked.
func shapes(steps []string) string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = shape(s)
	}
	return strings.Join(out, "; ")
}

// TestCaptureNames: a capture's name follows the ${name} syntax of the
// YAML format, from either field of the reply.
func TestCaptureNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{"ref": true, "my-ref": true, "_r2": true, "1x": false, "a.b": false, "": false, "-a": false} {
		for _, text := range []string{`I remember "%s" from the reply matching "(R\d+)"`, `I remember "%s" from the state "k"`} {
			_, err := New().Compile(Input{Keyword: "Then ", Text: fmt.Sprintf(text, name)})
			if (err == nil) != ok {
				t.Errorf("%s: error %v, want accepted %v", fmt.Sprintf(text, name), err, ok)
			}
		}
	}
}

// TestClosest: the "did you mean" of an undefined step ranks the
// definitions by their wording: the case, the quoted texts and the
// numbers of the step do not change it. Its keyword weighs a little: a
// turn's keyword finds a turn before the setup steps of fewer letters,
// and the right words still win over the right keyword. A definition
// with as many quoted arguments as the step is shown with the step's.
func TestClosest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ keyword, text, same, want string }{
		{"Then ", `THE AGENT SAYS "x"`, `the agent says "x"`, `Then the agent says "x"`},
		{"Then ", `the metric "M" was written 1000 time`, `the metric "M" was written 2 time`, `Then the metric "M" was written 2 times`},
		{"Then ", `the state "a_long_state_key" is "a long value here"`, `the state "k" is "v"`, `Then the state "a_long_state_key" is "a long value here"`},
		{"When ", `I say "hello"`, `I say "a much longer hello, with 2 numbers 3"`, `When the user says "hello"`},
		{"When ", `the user say "I want a table"`, `the user say "x"`, `When the user says "I want a table"`},
		// Two arguments where the definition takes one: its example's.
		{"When ", `the user say "I want" "a table"`, `the user say "x" "y"`, `When the user says "a table for 4 at 7pm"`},
		// No quoted argument: the example's too.
		{"When ", `the user say hello`, `the user say goodbye`, `When the user says "a table for 4 at 7pm"`},
		// An escaped quote stays inside its argument.
		{"When ", `the user say "a \"big\" table"`, `the user say "x"`, `When the user says "a \"big\" table"`},
		{"When ", `the agent say "x"`, `the agent say "y"`, `Then the agent says "x"`},
		{"Given ", `the agents "x"`, `the agents "y"`, `Given the agent "x"`},
	} {
		got, same := New().Closest(tc.keyword, tc.text, 3, nil), New().Closest(tc.keyword, tc.same, 3, nil)
		if len(got) != 3 || got[0] != tc.want || shapes(got) != shapes(same) {
			t.Errorf("%s%s: closest %q, want %q first and the list of %s: %q", tc.keyword, tc.text, got, tc.want, tc.same, same)
		}
	}
	// And, But and * carry no kind: the wording alone ranks.
	if and, star := New().Closest("And ", `I say "hello"`, 3, nil), New().Closest("* ", `I say "hello"`, 3, nil); strings.Join(and, "; ") != strings.Join(star, "; ") || and[0] == `When the user says "hello"` {
		t.Errorf("And: closest %q, * %q: want the same list, ranked by wording alone", and, star)
	}
}

// TestHandoffStateKey: the key of a handoff state step is a path of
// dot-separated members, checked when the step is compiled and, when it
// is built from ${...}, again when it runs.
func TestHandoffStateKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, expanded string
		want          string // the key checked, or the error
	}{
		{"reason", "", "reason"},
		{"${k}", "caller.id", "caller.id"},
		{"${k}", "a..b", `invalid key "${k}": write dot-separated members, e.g. caller.id`},
		{"a..b", "", `step "Then the handoff state \"a..b\" is \"v\"": invalid key "a..b": write dot-separated members, e.g. caller.id`},
	} {
		op, err := New().Compile(Input{Keyword: "Then ", Text: `the handoff state "` + tc.key + `" is "v"`})
		got := fmt.Sprint(err)
		if err == nil {
			cf, err := op.Confirm(func(s string) (string, error) { return strings.ReplaceAll(s, "${k}", tc.expanded), nil })
			if got = fmt.Sprint(err); err == nil {
				got = cf.HandoffState.Data[0].Key
			}
		}
		if got != tc.want {
			t.Errorf("key %q expanded to %q: %s, want %s", tc.key, tc.expanded, got, tc.want)
		}
	}
}

// TestHandoffStateKeyExpansion: a reference the session cannot expand in
// a handoff state key fails the step when it runs.
func TestHandoffStateKeyExpansion(t *testing.T) {
	t.Parallel()
	op, err := New().Compile(Input{Keyword: "Then ", Text: `the handoff state "${k}" is "v"`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Confirm(func(s string) (string, error) { return "", fmt.Errorf("cannot expand %s", s) }); err == nil {
		t.Error("no error, want the expander's")
	}
}

// TestSimilarityAsAPercentage: a threshold written as a percentage
// without its sign (70) says the share to write; one no percentage a
// designer means can be (9, 170) only that it is out of range.
func TestSimilarityAsAPercentage(t *testing.T) {
	for min, hint := range map[string]string{"70": "write 0.7 or 70%: the threshold is a share of 1", "10": "write 0.1 or 10%: the threshold is a share of 1",
		"100": "write 1 or 100%: the threshold is a share of 1", "9": "", "170": ""} {
		_, err := New().Compile(Input{Keyword: "Then ", Text: `the agent's reply is similar to "x" with at least ` + min})
		se, ok := err.(*Error)
		if !ok || se.Message != `step "Then the agent's reply is similar to \"x\" with at least `+min+`": similarity `+min+` must be above 0 and at most 1` || se.Hint != hint {
			t.Errorf("at least %s: %v, want the range error with the hint %q", min, err, hint)
		}
	}
}
