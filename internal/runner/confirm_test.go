package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"github.com/agenttest/agenttest/internal/steps"
	"github.com/agenttest/agenttest/internal/webhook"
)

// unreachable is a number the simulator's calls fail to reach.
const unreachable = platformtest.Unreachable

// confirmEnv is a simulator with fast outbound calls and webhook
// deliveries to a loopback receiver, and a client of both host families.
type confirmEnv struct {
	sim    *simtest.Sim
	client *platform.Client
	rcv    *webhook.Receiver
	clinic string
}

func newConfirmEnv(t *testing.T, secret func(real string) string) *confirmEnv {
	t.Helper()
	e := platformtest.Start(t, secret)
	return &confirmEnv{sim: e.Sim, client: e.Client, rcv: e.Receiver, clinic: agentID(t, e.Sim, "clinic")}
}

func (e *confirmEnv) opts() Options {
	return Options{
		Channel: DebugChat(e.client), Records: e.client, Webhooks: e.rcv,
		DefaultAgent: e.clinic, Parallel: 4, RetryDelay: -1,
		TurnTimeout: 5 * time.Second, ConfirmTimeout: 3 * time.Second, ConfirmPoll: 10 * time.Millisecond,
		Connector: func(agent, env string) string { return e.sim.Info.ConnectorIDs[agent][env] },
	}
}

// waitsOut matches the scenarios of confirmSuite and of the parity files
// that confirm a handoff state the clinic never stores: their reads go on
// until the confirmation's bound.
var waitsOut = regexp.MustCompile(`^no handoff state for a `)

// runWaitingOut is Run of what load makes, on opts, in two runs at once
// whose files it joins, each file's cases in file order. The scenarios
// waitsOut matches run on a fake clock that their reads' pauses move, so
// the bound passes after their reads, not after its seconds of real time
// (the simulator answers each read at once), and one at a time, so that
// each sees the clock moved by its own pauses alone and makes the reads
// its backoff allows in the bound, the same number in every file; the
// others on the real clock, on which the simulator's calls progress and
// its webhooks arrive.
func runWaitingOut(t *testing.T, load func() []*scenario.Suite, opts Options) *result.Result {
	t.Helper()
	rest, waiting := opts, opts
	rest.Select.Cases = map[scenario.CaseRef]bool{}
	suites := load()
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if !waitsOut.MatchString(sc.Name) {
				rest.Select.Cases[scenario.CaseRef{File: sc.Pos.File, Name: sc.Name}] = true
			}
		}
	}
	clk := fakeclock.New()
	waiting.Now, waiting.Sleep, waiting.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	waiting.Select.Name, waiting.Parallel = waitsOut, 1
	var (
		wg                 sync.WaitGroup
		res, waited        *result.Result
		errRest, errWaited error
	)
	wg.Go(func() { res, errRest = Run(context.Background(), suites, rest) })
	wg.Go(func() { waited, errWaited = Run(context.Background(), load(), waiting) })
	wg.Wait()
	if err := errors.Join(errRest, errWaited); err != nil {
		t.Fatal(err)
	}
	if len(waited.Files) == 0 {
		t.Fatalf("no scenario matches %s: nothing waited on the fake clock", waitsOut)
	}
	for _, w := range waited.Files {
		i := slices.IndexFunc(res.Files, func(f *result.File) bool { return f.Path == w.Path })
		if i < 0 {
			t.Fatalf("%s: only scenarios that wait out their bound", w.Path)
		}
		f := res.Files[i]
		f.Cases = append(f.Cases, w.Cases...)
		slices.SortStableFunc(f.Cases, func(a, b *result.Case) int { return cmp.Compare(a.Pos.Line, b.Pos.Line) })
	}
	return res
}

// waitedOut is a receiver whose waits pass on clk, the runner's clock:
// a wait moves clk on in steps of 10 ms until a bound of the runner cuts
// it, as a wait for an event that is not coming passes on a real clock,
// and then asks the receiver. A wait no bound cuts in an hour is an
// error.
type waitedOut struct {
	MarkingWebhooks
	clk *fakeclock.Clock
}

func (w waitedOut) WaitAfter(ctx context.Context, conversationID, eventType string, after webhook.Mark) (webhook.Event, error) {
	for end := w.clk.Now().Add(time.Hour); ctx.Err() == nil; w.clk.Advance(10 * time.Millisecond) {
		if !w.clk.Now().Before(end) {
			return webhook.Event{}, errors.New("no bound cut the wait in an hour on the runner's clock")
		}
	}
	return w.MarkingWebhooks.WaitAfter(ctx, conversationID, eventType, after)
}

