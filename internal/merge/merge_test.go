package merge

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

var t0 = time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)

func shard(k, n int, start time.Duration, cases ...*result.Case) *result.Result {
	return &result.Result{Started: t0.Add(start), Duration: time.Second, Target: result.Target{Name: "sandbox", BuildURL: "https://b"},
		Shard: &result.Shard{Index: k, Total: n, Selection: "sha256:x", Selected: 4},
		Files: []*result.File{{Path: "a.yaml", Suite: "a", Cases: cases}}}
}

func cs(line int, st result.Status) *result.Case {
	return &result.Case{Name: "c", Pos: diag.Pos{File: "a.yaml", Line: line}, Status: st}
}

func TestShards(t *testing.T) {
	t.Parallel()
	s1 := shard(1, 2, 0, cs(3, result.Passed), cs(9, result.Failed))
	s2 := shard(2, 2, 2*time.Second, cs(6, result.Passed), cs(12, result.Passed))
	s1.Pacing = &result.Pacing{Limited: 1, Accepted: 10, Waited: time.Second, MaxWaited: time.Second}
	s2.Pacing = &result.Pacing{Limited: 2, Accepted: 5, Waited: time.Second, MaxWaited: 2 * time.Second}
	s1.Deployments = []*result.Deployment{{Agent: "bot", Env: "sandbox", ID: "d1", ReadAt: t0, After: "d1", AfterReadAt: t0.Add(time.Second)}}
	s2.Deployments = []*result.Deployment{{Agent: "bot", Env: "sandbox", ID: "d2", ReadAt: t0.Add(2 * time.Second)}}

	r, problems := Shards([]Input{{"2.json", s2}, {"1.json", s1}}, Options{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var lines []int
	for _, c := range r.Files[0].Cases {
		lines = append(lines, c.Pos.Line)
	}
	if len(r.Files) != 1 || !slices.Equal(lines, []int{3, 6, 9, 12}) {
		t.Errorf("cases at %v, want the file's order", lines)
	}
	if !r.Started.Equal(t0) || r.Duration != 3*time.Second {
		t.Errorf("started %v, duration %v: want the first start to the last end", r.Started, r.Duration)
	}
	if p := r.Pacing; p.Limited != 3 || p.Accepted != 15 || p.Waited != 2*time.Second || p.MaxWaited != 2*time.Second {
		t.Errorf("pacing %+v", p)
	}
	// The shards met two deployments: the merged run says so, and errs.
	if d := r.Deployments; len(d) != 1 || d[0].ID != "d1" || d[0].After != "d2" || !d[0].Changed() {
		t.Errorf("deployments %+v", d[0])
	}
	if r.RunStatus() != result.RunErrored {
		t.Errorf("status %s, want errored: the shards tested two deployments", r.RunStatus())
	}
	if r.Rerun != nil {
		t.Errorf("rerun %+v of shards that were no rerun", r.Rerun)
	}
	// Shards of a --rerun-failed run merge into a rerun.
	s2.Rerun = &result.Rerun{Of: "first.json", Failed: 2}
	if r, _ := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{}); r.Rerun == nil || *r.Rerun != *s2.Rerun {
		t.Errorf("merged rerun %+v, want %+v", r.Rerun, s2.Rerun)
	}
	s2.Rerun = nil
	// The same deployment everywhere, read before and after each
	// shard, is verified.
	s2.Deployments[0].ID, s2.Deployments[0].After, s2.Deployments[0].AfterReadAt = "d1", "d1", t0.Add(3*time.Second)
	// Confirmed after the last shard's last case: the latest read.
	if r, _ := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{}); !r.Deployments[0].Verified() || !r.Deployments[0].AfterReadAt.Equal(t0.Add(3*time.Second)) ||
		r.RunStatus() != result.RunFailed {
		t.Errorf("deployments %+v, status %s", r.Deployments[0], r.RunStatus())
	}

	// Problems, each named; Force merges anyway, and a missing shard
	// keeps the run from passing.
	other := shard(2, 2, 0, cs(6, result.Passed))
	other.Target.BuildURL = "https://elsewhere"
	other.Shard.Selection = "sha256:y"
	_, problems = Shards([]Input{{"1.json", s1}, {"o.json", other}}, Options{})
	if got := strings.Join(problems, "\n"); !strings.Contains(got, "another selection") || !strings.Contains(got, `build_url "https://elsewhere"`) {
		t.Errorf("problems:\n%s", got)
	}
	passing := shard(1, 3, 0, cs(3, result.Passed))
	r, problems = Shards([]Input{{"1.json", passing}}, Options{Force: true})
	if len(problems) > 0 || r.Stop == nil || r.Stop.Kind != StopMissingShards || r.RunStatus() != result.RunErrored || !strings.Contains(r.Stop.Reason, "2/3, 3/3") {
		t.Errorf("forced: problems %v, stop %+v, status %s", problems, r.Stop, r.RunStatus())
	}
	if len(r.ForcedMerge) != 1 || !strings.Contains(r.ForcedMerge[0], "shard 2/3, 3/3 missing") {
		t.Errorf("forced merge %q, want the missing shards", r.ForcedMerge)
	}
	if r.Shard != nil {
		t.Errorf("shard %+v", r.Shard)
	}
}

