package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
)

// scoresAgent is an agent that books a table in the words of reply and
// greets in the same words every night.
func scoresAgent(reply string) string {
	return "id: host\nstart: Hello\nintents:\n  book:\n    patterns: ['\\bbook\\b']\n  greet:\n    patterns: ['\\bhello\\b']\n" +
		"routes:\n  - intent: book\n    goto: Book\n  - intent: greet\n    goto: Greet\n" +
		"nodes:\n  Hello: {say: Hello}\n  Book: {say: '" + reply + "'}\n  Greet: {say: 'Hello, how can I help you today?'}\n"
}

// scoresSuite checks the booking's reply against a threshold of 0.72,
// and the greeting over three runs.
const scoresSuite = `agent: host
scenarios:
  - name: books a table
    turns:
      - say: book a table for four at seven
        expect:
          response: {similar: {to: "Your table for four is booked for seven tonight, we look forward to seeing you", min: 0.72}}
  - name: greets
    repeat: 3
    turns:
      - say: hello
        expect:
          response: {similar: {to: "Hello, how can I help you today?", min: 0.8}}
`

// eachObject calls f on every object of the decoded JSON v, outermost
// first.
func eachObject(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, e := range v {
			eachObject(e, f)
		}
	case []any:
		for _, e := range v {
			eachObject(e, f)
		}
	}
}

// dropScores edits a report into one written before scores were kept.
func dropScores(doc map[string]any) {
	eachObject(doc, func(o map[string]any) { delete(o, "scores") })
}