// rejectedFirst is a receiver whose waits pass on clk as waitedOut's do,
// once it has rejected a delivery of the event awaited: a test of what
// the runner makes of a rejected event does not race the delivery against
// a bound. It checks the rejections again each time the simulator ends a
// delivery attempt (sim.Server.Changed), which is after the receiver
// recorded its rejection and answered. It fails the wait when no such
// delivery came in 10 s (real time: a safety net, never a wait the test
// relies on).
type rejectedFirst struct {
	*webhook.Receiver
	clk *fakeclock.Clock
	srv *sim.Server
}

func (w rejectedFirst) WaitAfter(ctx context.Context, conversationID, eventType string, after webhook.Mark) (webhook.Event, error) {
	rejected := func() bool {
		for _, r := range w.Rejections() {
			if r.Type == eventType && r.ConversationID == conversationID {
				return true
			}
		}
		return false
	}
	bound := time.NewTimer(10 * time.Second)
	defer bound.Stop()
	for changed := w.srv.Changed(); !rejected(); changed = w.srv.Changed() {
		select {
		case <-changed:
		case <-bound.C:
			return webhook.Event{}, fmt.Errorf("no delivery of %s for %s was rejected in 10 s", eventType, conversationID)
		}
	}
	return waitedOut{MarkingWebhooks: w.Receiver, clk: w.clk}.WaitAfter(ctx, conversationID, eventType, after)
}

// loadYAML loads one suite written inline, positions included.
func loadYAML(t *testing.T, src string) []*scenario.Suite {
	t.Helper()
	suites, diags := scenario.Load(fstest.MapFS{"confirm.yaml": {Data: []byte(src)}}, []string{"confirm.yaml"})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return suites
}

const confirmSuite = `suite: confirmations
agent: clinic
scenarios:
  - name: urgent handoff is recorded
    turns:
      - say: I have chest pain
    confirm:
      conversation:
        channel: WEBCHAT
        environment: sandbox
        in_progress: false
        handoff: true
        handoff_destination: on_call_nurse
        handoff_reason: {contains: urgent}
        num_turns: {min: 2}
        turns: {intents: {includes: [urgent]}}
      handoff_state: {data: {reason: urgent_symptoms}}
      webhooks: [conversation.completed, handoff.created]
  - name: wrong destination
    turns:
      - say: I have chest pain
    confirm:
      conversation:
        handoff_destination: reception
  - name: no handoff state for a booking
    turns:
      - say: goodbye
    confirm:
      handoff_state: {data: {reason: urgent_symptoms}}
  - name: call connects
    probe: {outbound_call: {to: "+447700900001", metadata: {reason: reminder}}, expect_status: success, within: 5s}
    confirm: {conversation: {channel: VOICE-SIP, num_turns: {min: 1}, state: {call_sid: {matches: '^OUT-'}}}}
  - name: unreachable number fails as expected
    probe: {outbound_call: {to: "` + unreachable + `"}, expect_status: failure, within: 5s}
  - name: unreachable number fails the probe
    probe: {outbound_call: {to: "` + unreachable + `"}, within: 5s}
  - name: sms opens a conversation
    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}
    confirm: {conversation: {in_progress: true}}
  - name: the expected status is named where it is written
    probe:
      outbound_call: {to: "` + unreachable + `"}
      expect_status: success
`

