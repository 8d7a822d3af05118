package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

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
	t.Parallel()
	addr := platformtest.ClosedAddr(t)
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

// flakyDial is a channel whose opens fail to connect to host once a
// switch is set: a platform that worked and then went away.
type flakyDial struct {
	inner Channel
	host  string
	down  atomic.Bool
}

func (f *flakyDial) Open(ctx context.Context, agent string, req platform.ChatStart) (Conversation, *platform.Exchange, error) {
	if f.down.Load() {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		return nil, nil, &platform.NetworkError{Method: "POST", Path: "/v1/agents/" + agent + "/debug-chat", Host: f.host, Err: refused}
	}
	return f.inner.Open(ctx, agent, req)
}

// TestNoStopOnceReached: a connection failure of a host that answered is
// a glitch of a working platform: the case errors, the run goes on. A
// host that never answered is another matter, whatever the others did: a
// messaging_url or runtime_url that points nowhere stops the run as soon
// as a case meets it.
func TestNoStopOnceReached(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// other: the failing calls go to a host no call reached.
		other bool
	}{{"same host", false}, {"another host", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Options{Seed: 1})
			u, err := url.Parse(e.proxy.URL)
			if err != nil {
				t.Fatal(err)
			}
			ch := &flakyDial{inner: DebugChat(e.client), host: u.Host}
			if tc.other {
				ch.host = "messaging.example.com:443"
			}
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
			got := strings.Join(statuses(res), " ")
			if tc.other {
				if st := res.Stop; st == nil || st.Kind != result.StopUnreachable || st.Host != ch.host {
					t.Fatalf("Stop = %+v, want unreachable %s", st, ch.host)
				}
				if strings.Count(got, "=passed") != 2 || strings.Count(got, "=errored") != 1 || strings.Count(got, "=skipped") != 2 {
					t.Errorf("statuses %s: want two passes, the errored case, two not run", got)
				}
				return
			}
			if res.Stop != nil {
				t.Fatalf("Stop = %+v after the platform answered", res.Stop)
			}
			if strings.Count(got, "=passed") != 4 || strings.Count(got, "=errored") != 1 {
				t.Errorf("statuses %s: want one errored case among passes", got)
			}
		})
	}
}

// TestNoStopOnceMessagingReached: the Messaging host that answered the
// sessions of the earlier cases was reached, as the build host is
// (TestNoStopOnceReached): a connection failure of it later is a glitch,
// which errors its case, and the run goes on.
func TestNoStopOnceMessagingReached(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Seed: 1})
	opts := e.opts(t)
	u, err := url.Parse(e.sim.MessagingURL)
	if err != nil {
		t.Fatal(err)
	}
	ch := &flakyDial{inner: opts.Messaging, host: u.Host}
	opts.Messaging, opts.Parallel = ch, 1
	rec := newRecorder()
	opts.Observer = rec
	rec.onFinish = func(n int) { ch.down.Store(n == 2) }
	var src strings.Builder
	src.WriteString("suite: s\nagent: clinic\nvia: messaging\nscenarios:\n")
	for i := range 4 {
		fmt.Fprintf(&src, "  - name: asks %d\n    turns:\n      - say: When are you open?\n", i)
	}
	res, err := Run(context.Background(), loadYAML(t, src.String()), opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if res.Stop != nil {
		t.Fatalf("Stop = %+v after the messaging host answered", res.Stop)
	}
	if got := strings.Join(statuses(res), " "); strings.Count(got, "=passed") != 3 || strings.Count(got, "=errored") != 1 {
		t.Errorf("statuses %s: want one errored case among passes", got)
	}
}

