package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// lineRuntime is a runtime host that never names the conversation of a
// call or an SMS unless told to: each send or call opens a conversation
// conv-TAG (TAG is the SMS's message, or the call's metadata tag) with
// the number it went to, listed among project p1's conversations as the
// test decides. Every answer goes over real HTTP.
type lineRuntime struct {
	mu sync.Mutex
	// named says whether the send of the SMS TAG is answered with its
	// conversation (200 and conversation_id) or without (202).
	named func(tag string) bool
	// listed says whether conversation c is listed, posts calls or
	// sends and reads reads of the list having been made; nil lists
	// every conversation at once.
	listed func(c *lineConv, posts, reads int) bool
	// hold keeps the first call or send unanswered until a second one
	// comes, or a probe waits for its line: without the lines, the two
	// probes' searches overlap whatever the scheduler does.
	hold    bool
	held    bool
	release chan struct{}
	once    sync.Once

	// content records what names a conversation, as the reference has
	// it: an SMS's text as its greeting (the agent_response of its first
	// turn) and a call's sid as its state key call_sid.
	content bool

	convs        []*lineConv
	posts, reads int
	// waits counts the probes that found their line taken; waiting, when
	// set, is told of each.
	waits   int
	waiting func()
}

// lineConv is a conversation of the line runtime; post and reads are the
// calls or sends and list reads made when it opened.
type lineConv struct {
	id, to, channel string
	// greeting and sid name it (lineRuntime.content).
	greeting, sid string
	started       time.Time
	post, reads   int
}

func (h *lineRuntime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && (p == "/v1/outbound-sms" || p == "/v1/outbound-calling"):
		var body struct {
			To       string `json:"to_number"`
			Message  string `json:"message"`
			Metadata struct {
				Tag string `json:"tag"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.wait(r)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.posts++
		c := &lineConv{to: body.To, started: fakeclock.Start.Add(time.Duration(h.posts) * time.Second), post: h.posts, reads: h.reads}
		if p == "/v1/outbound-sms" {
			c.id, c.channel = h.convID(body.Message), "SMS"
			if h.content {
				c.greeting = body.Message
			}
			h.convs = append(h.convs, c)
			if h.named != nil && h.named(body.Message) {
				fmt.Fprintf(w, `{"conversation_id":%q}`, c.id)
				return
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		c.id, c.channel = h.convID(body.Metadata.Tag), "VOICE-SIP"
		if h.content {
			c.sid = "OUT-" + body.Metadata.Tag
		}
		h.convs = append(h.convs, c)
		fmt.Fprintf(w, `{"call_sid":"OUT-%s","status":"queued"}`, body.Metadata.Tag)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/outbound-calling/") && strings.HasSuffix(p, "/status"):
		sid := strings.TrimSuffix(strings.TrimPrefix(p, "/v1/outbound-calling/"), "/status")
		fmt.Fprintf(w, `{"call_sid":%q,"status":"success"}`, sid)
	case r.Method == http.MethodGet && p == "/v3/ws-abcd1234/p1/conversations":
		h.mu.Lock()
		defer h.mu.Unlock()
		h.reads++
		var recs []string
		for _, c := range h.convs {
			if h.listed == nil || h.listed(c, h.posts, h.reads) {
				rec := record(c.id, c.to, c.channel, c.started, true, false, "")
				if c.sid != "" {
					rec = record(c.id, c.to, c.channel, c.started, true, false, fmt.Sprintf(`"call_sid":%q`, c.sid))
				}
				if c.greeting != "" {
					rec = strings.TrimSuffix(rec, "}") + fmt.Sprintf(`,"turns":[{"user_input":"","agent_response":%q}]}`, c.greeting)
				}
				recs = append(recs, rec)
			}
		}
		fmt.Fprintf(w, `{"conversations":[%s],"cursor":null}`, strings.Join(recs, ","))
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error_message":"no such path"}`)
	}
}

// convID names the next conversation of tag: conv-TAG, then conv-TAG-2
// and so on for the runs of a repeated scenario.
func (h *lineRuntime) convID(tag string) string {
	n := 1
	for _, c := range h.convs {
		if c.id == "conv-"+tag || strings.HasPrefix(c.id, "conv-"+tag+"-") {
			n++
		}
	}
	if n == 1 {
		return "conv-" + tag
	}
	return fmt.Sprintf("conv-%s-%d", tag, n)
}