func TestConfirmationsAndProbes(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	res := runWaitingOut(t, func() []*scenario.Suite {
		return loadYAML(t, strings.ReplaceAll(confirmSuite, "agent: clinic", "agent: "+e.clinic))
	}, e.opts())
	type want struct {
		status result.Status
		key    string // the first failure's key
		line   int    // and its line
		col    int    // and column, when given
		msg    string
		// held marks each confirmation line, + held and - not: what the
		// reports show as ✓ and ✗. A call that ended as expected holds,
		// whatever its status; one that did not is ✗, though the
		// platform gave its status (and errors the case: a call's
		// status is no verdict on the agent).
		held string
	}
	wants := map[string]want{
		"urgent handoff is recorded":           {status: result.Passed, held: "++++"},
		"wrong destination":                    {status: result.Failed, key: "confirm.conversation.handoff_destination", line: 24, msg: "on_call_nurse", held: "-"},
		"no handoff state for a booking":       {status: result.Failed, key: "confirm.handoff_state", line: 29, msg: "no handoff state was stored", held: "+-"},
		"call connects":                        {status: result.Passed, held: "++"},
		"unreachable number fails as expected": {status: result.Passed, held: "+"},
		"unreachable number fails the probe": {status: result.Errored, key: result.KindHTTP, line: 36,
			msg: "ended with status failure, expected success (unreachable): the reference's failure is a call that failed to connect or was not answered, so it never reached the agent: the platform's or the line's, not the agent's", held: "-"},
		"sms opens a conversation":                         {status: result.Passed, held: "++"},
		"the expected status is named where it is written": {status: result.Errored, key: result.KindHTTP, line: 43, col: 7, msg: "expected success", held: "-"},
	}
	for _, c := range res.Files[0].Cases {
		w, ok := wants[c.Name]
		if !ok {
			t.Errorf("unexpected case %q", c.Name)
			continue
		}
		a := c.Last()
		if c.Status != w.status {
			t.Errorf("%s: %s, want %s%s", c.Name, c.Status, w.status, describe(c))
			continue
		}
		if w.status == result.Errored {
			// A call's final status is no verdict on the agent.
			if e := a.Error; e == nil || e.Kind != w.key || e.Pos.Line != w.line || (w.col != 0 && e.Pos.Col != w.col) || !strings.Contains(e.Message, w.msg) || len(a.Failures) != 0 {
				t.Errorf("%s: error %+v, failures %+v; want %s at line %d with %q", c.Name, e, a.Failures, w.key, w.line, w.msg)
			}
		} else if w.key != "" {
			f := a.Failures[0]
			if f.Key != w.key || f.Pos.Line != w.line || (w.col != 0 && f.Pos.Col != w.col) || !strings.Contains(f.Message+f.Actual, w.msg) {
				t.Errorf("%s: failure %s %s: %s (actual %q), want %s at line %d with %q", c.Name, f.Pos, f.Key, f.Message, f.Actual, w.key, w.line, w.msg)
			}
		}
		held := ""
		for _, cf := range a.Confirmations {
			held += map[bool]string{true: "+", false: "-"}[cf.Held]
		}
		if held != w.held {
			t.Errorf("%s: confirmations held %q, want %q%s", c.Name, held, w.held, describe(c))
		}
	}
	first := res.Files[0].Cases[0].Last()
	var kinds []string
	for _, c := range first.Confirmations {
		kinds = append(kinds, c.Kind+":"+c.Subject)
	}
	if got := strings.Join(kinds, ","); got != "conversation:"+first.ConversationID+",handoff_state:"+first.ConversationID+",webhook:conversation.completed,webhook:handoff.created" {
		t.Errorf("confirmations = %s", got)
	}
	if call := res.Files[0].Cases[3].Last(); !strings.HasPrefix(call.Confirmations[0].Subject, "OUT-") || call.ConversationID == "" {
		t.Errorf("call probe: confirmations %+v, conversation %q", call.Confirmations[0], call.ConversationID)
	}
}

// TestWebhookBadSignature: deliveries signed with another secret than the
// endpoint's never confirm, and the case errors saying so.
func TestWebhookBadSignature(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, func(string) string { return "whsec_00000000000000000000000000000000" })
	// The bound passes on the runner's clock once a delivery of the event
	// was rejected, whenever the machine gets it there: on the real clock
	// a delivery later than the bound left the case failed, the agent's.
	c := e.confirmHandoffEvent(t, func(clk *fakeclock.Clock) Webhooks {
		return rejectedFirst{Receiver: e.rcv, clk: clk, srv: e.sim.Server}
	})
	// The platform sent the event, signed with another secret: its error
	// (or the secret's), not the agent's failure.
	if c.Status != result.Errored {
		t.Fatalf("status %s, want errored%s", c.Status, describe(c))
	}
	e2 := c.Last().Error
	if e2.Pos.Line != 8 || !strings.Contains(e2.Message, "signature mismatch") || !strings.Contains(e2.Message, "check the webhook secret") {
		t.Errorf("error %s: %s", e2.Pos, e2.Message)
	}
}