// TestForcedMergeSays: a merge --force of reports that are not every
// shard of one selection on one target records what it overrode
// (ForcedMerge), so that agenttest gate refuses it. Two shards of two
// selections have no shard missing, and their cases all passed: the
// merged run passed, and nothing in its report told it from the run of a
// whole selection, while half of each selection went untested. Merging
// that report again, alone, keeps what the first merge overrode.
func TestForcedMergeSays(t *testing.T) {
	t.Parallel()
	s1 := shard(1, 2, 0, cs(3, result.Passed))
	s2 := shard(2, 2, time.Second, cs(6, result.Passed))
	s2.Shard.Selection = "sha256:other"
	r, problems := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{Force: true})
	if len(problems) > 0 || r.RunStatus() != result.RunPassed {
		t.Fatalf("problems %v, status %s", problems, r.RunStatus())
	}
	if len(r.ForcedMerge) != 1 || !strings.Contains(r.ForcedMerge[0], "2.json ran another selection than 1.json") {
		t.Errorf("forced merge %q, want the other selection", r.ForcedMerge)
	}
	again, problems := Shards([]Input{{"merged.json", r}}, Options{})
	if len(problems) > 0 || !slices.Equal(again.ForcedMerge, r.ForcedMerge) {
		t.Errorf("merged again: problems %v, forced merge %q, want %q", problems, again.ForcedMerge, r.ForcedMerge)
	}
	// Every shard of one selection, forced or not, merges into a run of
	// that selection.
	s2.Shard.Selection = s1.Shard.Selection
	if r, _ := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{Force: true}); len(r.ForcedMerge) > 0 {
		t.Errorf("forced merge %q of every shard of one selection", r.ForcedMerge)
	}
}

// TestShardEvidenceGaps: a shard that could not read the deployment
// after its last case (or before its first) leaves the merged run's
// evidence unconfirmed, with its note, as its own report is: the other
// shards' reads say nothing of what its cases talked to. The merge made
// such evidence verified, and the gate passed the merged report while
// it refused the shard's.
func TestShardEvidenceGaps(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	full := func(id string, from, to int) *result.Deployment {
		return &result.Deployment{Agent: "bot", Env: "sandbox", ID: id, ReadAt: at(from), After: id, AfterReadAt: at(to)}
	}
	for _, tc := range []struct {
		name     string
		s1, s2   *result.Deployment
		verified bool
		changed  bool
		note     string
		status   result.RunStatus
	}{
		{name: "both confirmed", s1: full("d1", 0, 1), s2: full("d1", 2, 3), verified: true, status: result.RunPassed},
		{name: "no read after one shard", s1: &result.Deployment{Agent: "bot", Env: "sandbox", ID: "d1", ReadAt: at(0), Note: "read after the last case failed: 503"},
			s2: full("d1", 2, 3), note: "1.json: read after the last case failed: 503", status: result.RunPassed},
		{name: "no read before one shard", s1: full("d1", 0, 1), s2: &result.Deployment{Agent: "bot", Env: "sandbox", After: "d1", AfterReadAt: at(3), Note: "read failed"},
			note: "2.json: read failed", status: result.RunPassed},
		{name: "nothing read by one shard", s1: full("d1", 0, 1), s2: &result.Deployment{Agent: "bot", Env: "sandbox"},
			note: "2.json: not read", status: result.RunPassed},
		// A deployment replaced and put back during the run: the
		// shards still tested two deployments.
		{name: "changed and changed back", s1: full("d1", 0, 1), s2: &result.Deployment{Agent: "bot", Env: "sandbox", ID: "d2", ReadAt: at(2), After: "d1", AfterReadAt: at(3)},
			changed: true, status: result.RunErrored},
		// A change still shows, and errs the run, whatever is missing.
		{name: "a change and a gap", s1: &result.Deployment{Agent: "bot", Env: "sandbox", ID: "d1", ReadAt: at(0), Note: "read failed"},
			s2: full("d2", 2, 3), changed: true, status: result.RunErrored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := shard(1, 2, 0, cs(3, result.Passed))
			s2 := shard(2, 2, 2*time.Second, cs(6, result.Passed))
			s1.Deployments, s2.Deployments = []*result.Deployment{tc.s1}, []*result.Deployment{tc.s2}
			r, problems := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			d := r.Deployments[0]
			if d.Verified() != tc.verified || d.Changed() != tc.changed || (tc.note != "" && d.Note != tc.note) {
				t.Errorf("evidence %+v: verified %v changed %v, want %v %v, note %q", d, d.Verified(), d.Changed(), tc.verified, tc.changed, tc.note)
			}
			if got := r.RunStatus(); got != tc.status {
				t.Errorf("status %s, want %s", got, tc.status)
			}
		})
	}
}

