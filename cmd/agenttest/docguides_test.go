package main

// The messages docs/writing-scenarios.md and docs/writing-features.md
// quote, checked against what lint and run print for files laid out so
// that each problem sits at the position the guide shows: a change of a
// message or of a position cannot leave a guide quoting what no run
// prints.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// caseDuration matches the wall time a case line ends with, in any of
// its forms (milliseconds below a second, tenths of a second above:
// report.formatDuration). The embedded simulator's agents think in real
// time, so a case of 900ms on an idle machine takes 2.3s on a busy one:
// a pattern of one form alone fails there.
const caseDuration = `\d+(?:\.\d+)?(?:µs|ms|s)`

// duration is the time a result line ends with, which no two runs share.
var duration = regexp.MustCompile(caseDuration + `\)$`)

// checkGuideBlock runs args in a tree of files and checks the fenced block
// of the guide holding anchor against its output, durations aside; lines
// for which skip is true are not compared.
func checkGuideBlock(t *testing.T, guide, anchor string, files map[string]string, code int, skip func(string) bool, args ...string) {
	t.Helper()
	dir := repoRoot
	if files != nil {
		dir = writeTree(t, files)
	}
	lines, at := docBlock(t, guide, anchor)
	out := newCLI(t, dir, examplesEnv(), args...).expect(t, code)
	var printed []string
	for line := range strings.SplitSeq(out, "\n") {
		printed = append(printed, duration.ReplaceAllString(line, "D)"))
	}
	shown := make([]string, len(lines))
	for i, line := range lines {
		shown[i] = duration.ReplaceAllString(line, "D)")
	}
	checkDocBlock(t, guide, shown, at, strings.Join(printed, "\n"), skip)
}

