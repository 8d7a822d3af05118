package runner

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"github.com/agenttest/agenttest/internal/steps"
)

// env is a simulator behind an intercepting proxy, and a real platform
// client pointed at the proxy: every test talks real HTTP.
type env struct {
	t      *testing.T
	sim    *simtest.Sim
	proxy  *proxy
	client *platform.Client
	// transport is the client's, so tests can close idle connections before
	// counting goroutines.
	transport  *http.Transport
	restaurant string
	// messaging is the Messaging channel to the simulator (not through
	// the proxy, which sees debug-chat calls only).
	messaging Channel
}

func newEnv(t testing.TB, opts sim.Options) *env {
	t.Helper()
	s := simtest.Start(t, opts)
	p := newProxy(t, s.BuildURL)
	tr := platform.NewTransport(256)
	c, err := platform.New(platform.Config{
		BuildURL:   p.URL,
		BuildKey:   s.BuildKey,
		MaxPerHost: 256,
		HTTPClient: &http.Client{Transport: tr},
		// The client's backoff between tries of a call passes on a fake
		// clock: the tests are about what is retried, not how long it
		// waits.
		Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep},
	})
	if err != nil {
		t.Fatalf("platform client: %v", err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	e := &env{sim: s, proxy: p, client: c, transport: tr, restaurant: agentID(t, s, "restaurant"),
		messaging: messagingTo(s, &http.Client{Transport: tr})}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
	}
	return e
}

// slowChannel is the debug chat of a client of e whose answers take
// latency on clk, the runner's clock, to arrive (slowAnswers).
func (e *env) slowChannel(t testing.TB, clk *fakeclock.Clock, latency time.Duration) Channel {
	t.Helper()
	return e.channelOver(t, slowAnswers{clk: clk, latency: latency, next: e.transport})
}

// channelOver is the debug chat of a client of e whose requests go
// through rt.
func (e *env) channelOver(t testing.TB, rt http.RoundTripper) Channel {
	t.Helper()
	c, err := platform.New(platform.Config{
		BuildURL:   e.proxy.URL,
		BuildKey:   e.sim.BuildKey,
		HTTPClient: &http.Client{Transport: rt},
		Retry:      platform.RetryPolicy{Sleep: fakeclock.New().Sleep},
	})
	if err != nil {
		t.Fatalf("platform client: %v", err)
	}
	return DebugChat(c)
}

// pacedOpts is e.opts() on clk, the runner's clock and the one the
// client's answers take latency on (slowChannel), with a turn timeout of
// 40ms.
func (e *env) pacedOpts(t testing.TB, clk *fakeclock.Clock, latency time.Duration) Options {
	t.Helper()
	opts := e.opts()
	opts.Channel = e.slowChannel(t, clk, latency)
	opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	opts.TurnTimeout = 40 * time.Millisecond
	return opts
}

// slowAnswers is a transport whose answers take latency on clk to arrive
// (a 429 comes at once): it moves clk on by latency once the answer is
// in, and a bound of the runner due by then has cut the call before the
// client sees it, as it would cut an answer still on its way. No real
// timer runs, so a bound that falls due before the answer always cuts
// it, and one due after never does.
type slowAnswers struct {
	clk     *fakeclock.Clock
	latency time.Duration
	next    http.RoundTripper
}

func (s slowAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(r)
	if err != nil || res.StatusCode == http.StatusTooManyRequests {
		return res, err
	}
	s.clk.Advance(s.latency)
	if r.Context().Err() != nil {
		res.Body.Close()
		return nil, context.Cause(r.Context())
	}
	return res, nil
}

// agentID finds a built-in agent by name.
func agentID(t testing.TB, s *simtest.Sim, name string) string {
	t.Helper()
	for _, id := range s.AgentIDs {
		if strings.Contains(id, name) {
			return id
		}
	}
	t.Fatalf("no %s agent among %v", name, s.AgentIDs)
	return ""
}

// opts returns run options aimed at the restaurant agent, with no pause
// between attempts so retries cost no wall time.
func (e *env) opts() Options {
	return Options{
		Channel:      DebugChat(e.client),
		Messaging:    e.messaging,
		Parallel:     4,
		DefaultAgent: e.restaurant,
		RetryDelay:   -1,
		TurnTimeout:  5 * time.Second,
	}
}