// confirmHandoffEvent runs a scenario that confirms its handoff.created
// event (at line 8) on a fake clock, with the receiver rcv makes, and
// returns its case.
func (e *confirmEnv) confirmHandoffEvent(t *testing.T, rcv func(clk *fakeclock.Clock) Webhooks) *result.Case {
	t.Helper()
	src := `suite: handoff event
agent: ` + e.clinic + `
scenarios:
  - name: handoff event must be signed
    turns:
      - say: I have chest pain
    confirm:
      webhooks: [handoff.created]
`
	clk := fakeclock.New()
	opts := e.opts()
	opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	opts.Webhooks = rcv(clk)
	opts.ConfirmTimeout = 500 * time.Millisecond
	res, err := Run(context.Background(), loadYAML(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Files[0].Cases[0]
}

// TestWebhookReceiverReachedByNothing: a nightly job whose tunnel was
// down failed every webhook confirmation with "no verified event
// arrived" alone, as if the agent had not done what the event confirms.
// The agent handed off here, as its record says: the event was the
// platform's to deliver, so the case errors, saying that nothing at all
// reached the receiver, and where to look; not that nothing happened
// that sends an event, which the record just said did (it said so).
func TestWebhookReceiverReachedByNothing(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	// The platform delivers to e.rcv; this receiver, like one behind a
	// tunnel that is down, hears nothing.
	c := e.confirmHandoffEvent(t, func(clk *fakeclock.Clock) Webhooks {
		return waitedOut{MarkingWebhooks: webhook.NewReceiver(webhook.Options{Secret: "whsec_00000000000000000000000000000000"}), clk: clk}
	})
	if c.Status != result.Errored || c.Last().Error == nil {
		t.Fatalf("status %s, want errored on the webhook%s", c.Status, describe(c))
	}
	if e := c.Last().Error; e.Pos.Line != 8 || e.Kind != result.KindTimeout || !strings.Contains(e.Message, "no delivery of any event has reached the receiver since it started") ||
		!strings.Contains(e.Message, "check that the webhook URL leads to the receiver") || !strings.Contains(e.Message, "while the agent handed off") ||
		!strings.Contains(e.Message, "since it started: the platform sent none, or its deliveries do not reach it") || strings.Contains(e.Message, "nothing happened") {
		t.Errorf("error %s: %s", e.Pos, e.Message)
	}
}

// eventSuite is a scenario of the clinic that says say and confirms
// the webhook event (at line 8).
func (e *confirmEnv) eventSuite(say, event string) string {
	return "suite: events\nagent: " + e.clinic + "\nscenarios:\n  - name: event\n    turns:\n      - say: " + say +
		"\n    confirm:\n      webhooks: [" + event + "]\n"
}

// missingEventOpts are the options of a run whose webhook receiver hears
// nothing: its waits pass on the runner's fake clock, up to a
// confirmation bound of 500 ms; one retry.
func (e *confirmEnv) missingEventOpts() Options {
	clk := fakeclock.New()
	opts := e.opts()
	opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	opts.Webhooks = waitedOut{MarkingWebhooks: webhook.NewReceiver(webhook.Options{Secret: "whsec_00000000000000000000000000000000"}), clk: clk}
	opts.ConfirmTimeout = 500 * time.Millisecond
	opts.Retries = 1
	return opts
}

// TestWebhookMissingWhoseFault: an event that never came is judged by
// what it is sent for (the reference: conversation.completed when a
// conversation ends, handoff.created when a handoff happens), as the
// conversation's record shows it. Before, every missing event failed the
// agent, one of a conversation the agent had ended or handed off too:
// the platform's undelivered event read as the agent's broken
// expectation. Now that is the platform's error (timeout, exit 4), saying
// what happened; a conversation the agent left open, or never handed
// off, still fails it, saying what the agent did not do. Real HTTP
// against the simulator; the receiver hears nothing, on a fake clock.
func TestWebhookMissingWhoseFault(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	for _, tc := range []struct {
		name, say, event string
		status           result.Status
		want             string
	}{
		{"completed, left open", "hello", "conversation.completed", result.Failed,
			`no verified "conversation.completed" event for conversation CONV arrived within 500ms: the conversation is still in progress (its record says in_progress=true): the agent did not end it`},
		{"completed, ended", "I have chest pain", "conversation.completed", result.Errored,
			`no verified "conversation.completed" event for conversation CONV arrived within 500ms, while the conversation ended (its record says in_progress=false) (the reference names conversation.completed for a call that ends: a platform may send none for a WEBCHAT conversation; confirm it after a call): the platform never delivered the event of what happened, its error (or the webhook URL's), not the agent's`},
		{"handoff, none", "hello", "handoff.created", result.Failed,
			`arrived within 500ms: its record says handoff=false: the agent did not hand off`},
		{"handoff, handed off", "I have chest pain", "handoff.created", result.Errored,
			`arrived within 500ms, while the agent handed off (its record says handoff=true, handoff_destination=on_call_nurse): the platform never delivered`},
		// An event the reference does not name: nothing tells what it is
		// sent for, and the agent is judged, as before.
		{"another event", "I have chest pain", "call.transferred", result.Failed,
			`no verified "call.transferred" event for conversation CONV arrived within 500ms; no delivery`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runOne(t, e.missingEventOpts(), e.eventSuite(tc.say, tc.event))
			a := c.Last()
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s%s", c.Status, tc.status, describe(c))
			}
			if tc.status == result.Errored && len(c.Attempts) != 2 {
				t.Errorf("%d attempts, want the platform's error retried once", len(c.Attempts))
			}
			want := strings.ReplaceAll(tc.want, "CONV", a.ConversationID)
			if got := said(a); !strings.Contains(got, want) {
				t.Errorf("said %q\nwant %q", got, want)
			}
			if tc.status == result.Errored && (a.Error.Kind != result.KindTimeout || a.Error.Pos.Line != 8) {
				t.Errorf("error %+v, want a timeout at line 8", a.Error)
			}
			// The webhook's line says the same, ✗.
			if last := a.Confirmations[len(a.Confirmations)-1]; last.Kind != result.ConfirmWebhook || last.Held || !strings.Contains(last.Summary, strings.TrimPrefix(want, "no verified")) {
				t.Errorf("webhook line %+v", last)
			}
		})
	}
}