// TestStopOnConfiguration: refused credentials and an unknown agent stop
// the run as configuration problems (Stop.Config), naming the credential
// or the agent, whenever they happen.
func TestStopOnConfiguration(t *testing.T) {
	t.Parallel()
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
				e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
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

// TestStopCutsStatisticalRuns: a statistical scenario runs many sessions,
// several at once in the run's idle slots; when the platform refuses the
// key mid-run, no further run starts, the runs in flight are cut off, the
// case that met the refusal is errored and the others are not run.
func TestStopCutsStatisticalRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	const refuseAt = 6
	var after atomic.Int64
	e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
		if kind != "start" || n < refuseAt {
			return false
		}
		if n > refuseAt {
			after.Add(1)
		}
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"message": "invalid api key"}`))
		return true
	})
	opts := e.opts()
	opts.Parallel = 4
	rec := newRecorder()
	opts.Observer = rec
	stats := scenario.Stats{PassRate: 0.9, Confidence: 0.95}
	var scs []*scenario.Scenario
	for i := range 3 {
		sc := seqScenario(stats)
		sc.Name, sc.Pos.Line = sc.Name+strings.Repeat("!", i), 10+10*i
		scs = append(scs, sc)
	}
	res, err := Run(context.Background(), []*scenario.Suite{suite("suites/a.yaml", scs...)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if st := res.Stop; st == nil || st.Kind != result.StopCredentials || !st.Config {
		t.Fatalf("Stop = %+v, want refused credentials", st)
	}
	// The runs that were already on their way when the refusal came
	// (at most one per slot) may still ask; nothing starts after.
	if n := after.Load(); n >= int64(opts.Parallel) {
		t.Errorf("%d sessions asked for after the refusal", n)
	}
	errored := 0
	for _, c := range res.Files[0].Cases {
		switch {
		case c.Status == result.Errored:
			errored++
			if c.Repeat == nil || c.Repeat.Decision != result.DecisionErrored || c.Repeat.Errored == 0 {
				t.Errorf("%s: repeat %+v, want errored by the refusal", c.Name, c.Repeat)
			}
		case c.Status == result.Skipped && c.SkipReason == result.ReasonCredentials:
		case c.Status == result.Skipped && c.SkipReason == result.ReasonStoppedRuns:
			// It made runs before the refusal: it ran, without a verdict.
			if r := c.Repeat; r == nil || r.Decision != result.DecisionInterrupted || r.Runs == 0 || r.Errored > 0 {
				t.Errorf("%s: stopped before a verdict, repeat %+v", c.Name, c.Repeat)
			}
		default:
			t.Errorf("%s: %s (%s), want errored, not run, or stopped before a verdict", c.Name, c.Status, c.SkipReason)
		}
	}
	if errored == 0 {
		t.Errorf("no case met the refusal: %v", statuses(res))
	}
	if got := res.RunStatus(); got != result.RunErrored {
		t.Errorf("run status %s, want errored", got)
	}
}

// TestPlatformStopOfMessaging: of the Messaging API, only the access-token
// step checks a configured credential (the connector token): its 401 is a
// configuration stop that names the agent and env of the connector, and
// is not retried. A 401 of the later steps refuses the token the platform
// just issued, and a 404 of the socket is a session it no longer knows:
// errors of the case that a fresh session may not meet, never an unknown
// agent. A 404 of the access-token or session step, which the reference
// gives neither, says no Messaging API answers there: a configuration stop.
func TestPlatformStopOfMessaging(t *testing.T) {
	t.Parallel()
	api := func(endpoint string, status int, credential string) error {
		return &platform.APIError{Method: "POST", Endpoint: endpoint, Path: endpoint, Host: "msg:443", Status: status, Credential: credential}
	}
	refused := &platform.NetworkError{Method: "POST", Endpoint: "/api/v1/access-token", Path: "/api/v1/access-token", Host: "msg:443",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		name  string
		err   error
		want  *result.Stop
		retry bool
	}{
		{"connector token refused", api("/api/v1/access-token", 401, platform.CredentialConnectorToken),
			&result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Host: "msg:443", Credential: platform.CredentialConnectorToken, Endpoint: "/api/v1/access-token", Agent: "clinic", Env: "live", Config: true}, false},
		{"issued token refused", api("/api/v1/sessions", 401, platform.CredentialAccessToken), nil, true},
		{"session gone at the handshake", api("/ws", 404, platform.CredentialAccessToken), nil, true},
		{"no Messaging API at the access-token step", api("/api/v1/access-token", 404, platform.CredentialConnectorToken),
			&result.Stop{Kind: result.StopNoMessagingAPI, Reason: result.ReasonNoMessagingAPI, Host: "msg:443", Endpoint: "/api/v1/access-token", Config: true}, false},
		{"no Messaging API at the session step", api("/api/v1/sessions", 404, platform.CredentialAccessToken),
			&result.Stop{Kind: result.StopNoMessagingAPI, Reason: result.ReasonNoMessagingAPI, Host: "msg:443", Endpoint: "/api/v1/sessions", Config: true}, false},
		{"messaging host unreachable", refused, &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Host: "msg:443"}, true},
		{"debug chat knows no such agent", api("/v1/agents/{agentId}/debug-chat", 404, platform.CredentialBuildKey),
			&result.Stop{Kind: result.StopUnknownAgent, Reason: result.ReasonUnknownAgent, Host: "msg:443", Agent: "clinic", Config: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := platformStop(tc.err, true, "clinic", "live", "")
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("platformStop = %+v, want %+v", got, tc.want)
			}
			if _, retry := classify(tc.err, true); retry != tc.retry {
				t.Errorf("classify: retry %t, want %t", retry, tc.retry)
			}
		})
	}
}

// TestStopUnreachableMessaging: a messaging_url whose port is closed
// stops the run as an unreachable build host does: the access-token step
// is refused, the first case errors, and the rest are not run, with the
// messaging host named once.
func TestStopUnreachableMessaging(t *testing.T) {
	t.Parallel()
	addr := platformtest.ClosedAddr(t)
	base := platform.Config{BuildURL: "http://" + addr, MessagingURL: "http://" + addr, MessagingHost: "webchat.example.com", AllowHTTP: true,
		Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep}}
	ch := Messaging(MessagingClients(base, func(string, string) (string, error) { return hostileConnector, nil }), MessagingOptions{})
	res, err := Run(context.Background(), loadYAML(t, `suite: s
agent: billing
via: messaging
scenarios:
  - name: first
    turns:
      - say: hi
        expect: {response: {contains: hello}}
  - name: second
    turns:
      - say: hi
        expect: {response: {contains: hello}}
`), Options{Channel: ch, Messaging: ch, Parallel: 1, Retries: 2, Sleep: fakeclock.New().Sleep})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stop
	if st == nil || st.Kind != result.StopUnreachable || st.Host != addr || !strings.Contains(st.Cause, "POST /api/v1/access-token: connection failed") {
		t.Fatalf("Stop = %+v, want unreachable %s", st, addr)
	}
	if counts := countStatuses(res); counts["errored"] != 1 || counts[result.ReasonUnreachable] != 1 {
		t.Errorf("statuses %v: want the first errored, the second not run", counts)
	}
}
