package gate

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

func TestCheck(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	target := result.Target{Name: "sandbox", BuildURL: "https://build.us.example.com", AccountID: "ws-a1b2c3d4", Env: "sandbox"}
	verified := func(agent, id string) *result.Deployment {
		return &result.Deployment{Agent: agent, Env: "sandbox", ID: id, After: id}
	}
	green := func() Evidence {
		return Evidence{Path: "r.json", What: "run", Status: "passed", Passed: true,
			Started: now.Add(-time.Hour - time.Minute), Concluded: now.Add(-time.Hour), Target: target,
			Deployments: []*result.Deployment{verified("restaurant", "dep-1"), verified("clinic", "dep-2")},
			Gating:      2, GatingOf: map[Key]int{{"restaurant", "sandbox"}: 1, {"clinic", "sandbox"}: 1}}
	}
	activeNow := map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-2"}}
	type testCase struct {
		name   string
		edit   func(ev *Evidence)
		active map[Key]Active
		// gate edits the gate's target; agents are its --agent.
		gate   func(t *result.Target)
		agents []string
		// want are parts of the reasons, in order; none: the gate passes.
		want       []string
		unreadable bool
	}
	run := func(t *testing.T, tc testCase) {
		ev := green()
		if tc.edit != nil {
			tc.edit(&ev)
		}
		active := activeNow
		if tc.active != nil {
			active = tc.active
		}
		gt := target
		if tc.gate != nil {
			tc.gate(&gt)
		}
		d := Check(ev, Options{Now: now, MaxAge: 24 * time.Hour, Target: gt, Agents: tc.agents}, active)
		if len(d.Reasons) != len(tc.want) {
			t.Fatalf("reasons %q, want %d", d.Reasons, len(tc.want))
		}
		for i, w := range tc.want {
			if !strings.Contains(d.Reasons[i], w) {
				t.Errorf("reason %d %q lacks %q", i, d.Reasons[i], w)
			}
		}
		if d.Passed() != (len(tc.want) == 0) || d.Unreadable != tc.unreadable {
			t.Errorf("passed %v unreadable %v", d.Passed(), d.Unreadable)
		}
		deps := 0
		for _, dep := range ev.Deployments {
			if dep != nil {
				deps++
			}
		}
		if len(d.Checked) != deps {
			t.Errorf("checked %q, want a line per deployment", d.Checked)
		}
	}
	for _, tc := range []testCase{
		{name: "green and current"},
		{name: "failed", edit: func(ev *Evidence) { ev.Passed, ev.Status, ev.Why = false, "failed", "a check failed" },
			want: []string{"the run did not pass: its status is failed: a check failed"}},
		{name: "stale", edit: func(ev *Evidence) {
			ev.Started, ev.Concluded = now.Add(-25*time.Hour-20*time.Second), now.Add(-25*time.Hour)
		},
			want: []string{"the report's oldest results are 25h0m0s old (its run started 2026-03-01T10:59:40Z and ended 2026-03-01T11:00:00Z), older than --max-age 24h0m0s"}},
		// A merged report whose one shard is left over from an earlier
		// run: it ended an hour ago, but its oldest results are days old.
		{name: "merged with a stale shard", edit: func(ev *Evidence) { ev.Started = now.Add(-72 * time.Hour) },
			want: []string{"the report's oldest results are 72h0m0s old (its run started 2026-02-27T12:00:00Z and ended 2026-03-02T11:00:00Z)"}},
		{name: "undated", edit: func(ev *Evidence) { ev.Started, ev.Concluded = time.Time{}, time.Time{} }, want: []string{"does not say when its run ended"}},
		// Its start alone dates no end: without one, nothing says the
		// run is not from ahead of the gate's clock.
		{name: "started, never ended", edit: func(ev *Evidence) { ev.Concluded = time.Time{} }, want: []string{"does not say when its run ended"}},
		// --max-age is the oldest a report may be: one that old passes.
		{name: "as old as --max-age", edit: func(ev *Evidence) { ev.Started = now.Add(-24 * time.Hour) }},
		{name: "no deployments", edit: func(ev *Evidence) { ev.Deployments = nil }, want: []string{"the report records no deployment"}},
		{name: "replaced", active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-9"}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want: []string{"restaurant in sandbox: the report tested deployment dep-1, but dep-9 is active now"}},
		{name: "changed during the run", edit: func(ev *Evidence) { ev.Deployments[1].After = "dep-3" },
			want: []string{"deployment of clinic changed during the run: dep-2 → dep-3"}},
		{name: "no evidence", edit: func(ev *Evidence) {
			ev.Deployments[0] = &result.Deployment{Agent: "restaurant", Env: "sandbox", Note: "not served"}
		},
			want: []string{"restaurant in sandbox: the report holds no deployment evidence: not served"}},
		{name: "not confirmed after", edit: func(ev *Evidence) { ev.Deployments[0].After, ev.Deployments[0].Note = "", "the run stopped" },
			want: []string{"deployment dep-1 was not confirmed after the run's last case (the run stopped)"}},
		// What the command did not read cannot be what is active now.
		{name: "not read now", active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}},
			want: []string{"clinic in sandbox: the deployment active now was not read"}},
		{name: "not served now", active: map[Key]Active{{"restaurant", "sandbox"}: {NotServed: true, Err: errors.New("404")}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want: []string{"answers 404 to GET /v1/agents/{agentId}/deployments/active now (it does not serve the endpoint, or does not know the agent)"}},
		{name: "unreadable now", active: map[Key]Active{{"restaurant", "sandbox"}: {Err: errors.New("500")}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want: []string{"cannot read the deployment active now: 500"}, unreadable: true},
		{name: "unreadable and refused", edit: func(ev *Evidence) { ev.Passed, ev.Status = false, "empty" },
			active: map[Key]Active{{"restaurant", "sandbox"}: {Err: errors.New("500")}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want:   []string{"status is empty", "cannot read"}},
		{name: "another platform", edit: func(ev *Evidence) { ev.Target.BuildURL = "https://build.eu.example.com" },
			want: []string{"the report tested the platform at https://build.eu.example.com, the gate's target \"sandbox\" is https://build.us.example.com"}},
		{name: "another workspace", edit: func(ev *Evidence) { ev.Target.AccountID = "ws-99999999" }, want: []string{"workspace ws-99999999"}},
		// One shard tested a share of the selection: only the merged
		// report vouches for it all.
		{name: "a shard of several", edit: func(ev *Evidence) { ev.Shard = &result.Shard{Index: 3, Total: 3, Selected: 47} },
			want: []string{"the report is shard 3 of 3: it tested its share of the selection's 47 scenarios, not all of them; gate the report agenttest merge writes"}},
		{name: "the only shard", edit: func(ev *Evidence) { ev.Shard = &result.Shard{Index: 1, Total: 1, Selected: 47} }},
		// A pre-release target whose suites pin env: sandbox tested
		// sandbox: its report cannot vouch for pre-release.
		{name: "another environment", gate: func(t *result.Target) { t.Name, t.Env = "pre-release", "pre-release" },
			active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want:   []string{`restaurant: the report tested sandbox, not pre-release, the environment of the gate's target "pre-release"`, `clinic: the report tested sandbox, not pre-release`}},
		// A --rerun-failed run tested an earlier run's failures again.
		{name: "a rerun of failures", edit: func(ev *Evidence) { ev.Rerun = &result.Rerun{Of: "first.json", Failed: 2} },
			want: []string{"the report reruns the 2 cases that failed or errored in first.json: it tested those again, not the whole selection"}},
		// ... and those the earlier run's stop left unrun.
		{name: "a rerun of a stopped run", edit: func(ev *Evidence) { ev.Rerun = &result.Rerun{Of: "first.json", Failed: 2, Unrun: 1} },
			want: []string{"the report reruns the 2 cases that failed or errored in first.json and the 1 case its run left unrun: it tested those again, not the whole selection"}},
		{name: "a rerun of a run stopped before its first case", edit: func(ev *Evidence) { ev.Rerun = &result.Rerun{Of: "first.json", Unrun: 6} },
			want: []string{"the report reruns the 6 cases the run of first.json left unrun: it tested those again, not the whole selection"}},
		{name: "one agent in another environment", edit: func(ev *Evidence) {
			ev.Deployments[1].Env = "live"
			ev.GatingOf = map[Key]int{{"restaurant", "sandbox"}: 1, {"clinic", "live"}: 1}
		},
			active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "live"}: {ID: "dep-2"}},
			want:   []string{`clinic: the report tested live, not sandbox, the environment of the gate's target "sandbox"`}},
		{name: "one agent in two other environments", edit: func(ev *Evidence) {
			ev.Deployments[1].Env = "live"
			ev.Deployments = append(ev.Deployments, &result.Deployment{Agent: "clinic", Env: "staging", ID: "dep-7", After: "dep-7"})
			ev.GatingOf = map[Key]int{{"restaurant", "sandbox"}: 1, {"clinic", "live"}: 1, {"clinic", "staging"}: 1}
		}, active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "live"}: {ID: "dep-2"}, {"clinic", "staging"}: {ID: "dep-7"}},
			want: []string{`clinic: the report tested live, staging, not sandbox, the environment of the gate's target "sandbox"`}},
		// A report that tested live as well vouches for sandbox, its
		// live deployment checked like any other.
		{name: "another environment besides the target's", edit: func(ev *Evidence) {
			ev.Deployments = append(ev.Deployments, &result.Deployment{Agent: "clinic", Env: "live", ID: "dep-7", After: "dep-7"})
			ev.GatingOf[Key{"clinic", "live"}] = 1
		}, active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-2"}, {"clinic", "live"}: {ID: "dep-7"}}},
		// Without --agent the gate vouches for every deployment: one
		// whose agent no case gated there (quarantined, skipped) is
		// refused, once; before, "clinic in sandbox: tested dep-2" and
		// "gate: passed". Named away with --agent, the others vouch.
		{name: "an agent no case gated", edit: func(ev *Evidence) {
			delete(ev.GatingOf, Key{"clinic", "sandbox"})
			ev.Deployments = append(ev.Deployments, verified("clinic", "dep-2"))
		},
			want: []string{"clinic in sandbox: no case of it gates (each is quarantined, skipped or not compared), and the gate would vouch for its deployment all the same: test it, or name the agents promoted with --agent"}},
		{name: "an agent no case gated, not promoted", agents: []string{"restaurant"}, edit: func(ev *Evidence) { delete(ev.GatingOf, Key{"clinic", "sandbox"}) }},
		{name: "an agent no case gated in another environment", edit: func(ev *Evidence) {
			ev.Deployments = append(ev.Deployments, &result.Deployment{Agent: "clinic", Env: "live", ID: "dep-7", After: "dep-7"})
		}, active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-2"}, {"clinic", "live"}: {ID: "dep-7"}},
			want: []string{"clinic in live: no case of it gates"}},
		// A comparison vouches for no more than its candidate's run:
		// not when it reran failures, nor when its candidate is a report
		// of a shard or of a rerun.
		{name: "a comparison of reruns", edit: func(ev *Evidence) { ev.What, ev.Rerun = "comparison", &result.Rerun{Of: "first.json", Failed: 1} },
			want: []string{"the comparison reruns the 1 case that failed or errored in first.json: it compared those again, not the whole selection; gate a comparison of the whole selection"}},
		{name: "a comparison with a shard's report", edit: func(ev *Evidence) {
			ev.What, ev.Candidate = "comparison", &StoredRun{Path: "pre.json", Shard: &result.Shard{Index: 1, Total: 2, Selected: 6}}
		},
			want: []string{"the comparison's candidate, report pre.json, is shard 1 of 2: it tested its share of the selection's 6 scenarios, not all of them; compare with the report agenttest merge writes of every shard"}},
		{name: "a comparison with the only shard's report", edit: func(ev *Evidence) {
			ev.What, ev.Candidate = "comparison", &StoredRun{Path: "pre.json", Shard: &result.Shard{Index: 1, Total: 1, Selected: 6}}
		}},
		{name: "a comparison with a rerun's report", edit: func(ev *Evidence) {
			ev.What, ev.Candidate = "comparison", &StoredRun{Path: "pre.json", Rerun: &result.Rerun{Of: "first.json", Failed: 2}}
		},
			want: []string{"the comparison's candidate, report pre.json, reruns the 2 cases that failed or errored in first.json: it tested those again, not the whole selection; compare with the report of a full run"}},
		{name: "a comparison without deployments", edit: func(ev *Evidence) { ev.What, ev.Deployments = "comparison", nil },
			want: []string{"the comparison records no deployment of its candidate"}},
		// A report states the verdict its cases give; one that states
		// another was edited (or written by another tool), whichever
		// way.
		{name: "says passed, its cases say failed", edit: func(ev *Evidence) { ev.Derived, ev.DerivedWhy = "failed", "a check failed" },
			want: []string{"the report says its run passed, but its cases say failed (a check failed): the status does not follow from the report"}},
		{name: "says passed, its cases say empty", edit: func(ev *Evidence) { ev.Derived, ev.DerivedWhy = "empty", "nothing was tested" },
			want: []string{"its cases say empty (nothing was tested)"}},
		{name: "says failed, its cases say passed", edit: func(ev *Evidence) {
			ev.Passed, ev.Status, ev.Why, ev.Derived = false, "failed", "a check failed", "passed"
		},
			want: []string{"status is failed", "the report says its run failed, but its cases say passed"}},
		{name: "agrees with its cases", edit: func(ev *Evidence) { ev.Derived = "passed" }},
		{name: "a comparison its pairs contradict", edit: func(ev *Evidence) {
			ev.What, ev.Derived, ev.DerivedWhy = "comparison", "failed", "1 scenario regressed"
		},
			want: []string{"the report says its comparison passed, but its pairs and sides say failed (1 scenario regressed)"}},
		{name: "cases of an agent without deployment", edit: func(ev *Evidence) { ev.Unrecorded = []string{"billing in sandbox"} },
			want: []string{"billing in sandbox: cases ran there, but the report records no deployment of it"}},
		// A report from ahead of the gate's clock would stay fresh until
		// that date: beyond a skew between two machines' clocks, it is
		// refused.
		{name: "from the future", edit: func(ev *Evidence) { ev.Started, ev.Concluded = now.Add(30*24*time.Hour), now.Add(30*24*time.Hour) },
			want: []string{"the report's run ended 2026-04-01T12:00:00Z, 720h0m0s after the gate's clock (more than the 5m0s two clocks may differ)"}},
		{name: "a clock a little ahead", edit: func(ev *Evidence) { ev.Started, ev.Concluded = now, now.Add(MaxSkew) }},
		// Its end says how far ahead it is, whenever it started.
		{name: "started now, ended ahead", edit: func(ev *Evidence) { ev.Started, ev.Concluded = now, now.Add(time.Hour) },
			want: []string{"the report's run ended 2026-03-02T13:00:00Z, 1h0m0s after the gate's clock"}},
		// A null among the deployments (JSON reads it so) records
		// nothing: the others still vouch, and nothing breaks.
		{name: "a null deployment", edit: func(ev *Evidence) { ev.Deployments = append(ev.Deployments, nil) }},
		// Further ahead than a time.Duration reaches: the gate's clock
		// minus that date saturated to the most negative duration, whose
		// negation is itself, so the report passed as fresh (an edited
		// "started": "9999-12-31T23:59:59Z").
		{name: "from the far future", edit: func(ev *Evidence) {
			ev.Started = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
			ev.Concluded = ev.Started
		},
			want: []string{"the report's run ended 9999-12-31T23:59:59Z, 2562047h47m0s after the gate's clock (more than the 5m0s two clocks may differ)"}},
		// A quarantine never changes a run's verdict, so a run of
		// quarantined cases alone passes, failing or not: it says
		// nothing of the deployment the gate would let through.
		{name: "every case quarantined", edit: func(ev *Evidence) { ev.Gating, ev.Quarantined, ev.GatingOf = 0, 2, map[Key]int{} },
			want: []string{"every case the run tested is quarantined (2): a quarantined case never gates a run, whatever its outcome, so the report vouches for nothing"}},
		{name: "one case not quarantined", edit: func(ev *Evidence) { ev.Gating, ev.Quarantined = 1, 2 }},
		{name: "a comparison of quarantined scenarios alone", edit: func(ev *Evidence) { ev.What, ev.Gating, ev.Quarantined = "comparison", 0, 3 },
			want: []string{"every scenario the comparison compared is quarantined (3 of the candidate's cases): a quarantine never fails a comparison, so it vouches for nothing"}},
		// An edited report (its cases cut, its status left passed) is
		// refused too, whatever else it says.
		{name: "no case at all", edit: func(ev *Evidence) { ev.Gating = 0 }, want: []string{"the run tested no case: the report vouches for nothing"}},
		{name: "a comparison that compared nothing", edit: func(ev *Evidence) { ev.What, ev.Gating = "comparison", 0 },
			want: []string{"the comparison compared no scenario: it vouches for nothing"}},
		// A run that did not pass is refused for that: its empty
		// selection is no second reason.
		{name: "empty", edit: func(ev *Evidence) { ev.Passed, ev.Status, ev.Why, ev.Gating = false, "empty", "nothing was tested", 0 },
			want: []string{"the run did not pass: its status is empty: nothing was tested"}},
		// --agent: the agents the pipeline promotes. A report of other
		// agents vouches for them, not for the one promoted.
		{name: "the agent promoted", agents: []string{"restaurant"}},
		// Another agent's deployment, replaced or unreadable now, or
		// never confirmed, does not hold up the one promoted: the gate
		// vouches for the agents promoted alone.
		{name: "the agent promoted, another replaced", agents: []string{"restaurant"},
			active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-9"}}},
		{name: "the agent promoted, another unread", agents: []string{"restaurant"}, active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}}},
		{name: "the agent promoted, another unconfirmed in another environment", agents: []string{"restaurant"}, edit: func(ev *Evidence) {
			ev.Deployments[1] = &result.Deployment{Agent: "clinic", Env: "live", Note: "not served"}
		}},
		{name: "the agent promoted replaced", agents: []string{"clinic"},
			active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-9"}},
			want:   []string{"clinic in sandbox: the report tested deployment dep-2, but dep-9 is active now"}},
		{name: "both agents promoted", agents: []string{"clinic", "restaurant"}},
		{name: "another agent promoted", agents: []string{"billing", "restaurant"},
			want: []string{"billing: the report did not test it in sandbox (it tested restaurant in sandbox, clinic in sandbox): it cannot vouch for the agent promoted"}},
		{name: "the agent promoted in another environment", agents: []string{"clinic"}, edit: func(ev *Evidence) { ev.Deployments[1].Env = "live" },
			active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "live"}: {ID: "dep-2"}},
			want:   []string{`clinic: the report tested live, not sandbox`, "clinic: the report did not test it in sandbox (it tested restaurant in sandbox, clinic in live)"}},
		{name: "the agent promoted, of a report of no agent", agents: []string{"restaurant"}, edit: func(ev *Evidence) { ev.Deployments = nil },
			want: []string{"the report records no deployment", "restaurant: the report did not test it in sandbox (it tested no agent)"}},
		// Its deployment was read, but every case of it was quarantined.
		{name: "the agent promoted quarantined", agents: []string{"clinic"}, edit: func(ev *Evidence) { delete(ev.GatingOf, Key{"clinic", "sandbox"}) },
			want: []string{"clinic: every case of it the report tested in sandbox is quarantined: a quarantined case never gates, so the report vouches for the other agents, not for the agent promoted"}},
		// Its cases in another environment gate there, not in the
		// target's, whose deployment was read for cases quarantined.
		{name: "the agent promoted gated elsewhere", agents: []string{"clinic"}, edit: func(ev *Evidence) {
			ev.GatingOf = map[Key]int{{"restaurant", "sandbox"}: 1, {"clinic", "live"}: 1}
		},
			want: []string{"clinic: every case of it the report tested in sandbox is quarantined"}},
		// A report of quarantined cases alone is refused once, for
		// all its agents.
		{name: "the agent promoted, every case quarantined", agents: []string{"clinic"}, edit: func(ev *Evidence) {
			ev.Gating, ev.GatingOf, ev.Quarantined = 0, nil, 2
		},
			want: []string{"every case the run tested is quarantined (2)"}},
		// A gate's target of no environment: any of them.
		{name: "the agent promoted, in any environment", agents: []string{"billing"}, gate: func(t *result.Target) { t.Env = "" },
			want: []string{"billing: the report did not test it (it tested restaurant in sandbox, clinic in sandbox)"}},
		{name: "the agent promoted, in any environment, gated elsewhere", agents: []string{"clinic"}, gate: func(t *result.Target) { t.Env = "" },
			edit: func(ev *Evidence) { ev.GatingOf = map[Key]int{{"restaurant", "sandbox"}: 1, {"clinic", "live"}: 1} }},
		{name: "the simulator vouches for no platform", edit: func(ev *Evidence) { ev.Target = result.Target{Name: "sim", Embedded: true} },
			want: []string{"the report tested the embedded simulator, the gate's target is a configured platform"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestNeeded: the command reads now the deployments the report has
// evidence of, and no other.
func TestNeeded(t *testing.T) {
	ev := Evidence{Deployments: []*result.Deployment{
		{Agent: "a", Env: "sandbox", ID: "d1", After: "d1"},
		nil,
		{Agent: "b", Env: "sandbox", ID: "d2", After: "d3"},
		{Agent: "c", Env: "live", ID: "d4", Note: "read after the last case failed"},
		{Agent: "d", Env: "sandbox", Note: "not served"},
		{Agent: "e", Env: "live", ID: "d5", After: "d5"},
	}}
	if got, want := Needed(ev, Options{}), []Key{{"a", "sandbox"}, {"e", "live"}}; !slices.Equal(got, want) {
		t.Errorf("needed %v, want %v", got, want)
	}
	// --agent: the deployments of the agents promoted alone.
	if got, want := Needed(ev, Options{Agents: []string{"e", "b"}}), []Key{{"e", "live"}}; !slices.Equal(got, want) {
		t.Errorf("needed %v, want %v", got, want)
	}
}

func TestFromRun(t *testing.T) {
	started := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	r := &result.Result{Started: started, Duration: 90 * time.Second,
		Deployments: []*result.Deployment{{Agent: "a", Env: "sandbox", ID: "d1", After: "d2"}}}
	ev := FromRun("r.json", r, r.RunStatus())
	if ev.Passed || ev.Status != "errored" || ev.Why != "a deployment changed during the run" || !ev.Concluded.Equal(started.Add(90*time.Second)) {
		t.Errorf("evidence %+v", ev)
	}
	if n := Needed(ev, Options{}); len(n) != 0 {
		t.Errorf("needed %v: a changed deployment needs no read", n)
	}

	// What gates: the cases that ran, under no quarantine that holds.
	quarantined := func(st result.Status, lapsed bool) *result.Case {
		return &result.Case{Status: st, Quarantine: &result.Quarantine{Reason: "r", Until: "2099-12-31", Lapsed: lapsed}}
	}
	for _, tc := range []struct {
		name   string
		cases  []*result.Case
		gating int
	}{
		{"quarantined alone", []*result.Case{quarantined(result.Failed, false), quarantined(result.Passed, false), {Status: result.Skipped}}, 0},
		{"a lapsed quarantine gates", []*result.Case{quarantined(result.Passed, true)}, 1},
		{"one case besides", []*result.Case{quarantined(result.Failed, false), {Status: result.Flaky}, {Status: result.Pending}, nil}, 1},
		{"every status that ran", []*result.Case{{Status: result.Passed}, {Status: result.Flaky}, {Status: result.Failed}, {Status: result.Errored}}, 4},
	} {
		for _, c := range tc.cases {
			if c != nil {
				c.Agent, c.Env = "a", "sandbox"
			}
		}
		r := &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: tc.cases}}}
		ev := FromRun("r.json", r, r.RunStatus())
		if ev.Gating != tc.gating || ev.GatingOf[Key{"a", "sandbox"}] != tc.gating {
			t.Errorf("%s: gating %d, of a in sandbox %d, want %d", tc.name, ev.Gating, ev.GatingOf[Key{"a", "sandbox"}], tc.gating)
		}
	}
}

