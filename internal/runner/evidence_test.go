package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// active reads what the simulator serves now.
func active(t *testing.T, s *simtest.Sim, agent, env string) sim.Deployment {
	t.Helper()
	d, err := s.Server.ActiveDeployment(agent, env)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// inLive is a booking scenario run in the live environment.
func inLive(name string, line int) *scenario.Scenario {
	sc := booking(name, line)
	sc.Env = "live"
	return sc
}

// TestDeploymentEvidence: the run reads the deployment of each agent and
// environment before its first case and after its last, tells the
// observer before any case starts, and passes when nothing changed.
func TestDeploymentEvidence(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	rec := newRecorder()
	opts := e.opts()
	opts.Observer, opts.Deployments = rec, e.client
	suites := []*scenario.Suite{suite(file, booking("books a table", 10), inLive("books in live", 20), booking("books again", 30))}
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if got := res.RunStatus(); got != result.RunPassed {
		t.Fatalf("run %s, want passed\n%v", got, statuses(res))
	}
	sandbox, live := active(t, e.sim, e.restaurant, "sandbox"), active(t, e.sim, e.restaurant, "live")
	want := []result.Deployment{
		{Agent: e.restaurant, Env: "sandbox", ID: sandbox.ID, Version: sandbox.Version, After: sandbox.ID, AfterVersion: sandbox.Version},
		{Agent: e.restaurant, Env: "live", ID: live.ID, Version: live.Version, After: live.ID, AfterVersion: live.Version},
	}
	if len(res.Deployments) != len(want) {
		t.Fatalf("deployments %+v, want %d", res.Deployments, len(want))
	}
	for i, d := range res.Deployments {
		got := *d
		if got.ReadAt.IsZero() || got.AfterReadAt.IsZero() {
			t.Errorf("deployment %d read at %v and %v", i, got.ReadAt, got.AfterReadAt)
		}
		got.ReadAt, got.AfterReadAt = want[i].ReadAt, want[i].AfterReadAt
		if got != want[i] || !d.Verified() {
			t.Errorf("deployment %d = %+v, want %+v", i, got, want[i])
		}
	}
	if len(rec.deployments) != 1 || len(rec.deployments[0]) != 2 || rec.deployments[0][0].ID != sandbox.ID {
		t.Errorf("DeploymentsRead got %v", rec.deployments)
	}
}

// TestDeploymentChangedMidRun: a publish to sandbox between the first and
// the last case (a designer's merge) errors the run, whatever its cases
// say, with both ids; live, untouched, stays verified.
func TestDeploymentChangedMidRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	before := active(t, e.sim, e.restaurant, "sandbox")
	rec := newRecorder()
	var published atomic.Pointer[sim.Deployment]
	rec.onFinish = func(n int) {
		if n == 1 {
			d, err := e.sim.Server.Publish(e.restaurant, "")
			if err != nil {
				t.Error(err)
			}
			published.Store(&d)
		}
	}
	opts := e.opts()
	opts.Parallel, opts.Observer, opts.Deployments = 1, rec, e.client
	suites := []*scenario.Suite{suite(file, booking("books a table", 10), inLive("books in live", 20), booking("books again", 30))}
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	after := published.Load()
	if after == nil || after.ID == before.ID {
		t.Fatalf("publish %v did not change %s", after, before.ID)
	}
	changes := res.DeploymentChanges()
	if len(changes) != 1 || changes[0].ID != before.ID || changes[0].After != after.ID || changes[0].Env != "sandbox" {
		t.Fatalf("changes %+v, want sandbox %s → %s", changes, before.ID, after.ID)
	}
	if want := "deployment of " + e.restaurant + " changed during the run: " + before.ID + " → " + after.ID; changes[0].ChangeMessage() != want {
		t.Errorf("message %q, want %q", changes[0].ChangeMessage(), want)
	}
	if live := res.DeploymentOf(e.restaurant, "live"); live == nil || !live.Verified() {
		t.Errorf("live %+v, want verified", live)
	}
	if got := res.RunStatus(); got != result.RunErrored {
		t.Errorf("run %s, want errored (every case %v)", got, statuses(res))
	}
}

