package runner

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/webhook"
)

// hostileRuntime is a runtime host written by someone else: outbound
// calls, SMS and the Conversations reads of project p1, whose answers
// each test chooses. Every answer is read over real HTTP; the runner and
// the client wait on fake clocks.
type hostileRuntime struct {
	mu sync.Mutex
	// status answers the n-th read of call OUT-1's status (from 1); ""
	// answers 404.
	status func(n int) string
	// sms answers the SMS send: status and body; smsAnswer, when set,
	// answers the n-th send (from 1) instead, as a platform names a new
	// conversation for each. smsSends counts the sends.
	smsStatus int
	smsBody   string
	smsAnswer func(n int) (int, string)
	smsSends  int
	// callStatus, when set, answers the call's placement with it.
	callStatus int
	// callBody, when set, is the answer to the call's placement.
	callBody string
	// list answers the n-th read of the conversations list made after
	// the probe called or texted (from 1; 0 for a read made before);
	// get answers a read of one record (nil for 404).
	list func(n int) []string
	// page, when set, answers the list instead of list, by the
	// query's limit and cursor: a page of it and the next cursor ("" on
	// the last).
	page func(q url.Values) (items []string, next string)
	// offsets, with page, pages by offset as a v3 list may: the next
	// page is a next_offset, the cursor always null.
	offsets bool
	get     func(id string) *string
	// getAnswer, when set, answers the n-th read of a record (from 1)
	// with its status and body instead of get.
	getAnswer func(n int) (int, string)
	// audio, when set, answers the n-th read of a recording (from 1):
	// status and body.
	audio      func(n int) (int, string)
	audioReads int
	// audioStream, when set, writes the answer to a read of a
	// recording itself (a body too large to hold as a string).
	audioStream func(w http.ResponseWriter)
	// handoff, when set, answers the reads of the handoff state, given
	// their query.
	handoff func(q url.Values) (int, string)
	// retryAfter is the Retry-After of those answers' 429s (default an
	// hour).
	retryAfter string
	// listFails, when set, answers every read of the list with a 403.
	listFails bool
	// hang, when it says so of a request (probed: after the probe
	// called or texted), holds it unanswered while the runner's clock
	// (clk, set by runHostile) moves held on.
	hang func(r *http.Request, probed bool) bool
	held time.Duration
	clk  *fakeclock.Clock

	probed      bool
	statusReads int
	listReads   int
	getReads    int
}