// TestShardWithoutEvidence: a shard whose cases ran in an agent and
// environment it records no deployment of (a report cut, or written by
// an agenttest that recorded none) leaves the merged evidence of them
// unconfirmed, naming the shard: the gate refuses that shard's report
// alone ("an edited report"), and another shard's evidence says nothing
// of the deployment its cases talked to. The merge made the others'
// evidence the whole run's, and the gate passed the merged report.
func TestShardWithoutEvidence(t *testing.T) {
	t.Parallel()
	c := func(line int, st result.Status) *result.Case {
		k := cs(line, st)
		k.Agent, k.Env = "bot", "sandbox"
		return k
	}
	verified := []*result.Deployment{{Agent: "bot", Env: "sandbox", ID: "d1", ReadAt: t0, After: "d1", AfterReadAt: t0.Add(time.Second)}}
	for _, tc := range []struct {
		name     string
		cases    []*result.Case
		verified bool
	}{
		{"a case passed there", []*result.Case{c(6, result.Passed)}, false},
		{"a case failed there", []*result.Case{c(6, result.Failed)}, false},
		// Cases that never ran talked to no deployment.
		{"its cases skipped", []*result.Case{c(6, result.Skipped)}, true},
		{"no case", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s1, s2 := shard(1, 2, 0, c(3, result.Passed)), shard(2, 2, 2*time.Second, tc.cases...)
			s1.Deployments = verified
			r, problems := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			d := r.Deployments[0]
			if d.Verified() != tc.verified {
				t.Errorf("evidence %+v: verified %v, want %v", d, d.Verified(), tc.verified)
			}
			if want := "2.json: its cases ran there, but it records no deployment of it"; !tc.verified && d.Note != want {
				t.Errorf("note %q, want %q", d.Note, want)
			}
		})
	}
}

// The report of a run that was not sharded, alone, is a whole run: it
// merges into the same result, its files and cases in the order its run
// wrote them (to write its reports again in other formats). Two of them
// are two runs, and a lone shard is still a run with shards missing.
func TestOneReport(t *testing.T) {
	t.Parallel()
	whole := &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sandbox"}, Files: []*result.File{
		{Path: "z.yaml", Suite: "z", Cases: []*result.Case{cs(9, result.Failed), cs(3, result.Passed)}},
		{Path: "a.yaml", Suite: "a", Cases: []*result.Case{cs(1, result.Passed)}},
	}}
	r, problems := Shards([]Input{{"run.json", whole}}, Options{})
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	var got []string
	for _, f := range r.Files {
		for _, c := range f.Cases {
			got = append(got, fmt.Sprintf("%s:%d", f.Path, c.Pos.Line))
		}
	}
	if want := []string{"z.yaml:9", "z.yaml:3", "a.yaml:1"}; !slices.Equal(got, want) {
		t.Errorf("cases %v, want the run's order %v", got, want)
	}
	if r.RunStatus() != result.RunFailed || !r.Started.Equal(t0) || r.Duration != time.Second || r.Stop != nil {
		t.Errorf("merged run %s, started %v, duration %v, stop %+v", r.RunStatus(), r.Started, r.Duration, r.Stop)
	}
	for _, tc := range []struct {
		name string
		in   []Input
		want string
	}{
		{"two runs", []Input{{"a.json", whole}, {"b.json", whole}}, "a.json: not a shard's report"},
		{"a lone shard", []Input{{"1.json", shard(1, 2, 0)}}, "shard 2/2 missing"},
	} {
		if _, problems := Shards(tc.in, Options{}); !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: problems %q, want %q", tc.name, problems, tc.want)
		}
	}
}

