package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/result"
)

// Invisible characters of invisibleFixture's replies.
const (
	zwsp = "\u200b" // zero-width space: no part in display
	zwj  = "\u200d" // zero-width joiner: draws 👩 and 💻 as one emoji
	// smuggled is "ignore" in tag characters, as text hidden from a
	// reader is sent to a model.
	smuggled = "\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"
	coder    = "\U0001F469" + zwj + "\U0001F4BB" // 👩‍💻, woman technologist
)

// invisibleFixture is a run whose replies hold invisible characters: one
// that differs from the expected text only by a zero-width space, one
// that shares an emoji ZWJ sequence with the expected text and differs
// in a word, one that lost the joiner of the expected sequence, a
// passing one that carries hidden tag characters, and one that lost the
// joiner of the nearest of the phrasings a check listed.
func invisibleFixture() *result.Result {
	const file = "suites/invisible.yaml"
	failed := func(name string, line int, say, expected, actual string) *result.Case {
		return &result.Case{Name: name, Pos: pos(file, line, 5), Status: result.Failed, Duration: 30e6,
			Attempts: []*result.Attempt{{Number: 1, Status: result.Failed, ConversationID: "conv-1", Started: at(0), Duration: 30e6,
				Turns: []*result.Turn{exchange{index: 1, pos: pos(file, line+1, 9), say: say, text: actual, conv: "conv-1", started: at(0), latency: 30e6}.turn()},
				Failures: []assert.Failure{{Pos: pos(file, line+2, 17), Key: "response", Message: "reply is not the expected text",
					Expected: expected, Actual: actual, Diff: assert.Diff(expected, actual)}},
			}}}
	}
	hidden := failed("greets", 3, "hi", "Hello", "Hel"+zwsp+"lo")
	shared := failed("introduces the developer", 8, "who are you?", "I am your "+coder+" now", "I am your "+coder+" today")
	lost := failed("keeps the joiner", 13, "ready?", coder+" ready", "\U0001F469\U0001F4BB ready")
	// A check of phrasings describes them Go-quoted, its joiner
	// escaped; the nearest one is a text of its own.
	nearest := failed("answers one of", 23, "ready?", strconv.Quote(coder+" ready")+`, "on it"`, "\U0001F469\U0001F4BB ready")
	f := &nearest.Attempts[0].Failures[0]
	f.Expected, f.Nearest = "is one of "+f.Expected, coder+" ready"
	f.Diff = assert.Diff(f.Nearest, f.Actual)
	smuggler := &result.Case{Name: "books", Pos: pos(file, 18, 5), Status: result.Passed, Duration: 30e6,
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-2", Started: at(40), Duration: 30e6,
			Turns: []*result.Turn{exchange{index: 1, pos: pos(file, 19, 9), say: "book it", text: "Booked." + smuggled, conv: "conv-2", started: at(40), latency: 30e6}.turn()},
		}}}
	return &result.Result{Started: t0, Duration: 100e6, Target: result.Target{Name: "sim", Embedded: true},
		Files: []*result.File{{Path: file, Suite: "invisible", Cases: []*result.Case{hidden, shared, lost, smuggler, nearest}}}}
}