// proxy forwards to the simulator and lets a test answer chosen requests
// itself: a deterministic fault at the n-th turn, whatever the scheduling.
type proxy struct {
	URL string
	// transport carries the forwarded requests; tests close its idle
	// connections before counting goroutines.
	transport *http.Transport
	starts    atomic.Int64
	turns     atomic.Int64
	// inFlight and peak count the debug-chat requests being answered, and
	// the most at once: one session has at most one.
	inFlight, peak atomic.Int64
	// intercept, when set, may answer a request instead of the simulator.
	// kind is "start" or "turn"; n counts requests of that kind from 1.
	intercept atomic.Pointer[func(kind string, n int64, r *http.Request, w http.ResponseWriter) bool]
	// rewrite, when set, edits the simulator's response body.
	rewrite atomic.Pointer[func(kind string, n int64, body []byte) []byte]
}

func newProxy(t testing.TB, target string) *proxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("proxy target: %v", err)
	}
	p := &proxy{transport: http.DefaultTransport.(*http.Transport).Clone()}
	p.transport.MaxIdleConnsPerHost = 256
	t.Cleanup(p.transport.CloseIdleConnections)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = p.transport
	// Requests the client cancels on purpose are expected here.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(res *http.Response) error {
		rw := p.rewrite.Load()
		if rw == nil {
			return nil
		}
		kind, _ := res.Request.Context().Value(kindKey{}).(string)
		n, _ := res.Request.Context().Value(nKey{}).(int64)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		body = (*rw)(kind, n, body)
		res.Body = io.NopCloser(strings.NewReader(string(body)))
		res.ContentLength = int64(len(body))
		res.Header.Del("Content-Length")
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var kind string
		var n int64
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/debug-chat"):
			kind, n = "start", p.starts.Add(1)
		case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/debug-chat/"):
			kind, n = "turn", p.turns.Add(1)
		}
		if kind != "" {
			now := p.inFlight.Add(1)
			defer p.inFlight.Add(-1)
			for peak := p.peak.Load(); now > peak && !p.peak.CompareAndSwap(peak, now); peak = p.peak.Load() {
			}
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if f := p.intercept.Load(); f != nil && kind != "" && (*f)(kind, n, r, w) {
			return
		}
		ctx := context.WithValue(context.WithValue(r.Context(), kindKey{}, kind), nKey{}, n)
		rp.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

type kindKey struct{}
type nKey struct{}

func (p *proxy) onRequest(f func(kind string, n int64, r *http.Request, w http.ResponseWriter) bool) {
	p.intercept.Store(&f)
}

// refuse answers 429 to the debug-chat requests retryAfter gives a
// Retry-After for (not ""), with it.
func (p *proxy) refuse(retryAfter func(kind string, n int64) string) {
	p.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
		after := retryAfter(kind, n)
		if after == "" {
			return false
		}
		w.Header().Set("Retry-After", after)
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
}

// refuseFirstStart answers the first session's creation 429 with a
// Retry-After of after.
func (p *proxy) refuseFirstStart(after string) {
	p.refuse(func(kind string, n int64) string {
		if kind == "start" && n == 1 {
			return after
		}
		return ""
	})
}

func (p *proxy) onResponse(f func(kind string, n int64, body []byte) []byte) {
	p.rewrite.Store(&f)
}

// hangUp holds a request until the client gives it up (its context ends
// when the client closes the connection), then answers 500 to nobody. It
// fails t if the client still waits after 10 s.
func hangUp(t *testing.T, r *http.Request, w http.ResponseWriter) bool {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
		t.Error("the client did not give up a request of the cancelled run")
	}
	return fail500(w)
}

// fail500 answers the matching requests with a platform 500.
func fail500(w http.ResponseWriter) bool {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	io.WriteString(w, `{"success":false,"error":"internal","error_code":"INTERNAL","error_message":"boom","data":null}`)
	return true
}

// ---- scenario builders ----

const file = "suites/restaurant.yaml"

func pos(line, col int) diag.Pos { return diag.Pos{File: file, Line: line, Col: col} }

func contains(line int, s string) *assert.Text {
	return &assert.Text{Pos: pos(line, 9), Contains: new(s), IgnoreCase: true}
}