// deploymentsAnswer serves the simulator's build host but answers
// deployments/active itself with status and body.
func deploymentsAnswer(t *testing.T, s *simtest.Sim, status int, body string, reads *atomic.Int64) string {
	t.Helper()
	h := s.Server.BuildHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/deployments/active") {
			reads.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDeploymentReadFailures: a platform without the endpoint (404) runs
// without evidence and says why; a refused key stops the run before any
// case, as any refused call does.
func TestDeploymentReadFailures(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		status int
		body   string
		// want is the run status and note the evidence's note; stop the
		// kind of stop, if any.
		want result.RunStatus
		note string
		stop string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		s := simtest.Start(t, sim.Options{Seed: 1})
		var reads atomic.Int64
		url := deploymentsAnswer(t, s, tc.status, tc.body, &reads)
		c, err := platform.New(platform.Config{BuildURL: url, BuildKey: s.BuildKey, Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		opts := Options{Channel: DebugChat(c), Deployments: c, Parallel: 2, DefaultAgent: "restaurant", Observer: rec, RetryDelay: -1}
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books a table", 10), inLive("books in live", 20))}, opts)
		if err != nil {
			t.Fatal(err)
		}
		rec.check(t, res)
		if got := res.RunStatus(); got != tc.want {
			t.Errorf("run %s, want %s: %v", got, tc.want, statuses(res))
		}
		if len(res.Deployments) != 2 {
			t.Fatalf("deployments %+v", res.Deployments)
		}
		for _, d := range res.Deployments {
			if d.ID != "" || !strings.Contains(d.Note, tc.note) {
				t.Errorf("deployment %+v, want no id and a note with %q", d, tc.note)
			}
		}
		// Once per agent and environment at most (the refused reads run
		// at once), never again after a read without evidence.
		if got := reads.Load(); got < 1 || got > 2 {
			t.Errorf("%d reads, want 1 or 2", got)
		}
		switch {
		case tc.stop == "" && res.Stop != nil:
			t.Errorf("stop %+v", res.Stop)
		case tc.stop != "" && (res.Stop == nil || res.Stop.Kind != tc.stop || !strings.Contains(res.Stop.Cause, "read the active deployment")):
			t.Errorf("stop %+v, want %s", res.Stop, tc.stop)
		}
	}
	for _, tc := range []testCase{
		{name: "not served", status: http.StatusNotFound, body: `{"message":"not found"}`, want: result.RunPassed, note: "does not serve"},
		{name: "another environment", status: http.StatusOK, body: `{"id":"dep-1","environment":"pre-release"}`, want: result.RunPassed, note: "answered with its pre-release deployment"},
		{name: "no id", status: http.StatusOK, body: `{"version":"1"}`, want: result.RunPassed, note: "read failed"},
		// Another implementation's forms that name no deployment: the
		// member as the reply spells it, not as the client's Go type
		// does; two ids at once.
		{name: "id an object", status: http.StatusOK, body: `{"id":{"value":"dep-1"}}`, want: result.RunPassed,
			note: `read failed: GET /v1/agents/restaurant/deployments/active: 200: malformed response: field "id": expected a string, got object`},
		{name: "nested id an object", status: http.StatusOK, body: `{"deployment":{"id":["dep-1"]}}`, want: result.RunPassed,
			note: `200: malformed response: deployment: field "id": expected a string, got array`},
		{name: "two ids", status: http.StatusOK, body: `{"id":"dep-1","environment":"sandbox","id":"dep-2"}`, want: result.RunPassed,
			note: `200: malformed response: field "id" is sent twice, with different values`},
		{name: "two environments", status: http.StatusOK, body: `{"data":{"id":"dep-1","env":"sandbox","ENV":"live"}}`, want: result.RunPassed,
			note: `200: malformed response: data: field "env" is sent twice, with different values`},
		{name: "key refused", status: http.StatusUnauthorized, body: `{"message":"bad key"}`, want: result.RunErrored, note: "not read", stop: result.StopCredentials},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestDeploymentNotReadAfterAStop: a run stopped on the platform (its key
// refused at the second case) does not read the deployment again after
// its last case, and says so once: the reports print the note after "not
// confirmed after its last case: ".
func TestDeploymentNotReadAfterAStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
		if kind != "start" || n < 2 {
			return false
		}
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message": "invalid api key"}`)
		return true
	})
	opts := e.opts()
	opts.Parallel, opts.Deployments = 1, e.client
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books a table", 10), booking("books again", 20))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop == nil || res.Stop.Kind != result.StopCredentials {
		t.Fatalf("stop %+v, want refused credentials", res.Stop)
	}
	d := res.DeploymentOf(e.restaurant, "sandbox")
	if d == nil || d.ID == "" || d.After != "" || d.Note != "not read again: the run stopped" {
		t.Errorf("deployment %+v, want read before, and the note %q", d, "not read again: the run stopped")
	}
}

// TestRunReadsNeverAnswered: the run's own reads, the deployment before
// the first case and the firing alerts after the last, are each bounded
// by the turn timeout on the runner's clock: a platform that holds them
// unanswered has them cut when that clock passes the bound, the case in
// between runs, and the gate errors. The bound is an hour, which the
// held reads move the fake clock past: one kept on the real clock would
// not end the run in runHostile's minute.
func TestRunReadsNeverAnswered(t *testing.T) {
	t.Parallel()
	// The deployment's read, held, moves the clock an hour before the
	// SMS opens its conversation.
	rec := record("conv-1", "+447700900002", "SMS", fakeclock.Start.Add(time.Hour), true, false, "")
	h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
		list: func(int) []string { return nil }, get: func(string) *string { return &rec },
		hang: func(r *http.Request, probed bool) bool {
			return r.URL.Path == "/v1/alerts" || r.URL.Path == "/v1/agents/p1/deployments/active" && !probed
		},
		held: time.Hour}
	res := runHostileRun(t, h, `suite: s
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
    confirm: {conversation: {in_progress: true}}
`, func(o *Options) {
		o.TurnTimeout = time.Hour
		o.Deployments, o.Alerts = o.Records.(*platform.Client), o.Records.(*platform.Client)
	})
	if c := res.Files[0].Cases[0]; c.Status != result.Passed {
		t.Errorf("case %s, want passed%s", c.Status, describe(c))
	}
	if len(res.Deployments) != 1 || res.Deployments[0].ID != "" || res.Deployments[0].Note != "read failed: GET /v1/agents/p1/deployments/active: context deadline exceeded (turn timeout of 1h0m0s exceeded)" {
		t.Errorf("deployments %+v, want one not read, cut by the turn timeout", res.Deployments)
	}
	if len(res.Checks) != 1 || res.Checks[0].Status != result.Errored || !strings.HasSuffix(res.Checks[0].Last().Error.Message, "GET /v1/alerts: context deadline exceeded (turn timeout of 1h0m0s exceeded)") {
		t.Fatalf("checks %+v, want the alert gate errored, cut by the turn timeout", res.Checks)
	}
}