func (h *hostileRuntime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/v1/outbound-calling" && h.callStatus != 0:
		h.probed = true
		w.WriteHeader(h.callStatus)
		fmt.Fprint(w, `{"error_message":"refused"}`)
	case r.Method == http.MethodPost && p == "/v1/outbound-calling":
		h.probed = true
		fmt.Fprint(w, cmp.Or(h.callBody, `{"call_sid":"OUT-1","status":"queued"}`))
	case h.hang != nil && h.hang(r, h.probed):
		// Held until the client gives the request up, answered to
		// nobody: the runner's clock moves on meanwhile, and its bounds
		// due by then cut the request at once.
		h.mu.Unlock()
		h.clk.Advance(h.held)
		<-r.Context().Done()
		h.mu.Lock()
		w.WriteHeader(http.StatusInternalServerError)
	case r.Method == http.MethodGet && p == "/v1/outbound-calling/OUT-1/status":
		h.statusReads++
		body := h.status(h.statusReads)
		if body == "" {
			// Not known (yet, or any more).
			w.WriteHeader(http.StatusNotFound)
			body = `{"error_message":"call not found"}`
		}
		fmt.Fprint(w, body)
	case r.Method == http.MethodPost && p == "/v1/outbound-sms":
		h.probed = true
		h.smsSends++
		status, body := h.smsStatus, h.smsBody
		if h.smsAnswer != nil {
			status, body = h.smsAnswer(h.smsSends)
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	case r.Method == http.MethodGet && p == "/v3/ws-abcd1234/p1/conversations" && h.listFails:
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error_message":"the key has no right to list conversations"}`)
	case r.Method == http.MethodGet && p == "/v3/ws-abcd1234/p1/conversations":
		n := 0
		if h.probed {
			h.listReads++
			n = h.listReads
		}
		if h.page != nil {
			items, next := h.page(r.URL.Query())
			cursor := "null"
			switch {
			case next != "" && h.offsets:
				cursor = "null," + `"next_offset":` + next
			case next != "":
				cursor = strconv.Quote(next)
			}
			fmt.Fprintf(w, `{"conversations":[%s],"cursor":%s}`, strings.Join(items, ","), cursor)
			return
		}
		fmt.Fprintf(w, `{"conversations":[%s],"cursor":null}`, strings.Join(h.list(n), ","))
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v3/ws-abcd1234/p1/conversations/") && strings.HasSuffix(p, "/audio") && h.audioStream != nil:
		h.audioReads++
		h.audioStream(w)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v3/ws-abcd1234/p1/conversations/") && strings.HasSuffix(p, "/audio") && h.audio != nil:
		h.audioReads++
		status, body := h.audio(h.audioReads)
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "audio/wav")
		}
		h.answer(w, status, body)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v3/ws-abcd1234/p1/conversations/") && h.getAnswer != nil:
		h.getReads++
		status, body := h.getAnswer(h.getReads)
		h.answer(w, status, body)
	case r.Method == http.MethodGet && p == "/v1/ws-abcd1234/p1/handoff_state" && h.handoff != nil:
		status, body := h.handoff(r.URL.Query())
		h.answer(w, status, body)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v3/ws-abcd1234/p1/conversations/"):
		h.getReads++
		if rec := h.get(strings.TrimPrefix(p, "/v3/ws-abcd1234/p1/conversations/")); rec != nil {
			fmt.Fprint(w, *rec)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error_message":"conversation not found"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error_message":"no such path"}`)
	}
}

// answer writes a chosen answer.
func (h *hostileRuntime) answer(w http.ResponseWriter, status int, body string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", cmp.Or(h.retryAfter, "3600"))
	}
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// newConversations answers the n-th SMS naming conversation conv-n, one of
// its own, as the reference's send "opens a new conversation session".
func newConversations(n int) (int, string) {
	return http.StatusOK, `{"conversation_id":"conv-` + strconv.Itoa(n) + `"}`
}

// hostileClient is a client of the hostile runtime at url (build and
// runtime alike) that makes each call once, its pauses on a fake clock.
func hostileClient(t *testing.T, url string) *platform.Client {
	t.Helper()
	return hostileClientOn(t, url, nil)
}

// hostileClientOn is hostileClient whose clock, when clk is set, is clk:
// its waits on rate limits move the runner's clock, as real ones do.
func hostileClientOn(t *testing.T, url string, clk *fakeclock.Clock) *platform.Client {
	t.Helper()
	cfg := platform.Config{BuildURL: url, RuntimeURL: url, AccountID: "ws-abcd1234",
		BuildKey: "bk-secret-build", RuntimeKey: "rk-secret-runtime",
		Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}}
	if clk != nil {
		cfg.Now, cfg.Retry.Sleep = clk.Now, clk.Sleep
	}
	c, err := platform.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runHostile runs suite src (agent p1) against h, the runner and its
// bounds on a fake clock, and returns its one case; edit, when given,
// edits the options.
func runHostile(t *testing.T, h *hostileRuntime, src string, edit ...func(*Options)) *result.Case {
	t.Helper()
	return runHostileRun(t, h, src, edit...).Files[0].Cases[0]
}

// runHostileRun is runHostile returning the whole result.
func runHostileRun(t *testing.T, h *hostileRuntime, src string, edit ...func(*Options)) *result.Result {
	t.Helper()
	clk := fakeclock.New()
	h.clk = clk
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := hostileClientOn(t, srv.URL, clk)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := Options{
		Channel: DebugChat(c), Records: c, DefaultAgent: "p1", Parallel: 1, RetryDelay: -1,
		TurnTimeout: 5 * time.Second, ConfirmTimeout: 30 * time.Second,
		Connector: func(string, string) string { return "conn-1" },
		Now:       clk.Now, Sleep: clk.Sleep, AfterFunc: clk.AfterFunc,
	}
	for _, f := range edit {
		f(&o)
	}
	res, err := Run(ctx, loadYAML(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// record is a Conversation summary of project p1.
func record(id, to, channel string, started time.Time, inProgress, handoff bool, state string) string {
	return fmt.Sprintf(`{"id":%q,"account_id":"ws-abcd1234","project_id":"p1","environment":"sandbox","started_at":%q,`+
		`"channel":%q,"to_number":%q,"in_progress":%t,"num_turns":1,"handoff":%t,"state":{%s}}`,
		id, started.UTC().Format(time.RFC3339Nano), channel, to, inProgress, handoff, state)
}

// TestCallStatusOutsideTheReference: a call status that is none of the
// reference's four values is the platform's error, at the first read. It
// was taken for a call still in progress and polled until within: passed
// (a call that never ended failed the agent, probe.status), however the
// call ended.
func TestCallStatusOutsideTheReference(t *testing.T) {
	t.Parallel()
	const suite = `suite: calls
agent: p1
scenarios:
  - name: call
    probe: {outbound_call: {to: "+447700900001"}, expect_status: failure, within: 2m}
