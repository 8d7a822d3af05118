package runner

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// manyBookings is n booking scenarios in one suite.
func manyBookings(n int) []*scenario.Suite {
	var scs []*scenario.Scenario
	for i := range n {
		scs = append(scs, booking("books "+strings.Repeat("x", i), 10+10*i))
	}
	return []*scenario.Suite{suite("suites/a.yaml", scs...)}
}

// countStatuses counts the cases of res per status and skip reason.
func countStatuses(res *result.Result) map[string]int {
	m := map[string]int{}
	for _, f := range res.Files {
		for _, c := range f.Cases {
			m[c.Status.String()]++
			if c.SkipReason != "" {
				m[c.SkipReason]++
			}
		}
	}
	return m
}

// TestStopUnreachable: against a closed port, the first case to fail
// stops the run; the cases in flight are cut off and the rest never
// start. Every case but those that failed is reported not run, with the
// reason, and the result says why once, with the host.
func TestStopUnreachable(t *testing.T) {
	addr := closedPort(t)
	var dials atomic.Int64
	tr := platform.NewTransport(8)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, a)
	}
	c, err := platform.New(platform.Config{BuildURL: "http://" + addr, BuildKey: sim.DefaultBuildKey,
		HTTPClient: &http.Client{Transport: tr}, Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	opts := Options{Channel: DebugChat(c), Parallel: 4, Retries: 2, DefaultAgent: "restaurant", Observer: rec, Sleep: fakeclock.New().Sleep}
	const n = 100
	res, err := Run(context.Background(), manyBookings(n), opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	st := res.Stop
	if st == nil || st.Kind != result.StopUnreachable || st.Host != addr || st.Config || !strings.Contains(st.Cause, "connection refused") {
		t.Fatalf("Stop = %+v, want unreachable %s", st, addr)
	}
	counts := countStatuses(res)
	if counts["errored"] < 1 || counts["errored"] > opts.Parallel || counts["errored"]+counts["skipped"] != n {
		t.Errorf("statuses %v: want at most %d errored, the rest skipped", counts, opts.Parallel)
	}
	if counts[result.ReasonUnreachable] != counts["skipped"] {
		t.Errorf("skipped cases do not all say %q: %v", result.ReasonUnreachable, counts)
	}
	// Each started case tried its session once (5 calls of the client),
	// and no case was retried by the runner.
	if d := dials.Load(); d > int64(opts.Parallel*platform.DefaultMaxAttempts) {
		t.Errorf("%d dials: the stop did not stop the run", d)
	}
	if res.Interrupted || res.RunStatus() != result.RunErrored {
		t.Errorf("interrupted %v, status %s: want errored, not interrupted", res.Interrupted, res.RunStatus())
	}
}

// flakyDial is a channel whose opens fail to connect once a switch is
// set: a platform that worked and then went away.
type flakyDial struct {
	inner Channel
	down  atomic.Bool
}

func (f *flakyDial) Open(ctx context.Context, agent string, req platform.ChatStart) (Conversation, *platform.Exchange, error) {
	if f.down.Load() {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		return nil, nil, &platform.NetworkError{Method: "POST", Path: "/v1/agents/" + agent + "/debug-chat", Host: "build:443", Err: refused}
	}
	return f.inner.Open(ctx, agent, req)
}

// TestNoStopOnceReached: a connection failure after the platform answered
// is a glitch of a working platform: the case errors, the run goes on.
func TestNoStopOnceReached(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1})
	ch := &flakyDial{inner: DebugChat(e.client)}
	opts := e.opts()
	opts.Parallel = 1
	rec := newRecorder()
	opts.Observer = rec
	rec.onFinish = func(n int) {
		switch n {
		case 2:
			ch.down.Store(true)
		case 3:
			ch.down.Store(false)
		}
	}
	opts.Channel = ch
	res, err := Run(context.Background(), manyBookings(5), opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if res.Stop != nil {
		t.Fatalf("Stop = %+v after the platform answered", res.Stop)
	}
	if got := strings.Join(statuses(res), " "); strings.Count(got, "=passed") != 4 || strings.Count(got, "=errored") != 1 {
		t.Errorf("statuses %s: want one errored case among passes", got)
	}
}

// TestStopOnConfiguration: refused credentials and an unknown agent stop
// the run as configuration problems (Stop.Config), naming the credential
// or the agent, whenever they happen.
func TestStopOnConfiguration(t *testing.T) {
	type testCase struct {
		name  string
		setup func(e *env, o *Options)
		want  result.Stop
	}
	run := func(t *testing.T, tc testCase) {
		e := newEnv(t, sim.Options{Seed: 1})
		opts := e.opts()
		opts.Parallel = 1
		rec := newRecorder()
		opts.Observer = rec
		tc.setup(e, &opts)
		res, err := Run(context.Background(), manyBookings(6), opts)
		if err != nil {
			t.Fatal(err)
		}
		rec.check(t, res)
		st := res.Stop
		if st == nil {
			t.Fatalf("no stop; statuses %v", statuses(res))
		}
		if st.Kind != tc.want.Kind || st.Reason != tc.want.Reason || !st.Config || st.Credential != tc.want.Credential || st.Agent != tc.want.Agent || st.Host == "" {
			t.Errorf("Stop = %+v, want %+v", st, tc.want)
		}
		counts := countStatuses(res)
		if counts["skipped"] < 3 || counts[tc.want.Reason] != counts["skipped"] {
			t.Errorf("statuses %v: the run went on after the stop", counts)
		}
	}
	for _, tc := range []testCase{
		{
			name: "401 at the third case",
			setup: func(e *env, _ *Options) {
				e.proxy.onRequest(func(kind string, n int64, _ string, w http.ResponseWriter) bool {
					if kind == "start" && n == 3 {
						w.WriteHeader(http.StatusUnauthorized)
						w.Write([]byte(`{"message": "invalid api key"}`))
						return true
					}
					return false
				})
			},
			want: result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Credential: platform.CredentialBuildKey},
		},
		{
			name:  "unknown agent",
			setup: func(_ *env, o *Options) { o.DefaultAgent = "no-such-agent" },
			want:  result.Stop{Kind: result.StopUnknownAgent, Reason: result.ReasonUnknownAgent, Agent: "no-such-agent"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