// TestFromRunNamesConfigurationErrors: the gate's reason for refusing an
// errored run says when its cases cannot be run as written, which no
// retry of the job fixes, apart from the platform or the network.
func TestFromRunNamesConfigurationErrors(t *testing.T) {
	errored := func(kind string) *result.Case {
		return &result.Case{Status: result.Errored, Attempts: []*result.Attempt{{Status: result.Errored, Error: &result.Error{Kind: kind}}}}
	}
	for _, tc := range []struct {
		name  string
		cases []*result.Case
		stop  *result.Stop
		want  string
	}{
		{"by configuration", []*result.Case{errored(result.KindConfig), errored(result.KindConfig)}, nil,
			"2 errored cases cannot be run as written (a configuration error)"},
		{"mixed", []*result.Case{errored(result.KindConfig), errored(result.KindNetwork)}, nil,
			"1 errored case cannot be run as written (a configuration error), and the platform or the network kept 1 from a verdict"},
		{"none by configuration", []*result.Case{errored(result.KindHTTP)}, nil,
			"the platform or the network kept it from a verdict"},
		// The case that met a refused key errored with the platform's
		// 401: the stop says it was the configuration's.
		{"a refused key stopped it", []*result.Case{errored(result.KindHTTP)},
			&result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Credential: "runtime key", Config: true},
			"it stopped on a configuration problem: the platform refused the runtime key"},
		{"an unreachable platform stopped it", []*result.Case{errored(result.KindNetwork)},
			&result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable},
			"the platform or the network kept it from a verdict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: tc.cases}}, Stop: tc.stop}
			if ev := FromRun("r.json", r, r.RunStatus()); ev.Why != tc.want || ev.DerivedWhy != tc.want {
				t.Errorf("why %q, derived %q; want %q", ev.Why, ev.DerivedWhy, tc.want)
			}
		})
	}
}