`
	for _, status := range []string{"completed", "busy", "no-answer", "failed", "canceled", "ringing"} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{list: func(int) []string { return nil }, get: func(string) *string { return nil },
				status: func(n int) string { return fmt.Sprintf(`{"call_sid":"OUT-1","status":%q}`, status) }}
			c := runHostile(t, h, suite)
			a := c.Last()
			if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindHTTP ||
				!strings.Contains(a.Error.Message, fmt.Sprintf(`malformed response: status is %q, want one of queued, calling, success, failure`, status)) {
				t.Fatalf("%s, want errored on the status%s", c.Status, describe(c))
			}
			if h.statusReads != 1 {
				t.Errorf("%d status reads, want 1: the status is wrong, not late", h.statusReads)
			}
		})
	}
}

// TestProbeFindsItsOwnConversation: the conversation of a probe the
// platform gives no id for is found by number, among those listed since
// shortly before the probe (the clocks differ). One that was listed
// before the probe called or texted (the conversation of an earlier
// attempt or run, same agent, same number, seconds before) is not the
// probe's, though it is listed and the probe's own is not yet: it was
// taken, and confirmed the probe.
func TestProbeFindsItsOwnConversation(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	before := fakeclock.Start.Add(-30 * time.Second)
	for _, tc := range []struct {
		name, probe, channel string
		smsStatus            int
		smsBody              string
	}{
		{name: "sms accepted without a body", probe: `{sms: {to: "` + to + `", message: "Reply YES"}}`, channel: "SMS", smsStatus: http.StatusAccepted},
		// The reference shows no SMS answer: a session id there may
		// name the SMS session rather than a conversation, and read as
		// the conversation's id it would be waited for in vain and fail
		// the agent.
		{name: "sms answered with a session id", probe: `{sms: {to: "` + to + `", message: "Reply YES"}}`, channel: "SMS",
			smsStatus: http.StatusOK, smsBody: `{"session_id":"sms-ses-1","status":"sent"}`},
		{name: "call without a conversation id", probe: `{outbound_call: {to: "` + to + `"}, within: 2m}`, channel: "VOICE-SIP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stale := record("conv-earlier", to, tc.channel, before, false, true, "")
			// A call that reached success ended: so has its record (one
			// still in progress would be awaited, and lag).
			own := record("conv-own", to, tc.channel, fakeclock.Start.Add(time.Second), tc.channel != "VOICE-SIP", false, `"call_sid":"OUT-1"`)
			h := &hostileRuntime{
				smsStatus: tc.smsStatus, smsBody: tc.smsBody,
				status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` },
				// The earlier conversation is listed all along; the
				// probe's own from the second read after the probe.
				list: func(n int) []string {
					if n >= 2 {
						return []string{stale, own}
					}
					return []string{stale}
				},
				get: func(id string) *string {
					switch id {
					case "conv-earlier":
						return &stale
					case "conv-own":
						return &own
					}
					return nil
				},
			}
			c := runHostile(t, h, `suite: probes
agent: p1
scenarios:
  - name: probe
    probe: `+tc.probe+`
    confirm: {conversation: {handoff: true}}
`)
			a := c.Last()
			if a.ConversationID != "conv-own" {
				t.Fatalf("confirmed conversation %q, want conv-own%s", a.ConversationID, describe(c))
			}
			if c.Status != result.Failed || a.Failures[0].Key != "confirm.conversation.handoff" {
				t.Errorf("%s, want failed on the own conversation's handoff%s", c.Status, describe(c))
			}
			// The probe's line counts the reads that waited for its
			// conversation (the send, or the placing and the status,
			// then two of the list), which its reports show beside the
			// time they took.
			want := 3
			if tc.channel == "VOICE-SIP" {
				want = 4
			}
			if line := a.Confirmations[0]; line.Reads != want {
				t.Errorf("probe line %+v, want %d reads: its wait for the conversation unsaid", line, want)
			}
		})
	}
}

