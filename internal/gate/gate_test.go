package gate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/result"
)

func TestCheck(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	target := result.Target{Name: "sandbox", BuildURL: "https://build.us.example.com", AccountID: "ws-a1b2c3d4", Env: "sandbox"}
	verified := func(agent, id string) *result.Deployment {
		return &result.Deployment{Agent: agent, Env: "sandbox", ID: id, After: id}
	}
	green := func() Evidence {
		return Evidence{Path: "r.json", What: "run", Status: "passed", Passed: true, Concluded: now.Add(-time.Hour), Target: target,
			Deployments: []*result.Deployment{verified("restaurant", "dep-1"), verified("clinic", "dep-2")}}
	}
	activeNow := map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-2"}}
	type testCase struct {
		name   string
		edit   func(ev *Evidence)
		active map[Key]Active
		// gate edits the gate's target.
		gate func(t *result.Target)
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
		d := Check(ev, Options{Now: now, MaxAge: 24 * time.Hour, Target: gt}, active)
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
		if len(d.Checked) != len(ev.Deployments) {
			t.Errorf("checked %q, want a line per deployment", d.Checked)
		}
	}
	for _, tc := range []testCase{
		{name: "green and current"},
		{name: "failed", edit: func(ev *Evidence) { ev.Passed, ev.Status, ev.Why = false, "failed", "a check failed" },
			want: []string{"the run did not pass: its status is failed: a check failed"}},
		{name: "stale", edit: func(ev *Evidence) { ev.Concluded = now.Add(-25*time.Hour - 20*time.Second) },
			want: []string{"the report is 25h0m0s old (its run ended 2026-03-01T10:59:40Z), older than --max-age 24h0m0s"}},
		{name: "undated", edit: func(ev *Evidence) { ev.Concluded = time.Time{} }, want: []string{"does not say when its run ended"}},
		{name: "no deployments", edit: func(ev *Evidence) { ev.Deployments = nil }, want: []string{"the report records no deployment"}},
		{name: "replaced", active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-9"}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want: []string{"restaurant in sandbox: the report tested deployment dep-1, but dep-9 is active now"}},
		{name: "changed during the run", edit: func(ev *Evidence) { ev.Deployments[1].After = "dep-3" },
			want: []string{"deployment of clinic changed during the run: dep-2 → dep-3"}},
		{name: "no evidence", edit: func(ev *Evidence) {
			ev.Deployments[0] = &result.Deployment{Agent: "restaurant", Env: "sandbox", Note: "not served"}
		},
			want: []string{"restaurant in sandbox: the report holds no deployment evidence (not served)"}},
		{name: "not confirmed after", edit: func(ev *Evidence) { ev.Deployments[0].After, ev.Deployments[0].Note = "", "the run stopped" },
			want: []string{"deployment dep-1 was not confirmed after the run's last case (the run stopped)"}},
		{name: "not served now", active: map[Key]Active{{"restaurant", "sandbox"}: {NotServed: true, Err: errors.New("404")}, {"clinic", "sandbox"}: {ID: "dep-2"}},
			want: []string{"does not serve"}},
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
			want: []string{"the report reruns the failed and errored cases of first.json (2): it tested those again, not the whole selection"}},
		{name: "one agent in another environment", edit: func(ev *Evidence) { ev.Deployments[1].Env = "live" },
			active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "live"}: {ID: "dep-2"}},
			want:   []string{`clinic: the report tested live, not sandbox, the environment of the gate's target "sandbox"`}},
		// A report that tested live as well vouches for sandbox, its
		// live deployment checked like any other.
		{name: "another environment besides the target's", edit: func(ev *Evidence) {
			ev.Deployments = append(ev.Deployments, &result.Deployment{Agent: "clinic", Env: "live", ID: "dep-7", After: "dep-7"})
		}, active: map[Key]Active{{"restaurant", "sandbox"}: {ID: "dep-1"}, {"clinic", "sandbox"}: {ID: "dep-2"}, {"clinic", "live"}: {ID: "dep-7"}}},
		{name: "the simulator vouches for no platform", edit: func(ev *Evidence) { ev.Target = result.Target{Name: "sim", Embedded: true} },
			want: []string{"the report tested the embedded simulator, the gate's target is a configured platform"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
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
	if n := Needed(ev); len(n) != 0 {
		t.Errorf("needed %v: a changed deployment needs no read", n)
	}
}
