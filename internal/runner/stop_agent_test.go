package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestNoStopOnceAgentOpened: a 404 of debug-chat session creation stops
// the run as an unknown agent (exit 2, a configuration problem) only
// while the platform has opened no session of that agent in the run.
// After it opened some, the 404 is a glitch of a working platform, as a
// connection failure of a host that answered is: the case errors (and is
// retried), said as the platform's error, and the run goes on. It
// stopped the run, every later case not run, and sent the reader to
// check an agent id the platform had just served.
func TestNoStopOnceAgentOpened(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// at is the session creation answered 404 (from 1); agents are
		// those of the five cases.
		at       int64
		agents   []string
		stop     bool
		statuses string
	}{
		{name: "at the first session", at: 1, stop: true},
		{name: "after sessions opened", at: 3, statuses: "passed passed flaky passed passed"},
		// The platform opened sessions of another agent only.
		{name: "of another agent", at: 3, agents: []string{"restaurant", "restaurant", "clinic", "clinic", "clinic"}, stop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Options{Seed: 1})
			e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
				if kind == "start" && n == tc.at {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusNotFound)
					w.Write([]byte(`<html><head><title>404 Not Found</title></head><body>nginx</body></html>`))
					return true
				}
				return false
			})
			opts := e.opts()
			opts.Parallel, opts.Retries = 1, 1
			var src strings.Builder
			src.WriteString("suite: s\nscenarios:\n")
			for i := range 5 {
				agent := opts.DefaultAgent
				if tc.agents != nil {
					agent = tc.agents[i]
				}
				fmt.Fprintf(&src, "  - name: case %d\n    agent: %s\n    turns:\n      - say: hello\n", i, agent)
			}
			res, err := Run(context.Background(), loadYAML(t, src.String()), opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stop {
				if st := res.Stop; st == nil || st.Kind != result.StopUnknownAgent || !st.Config || tc.agents != nil && st.Agent != "clinic" {
					t.Fatalf("Stop = %+v, want an unknown agent; statuses %v", st, statuses(res))
				}
				return
			}
			if res.Stop != nil {
				t.Fatalf("Stop = %+v after the platform opened sessions of the agent", res.Stop)
			}
			var got []string
			for _, c := range res.Files[0].Cases {
				got = append(got, c.Status.String())
			}
			if strings.Join(got, " ") != tc.statuses {
				t.Fatalf("statuses %v, want %s", got, tc.statuses)
			}
			a := res.Files[0].Cases[2].Attempts[0]
			if a.Error == nil || a.Error.Kind != result.KindHTTP || a.Error.Status != http.StatusNotFound ||
				strings.Contains(a.Error.Message, "check the agent id") ||
				!strings.HasSuffix(a.Error.Message, `404: 404 Not Found (the platform opened a session of agent "`+opts.DefaultAgent+`" earlier in the run: its error, not the agent id's)`) {
				t.Errorf("first attempt's error %+v, want the platform's 404, not the agent id's", a.Error)
			}
		})
	}
}

// goneAgent is a debug-chat channel whose opens are answered 404, as for
// an agent the platform does not know.
type goneAgent struct{ Channel }

func (goneAgent) Open(_ context.Context, agent string, _ platform.ChatStart) (Conversation, *platform.Exchange, error) {
	return nil, nil, &platform.APIError{Method: "POST", Path: "/v1/agents/" + agent + "/debug-chat", Host: "build.example.com", Status: http.StatusNotFound}
}

// TestOpenedAgentIsOnlyDebugChats: only a debug-chat session the platform
// opened says the build host knows the agent. Sessions of it over
// Messaging do not (the build host may be another region's: every
// debug-chat case would meet the same 404), and a debug-chat session says
// nothing of the connector token its Messaging cases are refused with.
func TestOpenedAgentIsOnlyDebugChats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// first and then are the channels (via:) of the two cases.
		first, then string
		want        result.Stop
	}{
		{name: "debug chat after messaging", first: "messaging", then: "debug_chat",
			want: result.Stop{Kind: result.StopUnknownAgent, Agent: "clinic"}},
		{name: "messaging after debug chat", first: "debug_chat", then: "messaging",
			want: result.Stop{Kind: result.StopCredentials, Credential: platform.CredentialConnectorToken, Agent: "clinic"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newMsgEnv(t, sim.Options{Seed: 1})
			opts := e.opts(t)
			opts.Parallel = 1
			if tc.then == "debug_chat" {
				opts.Channel = goneAgent{opts.Channel}
			} else {
				tr := platform.NewTransport(8)
				t.Cleanup(tr.CloseIdleConnections)
				refused := func(string, string) (string, error) { return "ct_0000000000000000000000000000000000000000", nil }
				opts.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: e.sim.MessagingURL,
					MessagingHost: e.sim.Info.MessagingHost, HTTPClient: &http.Client{Transport: tr}}, refused), MessagingOptions{TurnTimeout: 5 * time.Second})
			}
			src := fmt.Sprintf("suite: s\nagent: clinic\nscenarios:\n"+
				"  - name: first\n    via: %s\n    turns:\n      - say: hello\n"+
				"  - name: then\n    via: %s\n    turns:\n      - say: hello\n", tc.first, tc.then)
			res, err := Run(context.Background(), loadYAML(t, src), opts)
			if err != nil {
				t.Fatal(err)
			}
			st := res.Stop
			if st == nil || st.Kind != tc.want.Kind || st.Credential != tc.want.Credential || st.Agent != tc.want.Agent {
				t.Fatalf("Stop = %+v, want %+v; statuses %v", st, tc.want, statuses(res))
			}
		})
	}
}