// TestConfirmationBoundOnTheRunnersClock: a record that never comes is
// read with backoff until the bound passes on the runner's clock, which
// the pauses move; on a fake clock the reads took as long as the bound
// really lasts, thousands of them, at no pause at all.
func TestConfirmationBoundOnTheRunnersClock(t *testing.T) {
	t.Parallel()
	h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
		list: func(int) []string { return nil }, get: func(string) *string { return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := h.get
	h.get = func(id string) *string {
		if h.getReads > 100 {
			cancel() // spinning: end the run rather than wait 30 s
		}
		return get(id)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := hostileClient(t, srv.URL)
	clk := fakeclock.New()
	res, err := Run(ctx, loadYAML(t, `suite: s
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
    confirm: {conversation: {in_progress: true}}
`), Options{
		Channel: DebugChat(c), Records: c, DefaultAgent: "p1", Parallel: 1, RetryDelay: -1,
		TurnTimeout: 5 * time.Second, ConfirmTimeout: 30 * time.Second, ConfirmPoll: 100 * time.Millisecond,
		Connector: func(string, string) string { return "conn-1" },
		Now:       clk.Now, Sleep: clk.Sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := res.Files[0].Cases[0]
	a := cs.Last()
	if cs.Status != result.Errored || a.Error == nil || !strings.Contains(a.Error.Message, "not recorded within the confirmation's wait of 30s") {
		t.Fatalf("%s, want errored: not recorded within 30s%s", cs.Status, describe(cs))
	}
	// 100 ms doubling to 2 s: reads at 0, 0.1, 0.3, 0.7, 1.5, 3.1, then
	// every 2 s until 29.1; the pause after it passes 30 s.
	if h.getReads != 19 {
		t.Errorf("%d reads of the record, want 19 over 30 s of backoff", h.getReads)
	}
	if waited := clk.Now().Sub(fakeclock.Start); waited < 30*time.Second || waited > 32*time.Second {
		t.Errorf("the runner's clock moved %s, want the 30 s bound", waited)
	}
}

// TestConfirmationNeverAnswered: a platform that holds every read of a
// confirmation or a probe unanswered until the bound passes never said
// the record was missing, or the call unfinished: that is its error (a
// timeout, retried), not the agent's failure. With the turn timeout no
// shorter than the bound (both default to 30 s), the read cut by the
// bound was taken for "not recorded" or "no final status", and failed
// the agent.
//
// The bound is an hour on the runner's clock, which a held read moves
// past it; the turn timeout falls due with it (no real timer races the
// other) or after it (the bound alone cuts the read). A bound kept on the
// real clock would not end the run in runHostile's minute.
func TestConfirmationNeverAnswered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, probe, confirm, want string
		hang                       func(r *http.Request, probed bool) bool
	}{
		{name: "the record", probe: `{sms: {to: "+447700900002", message: "Reply YES"}}`, confirm: `{conversation: {in_progress: true}}`,
			hang: func(r *http.Request, _ bool) bool { return strings.Contains(r.URL.Path, "/conversations/") },
			want: "confirm: read conversation conv-1: wait of 1h0m0s for the platform's answer exceeded"},
		{name: "the call status", probe: `{outbound_call: {to: "+447700900001"}, within: 1h}`,
			hang: func(r *http.Request, _ bool) bool { return strings.HasSuffix(r.URL.Path, "/status") },
			want: "probe: read status of call OUT-1: wait of 1h0m0s for the platform's answer exceeded"},
		{name: "the search for the SMS's conversation", probe: `{sms: {to: "+447700900002", message: "Reply YES"}}`, confirm: `{conversation: {in_progress: true}}`,
			hang: func(r *http.Request, probed bool) bool {
				return strings.HasSuffix(r.URL.Path, "/conversations") && probed
			},
			want: "probe: find the conversation of SMS to +447700900002: wait of 1h0m0s for the platform's answer exceeded"},
	} {
		for turn, timeout := range map[string]time.Duration{"turn timeout as long": time.Hour, "turn timeout longer": 2 * time.Hour} {
			t.Run(tc.name+", "+turn, func(t *testing.T) {
				t.Parallel()
				h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
					list: func(int) []string { return nil }, get: func(string) *string { return nil }, hang: tc.hang, held: time.Hour}
				if strings.Contains(tc.name, "search") {
					h.smsBody = ""
				}
				src := "suite: s\nagent: p1\nscenarios:\n  - name: probe\n    probe: " + tc.probe + "\n"
				if tc.confirm != "" {
					src += "    confirm: " + tc.confirm + "\n"
				}
				c := runHostile(t, h, src, func(o *Options) { o.TurnTimeout, o.ConfirmTimeout = timeout, time.Hour })
				a := c.Last()
				if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindTimeout || !strings.Contains(a.Error.Message, tc.want) {
					t.Fatalf("%s, want errored: %s%s", c.Status, tc.want, describe(c))
				}
			})
		}
	}
}

// TestConfirmHiddenTranscript: a record whose turns are empty while its
// num_turns counts some hides its transcript (transcript access is off
// for the project): no turns check can be confirmed on it, and the case
// errors saying so. An intents excludes or a count at most N passed on
// the empty list, confirming nothing; a count at least N failed the
// agent.
func TestConfirmHiddenTranscript(t *testing.T) {
	t.Parallel()
	started := fakeclock.Start.Add(time.Second)
	for _, tc := range []struct {
		name, check, turns string
		// none: the record counts no turn either (num_turns 0).
		none bool
		want result.Status
	}{
		{name: "intents excluded", check: `{intents: {excludes: [urgent]}}`, want: result.Errored},
		{name: "at most", check: `{count: {max: 5}}`, want: result.Errored},
		{name: "at least", check: `{count: {min: 1}}`, want: result.Errored},
		{name: "empty list", check: `{intents: {excludes: [urgent]}}`, turns: `[]`, want: result.Errored},
		{name: "transcript shown", check: `{count: 1, intents: {excludes: [urgent]}}`, turns: `[{"user_input":"hi","agent_response":"hello","intents":["greet"]}]`, want: result.Passed},
		// No turn hidden: none was taken, and the count says so.
		{name: "no turn at all", check: `{count: 0}`, turns: `[]`, none: true, want: result.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := record("conv-1", "+447700900002", "SMS", started, true, false, "")
			if tc.turns != "" {
				rec = strings.TrimSuffix(rec, "}") + `,"turns":` + tc.turns + `}`
			}
			if tc.none {
				rec = strings.Replace(rec, `"num_turns":1`, `"num_turns":0`, 1)
			}
			h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
				list: func(int) []string { return nil }, get: func(string) *string { return &rec }}
			c := runHostile(t, h, `suite: s
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
    confirm: {conversation: {turns: `+tc.check+`}}
`)
			a := c.Last()
			if c.Status != tc.want {
				t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
			}
			if tc.want == result.Errored && (a.Error.Pos.Line != 6 || !strings.Contains(a.Error.Message,
				"confirm: conversation conv-1 has no turns while its num_turns is 1: transcript access is off for the project, and no turns check can be confirmed")) {
				t.Errorf("error %s: %s", a.Error.Pos, a.Error.Message)
			}
		})
	}
}