// gateShards is one passing shard of len(checks) per check, shard i
// carrying checks[i-1] as its alert gate.
func gateShards(checks ...*result.Case) []Input {
	var in []Input
	for i, c := range checks {
		s := shard(i+1, len(checks), 0, cs(i+1, result.Passed))
		s.Checks = []*result.Case{c}
		in = append(in, Input{fmt.Sprintf("%d.json", i+1), s})
	}
	return in
}

// gateCheck is a shard's alert gate check, as internal/runner builds it.
func gateCheck(agent string, st result.Status, fails ...assert.Failure) *result.Case {
	a := &result.Attempt{Number: 1, Status: st, Started: t0, Duration: time.Millisecond,
		Confirmations: []*result.Confirmation{{Kind: result.ConfirmAlerts, Subject: "GET /v1/alerts", Found: true, Reads: 1,
			Summary: fmt.Sprintf("%d firing, %d for agents %s or account-wide", len(fails), len(fails), agent)}},
		Failures: fails}
	if st == result.Errored {
		a.Confirmations = nil
		a.Error = &result.Error{Kind: result.KindHTTP, Status: 500, Message: "alert gate: read firing alerts (GET /v1/alerts): 500"}
	}
	return &result.Case{Name: result.AlertGateName, Status: st, Agent: agent, Env: "sandbox", Duration: time.Millisecond, Attempts: []*result.Attempt{a}}
}

// firing is f as the gate writes a rule firing at value v.
func firing(f assert.Failure, v int) assert.Failure {
	f.Message += fmt.Sprintf(", value %d", v)
	f.Actual = fmt.Sprintf("firing at %d", v)
	return f
}

// at has c read the alerts d after t0.
func at(c *result.Case, d time.Duration) *result.Case {
	c.Attempts[0].Started = t0.Add(d)
	return c
}

// TestShardsAlertGate: shards run with --gate-alerts each read the
// alerts; the merged run has one alert gate, as an unsharded run has,
// whose status is the worst of the shards' and whose reading is every
// shard's.
func TestShardsAlertGate(t *testing.T) {
	t.Parallel()
	rule := assert.Failure{Key: "alerts.api_errors", Message: `alert firing (account-wide): rule "platform errors" (alr_2): api_errors >= 1 over 5m`,
		Expected: "api_errors below 1 (api_errors >= 1 not reached)"}
	platform := firing(rule, 4)
	clinic := firing(assert.Failure{Key: "alerts.call_volume", Message: `alert firing (agent clinic): rule "clinic volume" (alr_1): call_volume >= 1 over 5m`,
		Expected: "call_volume below 1 (call_volume >= 1 not reached)"}, 3)
	for _, tc := range []struct {
		name   string
		checks [3]*result.Case
		status result.Status
		run    result.RunStatus
		fails  []assert.Failure
	}{
		{"all passed", [3]*result.Case{gateCheck("bot", result.Passed), gateCheck("clinic", result.Passed), gateCheck("bot", result.Passed)},
			result.Passed, result.RunPassed, nil},
		{"one fired", [3]*result.Case{gateCheck("bot", result.Passed), gateCheck("clinic", result.Failed, clinic), gateCheck("bot", result.Passed)},
			result.Failed, result.RunFailed, []assert.Failure{clinic}},
		// The same account-wide rule seen by every shard fired once.
		{"same rule", [3]*result.Case{gateCheck("bot", result.Failed, platform), gateCheck("clinic", result.Failed, clinic, platform), gateCheck("bot", result.Failed, platform)},
			result.Failed, result.RunFailed, []assert.Failure{platform, clinic}},
		// An account-wide rule every shard saw firing, at the value of
		// its read: one rule, at the latest reading.
		{"same rule, other values", [3]*result.Case{gateCheck("bot", result.Failed, firing(rule, 2)), at(gateCheck("clinic", result.Failed, firing(rule, 7)), time.Minute),
			at(gateCheck("bot", result.Failed, firing(rule, 5)), time.Second)},
			result.Failed, result.RunFailed, []assert.Failure{firing(rule, 7)}},
		{"one errored", [3]*result.Case{gateCheck("bot", result.Passed), gateCheck("clinic", result.Errored), gateCheck("bot", result.Passed)},
			result.Errored, result.RunErrored, nil},
		// A rule fired: the run failed, whatever another shard could not read.
		{"fired and errored", [3]*result.Case{gateCheck("bot", result.Errored), gateCheck("clinic", result.Failed, clinic), gateCheck("bot", result.Passed)},
			result.Failed, result.RunFailed, []assert.Failure{clinic}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, problems := Shards(gateShards(tc.checks[:]...), Options{})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if len(r.Checks) != 1 {
				t.Fatalf("%d checks, want one alert gate", len(r.Checks))
			}
			c := r.Checks[0]
			if c.Name != result.AlertGateName || c.Status != tc.status || c.Agent != "bot,clinic" || c.Env != "sandbox" {
				t.Errorf("check %q %s agent %q env %q, want %s for bot,clinic", c.Name, c.Status, c.Agent, c.Env, tc.status)
			}
			if r.RunStatus() != tc.run {
				t.Errorf("run %s, want %s", r.RunStatus(), tc.run)
			}
			if len(c.Attempts) != 1 {
				t.Fatalf("%d attempts, want one reading", len(c.Attempts))
			}
			a := c.Attempts[0]
			if !slices.Equal(a.Failures, tc.fails) || a.Status != tc.status {
				t.Errorf("attempt %s failures %+v, want %s %+v", a.Status, a.Failures, tc.status, tc.fails)
			}
			// Every shard's reading is kept, naming the shard.
			var readings []string
			for _, cf := range a.Confirmations {
				readings = append(readings, cf.Summary)
			}
			if a.Error != nil {
				readings = append(readings, a.Error.Message)
			}
			if len(readings) != 3 {
				t.Errorf("readings %q, want one per shard", readings)
			}
			for _, want := range []string{"shard 1/3: ", "shard 2/3: ", "shard 3/3: "} {
				if !slices.ContainsFunc(readings, func(s string) bool { return strings.HasPrefix(s, want) }) {
					t.Errorf("no reading of %s in %q", want[:len(want)-2], readings)
				}
			}
		})
	}
}