// TestInvisibleCharacters checks the rule of internal/escape in every
// report of invisibleFixture: a character with no part in display (a
// zero-width space, tag characters) is written as an escape wherever the
// reports show text, so the failure of "Hel\u200blo" against "Hello"
// shows its actual value and its diff as different from the expected
// text; a joiner is kept, so a transcript draws 👩‍💻 as one emoji, and
// is written as an escape in a failure only where the texts differ in
// it. The JSON report is data and keeps every character as received.
// Before, the zero-width space and the tags were written raw everywhere:
// expected and actual read "Hello" alike, and the tags hid a word.
func TestInvisibleCharacters(t *testing.T) {
	t.Parallel()
	r := invisibleFixture()
	noHidden := func(t *testing.T, what, out string) {
		t.Helper()
		for _, c := range []string{zwsp, smuggled[:4]} {
			if strings.Contains(out, c) {
				t.Errorf("%s holds %+q raw:\n%s", what, c, out)
			}
		}
	}
	// The lines of a failure and a transcript as the console and the
	// files show them.
	hiddenLines := []string{
		"expected: Hello",
		`actual:   "Hel\u200blo"`,
		`diff:     [-Hello-]{+Hel\u200blo+}`,
		`< Hel\u200blo`,
	}
	sharedLines := []string{
		"expected: I am your " + coder + " now",
		"actual:   I am your " + coder + " today",
		"diff:     I am your " + coder + " [-now-]{+today+}",
		"< I am your " + coder + " today",
	}
	lostLines := []string{
		`expected: "` + "\U0001F469" + `\u200d` + "\U0001F4BB" + ` ready"`,
		"actual:   \U0001F469\U0001F4BB ready",
		"diff:     \U0001F469[-\\u200d-]\U0001F4BB ready",
	}
	nearestLines := []string{
		`expected: is one of "` + "\U0001F469" + `\u200d` + "\U0001F4BB" + ` ready", "on it"`,
		`nearest:  "` + "\U0001F469" + `\u200d` + "\U0001F4BB" + ` ready"`,
		"actual:   \U0001F469\U0001F4BB ready",
	}
	smuggledLine := `< Booked.\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065`
	all := slices.Concat(hiddenLines, sharedLines, lostLines, nearestLines)

	t.Run("console", func(t *testing.T) {
		t.Parallel()
		for _, color := range []bool{false, true} {
			var b bytes.Buffer
			replay(NewHuman(&b, HumanOptions{Verbose: true, TTY: color, Color: color, Now: stepClock()}), r)
			out := escape.StripANSI(b.String())
			noHidden(t, "console", out)
			for _, want := range append(all, smuggledLine) {
				if !strings.Contains(out, want) {
					t.Errorf("console (colour %v) lacks %q:\n%s", color, want, out)
				}
			}
		}
	})
	t.Run("junit", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		if err := WriteJUnit(&b, r); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Cases []struct {
				Failure struct {
					Body string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testsuite>testcase"`
		}
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		noHidden(t, "junit", b.String())
		var bodies strings.Builder
		for _, c := range doc.Cases {
			bodies.WriteString(c.Failure.Body)
		}
		for _, want := range all {
			if !strings.Contains(bodies.String(), want) {
				t.Errorf("junit lacks %q:\n%s", want, bodies.String())
			}
		}
	})
	t.Run("github", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		if err := WriteGitHubAnnotations(&b, r); err != nil {
			t.Fatal(err)
		}
		noHidden(t, "annotations", b.String())
		for _, want := range []string{`actual:   "Hel\u200blo"`, `diff:     [-Hello-]{+Hel\u200blo+}`, "diff:     \U0001F469[-\\u200d-]\U0001F4BB ready"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("annotations lack %q:\n%s", want, b.String())
			}
		}
	})
	t.Run("cucumber", func(t *testing.T) {
		t.Parallel()
		var got strings.Builder
		for _, c := range r.Files[0].Cases {
			a := c.Attempts[0]
			for _, res := range stepResults(nil, c, a, []diag.Pos{a.Turns[0].Pos, a.Turns[0].Pos}) {
				got.WriteString(res.Message + "\n")
			}
			got.WriteString(TranscriptText(a) + "\n")
		}
		noHidden(t, "cucumber", got.String())
		for _, want := range append(all, smuggledLine) {
			if !strings.Contains(got.String(), want) {
				t.Errorf("cucumber lacks %q:\n%s", want, got.String())
			}
		}
	})
	t.Run("html", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		noHidden(t, "html", b.String())
		_, data := splitPage(t, b.String())
		var doc struct {
			Cases []struct {
				Attempts []struct {
					Failures []struct {
						Exp, Near, Act string
						Diff           struct {
							Ch [][2]any
						}
					} `json:"fail"`
					Turns []struct{ R string }
				} `json:"a"`
			}
		}
		if err := json.Unmarshal([]byte(data), &doc); err != nil {
			t.Fatal(err)
		}
		type shown struct {
			exp, near, act, reply string
			diff                  [][2]any
		}
		var got []shown
		for _, c := range doc.Cases {
			for _, a := range c.Attempts {
				s := shown{reply: a.Turns[0].R}
				if len(a.Failures) == 1 {
					f := a.Failures[0]
					s.exp, s.near, s.act, s.diff = f.Exp, f.Near, f.Act, f.Diff.Ch
				}
				got = append(got, s)
			}
		}
		want := []shown{
			{exp: "Hello", act: `"Hel\u200blo"`, reply: `Hel\u200blo`, diff: [][2]any{{1.0, "Hello"}, {2.0, `Hel\u200blo`}}},
			{exp: "I am your " + coder + " now", act: "I am your " + coder + " today", reply: "I am your " + coder + " today",
				diff: [][2]any{{0.0, "I am your " + coder + " "}, {1.0, "now"}, {2.0, "today"}}},
			{exp: `"` + "\U0001F469" + `\u200d` + "\U0001F4BB" + ` ready"`, act: "\U0001F469\U0001F4BB ready", reply: "\U0001F469\U0001F4BB ready",
				diff: [][2]any{{0.0, "\U0001F469"}, {1.0, `\u200d`}, {0.0, "\U0001F4BB ready"}}},
			{reply: `Booked.\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065`},
			{exp: `is one of "` + "\U0001F469" + `\u200d` + "\U0001F4BB" + ` ready", "on it"`, near: `"` + "\U0001F469" + `\u200d` + "\U0001F4BB" + ` ready"`,
				act: "\U0001F469\U0001F4BB ready", reply: "\U0001F469\U0001F4BB ready",
				diff: [][2]any{{0.0, "\U0001F469"}, {1.0, `\u200d`}, {0.0, "\U0001F4BB ready"}}},
		}
		if len(got) != len(want) {
			t.Fatalf("html cases: %+v", got)
		}
		for i := range want {
			if g, w := got[i], want[i]; g.exp != w.exp || g.near != w.near || g.act != w.act || g.reply != w.reply || !slices.Equal(g.diff, w.diff) {
				t.Errorf("html case %d:\n got %+q\nwant %+q", i+1, g, w)
			}
		}
	})
	t.Run("json keeps the data", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		if err := WriteJSON(&b, r, JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Files []struct {
				Cases []struct {
					Attempts []struct {
						Failures []struct{ Expected, Actual, Diff string }
						Turns    []struct {
							Response struct{ Response string }
						}
					}
				}
			}
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		cs := doc.Files[0].Cases
		if f := cs[0].Attempts[0].Failures[0]; f.Actual != "Hel"+zwsp+"lo" || f.Diff != `[-Hello-]{+Hel\u200blo+}` {
			t.Errorf("json failure %+q, want the actual value as received and the diff as the console shows it", f)
		}
		if got := cs[3].Attempts[0].Turns[0].Response.Response; got != "Booked."+smuggled {
			t.Errorf("json reply %+q, want it as received", got)
		}
	})
}

