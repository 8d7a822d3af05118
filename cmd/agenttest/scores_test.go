package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/report"
)

// TestSimilarScoresShown runs similar checks against the embedded
// simulator (seed fixed) and reads how close each came to its threshold
// in every view: a check passing by less than assert.NearMargin is
// named on its case's line with or without -v, on a terminal too where
// a passing case is otherwise quiet (a repeated case's runs say it in
// their spread instead); -v shows each score under its turn, over web
// chat too; a repeated case's line is followed by the spread of its
// matcher over the runs; the JSON report holds the scores on the turn and the spread
// on the repeat, and reads back into a report written again byte for
// byte; the HTML report shows them; JUnit's system-out notes the near
// pass, and so does a GitHub Actions notice at the matcher's line.
func TestSimilarScoresShown(t *testing.T) {
	t.Parallel()
	const (
		file   = "cmd/agenttest/testdata/scores/clinic.yaml"
		near   = "near threshold: similar 0.79 ≥ 0.75 at " + file + ":11:22"
		scored = `similar 1.00 ≥ 0.80 to "That sounds urgent. I'm putting you through to our on-call n…" (` + file + ":17:22)"
	)
	run := func(t *testing.T, tty bool, args ...string) (console, dir string) {
		dir = t.TempDir()
		args = append([]string{"run", file, "--seed", "2", "--parallel", "1",
			"--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"), "--html", filepath.Join(dir, "r.html")}, args...)
		c := newCLI(t, repoRoot, examplesEnv(), args...)
		c.st.StdoutTTY = tty
		if code := c.run(t); code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, c.stdout.String(), c.stderr.String())
		}
		return c.stdout.String(), dir
	}
	// The draws of the small talk vary with the order of the sessions:
	// the spread is read as a form, and checked against the scores.
	spreadLine := regexp.MustCompile(`\(\d+ of 10 runs passed \(\d+%\), 30% required, ` + caseDuration + `\)\n    (similar at ` + regexp.QuoteMeta(file) +
		`:27:13 over 10 runs: lowest 0\.\d\d, median 0\.\d\d, highest 0\.\d\d; \d+ below the threshold 0\.60)\n`)
	nearLine := regexp.MustCompile(`:7 passes near the threshold \(` + caseDuration + `\)\n    ` + regexp.QuoteMeta(near) + "\n")
	t.Run("console", func(t *testing.T) {
		for _, tty := range []bool{false, true} {
			console, _ := run(t, tty, "--no-color")
			if !nearLine.MatchString(console) {
				t.Errorf("tty=%v: the near pass is not noted under its case line:\n%s", tty, console)
			}
			if strings.Count(console, "near threshold") != 1 || strings.Contains(console, "similar 1.00") {
				t.Errorf("tty=%v: a pass clear of its threshold is noted, or scores shown without -v:\n%s", tty, console)
			}
			if !tty && !spreadLine.MatchString(console) {
				t.Errorf("the repeated case's line lacks its spread:\n%s", console)
			}
		}
		// In GitHub Actions, a notice at the matcher's line of the pull
		// request's diff.
		console, _ := run(t, false, "--github")
		notice := "::notice file=" + file + ",line=11,col=22,title=agenttest near threshold%3A passes near the threshold::" + near + "%0Apassed by less than 0.05: a rephrasing may fail it\n"
		if !strings.Contains(console, notice) || strings.Count(console, "::notice") != 1 {
			t.Errorf("--github: no notice of the near pass alone:\n%s", console)
		}
		console, _ = run(t, false, "-v")
		if !strings.Contains(console, "          conversation ended\n          "+scored+"\n") {
			t.Errorf("-v: the transcript lacks the score under its turn:\n%s", console)
		}
		overChat := regexp.MustCompile(`\(live agent joined: Sam\)\n {10}similar 0\.\d\d ≥ 0\.50 to "That sounds urgent\. [^"]*…" \(` + regexp.QuoteMeta(file) + `:42:22\)\n`)
		if !overChat.MatchString(console) {
			t.Errorf("-v: a turn over web chat lacks its score under its events:\n%s", console)
		}
	})
	t.Run("reports", func(t *testing.T) {
		console, dir := run(t, false)
		m := spreadLine.FindStringSubmatch(console)
		if m == nil {
			t.Fatalf("no spread line:\n%s", console)
		}
		spread := m[1]
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Files []struct {
				Cases []struct {
					Repeat *struct {
						Scores []map[string]any `json:"scores"`
					} `json:"repeat"`
					Attempts []struct {
						Turns []struct {
							Scores []map[string]any `json:"scores"`
						} `json:"turns"`
					} `json:"attempts"`
				} `json:"cases"`
			} `json:"files"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		cases := doc.Files[0].Cases
		got, _ := json.Marshal(cases[0].Attempts[0].Turns[1].Scores)
		want := `[{"key":"response","min":0.75,"pos":{"col":22,"file":"` + file + `","line":11},"score":0.790445997843628,"to":"That sounds urgent. I'm putting you through to a nurse."}]`
		if string(got) != want {
			t.Errorf("JSON turn scores:\n%s\nwant:\n%s", got, want)
		}
		if cases[0].Attempts[0].Turns[0].Scores != nil {
			t.Errorf("the greeting, which no similar check reads, has scores")
		}
		// The spread is of the runs' scores, as the turns hold them.
		var runs []float64
		failed := 0
		for _, a := range cases[2].Attempts {
			s := a.Turns[1].Scores[0]["score"].(float64)
			runs = append(runs, s)
			if s < 0.6 {
				failed++
			}
		}
		slices.Sort(runs)
		sp := cases[2].Repeat.Scores
		if len(sp) != 1 || sp[0]["runs"] != 10.0 || sp[0]["failed"] != float64(failed) || sp[0]["low"] != runs[0] || sp[0]["high"] != runs[9] ||
			sp[0]["median"] != (runs[4]+runs[5])/2 || sp[0]["min"] != 0.6 || sp[0]["key"] != "response" ||
			sp[0]["to"] != "I'm very well, thank you for asking! Can I book you a table?" {
			t.Errorf("JSON repeat spread %v, want that of the runs' scores %v", sp, runs)
		}
		if want := fmt.Sprintf("highest %.2f; %d below the threshold", runs[9], failed); !strings.Contains(spread, want) {
			t.Errorf("console spread %q, want %q", spread, want)
		}
		rep, err := report.ReadJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := report.WriteJSON(&again, rep.Result, report.JSONOptions{Coverage: rep.Coverage}); err != nil {
			t.Fatal(err)
		}
		if again.String() != string(b) {
			t.Errorf("the report read back and written again differs:\n%s", again.String())
		}
		html, err := os.ReadFile(filepath.Join(dir, "r.html"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{`"sc":[{"t":"similar 0.79 ≥ 0.75 to \"That sounds urgent. I'm putting you through to a nurse.\" (` + file + `:11:22)","n":true}]`,
			`"sp":["` + spread + `"]`, near} {
			if !strings.Contains(string(html), w) {
				t.Errorf("HTML report lacks %s", w)
			}
		}
		x, err := os.ReadFile(filepath.Join(dir, "r.xml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(x), near+"\n") || !strings.Contains(string(x), spread+"\n") {
			t.Errorf("JUnit system-out lacks the near note or the spread:\n%s", x)
		}
	})
}

// TestCompareSimilarScores: where the candidate words a reply otherwise,
// compare says how each similar check of it moved (the restaurant's 1.1
// in pre-release rephrases 1.0's offer), in its text and its JSON, read
// back as written.
func TestCompareSimilarScores(t *testing.T) {
	t.Parallel()
	const file = "cmd/agenttest/testdata/scores/compare.yaml"
	out := filepath.Join(t.TempDir(), "compare.json")
	c := compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", file, "--allow-live", "--json", out)
	c.expect(t, exitOK, "      reply: I can't find a booking in this conversation yet. [-Would you like to-]{+Shall I+} book a table{+ for you+}?\n"+
		"      similar 1.00 ≥ 0.50 → similar 0.88 ≥ 0.50 ("+file+":11:22)\n")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compare.ReadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	ch := got.Pairs[0].Changes
	if len(ch) != 2 || ch[1].What != compare.ChangeSimilar || ch[1].Pos.String() != file+":11:22" ||
		ch[1].Baseline != "similar 1.00 ≥ 0.50" || ch[1].Candidate != "similar 0.88 ≥ 0.50" {
		t.Errorf("changes %+v, want the reply's and its similar check's", ch)
	}
}