// TestShardsAlertGateSkipped: a shard that stopped on a platform it could
// not use skipped its alert gate, which read nothing (no attempt): the
// merged gate still holds the rules the other shards saw firing, whichever
// shard comes first.
func TestShardsAlertGateSkipped(t *testing.T) {
	t.Parallel()
	clinic := firing(assert.Failure{Key: "alerts.call_volume", Message: `alert firing (agent clinic): rule "clinic volume" (alr_1): call_volume >= 1 over 5m`,
		Expected: "call_volume below 1 (call_volume >= 1 not reached)"}, 3)
	skipped := &result.Case{Name: result.AlertGateName, Status: result.Skipped, SkipReason: "not run: the platform is unreachable", Agent: "bot", Env: "sandbox"}
	r, problems := Shards(gateShards(skipped, gateCheck("clinic", result.Failed, clinic), gateCheck("bot", result.Passed)), Options{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(r.Checks) != 1 || r.Checks[0].Status != result.Failed || r.RunStatus() != result.RunFailed {
		t.Fatalf("checks %+v, run %s: want the failed alert gate", r.Checks, r.RunStatus())
	}
	if c := r.Checks[0]; len(c.Attempts) != 1 || !slices.Equal(c.Attempts[0].Failures, []assert.Failure{clinic}) {
		t.Errorf("attempts %+v, want one reading with the rule that fired", c.Attempts)
	}
}

// TestShardsOtherTarget: shards that ran against another target than the
// first are no run of one target, whichever part of it differs; the
// embedded simulator's URLs, new in every process, do not count.
func TestShardsOtherTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		first func(*result.Target)
		edit  func(*result.Target)
		want  string // "": no problem
	}{
		{name: "name", edit: func(t *result.Target) { t.Name = "staging" }, want: `name "staging", not "sandbox"`},
		{name: "account", edit: func(t *result.Target) { t.AccountID = "ws-2" }, want: `account "ws-2", not ""`},
		{name: "env", edit: func(t *result.Target) { t.Env = "live" }, want: `env "live", not ""`},
		{name: "build URL", edit: func(t *result.Target) { t.BuildURL = "https://elsewhere" }, want: `build_url "https://elsewhere", not "https://b"`},
		{name: "runtime URL", edit: func(t *result.Target) { t.RuntimeURL = "https://rt" }, want: `runtime_url "https://rt", not ""`},
		{name: "embedded", edit: func(t *result.Target) { t.Embedded = true }, want: "one ran on the embedded simulator"},
		// The client calls https://b/ and HTTPS://B as https://b.
		{name: "build URL with a trailing slash", edit: func(t *result.Target) { t.BuildURL = "HTTPS://B/" }},
		{name: "runtime URL in another path", first: func(t *result.Target) { t.RuntimeURL = "https://rt/v1/" },
			edit: func(t *result.Target) { t.RuntimeURL = "https://rt/v2" }, want: `runtime_url "https://rt/v2", not "https://rt/v1/"`},
		{name: "the simulator on another port", first: func(t *result.Target) { t.Embedded, t.BuildURL = true, "http://127.0.0.1:1" },
			edit: func(t *result.Target) { t.Embedded, t.BuildURL = true, "http://127.0.0.1:2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s1, s2 := shard(1, 2, 0, cs(3, result.Passed)), shard(2, 2, 0, cs(6, result.Passed))
			if tc.first != nil {
				tc.first(&s1.Target)
			}
			tc.edit(&s2.Target)
			r, problems := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{})
			got := strings.Join(problems, "\n")
			if tc.want == "" {
				if len(problems) > 0 || r == nil {
					t.Errorf("problems:\n%s", got)
				}
				return
			}
			if r != nil || len(problems) != 1 || !strings.Contains(got, "2.json ran against another target than 1.json: "+tc.want) {
				t.Errorf("problems:\n%s\nwant 2.json's target, %s", got, tc.want)
			}
		})
	}
}