// TestProbeListNeededOnlyToSearch: the list read before a probe (to leave
// out the conversations already there) is needed only when the probe's
// conversation must be searched for. A key that may not list
// conversations still confirms a probe whose conversation the platform
// names; one whose conversation it does not name errors on the list.
func TestProbeListNeededOnlyToSearch(t *testing.T) {
	t.Parallel()
	rec := record("conv-1", "+447700900002", "SMS", fakeclock.Start, true, false, "")
	for _, tc := range []struct {
		name, body string
		status     result.Status
	}{
		{name: "named", body: `{"conversation_id":"conv-1"}`, status: result.Passed},
		{name: "not named", body: ``, status: result.Errored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: tc.body, listFails: true,
				list: func(int) []string { return nil }, get: func(string) *string { return &rec }}
			c := runHostile(t, h, `suite: s
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
    confirm: {conversation: {in_progress: true}}
`)
			if c.Status != tc.status {
				t.Fatalf("%s, want %s%s", c.Status, tc.status, describe(c))
			}
			if a := c.Last(); tc.status == result.Errored && !strings.Contains(a.Error.Message, "probe: list the conversations before the SMS to +447700900002: ") {
				t.Errorf("error %q, want it to name the list", a.Error.Message)
			}
		})
	}
}

// TestProbeRefusedNamedOnce: a call or an SMS the platform refuses errors
// the probe (the platform's error) with the number once, then the call
// and its status. The client named the number too, so the message said
// "probe: send SMS to N: send SMS to N: POST ...", where a malformed
// answer of the same call said it once.
func TestProbeRefusedNamedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, probe, want, what string
	}{
		{name: "sms", probe: `{sms: {to: "+447700900002", message: "Reply YES"}}`, what: "send SMS to",
			want: "probe: send SMS to +447700900002: POST /v1/outbound-sms: 500: refused"},
		{name: "call", probe: `{outbound_call: {to: "+447700900002"}, within: 2m}`, what: "place call to",
			want: "probe: place call to +447700900002: POST /v1/outbound-calling: 500: refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{smsStatus: http.StatusInternalServerError, smsBody: `{"error_message":"refused"}`,
				callStatus: http.StatusInternalServerError, list: func(int) []string { return nil }}
			c := runHostile(t, h, "suite: probes\nagent: p1\nscenarios:\n  - name: probe\n    probe: "+tc.probe+"\n")
			a := c.Last()
			if c.Status != result.Errored || a.Error == nil || len(a.Failures) > 0 {
				t.Fatalf("%s, want errored on the platform%s", c.Status, describe(c))
			}
			if a.Error.Message != tc.want || strings.Count(a.Error.Message, tc.what) != 1 {
				t.Errorf("error %q, want %q", a.Error.Message, tc.want)
			}
		})
	}
}