// TestNoStopOnceMessagingAPIServed: a 404 of the Messaging API's
// access-token step says no Messaging API answers at the messaging_url
// (exit 2) only while none opened a session there in the run. After one
// did, it is a glitch of a working platform: the case errors as the
// platform's, is retried, and the run goes on. It stopped the run and
// sent the reader to check a messaging_url that had just served two
// sessions.
func TestNoStopOnceMessagingAPIServed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// at is the access-token request answered 404 (from 1).
		at   int64
		stop bool
	}{
		{name: "at the first session", at: 1, stop: true},
		{name: "after sessions opened", at: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newMsgEnv(t, sim.Options{Seed: 1})
			target, err := url.Parse(e.sim.MessagingURL)
			if err != nil {
				t.Fatal(err)
			}
			rp := httputil.NewSingleHostReverseProxy(target)
			var tokens atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/access-token") && tokens.Add(1) == tc.at {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusNotFound)
					w.Write([]byte(`<html><head><title>404 Not Found</title></head><body>nginx</body></html>`))
					return
				}
				rp.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			opts := e.opts(t)
			opts.Parallel, opts.Retries = 1, 1
			tr := platform.NewTransport(8)
			t.Cleanup(tr.CloseIdleConnections)
			token := func(agent, env string) (string, error) { return e.sim.Info.MessagingConnectors[agent][env], nil }
			opts.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: srv.URL,
				MessagingHost: e.sim.Info.MessagingHost, HTTPClient: &http.Client{Transport: tr}}, token), MessagingOptions{TurnTimeout: 5 * time.Second})
			var src strings.Builder
			src.WriteString("suite: s\nagent: clinic\nvia: messaging\nscenarios:\n")
			for i := range 4 {
				fmt.Fprintf(&src, "  - name: case %d\n    turns:\n      - say: When are you open?\n", i)
			}
			res, err := Run(context.Background(), loadYAML(t, src.String()), opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stop {
				if st := res.Stop; st == nil || st.Kind != result.StopNoMessagingAPI || !st.Config {
					t.Fatalf("Stop = %+v, want no Messaging API; statuses %v", st, statuses(res))
				}
				return
			}
			if res.Stop != nil {
				t.Fatalf("Stop = %+v after the Messaging API opened sessions there", res.Stop)
			}
			if got := strings.Join(statuses(res), " "); got != "case 0=passed case 1=passed case 2=flaky case 3=passed" {
				t.Fatalf("statuses %s, want the third flaky", got)
			}
			a := res.Files[0].Cases[2].Attempts[0]
			if a.Error == nil || a.Error.Status != http.StatusNotFound || strings.Contains(a.Error.Message, "check the messaging_url") ||
				!strings.HasSuffix(a.Error.Message, "404: 404 Not Found (the Messaging API opened a session at this address earlier in the run: its error, not the messaging_url's)") {
				t.Errorf("first attempt's error %+v, want the platform's 404, not the messaging_url's", a.Error)
			}
		})
	}
}