// padded is the lines of a file joined, each "#" standing for a comment
// line that puts what follows at the line the guide shows.
func padded(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func noSkip(string) bool { return false }

func TestDocGuideSamples(t *testing.T) {
	t.Parallel()
	// A row runs args in a tree of files (nil: the repository) and checks
	// the block of the guide holding anchor; skip leaves out the lines of
	// the block no such run prints.
	type testCase struct {
		name, guide, anchor string
		code                int
		args                []string
		files               map[string]string
		skip                func(string) bool
	}
	const scenarios, features = "docs/writing-scenarios.md", "docs/writing-features.md"
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		skip := tc.skip
		if skip == nil {
			skip = noSkip
		}
		checkGuideBlock(t, tc.guide, tc.anchor, tc.files, tc.code, skip, tc.args...)
	}
	lint := func(file string) []string { return []string{"lint", file} }
	runs := func(file string) []string { return []string{"run", file} }
	testCases := []testCase{
		{"every problem of a suite at once", scenarios, `unknown key "respons" in expect`, exitUsage, lint("suites/booking.yaml"),
			map[string]string{"suites/booking.yaml": padded(
				"agent: restaurant", `vars: {party: "4"}`, "scenarios:",
				"  - name: books a table", "    turns:", "      - say: hi",
				"#", "#", "#", "#", "#", "#",
				"        expect:", "          respons: hi",
				"      - say: hi", "        expect: {node: X}", "#", "#",
				`      - say: "${prty} people"`, "      - say: x", "        expect:",
				"          response: {matches: '(unclosed'}")}, nil},
		{"a repeat too small for the confidence", scenarios, "warning: repeat: 40 is too few", exitOK, lint("suites/menu.yaml"),
			map[string]string{"suites/menu.yaml": padded(
				"agent: restaurant", "scenarios:", "#", "#",
				"  - name: recommends a dish for a vegetarian",
				"    pass_rate: 0.9", "    margin: 0.1", "    confidence: 0.95",
				"    turns:", "      - say: I'm vegetarian, what do you recommend?",
				"        expect: {response: {contains: risotto}}",
				"    repeat: 40")}, nil},
		{"a near miss of an event type", scenarios, "event type EVENT_TYPE_SYSTEM_MESAGE is not one agenttest knows", exitOK, lint("web.yaml"),
			map[string]string{"web.yaml": padded(
				"suite: Web chat", "agent: utility-billing", "via: messaging", "scenarios:",
				"  - name: says no error", "    turns:", "      - say: hi", "#", "#",
				"        expect:", "          events:", "            excludes: [EVENT_TYPE_SYSTEM_MESAGE]")}, nil},
		{"a reply that is not the expected text", scenarios, "FAIL suites/booking.yaml:30 asks for the party size", exitFailed, runs("suites/booking.yaml"),
			map[string]string{"suites/booking.yaml": "agent: restaurant\nscenarios:\n" + strings.Repeat("#\n", 27) + padded(
				"  - name: asks for the party size", "    turns:",
				"      - say: I'd like to book a table", "        expect: {node: CollectPartySize}",
				"      - say: blah blah", "#", "        expect:",
				`          response: "Sorry, I didn't quite get that. How many people, and for what day?"`,
				"          state:", "            party_size: {present: true}")}, nil},
		{"the nearest of several phrasings", scenarios, "the nearest is 0.73 similar", exitFailed, runs("suites/clinic.yaml"),
			map[string]string{"suites/clinic.yaml": padded(
				"agent: clinic", "scenarios:", "  - name: tells the opening hours", "    turns:",
				"      - say: what are your opening hours?", "#", "#", "#", "#", "        expect:",
				`          response: {one_of: ["We're open every weekday from 8am.", "The surgery is open Monday to Friday, 9am to 5pm."]}`)}, nil},
		// At the default --parallel: the runs of a statistical scenario
		// meet the same draws at any (docs/simulator.md).
		{"a statistical scenario that fails", scenarios, "FAIL examples-failing/clinic.yaml:15 renews a repeat prescription", exitFailed,
			runs("examples-failing/clinic.yaml"), nil,
			func(line string) bool {
				return strings.HasPrefix(line, "PASS suites/menu.yaml") || strings.HasPrefix(line, "INCONCLUSIVE ")
			}},
		// The seed is fixed and each run of a statistical scenario
		// names its conversation, so its draws, and the spread of its
		// similar matcher, replay at any --parallel (docs/simulator.md).
		{"the spread of a similar matcher over a scenario's runs", scenarios, "similar at suites/restaurant.yaml:240:13 over 30 runs", exitOK,
			runs("suites/restaurant.yaml:232"), nil, nil},
		{"a similar check passing near its threshold", scenarios, "near threshold: similar 0.79 ≥ 0.75", exitOK, runs("suites/clinic.yaml"),
			map[string]string{"suites/clinic.yaml": padded(append(append([]string{"agent: clinic", "scenarios:"}, strings.Split(strings.Repeat("#", 21), "")...),
				"  - name: puts urgent callers through to the nurse", "    turns:", "      - say: I have chest pain", "        expect:", "#", "#", "#", "#",
				`          response: {similar: {to: "That sounds urgent. I'm putting you through to a nurse.", min: 0.75}}`)...)}, nil},
		{"an examples column nothing reads", scenarios, "warning: examples column dya is read by no ${dya}", exitUsage, lint("suite.yaml"),
			map[string]string{"suite.yaml": padded(
				"agent: restaurant", "scenarios:", "  - name: books a table", "    examples:",
				"      - {day: friday}", "      - {dya: saturday}", "    turns:", `      - say: "a table on ${day}"`)}, nil},
		{"an Examples column no step uses", features, `column "symptoms" of the Examples of "triage" is used by no step`, exitUsage, lint("features/triage.feature"),
			map[string]string{"features/triage.feature": padded(
				"@agent:clinic", "Feature: Triage", "", "  Scenario Outline: triage",
				`    When the user says "<symptom>"`, `    Then the agent's reply contains "nurse"`, "",
				"    Examples:", "      | symptoms          |", "      | I have chest pain |")}, nil},
		{"an undefined step", features, `undefined step "Then the agents reply contain`, exitUsage, lint("features/booking.feature"),
			map[string]string{"features/booking.feature": featureLintSample}, nil},
		{"an outline column no Examples has", features, "<dya> is not a column", exitUsage, lint("features/booking.feature"),
			map[string]string{"features/booking.feature": featureLintSample}, nil},
		{"a failing step", features, "FAIL features/booking.feature:3 books a table", exitFailed, runs("features/booking.feature"),
			map[string]string{"features/booking.feature": padded(
				"@agent:restaurant", "Feature: Booking", "  Scenario: books a table",
				`    When the user says "I'd like to book a table"`,
				`    Then the agent's reply contains "how many guests"`)}, nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// featureLintSample holds the two problems docs/writing-features.md
// shows, at their lines: an outline's <dya> at 9:5 and an undefined step
// at 14:5.
var featureLintSample = padded(
	"@agent:restaurant", "Feature: Booking", "",
	"  Scenario Outline: books on a day",
	`    When the user says "a table on <day>"`,
	`    Then the agent's reply contains "<day>"`,
	"    # the guide's line 9:",
	"    # a column the Examples lack",
	`    When the user says "a table on <dya>"`,
	"    Examples:", "      | day |", "      | friday |",
	"  Scenario: greets",
	`    Then the agents reply contain "hello"`,
)

// TestDocNestedIgnoreCase: a matcher nested in one with ignore_case: true
// folds case too, "unless they set ignore_case themselves"
// (docs/writing-scenarios.md): the nested ignore_case: false compares
// case again, and its failure says so and diffs the change of case.
func TestDocNestedIgnoreCase(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/case.yaml": padded(
		"agent: restaurant", "scenarios:",
		"  - name: folded inside",
		"    greeting:", "      response:", "        ignore_case: true",
		"        all: [{contains: BELLA TAVOLA}]",
		"  - name: case compared again inside",
		"    greeting:", "      response:", "        ignore_case: true",
		"        all: [{contains: welcome}, {contains: BELLA TAVOLA, ignore_case: false}]",
		"  - name: case compared again under not",
		"    greeting:", "      response:", "        ignore_case: true",
		"        not: {contains: WELCOME, ignore_case: false}",
		"  - name: says how it compares",
		"    greeting:", "      response:", "        ignore_case: true",
		"        not: {contains: Welcome, ignore_case: false}",
	)})
	c := newCLI(t, dir, examplesEnv(), "run", "--parallel", "1", "--json", "result.json", "suites/case.yaml")
	out := c.expect(t, exitFailed,
		`greeting: reply does not contain the expected text (it does if case is ignored)`,
		"expected: contains \"BELLA TAVOLA\" (matching case)\n",
		`expected: not [contains "Welcome" (matching case)] (ignoring case)`)
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The failed items compared case, so their diffs mark a change of
	// case; the not that failed ignored it.
	if n := len(regexp.MustCompile(`"ignore_case":\s*true`).FindAll(b, -1)); n != 1 {
		t.Errorf("%d failures say they ignored case, want the not's alone:\n%s", n, b)
	}
	want := map[string]string{"folded inside": "passed", "case compared again inside": "failed", "case compared again under not": "passed", "says how it compares": "failed"}
	for _, cs := range reportCases(t, b) {
		if cs.Status != want[cs.Name] {
			t.Errorf("%s: %s, want %s\n%s", cs.Name, cs.Status, want[cs.Name], out)
		}
	}
}