// TestFromRunDerives: the gate derives the verdict of a report's cases
// again, and finds the agents and environments its cases ran in that it
// records no deployment of, so that a report edited to say passed, or to
// drop a deployment, does not vouch for anything.
func TestFromRunDerives(t *testing.T) {
	started := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	dep := func(agent string) *result.Deployment {
		return &result.Deployment{Agent: agent, Env: "sandbox", ID: "d-" + agent, After: "d-" + agent}
	}
	for _, tc := range []struct {
		name       string
		cases      []*result.Case
		deps       []*result.Deployment
		derived    result.RunStatus
		unrecorded []string
		// nothingGated: every case that ran is quarantined, so the gate
		// refuses a run that passed.
		nothingGated bool
	}{
		{name: "passed", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed},
		{name: "a failed case", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed}, {Agent: "a", Env: "sandbox", Status: result.Failed}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunFailed},
		{name: "every case skipped", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Skipped}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunEmpty},
		{name: "no case", deps: []*result.Deployment{dep("a")}, derived: result.RunEmpty},
		{name: "a quarantined failure", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed},
			{Agent: "a", Env: "sandbox", Status: result.Failed, Quarantine: &result.Quarantine{Reason: "r", Until: "2026-12-31"}}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed},
		{name: "a quarantined failure alone", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Failed, Quarantine: &result.Quarantine{Reason: "r", Until: "2026-12-31"}}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed, nothingGated: true},
		{name: "an agent without deployment", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed}, {Agent: "b", Env: "sandbox", Status: result.Flaky},
			{Agent: "b", Env: "sandbox", Status: result.Passed}, {Agent: "c", Env: "sandbox", Status: result.Skipped}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed, unrecorded: []string{"b in sandbox"}},
		// A run records every case's agent and environment: a passing
		// case without them was edited to escape the deployment check.
		{name: "a case edited to no environment", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed}, {Agent: "a", Status: result.Passed}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed, unrecorded: []string{"a in no environment"}},
		{name: "a case edited to no agent", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed}, {Env: "sandbox", Status: result.Failed,
			Quarantine: &result.Quarantine{Reason: "r", Until: "2026-12-31"}}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed, unrecorded: []string{"no agent in sandbox"}},
		// A scenario that names no agent errors before any call (a
		// configuration error): quarantined, it leaves the run passed,
		// and it talked to no deployment.
		{name: "a quarantined case with no agent", cases: []*result.Case{{Agent: "a", Env: "sandbox", Status: result.Passed}, {Env: "sandbox", Status: result.Errored,
			Quarantine: &result.Quarantine{Reason: "r", Until: "2026-12-31"}}},
			deps: []*result.Deployment{dep("a")}, derived: result.RunPassed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{Started: started, Duration: time.Second, Deployments: tc.deps,
				Files: []*result.File{{Path: "s.yaml", Cases: tc.cases}}}
			// The status a hand-edited report states: passed.
			ev := FromRun("r.json", r, result.RunPassed)
			if ev.Derived != tc.derived || !slices.Equal(ev.Unrecorded, tc.unrecorded) {
				t.Errorf("derived %q unrecorded %q, want %q %q", ev.Derived, ev.Unrecorded, tc.derived, tc.unrecorded)
			}
			active := map[Key]Active{}
			for _, d := range tc.deps {
				active[Key{d.Agent, d.Env}] = Active{ID: d.ID}
			}
			d := Check(ev, Options{Now: started.Add(time.Minute), MaxAge: time.Hour, Target: result.Target{Env: "sandbox"}}, active)
			if want := tc.derived == result.RunPassed && tc.unrecorded == nil && !tc.nothingGated; d.Passed() != want {
				t.Errorf("gate passed %v, want %v: %q", d.Passed(), want, d.Reasons)
			}
		})
	}
}