// TestHistoryFollowsSimilarScores runs four nights against the embedded
// simulator, the agent's booking reply a little further from the
// expected text each night (1.00, 0.96, 0.77, 0.75 against a threshold
// of 0.72): every night passes, and history names the matcher as closer
// to its threshold in the newer reports, beside each night's score and
// a repeated case's median; a steady matcher is not named. A report
// written before scores were kept reads as before: no score section, no
// error. Before, history said nothing of the drift until the night it
// failed.
func TestHistoryFollowsSimilarScores(t *testing.T) {
	t.Parallel()
	replies := []string{
		"Your table for four is booked for seven tonight, we look forward to seeing you",
		"Your table for four is booked for seven tonight, we look forward to seeing you soon",
		"Your table for four is booked for seven tonight",
		"Your table for four is booked for seven tonight, see you",
	}
	files := map[string]string{"suites/s.yaml": scoresSuite}
	for i, r := range replies {
		files[fmt.Sprintf("agents%d/host.yaml", i+1)] = scoresAgent(r)
	}
	dir := writeTree(t, files)
	var nights []string
	for i := range replies {
		night := fmt.Sprintf("night-%d.json", i+1)
		newCLI(t, dir, nil, "run", "suites", "--sim-agents", fmt.Sprintf("agents%d", i+1), "--seed", "1", "--json", night).expect(t, exitOK)
		// Nights a day apart, as the nightly job's are.
		editReport(t, filepath.Join(dir, night), func(doc map[string]any) {
			doc["run"].(map[string]any)["started"] = fmt.Sprintf("2026-03-0%dT02:00:00Z", i+1)
		})
		nights = append(nights, night)
	}
	out := newCLI(t, dir, nil, append([]string{"history"}, nights...)...).expect(t, exitOK)
	for _, want := range []string{
		"similar scores by report (a repeated case's median over its runs; · not scored):\n" +
			"1     2     3     4     threshold  matcher\n" +
			`1.00  0.96  0.77  0.75  ≥ 0.72     suites/s.yaml: books a table: similar "Your table for four is booked for seven tonight, we look for…"` + "\n" +
			`1.00  1.00  1.00  1.00  ≥ 0.80     suites/s.yaml: greets: similar "Hello, how can I help you today?"` + "\n\n",
		"closer to the threshold in the newer reports (3–4) than in the older (1–2): a similar score's median moved toward it by more than 0.05, or to within 0.05 of it, still passing (1):\n" +
			`  suites/s.yaml: books a table: similar "Your table for four is booked for seven tonight, we look for…": older 0.98; newer 0.76, threshold ≥ 0.72 (within 0.05) at suites/s.yaml:7:22` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks\n%s\nin:\n%s", want, out)
		}
	}
	if strings.Count(out, "closer to the threshold") != 1 || strings.Count(out, "greets: similar") != 1 {
		t.Errorf("the steady matcher is named as drifting:\n%s", out)
	}
	c := newCLI(t, dir, nil, append([]string{"history", "--json"}, nights...)...)
	c.expect(t, exitOK)
	var doc struct {
		Scenarios []struct {
			Name   string `json:"name"`
			Scores []struct {
				Key      string     `json:"key"`
				To       string     `json:"to"`
				Min      float64    `json:"min"`
				ByReport []*float64 `json:"scores_by_report"`
				Older    *float64   `json:"older"`
				Newer    *float64   `json:"newer"`
				Near     bool       `json:"near"`
				Drifting bool       `json:"drifting"`
			} `json:"scores"`
		} `json:"scenarios"`
		Drifting []struct {
			File, Name, Key, To string
		} `json:"drifting"`
	}
	if err := json.Unmarshal([]byte(c.stdout.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != 2 || len(doc.Scenarios[0].Scores) != 1 || len(doc.Scenarios[1].Scores) != 1 {
		t.Fatalf("--json: want one matcher per scenario:\n%s", c.stdout)
	}
	book := doc.Scenarios[0].Scores[0]
	var by []string
	for _, v := range book.ByReport {
		by = append(by, fmt.Sprintf("%.4f", *v))
	}
	if book.Key != "response" || book.To != replies[0] || book.Min != 0.72 || strings.Join(by, " ") != "1.0000 0.9557 0.7743 0.7548" ||
		!book.Drifting || !book.Near || *book.Older < 0.97 || *book.Newer > 0.77 || doc.Scenarios[1].Scores[0].Drifting {
		t.Errorf("--json: the booking's matcher reads %+v (scores %v):\n%s", book, by, c.stdout)
	}
	if len(doc.Drifting) != 1 || doc.Drifting[0].Name != "books a table" || doc.Drifting[0].To != replies[0] {
		t.Errorf("--json: drifting %+v, want the booking's matcher", doc.Drifting)
	}

	// Reports from before scores were kept: no section, no error; beside
	// newer ones, not scored.
	var old []string
	for _, n := range nights {
		o := "old-" + n
		copyReport(t, filepath.Join(dir, n), filepath.Join(dir, o), dropScores)
		old = append(old, o)
	}
	out = newCLI(t, dir, nil, append([]string{"history"}, old...)...).expect(t, exitOK)
	if strings.Contains(out, "similar") || strings.Contains(out, "threshold") {
		t.Errorf("reports without scores print scores:\n%s", out)
	}
	c = newCLI(t, dir, nil, append([]string{"history", "--json"}, old...)...)
	c.expect(t, exitOK)
	if strings.Contains(c.stdout.String(), `"to"`) || !strings.Contains(c.stdout.String(), `"scores": []`) {
		t.Errorf("--json of reports without scores holds a matcher:\n%s", c.stdout)
	}
	out = newCLI(t, dir, nil, "history", old[0], old[1], nights[2], nights[3]).expect(t, exitOK)
	if !strings.Contains(out, "·  ·  0.77  0.75  ≥ 0.72     suites/s.yaml: books a table") || strings.Contains(out, "closer to the threshold") {
		t.Errorf("older reports without scores beside newer ones:\n%s", out)
	}
}

// TestHistoryScoresShowNoKey: the text a similar matcher compared with is
// a scenario's, expanded: a report edited (or written with a key in a
// scenario's text) holds the key there, and history masks it in the text
// and in --json as it masks every value it quotes.
func TestHistoryScoresShowNoKey(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/s.yaml": scoresSuite, "agents/host.yaml": scoresAgent("Your table for four is booked for seven tonight")})
	newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents", "--seed", "1", "--json", "run.json").expect(t, exitOK)
	const key = "sk-live-0123456789abcdefXYZ"
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "keyed.json"), func(doc map[string]any) {
		eachObject(doc, func(o map[string]any) {
			if to, ok := o["to"].(string); ok {
				o["to"] = to + " " + key
			}
		})
	})
	if err := os.Remove(filepath.Join(dir, "run.json")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTTEST_BUILD_KEY": key}
	for _, args := range [][]string{{"history", "keyed.json"}, {"history", "--json", "keyed.json"}} {
		c := newCLI(t, dir, env, args...)
		c.expect(t, exitOK)
		out := c.stdout.String() + c.stderr.String()
		if !strings.Contains(out, "how can I help you today? "+secret.Mask) {
			t.Errorf("%s: the matcher's text is not in the history, masked: the test tests nothing\n%s", args, out)
		}
		if f := keyIn(out, secret.Forms(key)); f != "" {
			t.Errorf("%s: the history shows the key as %q:\n%s", args, f, out)
		}
	}
}