// TestStopMetTogether: cases in flight that meet the wall a stop names
// (no Messaging API at the messaging_url) at once are cut off as the
// others in flight are: the first to end stops the run and says the
// cause; the other is not run, with the stop's reason, not a second
// error with the same cause. Both 404s are held until both requests
// arrived, so both attempts meet the wall before either is weighed. On a
// loaded machine the second case of the CLI's "a messaging url at the
// build host" errored so, and the run said "0 cases not run".
func TestStopMetTogether(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Seed: 1})
	var arrived atomic.Int64
	both := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`<html><head><title>404 Not Found</title></head><body>nginx</body></html>`))
	}))
	t.Cleanup(srv.Close)
	opts := e.opts(t)
	opts.Parallel, opts.Retries = 2, 1
	token := func(agent, env string) (string, error) { return e.sim.Info.MessagingConnectors[agent][env], nil }
	opts.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: srv.URL,
		MessagingHost: e.sim.Info.MessagingHost, AllowHTTP: true}, token), MessagingOptions{TurnTimeout: 5 * time.Second})
	src := "suite: s\nagent: clinic\nvia: messaging\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi}]\n"
	res, err := Run(context.Background(), loadYAML(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Stop; st == nil || st.Kind != result.StopNoMessagingAPI {
		t.Fatalf("Stop = %+v, want no Messaging API; statuses %v", st, statuses(res))
	}
	var errored, notRun int
	for _, c := range res.Files[0].Cases {
		switch {
		case c.Status == result.Errored && len(c.Attempts) == 1:
			errored++
		case c.Status == result.Skipped && c.SkipReason == res.Stop.Reason:
			notRun++
		}
	}
	if errored != 1 || notRun != 1 {
		t.Errorf("statuses %v: want one errored, saying the cause, and one not run (%s)", statuses(res), res.Stop.Reason)
	}
}

// TestStopMetBesideCutOff: the moment TestStopMetTogether can only
// sometimes catch, held still. Case a meets the wall and stops the run;
// case b, in flight beside it, meets the same wall before the stop's cut
// reaches its call (the cut here reaches nothing). b is cut off as the
// cases in flight are (its attempt Pending, so the case is not run),
// not a second error with the same cause; a stays the one that says it.
// Case c, over debug chat, ends in flight with its own verdict: only a
// case that met a wall itself is cut off.
func TestStopMetBesideCutOff(t *testing.T) {
	t.Parallel()
	r, jobs := atTheWall(t, "suite: s\nagent: clinic\nvia: messaging\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi}]\n"+
		"  - name: c\n    via: debug_chat\n    turns: [{say: hi}]\n")
	a, _ := r.attempt(context.Background(), jobs[0])
	st := r.stops.stopped()
	if a.Status != result.Errored || st == nil || st.Kind != result.StopNoMessagingAPI {
		t.Fatalf("a: %s, stop %+v: want errored, stopping the run on no Messaging API", a.Status, st)
	}
	if b, retry := r.attempt(context.Background(), jobs[1]); b.Status != result.Pending || retry {
		t.Errorf("b: %s (retry %v), error %+v: want cut off (pending), not retried", b.Status, retry, b.Error)
	}
	if c, _ := r.attempt(context.Background(), jobs[2]); c.Status != result.Passed {
		t.Errorf("c: %s, error %+v: want passed, its own verdict", c.Status, c.Error)
	}
	if r.stops.stopped() != st {
		t.Errorf("stop %+v, want a's", r.stops.stopped())
	}
}

// TestStopCutOffsReadTheSame: a case cut off beside the case that stopped
// the run (it met the same wall before the cut reached its call) reads as
// one cut off by the stop's cancel: its attempt carries the interruption,
// not a second copy of the cause the stop already says, so the JSON
// attempt's error and kind, JUnit and the console's "not run" do not hang
// on which of the two ways the cut reached it.
func TestStopCutOffsReadTheSame(t *testing.T) {
	t.Parallel()
	r, jobs := atTheWall(t, "suite: s\nagent: clinic\nvia: messaging\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi}]\n  - name: c\n    turns: [{say: hi}]\n")
	r.attempt(context.Background(), jobs[0])
	if r.stops.stopped() == nil {
		t.Fatal("a did not stop the run")
	}
	beside, _ := r.attempt(context.Background(), jobs[1])
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cut, _ := r.attempt(cancelled, jobs[2])
	// Each error stays at its own case's step.
	if beside.Status != cut.Status || beside.Error == nil || cut.Error == nil ||
		beside.Error.Kind != cut.Error.Kind || beside.Error.Message != cut.Error.Message || beside.Error.Status != cut.Error.Status {
		t.Errorf("cut off beside the stop: %s %+v\ncut off by its cancel: %s %+v\nwant the same", beside.Status, beside.Error, cut.Status, cut.Error)
	}
}

// atTheWall plans src for a runner whose Messaging API is at an address
// where a web server answers 404 to everything (no Messaging API, a
// stop's wall), the rest of the platform the simulator, and returns the
// runner, not started, with its jobs, for a test to run attempts of them
// one at a time.
func atTheWall(t *testing.T, src string) (*runner, []*job) {
	t.Helper()
	e := newMsgEnv(t, sim.Options{Seed: 1})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`<html><head><title>404 Not Found</title></head><body>nginx</body></html>`))
	}))
	t.Cleanup(srv.Close)
	opts := e.opts(t)
	token := func(agent, env string) (string, error) { return e.sim.Info.MessagingConnectors[agent][env], nil }
	opts.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: srv.URL,
		MessagingHost: e.sim.Info.MessagingHost, AllowHTTP: true}, token), MessagingOptions{TurnTimeout: 5 * time.Second})
	opts, err := opts.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	_, jobs := plan(loadYAML(t, src), opts)
	return &runner{opts: opts, outer: context.Background(), stops: newStopper(func() {})}, jobs
}