// TestFromComparison: a comparison's evidence is its candidate's: its
// target, deployments and run time; a candidate that is a report brings
// that report's shard and rerun, and the comparison's own --rerun-failed
// is its rerun.
func TestFromComparison(t *testing.T) {
	started := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	dep := &result.Deployment{Agent: "restaurant", Env: "pre-release", ID: "dep-1", After: "dep-1"}
	comparison := func() *compare.Comparison {
		return &compare.Comparison{Status: result.RunPassed, Why: "nothing regressed",
			Counts: compare.Counts{Total: 3, Fixed: 1, Unchanged: 1, OnlyBaseline: 1},
			Candidate: compare.Side{Spec: "pre.json", Kind: compare.KindReport, Report: "pre.json", Target: result.Target{Name: "pre"},
				Run: compare.SideRun{Started: started, DurationMS: 1500}, Deployments: []*result.Deployment{dep}},
			Pairs: []*compare.Pair{
				{Class: compare.Fixed, Candidate: &compare.Outcome{Status: result.Passed, Agent: "restaurant", Env: "pre-release"}},
				{Class: compare.Unchanged, Candidate: &compare.Outcome{Status: result.Flaky, Agent: "restaurant", Env: "pre-release"}},
				{Class: compare.OnlyBaseline},
			}}
	}
	ev := FromComparison("c.json", comparison())
	// Its age counts from the candidate's start, as a run's report's does.
	if !ev.Passed || ev.Why != "" || ev.What != "comparison" || ev.Target.Name != "pre" || len(ev.Deployments) != 1 ||
		!ev.Started.Equal(started) || !ev.Concluded.Equal(started.Add(1500*time.Millisecond)) || ev.Candidate != nil || ev.Rerun != nil {
		t.Errorf("evidence %+v", ev)
	}
	if got, want := ev.Tested(), "compared 3 scenarios: 1 fixed, 1 unchanged, 1 only on the baseline; the candidate's 2 cases: 1 passed, 1 flaky"; got != want {
		t.Errorf("tested %q, want %q", got, want)
	}

	if ev.Derived != result.RunPassed || ev.Unrecorded != nil {
		t.Errorf("derived %q unrecorded %q of a consistent comparison", ev.Derived, ev.Unrecorded)
	}
	// What gates: the pairs compared on both sides, under no quarantine.
	if ev.Gating != 2 || ev.GatingOf[Key{"restaurant", "pre-release"}] != 2 {
		t.Errorf("gating %d (%v), want the fixed and the unchanged pair", ev.Gating, ev.GatingOf)
	}
	c := comparison()
	for _, p := range c.Pairs {
		p.Quarantined = true
	}
	c.Pairs = append(c.Pairs, &compare.Pair{Class: compare.OnlyCandidate, Candidate: &compare.Outcome{Status: result.Passed, Agent: "restaurant", Env: "pre-release"}},
		&compare.Pair{Class: compare.NotCompared, Candidate: &compare.Outcome{Status: result.Errored, Agent: "restaurant", Env: "pre-release"}})
	if ev := FromComparison("c.json", c); ev.Gating != 0 || ev.Quarantined != 2 {
		t.Errorf("gating %d quarantined %d, want 0 and 2: only quarantined pairs were compared", ev.Gating, ev.Quarantined)
	}
	// A comparison edited to say passed over a regression, or to drop
	// the deployment of an agent its candidate ran.
	c = comparison()
	c.Pairs = append(c.Pairs, &compare.Pair{Class: compare.Regressed, Candidate: &compare.Outcome{Status: result.Failed, Agent: "clinic", Env: "pre-release"}})
	if ev := FromComparison("c.json", c); ev.Derived != result.RunFailed || ev.DerivedWhy != "1 scenario regressed" ||
		!slices.Equal(ev.Unrecorded, []string{"clinic in pre-release"}) {
		t.Errorf("derived %q (%s) unrecorded %q", ev.Derived, ev.DerivedWhy, ev.Unrecorded)
	}

	// A passing case is a case that ran there too; a skipped one ran
	// nowhere.
	c = comparison()
	c.Pairs = append(c.Pairs, &compare.Pair{Class: compare.OnlyCandidate, Candidate: &compare.Outcome{Status: result.Passed, Agent: "billing", Env: "pre-release"}},
		&compare.Pair{Class: compare.OnlyCandidate, Candidate: &compare.Outcome{Status: result.Skipped, Agent: "clinic", Env: "pre-release"}})
	if ev := FromComparison("c.json", c); !slices.Equal(ev.Unrecorded, []string{"billing in pre-release"}) {
		t.Errorf("unrecorded %q, want the agent of the passing case alone", ev.Unrecorded)
	}
	// A candidate case edited to name no environment escapes nothing.
	c = comparison()
	c.Pairs[0].Candidate.Env = ""
	if ev := FromComparison("c.json", c); !slices.Equal(ev.Unrecorded, []string{"restaurant in no environment"}) {
		t.Errorf("unrecorded %q, want the case without an environment", ev.Unrecorded)
	}

	// A scenario only on the candidate that failed or errored there has
	// no baseline to call it a known failure: the gate names it. One
	// that passed, one under quarantine, and a regression (which fails
	// the comparison itself) are not such.
	c = comparison()
	out := func(st result.Status) *compare.Outcome {
		return &compare.Outcome{Status: st, Agent: "restaurant", Env: "pre-release"}
	}
	c.Pairs = append(c.Pairs,
		&compare.Pair{Class: compare.OnlyCandidate, Name: "new", Pos: diag.Pos{File: "s.yaml", Line: 4, Col: 5}, Candidate: out(result.Failed)},
		&compare.Pair{Class: compare.OnlyCandidate, Name: "new, errored", Pos: diag.Pos{File: "s.yaml", Line: 9, Col: 5}, Candidate: out(result.Errored)},
		&compare.Pair{Class: compare.OnlyCandidate, Name: "new, passing", Candidate: out(result.Passed)},
		&compare.Pair{Class: compare.OnlyCandidate, Name: "new, quarantined", Quarantined: true, Candidate: out(result.Failed)},
		&compare.Pair{Class: compare.Regressed, Name: "regressed", Candidate: out(result.Failed)})
	if ev := FromComparison("c.json", c); !slices.Equal(ev.Unbased, []string{"s.yaml:4:5 new", "s.yaml:9:5 new, errored"}) {
		t.Errorf("unbased %q", ev.Unbased)
	}

	// The candidate's flaky cases are named, as a run's are; one under
	// quarantine gates nothing, and is not.
	c = comparison()
	c.Pairs[1].Name, c.Pairs[1].Pos = "varies", diag.Pos{File: "s.yaml", Line: 12, Col: 5}
	c.Pairs = append(c.Pairs, &compare.Pair{Class: compare.Unchanged, Name: "quarantined", Quarantined: true, Candidate: out(result.Flaky)})
	if ev := FromComparison("c.json", c); !slices.Equal(ev.Flaky, []Named{{Key{"restaurant", "pre-release"}, "s.yaml:12:5 varies"}}) {
		t.Errorf("flaky %q", ev.Flaky)
	}

	// A pair compared whose candidate's case checked nothing is named
	// and does not gate, as a run's case; one quarantined, or not
	// compared, is neither.
	c = comparison()
	c.Pairs[0].Name, c.Pairs[0].Pos, c.Pairs[0].Candidate.Unchecked = "says hello", diag.Pos{File: "s.yaml", Line: 6, Col: 5}, true
	unchecked := func(cl compare.Class, quarantined bool) *compare.Pair {
		o := out(result.Passed)
		o.Unchecked = true
		return &compare.Pair{Class: cl, Name: "not named", Quarantined: quarantined, Candidate: o}
	}
	c.Pairs = append(c.Pairs, unchecked(compare.Unchanged, true), unchecked(compare.OnlyCandidate, false))
	ev = FromComparison("c.json", c)
	if !slices.Equal(ev.Unchecked, []Named{{Key{"restaurant", "pre-release"}, "s.yaml:6:5 says hello"}}) || ev.Gating != 1 || ev.GatingOf[Key{"restaurant", "pre-release"}] != 1 {
		t.Errorf("unchecked %q gating %d (%v), want the fixed pair named and the unchanged one alone gating", ev.Unchecked, ev.Gating, ev.GatingOf)
	}
	c.Pairs[1].Candidate.Unchecked = true
	if got, want := FromComparison("c.json", c).nothingGated(), "every scenario the comparison compared checked nothing on the candidate or is quarantined (2 checked nothing, 1 quarantined)"; !strings.HasPrefix(got, want) {
		t.Errorf("nothing gated: %q, want it to start %q", got, want)
	}

	c = comparison()
	c.Rerun = &result.Rerun{Of: "first.json", Failed: 4}
	c.Candidate.Shard = &result.Shard{Index: 1, Total: 2}
	ev = FromComparison("c.json", c)
	if ev.Rerun != c.Rerun || ev.Candidate == nil || ev.Candidate.Path != "pre.json" || ev.Candidate.Shard != c.Candidate.Shard {
		t.Errorf("rerun %+v candidate %+v", ev.Rerun, ev.Candidate)
	}
	// A side that ran now is no stored report: its rerun is the
	// comparison's own.
	c = comparison()
	c.Candidate.Kind, c.Candidate.Rerun = compare.KindEnvironment, &result.Rerun{Of: "first.json", Failed: 4}
	if ev := FromComparison("c.json", c); ev.Candidate != nil {
		t.Errorf("a running side read as a stored report: %+v", ev.Candidate)
	}
}