// TestShardsStartEarliest: the merged run starts with its earliest
// shard, whichever it is: a shard left over from an earlier run (a stale
// CI artifact) keeps the merged report as old as it is, for the gate's
// --max-age.
func TestShardsStartEarliest(t *testing.T) {
	t.Parallel()
	s1, s2 := shard(1, 2, time.Hour, cs(3, result.Passed)), shard(2, 2, 0, cs(6, result.Passed))
	r, problems := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if !r.Started.Equal(t0) || r.Duration != time.Hour+time.Second {
		t.Errorf("started %v, duration %v: want shard 2's start to shard 1's end", r.Started, r.Duration)
	}
	// A shard that does not say when it started (no run agenttest
	// writes) leaves the merged run's age untold, whichever shard it is,
	// as its own is: the gate refuses both.
	for _, undated := range []int{1, 2} {
		in := []Input{{"1.json", shard(1, 2, time.Hour, cs(3, result.Passed))}, {"2.json", shard(2, 2, 0, cs(6, result.Passed))}}
		in[undated-1].Result.Started = time.Time{}
		r, problems := Shards(in, Options{})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		if !r.Started.IsZero() {
			t.Errorf("shard %d undated: merged started %v, want none", undated, r.Started)
		}
	}
}

// TestShardsInterrupted: a shard cancelled before its every case finished
// leaves the merged run interrupted, whichever shard it is: the cases it
// did not run have no verdict, and the others' passes do not make one.
func TestShardsInterrupted(t *testing.T) {
	t.Parallel()
	// The shards are merged in shard order, whatever order they are
	// given in: which shard was cut short matters, not where it is given.
	for _, cut := range []int{1, 2} {
		for _, reversed := range []bool{false, true} {
			s1, s2 := shard(1, 2, 0, cs(3, result.Passed)), shard(2, 2, 0, cs(6, result.Passed))
			in := []Input{{"1.json", s1}, {"2.json", s2}}
			cutShort := in[cut-1].Result
			cutShort.Interrupted = true
			cutShort.Files[0].Cases = append(cutShort.Files[0].Cases, cs(9, result.Pending))
			if reversed {
				in[0], in[1] = in[1], in[0]
			}
			r, problems := Shards(in, Options{})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if !r.Interrupted || r.RunStatus() != result.RunInterrupted {
				t.Errorf("shard %d cut short, given in reverse %v: interrupted %v, run %s: want the merged run interrupted", cut, reversed, r.Interrupted, r.RunStatus())
			}
		}
	}
}