// TestWebhookMissingRecordUnread: an event that never came is judged by
// the conversation's record, read again once the wait is over. When that
// read failed (a 500), nothing told whether what the event is sent for
// happened, and the agent was judged all the same: failed, exit 1, on
// the platform's error. The case now errors on the read, retried.
func TestWebhookMissingRecordUnread(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	// The runtime host answers the first read of each conversation's
	// record (the confirmation's own) and 500 to every later one.
	var mu sync.Mutex
	reads := map[string]int{}
	target, err := url.Parse(e.sim.RuntimeURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/conversations/") {
			mu.Lock()
			reads[r.URL.Path]++
			n := reads[r.URL.Path]
			mu.Unlock()
			if n > 1 {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"error_message":"records backend unavailable"}`)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	records, err := platform.New(platform.Config{BuildURL: e.sim.BuildURL, RuntimeURL: srv.URL, AccountID: e.sim.AccountID,
		BuildKey: e.sim.BuildKey, RuntimeKey: e.sim.RuntimeKey, Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"conversation.completed", "handoff.created"} {
		t.Run(event, func(t *testing.T) {
			opts := e.missingEventOpts()
			opts.Records = records
			c := runOne(t, opts, e.eventSuite("hello", event))
			a := c.Last()
			want := "; read conversation " + a.ConversationID + " to tell whether what the event is sent for happened: GET "
			if c.Status != result.Errored || len(c.Attempts) != 2 || a.Error == nil || len(a.Failures) != 0 || a.Error.Pos.Line != 8 ||
				!strings.Contains(a.Error.Message, `confirm: webhooks: no verified "`+event+`" event for conversation `+a.ConversationID) ||
				!strings.Contains(a.Error.Message, want) || !strings.Contains(a.Error.Message, "500") {
				t.Fatalf("%s after %d attempts, want errored at line 8 on the unread record, retried: %q%s", c.Status, len(c.Attempts), want, describe(c))
			}
		})
	}
}

func TestConfirmWithoutReceiverOrRefusedNumber(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	src := `suite: config
agent: ` + e.clinic + `
scenarios:
  - name: webhooks need a receiver
    turns:
      - say: I have chest pain
    confirm: {webhooks: [handoff.created]}
  - name: number not allowed
    probe: {sms: {to: "+447700900002", message: hi}}
`
	opts := e.opts()
	opts.Webhooks = nil
	opts.AllowNumber = func(n string) bool { return n == "+447700900001" }
	res, err := Run(context.Background(), loadYAML(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"needs a webhook receiver", "+447700900002 is not listed in the target's probe_numbers"} {
		c := res.Files[0].Cases[i]
		a := c.Last()
		if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, want) {
			t.Errorf("%s: %s%s, want a config error with %q", c.Name, c.Status, describe(c), want)
		}
	}
	// Without a client of the runtime host nothing can be confirmed.
	opts = e.opts()
	opts.Records = nil
	c := runOne(t, opts, "suite: config\nagent: "+e.clinic+"\nscenarios:\n  - name: no client\n    turns:\n      - say: hello\n    confirm: {conversation: {channel: WEBCHAT}}\n")
	if a := c.Last(); c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || a.Error.Pos.Line != 7 ||
		!strings.Contains(a.Error.Message, "confirm: no client for the runtime host") {
		t.Errorf("no client: %s%s, want a config error at line 7", c.Status, describe(c))
	}
}

func TestAlertGate(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	src := `suite: gate
agent: ` + e.clinic + `
scenarios:
  - name: greets
    turns:
      - say: hello
`
	ctx := context.Background()
	run := func(t *testing.T) *result.Case {
		opts := e.opts()
		opts.Alerts = e.client
		res, err := Run(ctx, loadYAML(t, src), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Checks) != 1 || res.Checks[0].Name != result.AlertGateName {
			t.Fatalf("checks = %+v", res.Checks)
		}
		return res.Checks[0]
	}
	other := agentID(t, e.sim, "restaurant")
	if _, err := e.client.CreateAlertRule(ctx, platform.AlertRuleRequest{Name: "other agent volume", ProjectID: other, Metric: "call_volume", Operator: ">=", ThresholdValue: 0, WindowDuration: "5m"}); err != nil {
		t.Fatal(err)
	}
	t.Run("not firing for this agent", func(t *testing.T) {
		c := run(t)
		if c.Status != result.Passed {
			t.Errorf("gate %s, want passed%s", c.Status, describe(c))
		}
	})
	if _, err := e.client.CreateAlertRule(ctx, platform.AlertRuleRequest{Name: "clinic volume", ProjectID: e.clinic, Metric: "call_volume", Operator: ">=", ThresholdValue: 1, WindowDuration: "5m"}); err != nil {
		t.Fatal(err)
	}
	t.Run("firing", func(t *testing.T) {
		c := run(t)
		if c.Status != result.Failed {
			t.Fatalf("gate %s, want failed%s", c.Status, describe(c))
		}
		fs := c.Last().Failures
		if len(fs) != 1 || fs[0].Key != "alerts.call_volume" || !strings.Contains(fs[0].Message, `rule "clinic volume"`) || !strings.Contains(fs[0].Message, "call_volume >= 1") {
			t.Errorf("failures = %+v", fs)
		}
	})
}

// TestWebhookWaitCutByScenarioTimeout: the conversation stays open, so
// conversation.completed never comes. When the confirmation's own bound
// passes first, the missing event is the agent's failure; when the
// scenario's timeout cuts the wait short, it is that timeout's error, as
// for a record read or a turn, and retried like one: the event may have
// been on its way. The wait passes on the runner's clock (waitedOut).
func TestWebhookWaitCutByScenarioTimeout(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	type testCase struct {
		name           string
		timeout        string // the scenario's
		confirmTimeout time.Duration
		want           result.Status
		attempts       int
		message        string // the last attempt's failure or error
	}
	run := func(t *testing.T, tc testCase) {
		src := `suite: webhook wait
agent: ` + e.clinic + `
scenarios:
  - name: waits for an event that is not coming
    timeout: ` + tc.timeout + `
    turns:
      - say: hello
    confirm:
      webhooks: [conversation.completed]
`
		clk := fakeclock.New()
		opts := e.opts()
		opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		opts.Webhooks = waitedOut{MarkingWebhooks: e.rcv, clk: clk}
		opts.Retries = 1
		opts.ConfirmTimeout = tc.confirmTimeout
		res, err := Run(context.Background(), loadYAML(t, src), opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if c.Status != tc.want || len(c.Attempts) != tc.attempts {
			t.Fatalf("%s after %d attempts, want %s after %d%s", c.Status, len(c.Attempts), tc.want, tc.attempts, describe(c))
		}
		a := c.Last()
		got := ""
		switch {
		case a.Error != nil:
			got = a.Error.Message
			if a.Error.Kind != result.KindTimeout || a.Error.Pos.Line != 9 {
				t.Errorf("error %s %s, want a timeout at line 9", a.Error.Pos, a.Error.Kind)
			}
			if last := a.Confirmations[len(a.Confirmations)-1]; last.Found || last.Summary != "wait cut short by the scenario timeout" {
				t.Errorf("webhook line %+v, want the wait cut short", last)
			}
		case len(a.Failures) > 0:
			got = a.Failures[0].Message
		}
		if !strings.Contains(got, tc.message) {
			t.Errorf("last attempt says %q, want %q%s", got, tc.message, describe(c))
		}
		if strings.Contains(got, "wait cancelled") {
			t.Errorf("last attempt says %q: a wait a bound cut timed out, it was not cancelled", got)
		}
	}
	testCases := []testCase{
		{
			name: "the confirmation's bound passes first: the agent's failure", timeout: "1m", confirmTimeout: 150 * time.Millisecond,
			want: result.Failed, attempts: 2, message: `no verified "conversation.completed" event`,
		},
		{
			name: "the scenario timeout cuts the wait: its error", timeout: "400ms", confirmTimeout: time.Minute,
			want: result.Errored, attempts: 2, message: "confirm: wait for webhook conversation.completed: scenario timeout of 400ms exceeded",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// brokenReceiver is a webhook receiver that cannot confirm anything: the
// platform would not register its endpoint.
type brokenReceiver struct{}

func (brokenReceiver) Wait(context.Context, string, string) (webhook.Event, error) {
	return webhook.Event{}, errors.New("the run's webhook endpoint could not be registered: 400")
}

// TestConfirmFailureBeforeUnreadablePart: a confirm block whose record
// broke an expectation fails on it when a later part cannot be read (the
// webhooks' endpoint refused, the handoff state's read an error), as the
// feature's confirm steps do; the part left unread says why in its
// confirmation line. Without anything failed first, it errors as before.
func TestConfirmFailureBeforeUnreadablePart(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	src := `suite: partial
agent: ` + e.clinic + `
scenarios:
  - name: wrong channel, webhooks unreadable
    turns:
      - say: I have chest pain
    confirm:
      conversation: {channel: VOICE}
      webhooks: [handoff.created]
  - name: webhooks unreadable alone
    turns:
      - say: I have chest pain
    confirm:
      conversation: {channel: WEBCHAT}
      webhooks: [handoff.created]
`
	opts := e.opts()
	opts.Webhooks = brokenReceiver{}
	opts.Retries = 1
	res, err := Run(context.Background(), loadYAML(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	a := c.Last()
	// Retried as any failure is (the record may lag), though the
	// endpoint's error alone is not.
	if c.Status != result.Failed || a.Error != nil || len(a.Failures) != 1 || len(c.Attempts) != 2 {
		t.Fatalf("%s: %s after %d attempts%s, want failed on the channel alone, twice", c.Name, c.Status, len(c.Attempts), describe(c))
	}
	if f := a.Failures[0]; f.Pos.Line != 8 || f.Key != "confirm.conversation.channel" || f.Expected != "VOICE" || f.Actual != "WEBCHAT" {
		t.Errorf("failure %s %s: expected %q actual %q", f.Pos, f.Key, f.Expected, f.Actual)
	}
	// The line says what the receiver said, as the docs show it
	// (✗ webhook handoff.created: the run's webhook endpoint ...), not
	// the case error's words around it.
	last := a.Confirmations[len(a.Confirmations)-1]
	if last.Kind != result.ConfirmWebhook || last.Found || last.Summary != "the run's webhook endpoint could not be registered: 400" {
		t.Errorf("webhook confirmation %+v, want its error", last)
	}
	c = res.Files[0].Cases[1]
	a = c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Pos.Line != 15 || len(a.Failures) != 0 || len(c.Attempts) != 1 {
		t.Errorf("%s: %s%s, want errored at the webhooks", c.Name, c.Status, describe(c))
	}
	if last := a.Confirmations[len(a.Confirmations)-1]; last.Kind != result.ConfirmWebhook || last.Found || !strings.Contains(last.Summary, "could not be registered") {
		t.Errorf("webhook confirmation %+v, want its error", last)
	}
}

// interrupting is a receiver that interrupts the run while it waits.
type interrupting struct {
	MarkingWebhooks
	interrupt context.CancelFunc
}

func (w interrupting) WaitAfter(ctx context.Context, conversationID, eventType string, after webhook.Mark) (webhook.Event, error) {
	w.interrupt()
	<-ctx.Done()
	return w.MarkingWebhooks.WaitAfter(ctx, conversationID, eventType, after)
}

// TestConfirmWebhookWaitInterrupted: a run interrupted while a
// confirmation waits for a webhook gives no verdict, though a check of
// the same confirm failed before: the attempt is interrupted, and the
// line of the wait does not blame the scenario's timeout.
func TestConfirmWebhookWaitInterrupted(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := e.opts()
	opts.Webhooks = interrupting{MarkingWebhooks: e.rcv, interrupt: cancel}
	res, err := Run(ctx, loadYAML(t, "suite: interrupted\nagent: "+e.clinic+"\nscenarios:\n  - name: wrong channel, then interrupted\n"+
		"    turns: [{say: I have chest pain}]\n    confirm: {conversation: {channel: VOICE}, webhooks: [call.transferred]}\n"), opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	a := c.Last()
	if a.Error == nil || a.Error.Kind != result.KindInterrupted || a.Error.Message != "confirm: webhooks: run interrupted" || len(a.Failures) != 0 || c.Status == result.Failed {
		t.Fatalf("%s%s, want interrupted at the webhooks, no failure", c.Status, describe(c))
	}
	if last := a.Confirmations[len(a.Confirmations)-1]; last.Kind != result.ConfirmWebhook || last.Found || strings.Contains(last.Summary, "scenario timeout") {
		t.Errorf("webhook line %+v", last)
	}
}

// TestStepsOutOfOrder: steps handed over one at a time (godog) in an
// order no loader writes: a setup step after the probe that started the
// scenario, a call status with no call placed. Each errors at its step,
// saying why, rather than applying to nothing or crashing.
func TestStepsOutOfOrder(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	sms := func(t *testing.T) *scenario.Scenario {
		suites := loadYAML(t, `suite: order
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}
`)
		return suites[0].Scenarios[0]
	}
	for _, tc := range []struct {
		name    string
		program func(t *testing.T) *scenario.Scenario
		kind    string
		want    string
	}{
		{"a setup step after the probe", func(t *testing.T) *scenario.Scenario {
			sc := sms(t)
			sc.Steps = append(sc.Steps, &steps.Step{Kind: steps.Setup, Pos: pos(9, 5), Setup: func(p *steps.Params, _ steps.Expander) error {
				p.Env = "production"
				return nil
			}})
			return sc
		}, result.KindConfig, "a setup step must come before the conversation starts"},
		{"a call status with no call", func(*testing.T) *scenario.Scenario {
			return &scenario.Scenario{Name: "status", Pos: pos(3, 3),
				Steps: []*steps.Step{{Kind: steps.CallStatus, Pos: pos(9, 5), Status: &steps.StatusSpec{Want: "success", Pos: pos(9, 9)}}}}
		}, result.KindInternal, "no call was placed"},
		{"a confirmation after a call that failed as expected", func(t *testing.T) *scenario.Scenario {
			suites := loadYAML(t, "suite: order\nscenarios:\n  - name: call\n"+
				`    probe: {outbound_call: {to: "`+unreachable+`"}, expect_status: failure, within: 5s}`+"\n")
			sc := suites[0].Scenarios[0]
			sc.Steps = append(sc.Steps, &steps.Step{Kind: steps.Confirm, Pos: pos(9, 5), Confirm: func(steps.Expander) (*assert.Confirm, error) {
				return &assert.Confirm{Pos: pos(9, 5), Conversation: &assert.ConversationChecks{Pos: pos(9, 7)}}, nil
			}})
			return sc
		}, result.KindInternal, "confirm: the call ended in failure: there is no conversation to confirm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), []*scenario.Suite{suite(file, tc.program(t))}, e.opts())
			if err != nil {
				t.Fatal(err)
			}
			c := res.Files[0].Cases[0]
			if e := c.Last().Error; c.Status != result.Errored || e == nil || e.Kind != tc.kind || e.Pos != pos(9, 5) || e.Message != tc.want || c.Env == "production" {
				t.Errorf("%s in env %s, want errored (%s) at %s saying %q%s", c.Status, c.Env, tc.kind, pos(9, 5), tc.want, describe(c))
			}
		})
	}
}

// TestWebhookMissingRecordUnsettled: what the record says when the wait
// for the event ends is what counts. A call probe's record read before
// the wait said in_progress (the call was still on), and the call ended
// during the wait without its event: the platform's, not "the agent did
// not end it". And a chat the agent ended whose record never settles
// (a platform that keeps in_progress) is the platform's too: the agent
// ended it.
func TestWebhookMissingRecordUnsettled(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	for _, tc := range []struct {
		name, src string
		records   func() Records
		// fake runs the case on a fake clock; a call goes on on the
		// simulator's real one, and its receiver's wait passes at once.
		fake bool
		want string
	}{
		{"the call ended during the wait", `
  - name: event
    probe: {outbound_call: {to: "+447700900001"}, within: 5s}
    confirm:
      webhooks: [conversation.completed]
`, func() Records {
			// The first read of the call's record says it is still
			// on; every later one says what the simulator says.
			var once sync.Once
			return e.rewritten(t, func(body string) string {
				if strings.Contains(body, `"channel":"VOICE-SIP"`) && !strings.Contains(body, `"conversations"`) {
					once.Do(func() { body = strings.ReplaceAll(body, `"in_progress":false`, `"in_progress":true`) })
				}
				return body
			})
		}, false, `arrived within 3s, while the conversation ended (its record says in_progress=false): the platform never delivered`},
		{"the agent ended the chat, the record never settles", `
  - name: event
    turns:
      - say: I have chest pain
    confirm:
      webhooks: [conversation.completed]
`, func() Records { return e.unsettled(t) }, true, `arrived within 500ms, while the agent ended the chat (the reference names`},
		{"the handoff recorded during the wait", `
  - name: event
    turns:
      - say: I have chest pain
    confirm:
      webhooks: [handoff.created]
`, func() Records {
			// The first read of the ended record does not show its
			// handoff yet; every later one does.
			var once sync.Once
			return e.rewritten(t, func(body string) string {
				if strings.Contains(body, `"in_progress":false`) && !strings.Contains(body, `"conversations"`) {
					once.Do(func() { body = strings.ReplaceAll(body, `"handoff":true`, `"handoff":false`) })
				}
				return body
			})
		}, true, `arrived within 500ms, while the agent handed off (its record says handoff=true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := e.opts()
			opts.Records = tc.records()
			rcv := webhook.NewReceiver(webhook.Options{Secret: "whsec_00000000000000000000000000000000"})
			opts.Webhooks = boundPassed{Receiver: rcv}
			if tc.fake {
				clk := fakeclock.New()
				opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
				opts.Webhooks = waitedOut{MarkingWebhooks: rcv, clk: clk}
				opts.ConfirmTimeout = 500 * time.Millisecond
			}
			c := runOne(t, opts, "suite: whose\nagent: "+e.clinic+"\nscenarios:"+tc.src)
			if c.Status != result.Errored {
				t.Fatalf("status %s, want errored%s", c.Status, describe(c))
			}
			if got := said(c.Last()); !strings.Contains(got, tc.want) {
				t.Errorf("said %q\nwant %q", got, tc.want)
			}
		})
	}
}