// TestTested: the gate's header says what the report tested, by status,
// so that an empty or tiny selection shows.
func TestTested(t *testing.T) {
	for _, tc := range []struct {
		cases map[result.Status]int
		want  string
	}{
		{nil, "tested no case"},
		{map[result.Status]int{result.Passed: 1}, "tested 1 case: 1 passed"},
		{map[result.Status]int{result.Skipped: 45, result.Passed: 2, result.Pending: 1, result.Errored: 1, result.Failed: 3, result.Flaky: 1},
			"tested 53 cases: 2 passed, 1 flaky, 3 failed, 1 errored, 45 skipped, 1 not run"},
	} {
		if got := (Evidence{Cases: tc.cases}).Tested(); got != tc.want {
			t.Errorf("tested %q, want %q", got, tc.want)
		}
	}
	r := &result.Result{Files: []*result.File{{Cases: []*result.Case{{Status: result.Passed}, {Status: result.Skipped}, nil}}}}
	if got, want := FromRun("r.json", r, result.RunPassed).Tested(), "tested 2 cases: 1 passed, 1 skipped"; got != want {
		t.Errorf("tested %q, want %q", got, want)
	}
	// Cases a stop left unrun (--fail-fast) are said as the run's
	// summary says them, not as skipped: before, "2 skipped".
	r = &result.Result{Files: []*result.File{{Cases: []*result.Case{{Status: result.Failed}, {Status: result.Skipped, SkipReason: "not wanted"},
		{Status: result.Skipped, SkipReason: result.ReasonFailFast}, {Status: result.Skipped, SkipReason: result.ReasonCredentials}}}}}
	if got, want := FromRun("r.json", r, result.RunFailed).Tested(), "tested 4 cases: 1 failed, 1 skipped, 2 not run (the run stopped)"; got != want {
		t.Errorf("tested %q, want %q", got, want)
	}
}