// TestProbeSearchReadsEveryPage: the conversation of a probe the platform
// names none for is searched for through the pages of the list of its
// window. Its list was read in pages of whatever the platform's default
// (5 in the reference's prose) and for at most 10 of them: past the 50th
// conversation of a busy minute the search gave up without a word, and
// the probe failed the agent (probe.conversation: none recorded), its own
// conversation on a page left unread. The search asks for the most a page
// holds (1000); a list longer than the pages it reads is no verdict on
// the agent: the case errors, saying so.
func TestProbeSearchReadsEveryPage(t *testing.T) {
	t.Parallel()
	const to = "+447700900002" // smsConfirm's
	started := fakeclock.Start.Add(time.Second)
	type testCase struct {
		name string
		// perPage is the platform's page when the query gives no
		// limit; fixed pages it whatever the limit.
		perPage int
		fixed   bool
		// offsets pages by next_offset, never by cursor; endless sends
		// one on the last page too.
		offsets, endless bool
		others           int
		status           result.Status
		want             string
	}
	run := func(t *testing.T, tc testCase) {
		var all []string
		for i := range tc.others {
			all = append(all, record(fmt.Sprintf("conv-other-%d", i), "+447700900999", "SMS", started, true, false, ""))
		}
		own := record("conv-own", to, "SMS", started, true, false, "")
		h := &hostileRuntime{smsStatus: http.StatusAccepted, offsets: tc.offsets,
			get: func(id string) *string {
				if id == "conv-own" {
					return &own
				}
				return nil
			}}
		h.page = func(q url.Values) ([]string, string) {
			list := all
			if h.probed {
				list = append(slices.Clone(all), own)
			}
			size := tc.perPage
			if l, err := strconv.Atoi(q.Get("limit")); err == nil && !tc.fixed {
				size = l
			}
			from, _ := strconv.Atoi(q.Get("cursor"))
			if tc.offsets {
				from, _ = strconv.Atoi(q.Get("offset"))
			}
			end := min(from+size, len(list))
			if end == len(list) && !tc.endless {
				return list[from:end], ""
			}
			return list[from:end], strconv.Itoa(end)
		}
		c := runHostile(t, h, smsConfirm(`{conversation: {in_progress: true}}`))
		a := c.Last()
		if c.Status != tc.status {
			t.Fatalf("%s, want %s%s", c.Status, tc.status, describe(c))
		}
		switch tc.status {
		case result.Passed:
			if a.ConversationID != "conv-own" {
				t.Errorf("confirmed %q, want conv-own", a.ConversationID)
			}
		case result.Errored:
			if a.Error == nil || a.Error.Kind != result.KindHTTP || len(a.Failures) != 0 || !strings.Contains(a.Error.Message, tc.want) {
				t.Errorf("error %+v, failures %+v; want the platform's error saying %q, no failure", a.Error, a.Failures, tc.want)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "pages of 5 unless asked", perPage: 5, others: 60, status: result.Passed},
		// The reference gives the v3 list next_offset as well as the
		// cursor; a platform that pages by the offset alone still has
		// every page read.
		{name: "pages of 5 by next_offset", perPage: 5, fixed: true, offsets: true, others: 30, status: result.Passed},
		{name: "next_offset on the last page too", perPage: 5, fixed: true, offsets: true, endless: true, others: 30, status: result.Passed},
		{name: "pages of 1 whatever asked", perPage: 1, fixed: true, others: 12, status: result.Errored,
			want: "the list of conversations since 2026-03-01T11:59:00Z fills more than 10 pages"},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// TestSMSFromUnprovisionedNumber: the reference's 400 for an agent_number
// the project does not have is the scenario's configuration, sent as
// written on every attempt: the case errors as a configuration error, not
// retried. It was the platform's error, retried with --retries, each
// attempt refused the same way, and the run's status blamed the platform
// or the network.
func TestSMSFromUnprovisionedNumber(t *testing.T) {
	t.Parallel()
	h := &hostileRuntime{smsStatus: http.StatusBadRequest, smsBody: `{"error_message":"agent_number is not provisioned for the project"}`,
		list: func(int) []string { return nil }, get: func(string) *string { return nil }}
	c := runHostile(t, h, `suite: s
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES", agent_number: "+447700900003"}}
    confirm: {conversation: {in_progress: true}}
`, func(o *Options) { o.Retries = 2 })
	a := c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || len(c.Attempts) != 1 ||
		!strings.Contains(a.Error.Message, "from +447700900003: the agent number must be one provisioned for the project") {
		t.Fatalf("%s after %d attempts, want a configuration error, not retried%s", c.Status, len(c.Attempts), describe(c))
	}
}

// TestCallFromUnprovisionedNumber: the reference gives the 400 for an
// agent_number that is not provisioned to outbound calling as to SMS. A
// call placed from such a number errored as the platform's, was placed
// again with the same number on every retry, and the run's status blamed
// the platform or the network; it is now the scenario's configuration,
// as the SMS's is.
func TestCallFromUnprovisionedNumber(t *testing.T) {
	t.Parallel()
	h := &hostileRuntime{callStatus: http.StatusBadRequest, list: func(int) []string { return nil }, get: func(string) *string { return nil }}
	c := runHostile(t, h, `suite: s
agent: p1
scenarios:
  - name: call
    probe: {outbound_call: {to: "+447700900002", agent_number: "+447700900003"}}
    confirm: {conversation: {channel: VOICE-SIP}}
`, func(o *Options) { o.Retries = 2 })
	a := c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || len(c.Attempts) != 1 ||
		!strings.Contains(a.Error.Message, "from +447700900003: the agent number must be one provisioned for the project: POST /v1/outbound-calling: 400") {
		t.Fatalf("%s after %d attempts, want a configuration error, not retried%s", c.Status, len(c.Attempts), describe(c))
	}
}

// TestProbeSearchScores: a call's conversation is the one whose call_sid
// is the call's, before one that only has its number (an inbound call
// from the probe number, say); a conversation of neither is never the
// call's, though nothing else was listed.
func TestProbeSearchScores(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	started := fakeclock.Start.Add(time.Second)
	sid := record("conv-sid", "+15555550199", "VOICE-SIP", started, false, false, `"call_sid":"OUT-1"`)
	number := record("conv-number", to, "VOICE-SIP", started, false, false, "")
	other := record("conv-other", "+447700900999", "VOICE-SIP", started, false, false, "")
	// The reference's from_number is the caller's: a platform may
	// record the dialled number there, the agent's as to_number.
	from := strings.Replace(record("conv-from", "+15555550199", "VOICE-SIP", started, false, false, ""), `"to_number"`, `"from_number":"`+to+`","to_number"`, 1)
	for _, tc := range []struct {
		name   string
		listed []string // after the call was placed
		want   string   // the conversation confirmed; "" for none
	}{
		{name: "its call_sid before its number", listed: []string{sid, number}, want: "conv-sid"},
		{name: "its number after its call_sid", listed: []string{number, sid}, want: "conv-sid"},
		{name: "its number as the caller's", listed: []string{other, from}, want: "conv-from"},
		{name: "neither", listed: []string{other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{
				status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` },
				list: func(n int) []string {
					if n == 0 {
						return nil
					}
					return tc.listed
				},
				get: func(id string) *string {
					for _, r := range []*string{&sid, &number, &other, &from} {
						if strings.Contains(*r, `"id":"`+id+`"`) {
							return r
						}
					}
					return nil
				},
			}
			c := runHostile(t, h, callConfirm(to))
			a := c.Last()
			if tc.want != "" {
				if c.Status != result.Passed || a.ConversationID != tc.want {
					t.Fatalf("%s on %q, want passed on %s%s", c.Status, a.ConversationID, tc.want, describe(c))
				}
				return
			}
			if c.Status != result.Errored || a.ConversationID != "" || len(a.Failures) != 0 || a.Error == nil || a.Error.Kind != result.KindTimeout {
				t.Fatalf("%s on %q, want errored: no conversation of the call listed%s", c.Status, a.ConversationID, describe(c))
			}
		})
	}
}

// TestProbeConversationNeverListed: the platform took the SMS (which, the
// reference says, opens a conversation session) or reported the call
// success (completed), so a conversation took place whatever the agent
// did; a platform that never lists it fails to keep its records, as one
// that never writes a record it names does. The probe failed the agent
// (probe.conversation); the case now errors, retried, saying whose.
func TestProbeConversationNeverListed(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	for _, tc := range []struct{ name, src, what string }{
		{name: "an SMS the platform accepted", src: smsConfirm("{conversation: {channel: SMS}}"), what: "SMS to " + to},
		{name: "a call reported success", src: callConfirm(to), what: "call OUT-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{}`,
				status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` },
				list:   func(int) []string { return nil }, get: func(string) *string { return nil }}
			c := runHostile(t, h, tc.src, func(o *Options) { o.Retries = 1 })
			a := c.Last()
			want := "probe: find the conversation of " + tc.what + ": none listed within the confirmation's wait of 30s ("
			if c.Status != result.Errored || len(c.Attempts) != 2 || a.Error == nil || a.Error.Kind != result.KindTimeout ||
				!strings.Contains(a.Error.Message, want) || !strings.Contains(a.Error.Message, "the platform's error") ||
				!strings.HasSuffix(a.Error.Message, "not the agent's") || len(a.Failures) != 0 || !strings.HasSuffix(a.Error.Pos.String(), ":5:5") {
				t.Fatalf("%s after %d attempts, want errored at 5:5 (timeout, retried once): %q ... the platform's error ... not the agent's%s", c.Status, len(c.Attempts), want, describe(c))
			}
		})
	}
}

// TestCallEndedRecordLags: a call whose final status is success
// connected and completed (the reference), so its conversation ended,
// whatever its record says yet. A record still in progress then lags
// behind: a check that failed on it (handoff, judged on fields that may
// still change) and a conversation.completed that never came both failed
// the agent ("the agent did not end it"), as a debug chat the agent ended
// does not. The record is awaited until it ends, and the case errors,
// the platform's; a record that ended and fails a check fails the agent.
func TestCallEndedRecordLags(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	started := fakeclock.Start.Add(time.Second)
	for _, tc := range []struct {
		name, confirm string
		ended, later  bool
		status        result.Status
		want          string
	}{
		{name: "a check on the record", confirm: "{conversation: {handoff: true}}", status: result.Errored,
			want: "confirm: read conversation conv-call: the record was still in progress 30s after the call ended (its status is success: completed), and its fields may still change: confirm.conversation.handoff cannot be confirmed on it"},
		{name: "its conversation.completed", confirm: "{webhooks: [conversation.completed]}", status: result.Errored,
			want: `confirm: webhooks: no verified "conversation.completed" event for conversation conv-call arrived within 30s, while the call ended (its status is success: completed): the platform never delivered the event of what happened`},
		{name: "a check on the record that ended", confirm: "{conversation: {handoff: true}}", ended: true, status: result.Failed,
			want: "handoff"},
		// Awaited: the third read shows it ended, handed off.
		{name: "a record that ends later", confirm: "{conversation: {handoff: true}}", later: true, status: result.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := record("conv-call", to, "VOICE-SIP", started, !tc.ended, false, `"call_sid":"OUT-1"`)
			done := record("conv-call", to, "VOICE-SIP", started, false, true, `"call_sid":"OUT-1"`)
			var h *hostileRuntime
			h = &hostileRuntime{
				status: func(int) string { return `{"call_sid":"OUT-1","status":"success","conversation_id":"conv-call"}` },
				list:   func(int) []string { return nil },
				get: func(id string) *string {
					switch {
					case id != "conv-call":
						return nil
					case tc.later && h.getReads >= 3:
						return &done
					}
					return &rec
				},
			}
			src := "suite: s\nagent: p1\nscenarios:\n  - name: call\n" +
				`    probe: {outbound_call: {to: "` + to + `"}, within: 2m}` + "\n    confirm: " + tc.confirm + "\n"
			c := runHostile(t, h, src, func(o *Options) {
				o.Webhooks = waitedOut{MarkingWebhooks: webhook.NewReceiver(webhook.Options{Secret: "whsec_00000000000000000000000000000000"}), clk: h.clk}
			})
			if got := said(c.Last()); c.Status != tc.status || !strings.Contains(got, tc.want) {
				t.Fatalf("%s: %q, want %s: %q%s", c.Status, got, tc.status, tc.want, describe(c))
			}
		})
	}
}

// TestCallStatusOutcomes: a call whose status never becomes final within
// within: was still being placed (the reference's calling), and one the
// platform kept queued all along was never placed: neither says anything
// of the agent, so the case errors (both failed the agent, probe.status);
// a call whose final status names its conversation needs no search, so a
// key that may not list conversations confirms it.
func TestCallStatusOutcomes(t *testing.T) {
	t.Parallel()
	rec := record("conv-1", "+447700900002", "VOICE-SIP", fakeclock.Start, false, false, `"call_sid":"OUT-1"`)
	for _, tc := range []struct {
		name, status string
		want         result.Status
		key          string // the error's kind
		msg          string // in the error
	}{
		{name: "never final", status: `{"call_sid":"OUT-1","status":"calling"}`, want: result.Errored, key: result.KindTimeout,
			msg: "probe: call OUT-1 to +447700900002 was still calling after 2m0s (the reference: a call being placed) and never reached a final status: the platform's, which says nothing of the agent (if the agent's calls last longer, raise within:)"},
		{name: "never placed", status: `{"call_sid":"OUT-1","status":"queued"}`, want: result.Errored, key: result.KindTimeout,
			msg: "probe: call OUT-1 to +447700900002 was still queued after 2m0s: the platform never placed it"},
		{name: "named", status: `{"call_sid":"OUT-1","status":"success","conversation_id":"conv-1"}`, want: result.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{listFails: true, status: func(int) string { return tc.status },
				list: func(int) []string { return nil }, get: func(string) *string { return &rec }}
			// Neither outcome is final: a retry places the call again.
			c := runHostile(t, h, callConfirm("+447700900002"), func(o *Options) { o.Retries = 1 })
			a := c.Last()
			if attempts := map[bool]int{true: 1, false: 2}[tc.want == result.Passed]; len(c.Attempts) != attempts {
				t.Errorf("%d attempts, want %d", len(c.Attempts), attempts)
			}
			errored := a.Error != nil && a.Error.Kind == tc.key && len(a.Failures) == 0 && strings.Contains(a.Error.Message, tc.msg)
			if c.Status != tc.want || tc.want == result.Errored && !errored {
				t.Fatalf("%s, want %s %s%s", c.Status, tc.want, tc.key, describe(c))
			}
		})
	}
}

// TestListBeforeCallCut: the scenario's timeout cutting the list read
// before the call ends the attempt there, naming that read; no call is
// placed.
func TestListBeforeCallCut(t *testing.T) {
	t.Parallel()
	h := &hostileRuntime{list: func(int) []string { return nil }, get: func(string) *string { return nil },
		status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` },
		hang: func(r *http.Request, probed bool) bool {
			return !probed && r.URL.Path == "/v3/ws-abcd1234/p1/conversations"
		},
		held: time.Minute}
	c := runHostile(t, h, `suite: s
agent: p1
scenarios:
  - name: call
    timeout: 10s
    probe: {outbound_call: {to: "+447700900002"}, within: 1m}
    confirm: {conversation: {channel: VOICE-SIP}}
`, func(o *Options) { o.TurnTimeout = time.Hour })
	a := c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindTimeout ||
		!strings.Contains(a.Error.Message, "probe: list the conversations before the call to +447700900002: ") {
		t.Fatalf("%s, want errored on the list read, cut by the scenario timeout%s", c.Status, describe(c))
	}
	if h.probed {
		t.Error("the call was placed after the attempt's timeout")
	}
}

// callConfirm is a suite of one call probe to number (agent p1), whose
// conversation's channel is confirmed.
func callConfirm(number string) string {
	return "suite: s\nagent: p1\nscenarios:\n  - name: call\n" +
		`    probe: {outbound_call: {to: "` + number + `"}, within: 2m}` + "\n    confirm: {conversation: {channel: VOICE-SIP}}\n"
}

// TestCallConnectedWhereFailureExpected: a call expected not to connect
// (expect_status: failure) that the platform reports success connected
// a number that answered: the line's, not the agent's, and the case
// errors saying so (it failed the agent, probe.expect_status).
func TestCallConnectedWhereFailureExpected(t *testing.T) {
	t.Parallel()
	h := &hostileRuntime{list: func(int) []string { return nil }, get: func(string) *string { return nil },
		status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` }}
	c := runHostile(t, h, "suite: s\nagent: p1\nscenarios:\n  - name: call\n"+
		`    probe: {outbound_call: {to: "+447700900001"}, expect_status: failure, within: 2m}`+"\n")
	a := c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindHTTP || len(a.Failures) != 0 ||
		!strings.Contains(a.Error.Message, "probe: call OUT-1 to +447700900001 ended with status success, expected failure: the call connected, where the scenario expected it not to: the number answered, which is the line's, not the agent's") {
		t.Fatalf("%s, want errored: the call connected%s", c.Status, describe(c))
	}
	if rec := a.Confirmations[0]; rec.Held || !rec.Found {
		t.Errorf("call line %+v, want found and not held (✗)", rec)
	}
}