func expectReply(line int, s string) *assert.Expect {
	return &assert.Expect{Pos: pos(line, 7), Response: contains(line, s)}
}

// turn is the steps a YAML turn decodes to: its say, its expect and its
// captures.
func turn(line int, say string, exp *assert.Expect, caps ...*steps.Step) []*steps.Step {
	out := []*steps.Step{{Kind: steps.Say, Pos: pos(line, 5), Say: say, Silent: say == ""}}
	if exp != nil {
		out = append(out, check(exp))
	}
	return append(out, caps...)
}

// check is the step of a YAML expect:.
func check(exp *assert.Expect) *steps.Step {
	return &steps.Step{Kind: steps.Check, Pos: exp.Pos, Expect: func(steps.Expander) (*assert.Expect, error) { return exp, nil }}
}

// capture is the step of one capture: key.
func capture(at diag.Pos, name, from, pattern string) *steps.Step {
	return &steps.Step{Kind: steps.Capture, Pos: at, Capture: &steps.CaptureSpec{Name: name, From: from, Pattern: pattern}}
}

// chat is the program of a YAML debug-chat scenario: open the session at
// line, check the greeting (when given), then the turns.
func chat(line int, greeting *assert.Expect, turns ...[]*steps.Step) []*steps.Step {
	out := []*steps.Step{{Kind: steps.Open, Pos: pos(line, 3)}}
	if greeting != nil {
		g := check(greeting)
		g.Greeting = true
		out = append(out, g)
	}
	for _, t := range turns {
		out = append(out, t...)
	}
	return out
}

// booking is the restaurant happy path, using a capture in a later turn.
func booking(name string, line int) *scenario.Scenario {
	return &scenario.Scenario{
		Name: name,
		Pos:  pos(line, 3),
		Tags: []string{"booking"},
		Steps: chat(line, expectReply(line+1, "welcome"),
			turn(line+2, "I'd like to book a table", &assert.Expect{
				Pos:      pos(line+2, 7),
				Response: contains(line+2, "how many"),
				Trace:    &assert.Trace{Pos: pos(line+2, 9), Includes: []string{"CollectPartySize"}},
			}),
			turn(line+3, "4 people at 7pm", &assert.Expect{
				Pos: pos(line+3, 7),
				State: []assert.StateCheck{
					{Pos: pos(line+3, 9), Key: "party_size", Match: &assert.Text{Exact: new("4")}},
					{Pos: pos(line+3, 9), Key: "time", Match: &assert.Text{Exact: new("19:00")}},
				},
				Node: &assert.Text{Pos: pos(line+3, 9), Exact: new("ConfirmBooking")},
			}, capture(pos(line+3, 20), "ref", "response", `reference ([A-Z0-9]+)`)),
			turn(line+4, "what was my reference?", expectReply(line+4, "${ref}")),
			turn(line+5, "thanks, bye", &assert.Expect{Pos: pos(line+5, 7), Ended: &assert.Bool{Pos: pos(line+5, 9), Value: true}}),
		),
	}
}

// broken fails at its first turn.
func broken(name string, line int) *scenario.Scenario {
	return &scenario.Scenario{
		Name:  name,
		Pos:   pos(line, 3),
		Tags:  []string{"broken"},
		Steps: chat(line, nil, turn(line+1, "I'd like to book a table", expectReply(line+1, "we are closed forever"))),
	}
}

// sayAt returns the say step of turn i (from 0).
func sayAt(sc *scenario.Scenario, i int) *steps.Step {
	return sc.Steps[turnStart(sc, i)]
}

// turnStart is the index in the program of turn i's say step, or the
// program's length when it has no turn i.
func turnStart(sc *scenario.Scenario, i int) int {
	for k, st := range sc.Steps {
		if st.Kind == steps.Say {
			if i == 0 {
				return k
			}
			i--
		}
	}
	return len(sc.Steps)
}

// turnSteps returns the steps of turn i: its say, then its checks and
// captures.
func turnSteps(sc *scenario.Scenario, i int) []*steps.Step {
	return sc.Steps[turnStart(sc, i):turnStart(sc, i+1)]
}