// TestCheckNoFlaky: --no-flaky refuses a case that passed only on a
// retry, of the agents promoted alone; without it the gate passes.
func TestCheckNoFlaky(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	dep := func(agent string) *result.Deployment {
		return &result.Deployment{Agent: agent, Env: "sandbox", ID: "dep-" + agent, After: "dep-" + agent}
	}
	ev := Evidence{Path: "r.json", What: "run", Status: "passed", Passed: true, Started: now.Add(-time.Hour), Concluded: now.Add(-time.Hour),
		Deployments: []*result.Deployment{dep("restaurant"), dep("clinic")}, Gating: 2,
		GatingOf: map[Key]int{{"restaurant", "sandbox"}: 1, {"clinic", "sandbox"}: 1},
		Flaky:    []Named{{Key{"clinic", "sandbox"}, "s.yaml:4:5 renews (passed on attempt 2 of 2 after a failed check)"}}}
	active := map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-restaurant"}, {"clinic", "sandbox"}: {ID: "dep-clinic"}}
	const refused = "1 case passed only on a retry (--no-flaky): s.yaml:4:5 renews (passed on attempt 2 of 2 after a failed check); run the tests again, or gate without --no-flaky"
	for _, tc := range []struct {
		noFlaky bool
		agents  []string
		want    []string
	}{
		{noFlaky: false},
		{noFlaky: true, want: []string{refused}},
		{noFlaky: true, agents: []string{"clinic"}, want: []string{refused}},
		{noFlaky: true, agents: []string{"restaurant"}},
	} {
		d := Check(ev, Options{Now: now, MaxAge: 24 * time.Hour, Target: result.Target{Env: "sandbox"}, Agents: tc.agents, NoFlaky: tc.noFlaky}, active)
		if !slices.Equal(d.Reasons, tc.want) {
			t.Errorf("--no-flaky %v --agent %q: reasons %q, want %q", tc.noFlaky, tc.agents, d.Reasons, tc.want)
		}
	}
}

// TestCheckUnchecked: an agent promoted whose cases that ran all checked
// nothing is refused as such, in the environment the gate weighs (any,
// when it names none); a case of another agent, or of another
// environment, that checked nothing does not make its cases such.
func TestCheckUnchecked(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	deps := []*result.Deployment{
		{Agent: "restaurant", Env: "sandbox", ID: "dep-r", After: "dep-r"},
		{Agent: "clinic", Env: "sandbox", ID: "dep-c", After: "dep-c"},
	}
	active := map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-r"}, {"clinic", "sandbox"}: {ID: "dep-c"}}
	const (
		unchecked   = "restaurant: every case of it the report tested checked nothing or is quarantined"
		quarantined = "restaurant: every case of it the report tested in sandbox is quarantined"
	)
	for _, tc := range []struct {
		name string
		env  string
		of   Key
		want string
	}{
		{name: "its own, no environment stated", of: Key{"restaurant", "sandbox"}, want: unchecked},
		{name: "its own, in sandbox", env: "sandbox", of: Key{"restaurant", "sandbox"}, want: "restaurant: every case of it the report tested in sandbox checked nothing"},
		{name: "of another environment", env: "sandbox", of: Key{"restaurant", "live"}, want: quarantined},
		{name: "of another agent", env: "sandbox", of: Key{"clinic", "sandbox"}, want: quarantined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Evidence{Path: "r.json", What: "run", Status: "passed", Passed: true, Started: now.Add(-time.Hour), Concluded: now.Add(-time.Hour),
				Deployments: deps, Gating: 1, GatingOf: map[Key]int{{"clinic", "sandbox"}: 1},
				Unchecked: []Named{{tc.of, "s.yaml:4:5 says hello"}}}
			d := Check(ev, Options{Now: now, MaxAge: 24 * time.Hour, Target: result.Target{Env: tc.env}, Agents: []string{"restaurant"}}, active)
			if len(d.Reasons) != 1 || !strings.HasPrefix(d.Reasons[0], tc.want) {
				t.Errorf("reasons %q, want one starting %q", d.Reasons, tc.want)
			}
		})
	}
}