// wait holds the first call or send, when told to, until open.
func (h *lineRuntime) wait(r *http.Request) {
	h.mu.Lock()
	first := h.hold && !h.held
	h.held = true
	h.mu.Unlock()
	if !first {
		h.open()
		return
	}
	select {
	case <-h.release:
	case <-r.Context().Done():
	}
}

func (h *lineRuntime) open() { h.once.Do(func() { close(h.release) }) }

// runLine runs src (agent p1) against h with parallel sessions, the
// runner on a fake clock, and returns its cases.
func runLine(t *testing.T, h *lineRuntime, src string, parallel int) []*result.Case {
	t.Helper()
	res := runLineIn(t, context.Background(), h, src, parallel)
	return res.Files[0].Cases
}

// runLineIn is runLine in ctx, returning the result.
func runLineIn(t *testing.T, ctx context.Context, h *lineRuntime, src string, parallel int) *result.Result {
	t.Helper()
	h.release = make(chan struct{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := hostileClient(t, srv.URL)
	clk := fakeclock.New()
	lines := newProbeLines()
	lines.onWait = func(string) {
		h.mu.Lock()
		h.waits++
		h.mu.Unlock()
		if h.waiting != nil {
			h.waiting()
			return
		}
		h.open()
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := Run(ctx, loadYAML(t, src), Options{
		Channel: DebugChat(c), Records: c, DefaultAgent: "p1", Parallel: parallel, RetryDelay: -1,
		TurnTimeout: 5 * time.Second, ConfirmTimeout: 30 * time.Second,
		Connector: func(string, string) string { return "conn-1" },
		Now:       clk.Now, Sleep: clk.Sleep, lines: lines,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// twoProbes is a suite of two scenarios, A and B, each one probe.
func twoProbes(a, b string) string {
	return `suite: probes
agent: p1
scenarios:
  - name: A
    probe: ` + a + `
  - name: B
    probe: ` + b + "\n"
}

// TestProbesToOneNumberTakeTurns: two probes of one run to one number
// whose conversations the platform does not name searched for them side
// by side; each saw both conversations, neither listed before it, and
// both took the latest: one probe passed on the conversation of the
// other, and its agent was never tested. The probes to a number now take
// turns from the list read before them until their conversation is
// found; probes to other numbers still run side by side.
func TestProbesToOneNumberTakeTurns(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, a, b string
		// turns: the second probe waited for the line of the first.
		turns bool
	}
	sms := func(to, tag string) string {
		return fmt.Sprintf(`{sms: {to: "%s", message: "%s"}}`, to, tag)
	}
	call := func(to, tag string) string {
		return fmt.Sprintf(`{outbound_call: {to: "%s", metadata: {tag: "%s"}}, within: 2m}`, to, tag)
	}
	run := func(t *testing.T, tc testCase) {
		h := &lineRuntime{hold: true}
		cases := runLine(t, h, twoProbes(tc.a, tc.b), 2)
		for _, c := range cases {
			a := c.Last()
			if c.Status != result.Passed || a.ConversationID != "conv-"+c.Name {
				t.Errorf("probe %s: %s on conversation %q, want passed on conv-%s, the conversation it opened%s", c.Name, c.Status, a.ConversationID, c.Name, describe(c))
			}
		}
		if got := h.waits > 0; got != tc.turns {
			t.Errorf("%d probes waited for their line, want waits %t", h.waits, tc.turns)
		}
	}
	for _, tc := range []testCase{
		{name: "SMS to one number", a: sms("+447700900002", "A"), b: sms("+44 7700 900002", "B"), turns: true},
		{name: "calls to one number", a: call("+447700900002", "A"), b: call("+447700900002", "B"), turns: true},
		{name: "a call and an SMS to one number", a: call("+447700900002", "A"), b: sms("+447700900002", "B"), turns: true},
		{name: "SMS to two numbers", a: sms("+447700900002", "A"), b: sms("+447700900003", "B"), turns: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestProbeRepeatsTakeTurns: the runs of a repeated probe scenario go
// side by side on idle slots, and took one conversation between them;
// they take turns on the number, each on its own conversation.
// twoSMSToOneNumber is a suite of two SMS probes, A and B, to one number.
const twoSMSToOneNumber = `suite: probes
agent: p1
scenarios:
  - name: A
    probe: {sms: {to: "+447700900002", message: "A"}}
  - name: B
    probe: {sms: {to: "+447700900002", message: "B"}}
`

func TestProbeRepeatsTakeTurns(t *testing.T) {
	t.Parallel()
	h := &lineRuntime{hold: true}
	cases := runLine(t, h, `suite: probes
agent: p1
scenarios:
  - name: A
    repeat: 2
    probe: {sms: {to: "+447700900002", message: "A"}}
`, 2)
	c := cases[0]
	seen := map[string]bool{}
	for _, a := range c.Attempts {
		if a.Status != result.Passed || seen[a.ConversationID] {
			t.Errorf("run %d: %s on conversation %q, want passed on a conversation of its own%s", a.Run, a.Status, a.ConversationID, describe(c))
		}
		seen[a.ConversationID] = true
	}
	if c.Status != result.Passed || len(c.Attempts) != 2 || h.waits != 1 {
		t.Errorf("%s after %d runs, %d waits for the line; want passed after 2, one wait%s", c.Status, len(c.Attempts), h.waits, describe(c))
	}
}

// TestProbeLeavesClaimedConversations: the conversation of an SMS the
// platform named, listed too late for the read before the next probe to
// the number, was taken by that probe's search (its own not listed yet):
// the conversation a probe of the run made its own is no other's.
func TestProbeLeavesClaimedConversations(t *testing.T) {
	t.Parallel()
	h := &lineRuntime{
		named: func(tag string) bool { return tag == "A" },
		listed: func(c *lineConv, posts, reads int) bool {
			if c.id == "conv-A" {
				return posts >= 2 // listed once B was sent
			}
			return reads >= c.reads+2 // from the second read after it
		},
	}
	cases := runLine(t, h, twoSMSToOneNumber, 1)
	for _, c := range cases {
		if a := c.Last(); c.Status != result.Passed || a.ConversationID != "conv-"+c.Name {
			t.Errorf("probe %s: %s on conversation %q, want passed on conv-%s%s", c.Name, c.Status, a.ConversationID, c.Name, describe(c))
		}
	}
}

// TestProbeConversationAmbiguous: when two conversations match a probe
// equally well (another call or SMS to the number, from outside the run,
// overlapped it), the probe cannot be confirmed: the case errors saying
// so. The latest was taken, and the probe passed on a conversation it may
// not have caused. A conversation whose call_sid names another call is
// not a call's, whatever its number.
func TestProbeConversationAmbiguous(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	at := func(s int) time.Time { return fakeclock.Start.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name, probe string
		smsStatus   int
		// list is what the list holds after the probe.
		list   []string
		status result.Status
		conv   string
	}{
		{name: "two SMS conversations", probe: `{sms: {to: "` + to + `", message: "hi"}}`, smsStatus: http.StatusAccepted,
			list:   []string{record("conv-x", to, "SMS", at(1), true, false, ""), record("conv-y", to, "SMS", at(2), true, false, "")},
			status: result.Errored},
		{name: "two call conversations", probe: `{outbound_call: {to: "` + to + `"}, within: 2m}`,
			list:   []string{record("conv-x", to, "VOICE-SIP", at(1), true, false, ""), record("conv-y", to, "VOICE-SIP", at(2), true, false, "")},
			status: result.Errored},
		{name: "one SMS conversation", probe: `{sms: {to: "` + to + `", message: "hi"}}`, smsStatus: http.StatusAccepted,
			list:   []string{record("conv-x", to, "SMS", at(1), true, false, "")},
			status: result.Passed, conv: "conv-x"},
		{name: "another call's conversation", probe: `{outbound_call: {to: "` + to + `"}, within: 2m}`,
			list:   []string{record("conv-x", to, "VOICE-SIP", at(1), true, false, ""), record("conv-y", to, "VOICE-SIP", at(2), true, false, `"call_sid":"OUT-9"`)},
			status: result.Passed, conv: "conv-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{smsStatus: tc.smsStatus,
				status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` },
				list: func(n int) []string {
					if n == 0 {
						return nil
					}
					return tc.list
				},
				get: func(string) *string { return nil }}
			c := runHostile(t, h, "suite: s\nagent: p1\nscenarios:\n  - name: probe\n    probe: "+tc.probe+"\n")
			a := c.Last()
			if c.Status != tc.status {
				t.Fatalf("%s on conversation %q, want %s%s", c.Status, a.ConversationID, tc.status, describe(c))
			}
			if tc.status == result.Passed && a.ConversationID != tc.conv {
				t.Errorf("passed on conversation %q, want %s", a.ConversationID, tc.conv)
			}
			if tc.status == result.Errored && (a.Error.Kind != result.KindHTTP || a.Error.Pos.Line != 5 ||
				!strings.Contains(a.Error.Message, "2 conversations match it (conv-x, conv-y), and the platform named none of them as the probe's: "+
					"another call or SMS to this number, from outside the run, overlapped the probe, so its outcome cannot be confirmed")) {
				t.Errorf("error %s [%s]: %s", a.Error.Pos, a.Error.Kind, a.Error.Message)
			}
		})
	}
}

// TestProbeLineWaitInterrupted: a probe waiting for its number's line
// when the run is interrupted stops waiting, and its case is left
// unfinished (Pending), like the probe holding the line: neither the
// agent's failure nor the platform's error.
func TestProbeLineWaitInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &lineRuntime{hold: true, waiting: cancel}
	res := runLineIn(t, ctx, h, twoSMSToOneNumber, 2)
	if !res.Interrupted {
		t.Error("the run is not marked interrupted")
	}
	waited := 0
	for _, c := range res.Files[0].Cases {
		if c.Status != result.Pending || c.SkipReason != result.ReasonInterrupted {
			t.Errorf("probe %s: %s (%q), want pending, interrupted%s", c.Name, c.Status, c.SkipReason, describe(c))
		}
		if a := c.Last(); a != nil && a.Error != nil && strings.Contains(a.Error.Message, "probe: wait for the other probes to +447700900002: run interrupted") {
			waited++
		}
	}
	if waited != 1 {
		t.Errorf("%d probes stopped waiting for the line, want 1", waited)
	}
	if h.waits != 1 {
		t.Errorf("%d probes waited for the line, want 1", h.waits)
	}
}

// TestProbeLeavesLateConversationsOfLostProbes: a probe that found no
// conversation (none listed: the platform's error) left its number with a conversation
// that may still come: listed late, after the read before the next probe
// to the number, it was taken by that probe's search while its own was
// not listed yet. A probe that ends without its conversation is lost on
// the line, with what names its conversation (an SMS's text, its greeting;
// a call's sid, its call_sid): a later probe leaves the conversation it
// names, and finds its own.
func TestProbeLeavesLateConversationsOfLostProbes(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	sms := func(tag string) string { return fmt.Sprintf(`{sms: {to: "%s", message: "%s"}}`, to, tag) }
	call := func(tag string) string {
		return fmt.Sprintf(`{outbound_call: {to: "%s", metadata: {tag: "%s"}}, within: 2m}`, to, tag)
	}
	for _, tc := range []struct{ name, a, b string }{
		{name: "an SMS after a lost SMS", a: sms("A"), b: sms("B")},
		{name: "an SMS after a lost call", a: call("A"), b: sms("B")},
		{name: "a call after a lost SMS", a: sms("A"), b: call("B")},
		// A call's own search already leaves a conversation whose call_sid
		// names another call.
		{name: "a call after a lost call", a: call("A"), b: call("B")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &lineRuntime{content: true,
				listed: func(c *lineConv, posts, reads int) bool {
					if c.id == "conv-A" {
						return posts >= 2 // listed once B was sent: after A's bound
					}
					return reads >= c.reads+2 // from the second read after it
				},
			}
			cases := runLine(t, h, twoProbes(tc.a, tc.b), 1)
			a, b := cases[0], cases[1]
			if e := a.Last().Error; a.Status != result.Errored || e == nil || e.Kind != result.KindTimeout || !strings.Contains(e.Message, "none listed") {
				t.Errorf("probe A: %s, want errored: none listed, its conversation listed too late%s", a.Status, describe(a))
			}
			if got := b.Last().ConversationID; b.Status != result.Passed || got != "conv-B" {
				t.Errorf("probe B: %s on conversation %q, want passed on conv-B, the conversation it opened%s", b.Status, got, describe(b))
			}
		})
	}
}

// TestProbeRetryAfterLostSMS: the retry of a lost SMS sends the same text,
// which names its own conversation as much as the lost one's: it is not
// left out, and the retry finds it.
func TestProbeRetryAfterLostSMS(t *testing.T) {
	t.Parallel()
	h := &lineRuntime{content: true,
		listed: func(c *lineConv, posts, reads int) bool { return c.id != "conv-A" }, // the first send's: never
	}
	c := runLine(t, h, `suite: probes
agent: p1
scenarios:
  - name: A
    retries: 1
    probe: {sms: {to: "+447700900002", message: "A"}}
`, 1)[0]
	if got := c.Last().ConversationID; c.Status != result.Flaky || got != "conv-A-2" {
		t.Errorf("%s on conversation %q, want flaky on conv-A-2, the retry's own%s", c.Status, got, describe(c))
	}
}
