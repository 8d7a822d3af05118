package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReportsNameTheSimulatorsSeed: a run on the embedded simulator
// draws its agents' phrasings and weighted replies from --seed, so a
// failing draw replays only under the same seed. The console's first
// line, the JSON report (target.seed) and JUnit (property seed) name it;
// run again under the seed read back from the JSON report, the scenario
// meets the same runs. The default seed, 0, is in the files, not on the
// console.
func TestReportsNameTheSimulatorsSeed(t *testing.T) {
	t.Parallel()
	agent := diceAgent("[{text: six, weight: 70}, {text: five, weight: 30}]")
	suite := "agent: dice\nscenarios:\n  - name: rolls a six\n    repeat: 30\n    pass_rate: 0.9\n    turns:\n      - say: roll the dice\n        expect: {response: six}\n"
	dir := writeTree(t, map[string]string{"agents/dice.yaml": agent, "suites/s.yaml": suite})
	strip := regexp.MustCompile(`(?m)^    runs: (\S+)`)
	type report struct {
		Target struct {
			Seed *int64 `json:"seed"`
		} `json:"target"`
	}
	read := func(seed string) (console, runs string, rep report, junit string) {
		args := []string{"run", "suites/s.yaml:3", "--sim-agents", "agents", "--json", "r" + seed + ".json", "--junit", "r" + seed + ".xml"}
		if seed != "" {
			args = append(args, "--seed", seed)
		}
		out := newCLI(t, dir, nil, args...).expect(t, exitFailed)
		m := strip.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no runs strip:\n%s", out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "r"+seed+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		x, err := os.ReadFile(filepath.Join(dir, "r"+seed+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		return out, m[1], rep, string(x)
	}
	out, runs, rep, junit := read("7")
	if !strings.Contains(out, "running 1 case against sim (embedded simulator, seed 7, env sandbox)") {
		t.Errorf("the console does not name the seed:\n%s", out)
	}
	if rep.Target.Seed == nil || *rep.Target.Seed != 7 {
		t.Fatalf("the JSON report's target.seed is %v, want 7", rep.Target.Seed)
	}
	if !strings.Contains(junit, `<property name="seed" value="7"></property>`) {
		t.Errorf("JUnit does not name the seed:\n%s", junit)
	}
	// A report written again from the JSON one (merge) keeps it.
	newCLI(t, dir, nil, "merge", "r7.json", "--junit", "again.xml").expect(t, exitFailed)
	if b, err := os.ReadFile(filepath.Join(dir, "again.xml")); err != nil || !strings.Contains(string(b), `<property name="seed" value="7"></property>`) {
		t.Errorf("JUnit written again from the JSON report does not name the seed (%v):\n%s", err, b)
	}
	_, again, _, _ := read(strconv.FormatInt(*rep.Target.Seed, 10))
	if again != runs {
		t.Errorf("under the report's seed the runs were %s, not %s", again, runs)
	}
	out, other, rep, junit := read("")
	if other == runs {
		t.Errorf("the default seed drew the runs of seed 7, %s: the test shows nothing", runs)
	}
	if strings.Contains(out, "seed") || rep.Target.Seed == nil || *rep.Target.Seed != 0 || !strings.Contains(junit, `<property name="seed" value="0"></property>`) {
		t.Errorf("the default seed: the console says %q, the JSON report %v, JUnit has seed 0: %v", strings.SplitN(out, "\n", 3)[1], rep.Target.Seed,
			strings.Contains(junit, `<property name="seed" value="0">`))
	}
}