// TestFromRunNamesInconclusive: a run failed by inconclusive statistical
// cases alone says so, naming them; a real failure beside them (a check
// of the agent, or of the run), or a run edited to say failed over cases
// that passed, says a check failed. A quarantined failure fails nothing.
func TestFromRunNamesInconclusive(t *testing.T) {
	inconclusive := func(name string) *result.Case {
		return &result.Case{Name: name, Pos: diag.Pos{File: "s.yaml", Line: 4, Col: 5}, Status: result.Failed, Agent: "a", Env: "sandbox",
			Repeat: &result.Repeat{Procedure: result.ProcedureSPRT, Decision: result.DecisionInconclusive}}
	}
	failedCheck := &result.Case{Name: "alerts", Status: result.Failed, Attempts: []*result.Attempt{{Status: result.Failed}}}
	for _, tc := range []struct {
		name   string
		cases  []*result.Case
		checks []*result.Case
		status result.RunStatus
		want   string
	}{
		{name: "one", cases: []*result.Case{inconclusive("hours"), {Status: result.Passed}}, want: "1 statistical case was inconclusive (s.yaml:4:5 hours): its runs showed neither"},
		{name: "two", cases: []*result.Case{inconclusive("hours"), inconclusive("menu")}, want: "2 statistical cases were inconclusive (s.yaml:4:5 hours; s.yaml:4:5 menu): their runs showed neither"},
		{name: "a quarantined failure beside", cases: []*result.Case{
			inconclusive("hours"), {Status: result.Failed, Quarantine: &result.Quarantine{Reason: "r", Until: "2099-12-31"}}}, want: "1 statistical case was inconclusive"},
		{name: "a failure beside", cases: []*result.Case{inconclusive("hours"), {Status: result.Failed}}, want: "a check failed"},
		{name: "a run-level check beside", cases: []*result.Case{inconclusive("hours")}, checks: []*result.Case{failedCheck}, want: "a check failed"},
		{name: "edited to failed", cases: []*result.Case{{Status: result.Passed}}, status: result.RunFailed, want: "a check failed"},
	} {
		r := &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: tc.cases}}, Checks: tc.checks}
		ev := FromRun("r.json", r, cmp.Or(tc.status, r.RunStatus()))
		if !strings.HasPrefix(ev.Why, tc.want) {
			t.Errorf("%s: why %q, want it to start %q", tc.name, ev.Why, tc.want)
		}
	}
}