// TestShardsStop: the merged run keeps the stop that says most about it:
// a configuration problem, then a platform that could not be used, then
// --fail-fast, in whichever order the shards stopped.
func TestShardsStop(t *testing.T) {
	t.Parallel()
	failFast := &result.Stop{Kind: result.StopFailFast, Reason: "not run: --fail-fast"}
	unreachable := &result.Stop{Kind: result.StopUnreachable, Reason: "not run: b unreachable", Host: "b:443"}
	refused := &result.Stop{Kind: result.StopCredentials, Reason: "not run: credentials refused", Config: true}
	for _, tc := range []struct {
		name   string
		s1, s2 *result.Stop
		want   *result.Stop
	}{
		{"none", nil, nil, nil},
		{"fail-fast", nil, failFast, failFast},
		{"fail-fast, then unreachable", failFast, unreachable, unreachable},
		{"unreachable, then fail-fast", unreachable, failFast, unreachable},
		{"refused, then unreachable", refused, unreachable, refused},
		{"unreachable, then refused", unreachable, refused, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s1, s2 := shard(1, 2, 0, cs(3, result.Failed)), shard(2, 2, 0, cs(6, result.Passed))
			s1.Stop, s2.Stop = tc.s1, tc.s2
			r, problems := Shards([]Input{{"1.json", s1}, {"2.json", s2}}, Options{})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if r.Stop != tc.want {
				t.Errorf("stop %+v, want %+v", r.Stop, tc.want)
			}
		})
	}
}

// TestAloneKeepsCheck: the report of an unsharded run merged alone keeps
// its alert gate as it is.
func TestAloneKeepsCheck(t *testing.T) {
	t.Parallel()
	s := shard(1, 1, 0, cs(1, result.Passed))
	s.Shard = nil
	gate := gateCheck("bot", result.Failed, assert.Failure{Key: "alerts.x", Message: "m"})
	s.Checks = []*result.Case{gate}
	r, problems := Shards([]Input{{"r.json", s}}, Options{})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(r.Checks) != 1 || r.Checks[0] != gate {
		t.Errorf("checks %+v, want the report's own", r.Checks)
	}
}

// TestShardsThatDoNotMakeARun: reports that are not every shard of one
// selection, each once, are refused, naming why; the shards they cover
// could pass while part of the selection went untested.
func TestShardsThatDoNotMakeARun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []Input
		want string
	}{
		// 1/2 and 2/3 number every shard of two, yet are no run of
		// either: half of one selection and a third of the other.
		{"two counts of shards", []Input{{"1.json", shard(1, 2, 0, cs(3, result.Passed))}, {"2.json", shard(2, 3, 0, cs(6, result.Passed))}},
			"2.json is shard 2/3, but 1.json is of 2 shards"},
		{"the first shard missing", []Input{{"2.json", shard(2, 3, 0, cs(6, result.Passed))}, {"3.json", shard(3, 3, 0, cs(9, result.Passed))}},
			"shard 1/3 missing"},
		{"the last shard missing", []Input{{"1.json", shard(1, 3, 0, cs(3, result.Passed))}, {"2.json", shard(2, 3, 0, cs(6, result.Passed))}},
			"shard 3/3 missing"},
		{"a shard twice", []Input{{"1.json", shard(1, 2, 0, cs(3, result.Passed))}, {"1b.json", shard(1, 2, 0, cs(3, result.Passed))}},
			"1.json and 1b.json are both shard 1/2"},
		{"a report without result", []Input{{"1.json", shard(1, 2, 0, cs(3, result.Passed))}, {"2.json", nil}},
			"2.json: no result"},
		// The shards are measured against the first shard, not against
		// a report given first that is no shard's.
		{"two counts after a run's report", []Input{{"run.json", unsharded()}, {"1.json", shard(1, 2, 0, cs(3, result.Passed))}, {"2.json", shard(2, 3, 0, cs(6, result.Passed))}},
			"2.json is shard 2/3, but 1.json is of 2 shards"},
		{"another selection after a run's report", []Input{{"run.json", unsharded()}, {"1.json", shard(1, 2, 0, cs(3, result.Passed))}, {"2.json", otherSelection(shard(2, 2, 0, cs(6, result.Passed)))}},
			"2.json ran another selection than 1.json"},
		// Shards of two --rerun-failed runs: reruns of two reports.
		{"reruns of two reports", []Input{{"1.json", rerunOf("a.json", shard(1, 2, 0, cs(3, result.Passed)))}, {"2.json", rerunOf("b.json", otherSelection(shard(2, 2, 0, cs(6, result.Passed))))}},
			"2.json reran the cases of b.json, 1.json those of a.json (--rerun-failed): merge the shards of one run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, problems := Shards(tc.in, Options{})
			if r != nil || !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("merged %v, problems %q; want refused with %q", r != nil, problems, tc.want)
			}
		})
	}
}

// unsharded is the report of a run of its whole selection.
func unsharded() *result.Result {
	r := shard(1, 1, 0, cs(1, result.Passed))
	r.Shard = nil
	return r
}