// TestJoinersDiffer: a failure's values escape the joiners and variation
// selectors when, and only when, the diff of its texts changes text that
// holds one.
func TestJoinersDiffer(t *testing.T) {
	const coder = "\U0001F469\u200d\U0001F4BB"
	for _, tc := range []struct {
		name string
		f    assert.Failure
		want bool
	}{
		{"no joiners", assert.Failure{Expected: "Hello", Actual: "Hel\u200blo"}, false},
		{"only a joiner differs", assert.Failure{Expected: coder, Actual: "\U0001F469\U0001F4BB"}, true},
		{"a joiner moved", assert.Failure{Expected: "ab\u200dc", Actual: "a\u200dbc"}, true},
		{"a word that holds one changed", assert.Failure{Expected: "Hello", Actual: "Hel\u200dp"}, true},
		{"a variation selector differs", assert.Failure{Expected: "I \u2764\ufe0f it", Actual: "I \u2764 it"}, true},
		{"the emoji is shared", assert.Failure{Expected: "I am your " + coder + " now", Actual: "I am your " + coder + " today"}, false},
		{"the emoji is shared, another one changed", assert.Failure{Expected: "I " + coder, Actual: "I \U0001F468\u200d\U0001F4BB"}, false},
		{"only the description holds one", assert.Failure{Expected: `one of "` + coder + `", "hi"`, Nearest: "hi", Actual: "ho"}, false},
		{"only the nearest phrasing holds one", assert.Failure{Expected: `is one of "\U0001F469\\u200d\U0001F4BB", "hi"`, Nearest: coder, Actual: "\U0001F469\U0001F4BB"}, true},
		{"the nearest phrasing differs in one", assert.Failure{Expected: `one of "` + coder + `", "hi"`, Nearest: coder, Actual: "\U0001F469\U0001F4BB"}, true},
		{"lines", assert.Failure{Expected: "a\n" + coder + "\n", Actual: "a\n\U0001F469\U0001F4BB\n"}, true},
		{"equal texts", assert.Failure{Expected: coder, Actual: coder}, false},
	} {
		if got := joinersDiffer(tc.f); got != tc.want {
			t.Errorf("%s: joinersDiffer = %v, want %v", tc.name, got, tc.want)
		}
	}
}