// TestCheckSuite: with a Suite, a report is held to each scenario of it
// of the agents promoted that a run would run, matched by file (Same)
// and name; what it did not run is named, ten at most.
func TestCheckSuite(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	dep := &result.Deployment{Agent: "restaurant", Env: "sandbox", ID: "dep-1", After: "dep-1"}
	sc := func(file string, line int, name, agent string) Scenario {
		return Scenario{Pos: diag.Pos{File: file, Line: line, Col: 5}, Name: name, Agent: agent}
	}
	held := func(file, name string, st result.Status) Ref { return Ref{File: file, Name: name, Status: st} }
	many := func(n int) []Scenario {
		var out []Scenario
		for i := range n {
			out = append(out, sc("s/m.yaml", i+1, "case "+string(rune('a'+i)), "restaurant"))
		}
		return out
	}
	type testCase struct {
		name      string
		what      string
		held      []Ref
		scenarios []Scenario
		same      func(string) string
		agents    []string
		// lines are the header's lines; want the reason, "" when none.
		lines []string
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		ev := Evidence{Path: "r.json", What: cmp.Or(tc.what, "run"), Status: "passed", Passed: true, Started: now.Add(-time.Minute), Concluded: now,
			Deployments: []*result.Deployment{dep}, Gating: 1, GatingOf: map[Key]int{{"restaurant", "sandbox"}: 1}, Held: tc.held}
		o := Options{Now: now, MaxAge: time.Hour, Agents: tc.agents, Suite: &Suite{Paths: []string{"s"}, Scenarios: tc.scenarios, Same: tc.same}}
		d := Check(ev, o, map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}})
		if !slices.Equal(d.Suite, tc.lines) {
			t.Errorf("lines\n%q, want\n%q", d.Suite, tc.lines)
		}
		switch {
		case tc.want == "" && !d.Passed():
			t.Errorf("refused: %q", d.Reasons)
		case tc.want != "" && (len(d.Reasons) != 1 || d.Reasons[0] != tc.want):
			t.Errorf("reasons\n%q, want\n%q", d.Reasons, tc.want)
		}
	}
	const why = "; a run of other paths, of an older checkout, or of a suite that has gained scenarios since vouches for none of them: run the tests of the suite as it is now, and gate that report"
	for _, tc := range []testCase{
		{name: "every scenario ran, a line moved", held: []Ref{held("s/a.yaml", "greets", result.Passed), held("s/a.yaml", "books", result.Failed)},
			scenarios: []Scenario{sc("s/a.yaml", 9, "greets", "restaurant"), sc("s/a.yaml", 12, "books", "restaurant")},
			lines:     []string{"--suite s: the report ran 2 of its 2 scenarios"}},
		{name: "one missing, one another agent's", held: []Ref{held("s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), sc("s/a.yaml", 8, "books", "restaurant"), sc("s/c.yaml", 4, "opens", "clinic")},
			agents:    []string{"restaurant"},
			lines:     []string{"--suite s: the report ran 1 of its 2 scenarios of restaurant", "not run by the report:", "  s/a.yaml:8:5 books"},
			want:      "the report did not run 1 of the 2 scenarios of restaurant that --suite s selects: s/a.yaml:8:5 books" + why},
		{name: "every agent without --agent", held: []Ref{held("s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), sc("s/c.yaml", 4, "opens", "clinic")},
			lines:     []string{"--suite s: the report ran 1 of its 2 scenarios", "not run by the report:", "  s/c.yaml:4:5 opens"},
			want:      "the report did not run 1 of the 2 scenarios that --suite s selects: s/c.yaml:4:5 opens" + why},
		{name: "no agent named: asked for whatever is promoted", held: []Ref{held("s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), sc("s/b.yaml", 4, "waves", "")},
			agents:    []string{"restaurant"},
			lines:     []string{"--suite s: the report ran 1 of its 2 scenarios of restaurant", "not run by the report:", "  s/b.yaml:4:5 waves"},
			want:      "the report did not run 1 of the 2 scenarios of restaurant that --suite s selects: s/b.yaml:4:5 waves" + why},
		{name: "skipped in the suite: not asked for", held: []Ref{held("s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), {Pos: diag.Pos{File: "s/a.yaml", Line: 8, Col: 5}, Name: "menu", Agent: "restaurant", Skipped: true}},
			lines:     []string{"--suite s: the report ran 1 of its 1 scenario"}},
		{name: "held, not run", held: []Ref{held("s/a.yaml", "greets", result.Skipped), held("s/a.yaml", "books", result.Pending)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), sc("s/a.yaml", 8, "books", "restaurant")},
			lines:     []string{"--suite s: the report ran 0 of its 2 scenarios", "not run by the report:", "  s/a.yaml:4:5 greets (skipped in the report)", "  s/a.yaml:8:5 books (not run in the report)"},
			want:      "the report did not run 2 of the 2 scenarios that --suite s selects: s/a.yaml:4:5 greets (skipped in the report); s/a.yaml:8:5 books (not run in the report)" + why},
		{name: "held twice, run once", held: []Ref{held("s/a.yaml", "greets", result.Passed), held("./s/a.yaml", "greets", result.Skipped)},
			same:      func(f string) string { return strings.TrimPrefix(f, "./") },
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant")},
			lines:     []string{"--suite s: the report ran 1 of its 1 scenario"}},
		{name: "spelt otherwise, Same matches", held: []Ref{held("./s/a.yaml", "greets", result.Passed)},
			same:      func(f string) string { return strings.TrimPrefix(f, "./") },
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant")},
			lines:     []string{"--suite s: the report ran 1 of its 1 scenario"}},
		{name: "spelt otherwise, no Same", held: []Ref{held("./s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant")},
			lines:     []string{"--suite s: the report ran 0 of its 1 scenario", "not run by the report:", "  s/a.yaml:4:5 greets", "1 case of the report of no scenario --suite s selects (renamed or removed since, of other paths, or outside the gate's --tags and --name): not weighed"},
			want:      "the report did not run 1 of the 1 scenario that --suite s selects: s/a.yaml:4:5 greets" + why},
		{name: "renamed: missing, and the old name held", held: []Ref{held("s/a.yaml", "greets", result.Passed), held("s/a.yaml", "books", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), sc("s/a.yaml", 8, "books a table", "restaurant")},
			lines:     []string{"--suite s: the report ran 1 of its 2 scenarios", "not run by the report:", "  s/a.yaml:8:5 books a table", "1 case of the report of no scenario --suite s selects (renamed or removed since, of other paths, or outside the gate's --tags and --name): not weighed"},
			want:      "the report did not run 1 of the 2 scenarios that --suite s selects: s/a.yaml:8:5 books a table" + why},
		{name: "a comparison's candidate", what: "comparison", held: []Ref{held("s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/a.yaml", 4, "greets", "restaurant"), sc("s/a.yaml", 8, "books", "restaurant")},
			lines:     []string{"--suite s: the report ran 1 of its 2 scenarios", "not run by the report:", "  s/a.yaml:8:5 books"},
			want:      "the comparison's candidate did not run 1 of the 2 scenarios that --suite s selects: s/a.yaml:8:5 books" + why},
		{name: "ten named, then how many more", scenarios: many(12),
			lines: append(append([]string{"--suite s: the report ran 0 of its 12 scenarios", "not run by the report:"}, func() []string {
				var out []string
				for _, s := range many(10) {
					out = append(out, "  "+s.Pos.String()+" "+s.Name)
				}
				return out
			}()...), "  and 2 more"),
			want: "the report did not run 12 of the 12 scenarios that --suite s selects: s/m.yaml:1:5 case a; s/m.yaml:2:5 case b; s/m.yaml:3:5 case c; s/m.yaml:4:5 case d; s/m.yaml:5:5 case e; s/m.yaml:6:5 case f; s/m.yaml:7:5 case g; s/m.yaml:8:5 case h; s/m.yaml:9:5 case i; s/m.yaml:10:5 case j; and 2 more" + why},
		{name: "exactly ten", scenarios: many(11), held: []Ref{held("s/m.yaml", "case a", result.Passed)},
			lines: append([]string{"--suite s: the report ran 1 of its 11 scenarios", "not run by the report:"}, func() []string {
				var out []string
				for _, s := range many(11)[1:] {
					out = append(out, "  "+s.Pos.String()+" "+s.Name)
				}
				return out
			}()...),
			want: "the report did not run 10 of the 11 scenarios that --suite s selects: s/m.yaml:2:5 case b; s/m.yaml:3:5 case c; s/m.yaml:4:5 case d; s/m.yaml:5:5 case e; s/m.yaml:6:5 case f; s/m.yaml:7:5 case g; s/m.yaml:8:5 case h; s/m.yaml:9:5 case i; s/m.yaml:10:5 case j; s/m.yaml:11:5 case k" + why},
		{name: "nothing of the agents promoted", held: []Ref{held("s/a.yaml", "greets", result.Passed)},
			scenarios: []Scenario{sc("s/c.yaml", 4, "opens", "clinic")}, agents: []string{"restaurant"},
			lines: []string{"--suite s: no scenario of restaurant that a run would run"},
			want:  "--suite s selects no scenario of restaurant that a run would run (with the gate's --tags and --name; skipped ones are not run): nothing holds the report to the suite; check --suite, --agent, --tags and --name"},
		{name: "an empty suite", lines: []string{"--suite s: no scenario that a run would run"},
			want: "--suite s selects no scenario that a run would run (with the gate's --tags and --name; skipped ones are not run): nothing holds the report to the suite; check --suite, --agent, --tags and --name"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestGiven(t *testing.T) {
	for _, tc := range []struct {
		ev   Evidence
		want string
	}{
		{Evidence{What: "run"}, ""},
		{Evidence{What: "run", Paths: []string{"suites/a.yaml", "features"}}, "paths the run was given: suites/a.yaml features"},
		{Evidence{What: "comparison", Paths: []string{"suites"}}, "paths the candidate's run was given: suites"},
	} {
		if got := tc.ev.Given(); got != tc.want {
			t.Errorf("Given() = %q, want %q", got, tc.want)
		}
	}
}

// TestHeld: the cases the gate holds to --suite, by file and name: of a
// run, every case (a case that names no file is its file's); of a
// comparison, the candidate's. Both bring the paths their run was given.
func TestHeld(t *testing.T) {
	r := &result.Result{Paths: []string{"s"}, Files: []*result.File{{Path: "s/a.yaml", Cases: []*result.Case{
		{Name: "greets", Pos: diag.Pos{File: "s/a.yaml", Line: 4, Col: 5}, Status: result.Passed},
		nil,
		{Name: "books", Status: result.Skipped},
	}}}}
	ev := FromRun("r.json", r, r.RunStatus())
	if want := []Ref{{"s/a.yaml", "greets", result.Passed}, {"s/a.yaml", "books", result.Skipped}}; !slices.Equal(ev.Held, want) || !slices.Equal(ev.Paths, []string{"s"}) {
		t.Errorf("run: held %v paths %q, want %v", ev.Held, ev.Paths, want)
	}
	c := &compare.Comparison{Status: result.RunPassed, Candidate: compare.Side{Paths: []string{"s/a.yaml"}}, Pairs: []*compare.Pair{
		{File: "s/a.yaml", Name: "greets", Class: compare.Unchanged, Baseline: &compare.Outcome{Status: result.Passed}, Candidate: &compare.Outcome{Status: result.Passed}},
		{File: "s/a.yaml", Name: "books", Class: compare.OnlyBaseline, Baseline: &compare.Outcome{Status: result.Passed}},
		nil,
	}}
	ev = FromComparison("c.json", c)
	if want := []Ref{{"s/a.yaml", "greets", result.Passed}}; !slices.Equal(ev.Held, want) || !slices.Equal(ev.Paths, []string{"s/a.yaml"}) {
		t.Errorf("comparison: held %v paths %q, want %v", ev.Held, ev.Paths, want)
	}
}