// rerunOf is r run with --rerun-failed of the report of.
func rerunOf(of string, r *result.Result) *result.Result {
	r.Rerun = &result.Rerun{Of: of, Failed: 1}
	return r
}

// otherSelection is r dealt from another selection.
func otherSelection(r *result.Result) *result.Result {
	r.Shard.Selection = "sha256:other"
	return r
}

// TestShardNumbers: every shard number no run deals, and every set of
// shards whose numbers do not fit together, is a problem naming the
// report (and the member of its shard at fault). Before, "3/2" was taken
// for a shard and the problem was shard 2/2 missing, a lone shard "1/0"
// merged as the whole run and passed, and a shard of 2 given beside two
// shards 2/3 was said to be both "shard 2/3" with them.
func TestShardNumbers(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		shards [][2]int // K, N of 1.json, 2.json, ...
		want   []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var in []Input
		for i, kn := range tc.shards {
			in = append(in, Input{fmt.Sprintf("%d.json", i+1), shard(kn[0], kn[1], 0, cs(3+i, result.Passed))})
		}
		r, problems := Shards(in, Options{})
		if r != nil || !slices.Equal(problems, tc.want) {
			t.Errorf("result %v, problems:\n%s\nwant:\n%s", r != nil, strings.Join(problems, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	for _, tc := range []testCase{
		{name: "K past N", shards: [][2]int{{1, 2}, {3, 2}}, want: []string{
			"2.json: shard.index: shard 3 of 2: want 1 <= index <= total", "shard 2/2 missing: every shard's report is needed for the run's verdict"}},
		{name: "K 0", shards: [][2]int{{0, 2}, {2, 2}}, want: []string{
			"1.json: shard.index: shard 0 of 2: want 1 <= index <= total", "shard 1/2 missing: every shard's report is needed for the run's verdict"}},
		{name: "K negative", shards: [][2]int{{1, 2}, {-2, 2}}, want: []string{
			"2.json: shard.index: shard -2 of 2: want 1 <= index <= total", "shard 2/2 missing: every shard's report is needed for the run's verdict"}},
		{name: "N 0, alone", shards: [][2]int{{1, 0}}, want: []string{"1.json: shard.total: 0 shards: a selection is dealt into 1 or more"}},
		{name: "N negative, first", shards: [][2]int{{1, -2}, {1, 2}, {2, 2}}, want: []string{"1.json: shard.total: -2 shards: a selection is dealt into 1 or more"}},
		{name: "twice", shards: [][2]int{{1, 3}, {2, 3}, {2, 3}, {3, 3}}, want: []string{"2.json and 3.json are both shard 2/3"}},
		{name: "N disagrees", shards: [][2]int{{1, 3}, {2, 2}, {2, 3}, {3, 3}}, want: []string{"2.json is shard 2/2, but 1.json is of 3 shards"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// A shard no run deals, merged with Force, is merged as a report that
	// is no shard, and says so.
	r, problems := Shards([]Input{{"1.json", shard(1, 2, 0, cs(3, result.Passed))}, {"2.json", shard(3, 2, 0, cs(6, result.Passed))}}, Options{Force: true})
	if len(problems) > 0 || r == nil || len(r.Files[0].Cases) != 2 || r.Stop == nil || r.Stop.Kind != StopMissingShards ||
		!slices.Contains(r.ForcedMerge, "2.json: shard.index: shard 3 of 2: want 1 <= index <= total") {
		t.Errorf("forced: problems %v, result %+v", problems, r)
	}
}

// TestNilResult: an input without a result is a problem, with or without
// Force, wherever it is given; Shards panicked on it (a nil pointer
// dereference) when it came first, or anywhere with Force.
func TestNilResult(t *testing.T) {
	t.Parallel()
	s1, s2 := shard(1, 2, 0, cs(3, result.Passed)), shard(2, 2, 0, cs(6, result.Passed))
	for _, in := range [][]Input{
		{{"nil.json", nil}},
		{{"nil.json", nil}, {"1.json", s1}, {"2.json", s2}},
		{{"1.json", s1}, {"nil.json", nil}, {"2.json", s2}},
	} {
		for _, force := range []bool{false, true} {
			r, problems := Shards(in, Options{Force: force})
			if r != nil || !slices.Contains(problems, "nil.json: no result") {
				t.Errorf("%d inputs, force %v: result %v, problems %q", len(in), force, r != nil, problems)
			}
		}
	}
}