// TestDocSkipReasons: the JSON report's skip_reason of a skipped scenario
// is the reason as written, "skipped" for skip: true and "skipped
// (@skip)" for a feature's @skip (docs/reading-reports.md, JSON).
func TestDocSkipReasons(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"suites/skip.yaml": padded("agent: restaurant", "scenarios:",
			"  - name: with a reason", "    skip: waiting for the new flow", "    turns: [{say: hi, expect: {node: X}}]",
			"  - name: without one", "    skip: true", "    turns: [{say: hi, expect: {node: X}}]"),
		"features/skip.feature": padded("@agent:restaurant", "Feature: skips", "  @skip", "  Scenario: tagged",
			`    When the user says "hi"`, `    Then the current node is "X"`),
	})
	newCLI(t, dir, examplesEnv(), "run", "--json", "result.json", "suites", "features").expect(t, exitEmpty)
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"with a reason": "waiting for the new flow", "without one": "skipped", "tagged": "skipped (@skip)"}
	cases := reportCases(t, b)
	if len(cases) != len(want) {
		t.Fatalf("%d cases, want %d", len(cases), len(want))
	}
	for _, cs := range cases {
		if cs.Status != "skipped" || cs.SkipReason != want[cs.Name] {
			t.Errorf("%s: %s, skip_reason %q; want skipped, %q", cs.Name, cs.Status, cs.SkipReason, want[cs.Name])
		}
	}
}
