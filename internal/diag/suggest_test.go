package diag

import "testing"

func TestSuggest(t *testing.T) {
	type testCase struct {
		name       string
		word       string
		candidates []string
		want       string
	}
	targetKeys := []string{"build_url", "runtime_url", "account_id", "agent_id", "env"}
	agentKeys := []string{"intents", "entities", "nodes", "start"}
	expectKeys := []string{"response", "trace", "node", "state", "handoff"}
	run := func(t *testing.T, tc testCase) {
		if got := Suggest(tc.word, tc.candidates); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"swapped letters", "build_ulr", targetKeys, "build_url"},
		{"case is ignored", "BUILD_URL", targetKeys, "build_url"},
		{"one extra letter", "envv", targetKeys, "env"},
		{"a swap counts once", "evn", targetKeys, "env"},
		{"nothing close", "zzzzzz", targetKeys, ""},
		{"too short to guess", "e", targetKeys, ""},
		{"transposition in a longer word", "intnets", agentKeys, "intents"},
		{"missing plural", "node", agentKeys, "nodes"},
		{"capitalised", "Start", agentKeys, "start"},
		{"unrelated long word", "completely-different", agentKeys, ""},
		{"separators are ignored", "ignoreCase", []string{"ignore_case", "not"}, "ignore_case"},
		{"no candidates", "x", nil, ""},
		{"ties go to the first in sort order", "cat", []string{"cut", "bat"}, "bat"},
		{"ties go to the first in sort order, whatever the order given", "cat", []string{"bat", "cut"}, "bat"},
		// A candidate is normalised as the word is: its case and its
		// separators cost nothing.
		{"a candidate's case is ignored", "env", []string{"ENV"}, "ENV"},
		{"a candidate's hyphens are ignored", "env", []string{"e-n-v"}, "e-n-v"},
		{"a candidate's underscores are ignored", "env", []string{"e_n_v"}, "e_n_v"},
		// The budget: one edit up to four letters, two up to eight,
		// three beyond, counted in letters of the normalised word.
		{"four letters, two edits", "nope", agentKeys, ""},
		{"five letters, two edits", "intnt", agentKeys, "intents"},
		{"eight letters, two edits", "intntsxy", []string{"intents"}, ""},
		{"eight letters, three edits", "abcdexyz", []string{"abcdefgh"}, ""},
		{"nine letters, three edits", "abcdexyzi", []string{"abcdefghi"}, "abcdefghi"},
		{"ten letters, three edits", "envirnmnts", []string{"environment"}, "environment"},
		{"ten letters, four edits", "abcdewxyzj", []string{"abcdefghij"}, ""},
		{"letters, not bytes", "côté", []string{"côtes"}, ""},
		{"separators do not count as letters", "n_o_p_e", agentKeys, ""},
		// Synonyms: other tools' names for a check, far by spelling.
		{"synonym", "expect_text", expectKeys, "response"},
		{"synonym in another case and separators", "Expect-Text", expectKeys, "response"},
		{"synonym of the trace", "node_trace", expectKeys, "trace"},
		{"synonym of the state", "variables", expectKeys, "state"},
		{"synonym of the handoff", "handoff_to", expectKeys, "handoff"},
		{"synonym whose key is not a candidate", "text", targetKeys, ""},
		{"an ambiguous word is no synonym", "message", expectKeys, ""},
		{"a word that is no synonym, among an empty candidate", "evn", []string{"", "env"}, "env"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDidYouMean(t *testing.T) {
	if got := DidYouMean("evn", []string{"env"}); got != `did you mean "env"?` {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("zzz", []string{"env"}); got != "" {
		t.Errorf("DidYouMean with nothing close = %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"café", "cafe", 1}, {"run", "rnu", 1},
		// A swap is of two neighbours both ways round, not of one
		// letter that matches its neighbour's place.
		{"xb", "by", 2},
		// Optimal string alignment, not Damerau: a swapped pair is not
		// edited again.
		{"ca", "abc", 3},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		words []string
		conj  string
		want  string
	}{
		{nil, "and", ""},
		{[]string{"run"}, "and", "run"},
		{[]string{"run", "merge"}, "and", "run and merge"},
		{[]string{"run", "compare", "gate"}, "and", "run, compare and gate"},
		{[]string{"http", "https"}, "or", "http or https"},
	}
	for _, tc := range tests {
		if got := List(tc.words, tc.conj); got != tc.want {
			t.Errorf("List(%q, %q) = %q, want %q", tc.words, tc.conj, got, tc.want)
		}
	}
}