// setCheck replaces the checks of turn i.
func setCheck(sc *scenario.Scenario, i int, exp *assert.Expect) {
	for _, st := range turnSteps(sc, i) {
		if st.Kind == steps.Check {
			*st = *check(exp)
		}
	}
}

// setGreeting replaces the greeting check.
func setGreeting(sc *scenario.Scenario, exp *assert.Expect) {
	for _, st := range sc.Steps {
		if st.Kind == steps.Check && st.Greeting {
			*st = *check(exp)
			st.Greeting = true
		}
	}
}

// captureAt returns the first capture step of turn i.
func captureAt(sc *scenario.Scenario, i int) *steps.Step {
	for _, st := range turnSteps(sc, i) {
		if st.Kind == steps.Capture {
			return st
		}
	}
	return nil
}

// keepTurns cuts the program after its first n turns.
func keepTurns(sc *scenario.Scenario, n int) {
	sc.Steps = sc.Steps[:turnStart(sc, n)]
}

func suite(path string, scs ...*scenario.Scenario) *scenario.Suite {
	return &scenario.Suite{Path: path, Name: strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".yaml"), Scenarios: scs}
}

// ---- observers ----

// recorder checks the Observer contract as events arrive.
type recorder struct {
	mu        sync.Mutex
	total     int
	runs      int
	started   map[*result.Case]int
	finished  map[*result.Case]int
	order     []string
	final     *result.Result
	violation []string
	onFinish  func(n int)
	// deployments are what DeploymentsRead received, once per run.
	deployments [][]*result.Deployment
}

var _ result.DeploymentObserver = (*recorder)(nil)

func (r *recorder) DeploymentsRead(ds []*result.Deployment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs != 1 || len(r.started) > 0 || r.final != nil {
		r.violation = append(r.violation, "DeploymentsRead outside the run or after a case started")
	}
	r.deployments = append(r.deployments, ds)
}

func newRecorder() *recorder {
	return &recorder{started: map[*result.Case]int{}, finished: map[*result.Case]int{}}
}

func (r *recorder) RunStarted(total int, _ result.Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total = total
	r.runs++
}

func (r *recorder) CaseStarted(_ *result.File, c *result.Case) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs != 1 || r.final != nil {
		r.violation = append(r.violation, "CaseStarted outside the run: "+c.Name)
	}
	if r.finished[c] > 0 {
		r.violation = append(r.violation, "CaseStarted after CaseFinished: "+c.Name)
	}
	r.started[c]++
}

func (r *recorder) CaseFinished(_ *result.File, c *result.Case) {
	r.mu.Lock()
	r.finished[c]++
	r.order = append(r.order, c.Name)
	if r.runs != 1 || r.final != nil {
		r.violation = append(r.violation, "CaseFinished outside the run: "+c.Name)
	}
	n := len(r.order)
	f := r.onFinish
	r.mu.Unlock()
	if f != nil {
		f(n)
	}
}

func (r *recorder) RunFinished(res *result.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.final != nil {
		r.violation = append(r.violation, "RunFinished twice")
	}
	r.final = res
}

// check verifies that every case of res was finished exactly once and
// started at most once, and that RunFinished saw res.
func (r *recorder) check(t *testing.T, res *result.Result) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.violation {
		t.Error(v)
	}
	if r.final != res {
		t.Error("RunFinished did not receive the returned result")
	}
	n := 0
	for _, f := range res.Files {
		for _, c := range f.Cases {
			n++
			if r.finished[c] != 1 {
				t.Errorf("case %q: CaseFinished called %d times, want 1", c.Name, r.finished[c])
			}
			if r.started[c] > 1 {
				t.Errorf("case %q: CaseStarted called %d times", c.Name, r.started[c])
			}
			ran := len(c.Attempts) > 0
			if ran != (r.started[c] == 1) {
				t.Errorf("case %q: CaseStarted %d times but %d attempts", c.Name, r.started[c], len(c.Attempts))
			}
		}
	}
	if r.total != n {
		t.Errorf("RunStarted total = %d, want %d", r.total, n)
	}
}

// statuses lists "name=status" in result order.
func statuses(res *result.Result) []string {
	var out []string
	for _, f := range res.Files {
		for _, c := range f.Cases {
			out = append(out, fmt.Sprintf("%s=%s", c.Name, c.Status))
		}
	}
	return out
}
