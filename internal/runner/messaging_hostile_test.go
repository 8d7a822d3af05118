package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// hostileConnector is the connector token of the tests against
// platformtest.Messaging; it is planted in frames to prove it never shows.
const hostileConnector = "ct_HOSTILE_connector_0123456789"

// balanceSuite is one scenario over messaging: a turn asking the balance,
// whose reply must say it is 0.
const balanceSuite = `suite: s
agent: billing
via: messaging
scenarios:
  - name: balance
    turns:
      - say: What is my balance?
        expect: {response: {contains: "balance is 0"}}
`

// hostileOptions are the options of a run against p, a Messaging
// platform that has no debug chat: both channels are its web chat, one
// attempt, no retry.
func hostileOptions(p *platformtest.Messaging) Options {
	base := platform.Config{BuildURL: p.URL, MessagingURL: p.URL, MessagingHost: p.Host, AllowHTTP: true,
		Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}}
	ch := Messaging(MessagingClients(base, func(string, string) (string, error) { return hostileConnector, nil }),
		MessagingOptions{TurnTimeout: 10 * time.Second, Settle: 10 * time.Second})
	return Options{Channel: ch, Messaging: ch, Parallel: 1, RetryDelay: -1, TurnTimeout: 10 * time.Second}
}

// TestMessagingConnectorNotFound: the reference gives "Error: Connector
// not found" as "connector invalid; configuration problem". A join
// answered with it errored as the Messaging platform's (kind messaging),
// which the run's status reads as the platform or the network broken; it
// is the target's configuration, not retried, and says where to look.
func TestMessagingConnectorNotFound(t *testing.T) {
	t.Parallel()
	p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
		return []platformtest.Frame{
			platformtest.System("e"+strconv.Itoa(n), reply.SystemLevelError, "Error: Connector not found"),
			platformtest.SessionEnd("end"+strconv.Itoa(n), "error"),
		}
	})
	o := hostileOptions(p)
	o.Retries = 2
	c := runOne(t, o, balanceSuite)
	a := c.Last()
	want := `the platform answered with an error system message: "Error: Connector not found", and ended the session (reason error) (the reference: the connector is invalid, a configuration problem: check the connector token of the agent and environment)`
	if c.Status != result.Errored || len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, want) {
		t.Fatalf("%s after %d attempts, error %+v; want a configuration error, not retried: %q", c.Status, len(c.Attempts), a.Error, want)
	}
}

// TestMessagingHostileVerdicts: over a Messaging platform written to
// misbehave, what the platform got wrong errors the case (the platform's
// error: KindHTTP, naming WS /ws and what was wrong), whether the check
// it reached would have passed or failed; only the agent's own answer
// passes or fails it. No credential reaches the case.
func TestMessagingHostileVerdicts(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// answer is the answer to the user's message, before the end of
		// typing.
		answer []platformtest.Frame
		status result.Status
		// want is in the error's message.
		want string
		// suite is the suite run; default balanceSuite.
		suite string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
			stop := platformtest.TypingStop(string(rune('a' + n)))
			if n == 1 {
				return []platformtest.Frame{platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Welcome."), stop}
			}
			return append(slices.Clip(tc.answer), stop)
		})
		c := runOne(t, hostileOptions(p), cmp.Or(tc.suite, balanceSuite))
		if c.Status != tc.status {
			t.Fatalf("status %s, want %s", c.Status, tc.status)
		}
		a := c.Last()
		if tc.want != "" {
			if a.Error == nil || a.Error.Kind != result.KindHTTP || !strings.Contains(a.Error.Message, tc.want) {
				t.Errorf("error %+v, want the platform's, with %q", a.Error, tc.want)
			}
			if len(a.Failures) > 0 {
				t.Errorf("failures %+v: the agent was judged on the platform's error", a.Failures)
			}
		}
		// The case as every report renders it: verdict, transcript, raw
		// events.
		seen := []string{describe(c)}
		for _, tr := range a.Turns {
			seen = append(seen, string(tr.Request), string(tr.Response))
			if tr.Result != nil {
				seen = append(seen, tr.Result.Response)
			}
			if m := tr.Messaging; m != nil {
				for _, e := range m.Events {
					seen = append(seen, e.Text)
				}
			}
		}
		if s := strings.Join(seen, "\n"); strings.Contains(s, "HOSTILE") {
			t.Errorf("a credential reached the case:\n%s", s)
		}
	}
	for _, tc := range []testCase{
		{name: "the agent's own answer passes", answer: []platformtest.Frame{platformtest.Message("3", "", "Your balance is 0.")}, status: result.Passed},
		{name: "the agent's own answer fails", answer: []platformtest.Frame{platformtest.Message("3", "", "I cannot say.")}, status: result.Failed},
		{name: "another conversation's answer that would pass",
			answer: platformtest.Texts(`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"conversation_id":"c-OTHER","text":"Your balance is 0."}}`), status: result.Errored,
			want: `WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE names conversation "c-OTHER", and this session's conversation is "c-1"`},
		{name: "another conversation's answer that would fail",
			answer: platformtest.Texts(`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","conversationId":"c-OTHER","payload":{"text":"I cannot say."}}`), status: result.Errored,
			want: `EVENT_TYPE_AGENT_MESSAGE names conversation "c-OTHER"`},
		{name: "an answer that is not UTF-8",
			answer: platformtest.Texts("{\"id\":\"3\",\"type\":\"EVENT_TYPE_AGENT_MESSAGE\",\"payload\":{\"text\":\"Your balance is 0 \xe2\x82.\"}}"), status: result.Errored,
			want: "WS /ws: 101: malformed response: a frame of 87 bytes is not valid UTF-8 (a JSON event is text): byte 81 is 0xe2"},
		{name: "an answer that is not UTF-8, to a turn that expects the end",
			// The socket closes after it: the end that the turn's
			// check awaits does not come, and the error stays the turn's.
			answer: append(platformtest.Texts("{\"id\":\"3\",\"type\":\"EVENT_TYPE_AGENT_MESSAGE\",\"payload\":{\"text\":\"Your balance is 0 \xe2\x82.\"}}"), platformtest.Frame{Close: true}),
			status: result.Errored, want: "not valid UTF-8",
			suite: strings.Replace(balanceSuite, `expect: {response: {contains: "balance is 0"}}`, `expect: {response: {contains: "balance is 0"}, ended: true}`, 1)},
		{name: "an answer that would pass, in a frame over the limit",
			// The client closes the socket on it; a reconnect would
			// only receive it again.
			answer: platformtest.Texts(`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your balance is 0.` + strings.Repeat(" ", 16<<20) + `"}}`),
			status: result.Errored, want: "WS /ws: 101: malformed response: a frame exceeds the limit of 16 MiB"},
		{name: "an answer that spells the connector token over two chunks",
			answer: []platformtest.Frame{platformtest.Chunk("3", "m", "Your balance is 0 "+hostileConnector[:9], false),
				platformtest.Chunk("4", "m", hostileConnector[9:], true)},
			status: result.Passed},
		{name: "an answer after the session ended",
			answer: platformtest.Texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[{"id":"3","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}},` +
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your balance is 0."}}]}`), status: result.Errored,
			want: "EVENT_TYPE_AGENT_MESSAGE after the session ended"},
		{name: "a whole message that would pass after chunks that would fail",
			answer: []platformtest.Frame{platformtest.Chunk("3", "m", "Your balance is 10.", false),
				platformtest.Message("4", "m", "Your balance is 0.")}, status: result.Errored,
			want: `WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: message "m" sent whole says "Your balance is 0." where its chunks said "Your balance is 10." (from byte 16)`},
		{name: "a whole message that would fail after chunks that would pass",
			answer: []platformtest.Frame{platformtest.Chunk("3", "m", "Your balance ", false),
				platformtest.Chunk("4", "m", "is 0.", true),
				platformtest.Message("5", "m", "I cannot say.")}, status: result.Errored,
			want: `the platform streamed one text and sent another as the whole message`},
		// A typing indicator in the forms of another implementation (the
		// reference shows no payload of it), on again between the two
		// messages of one answer: it holds the answer for the second.
		// Read as off, it completed the answer at the first, and the
		// agent failed on half of it ("Your balance").
		{name: "a typing indicator on again by a state word", answer: typingBetween(`{"state":"started"}`), status: result.Passed},
		{name: "a typing indicator on again by a status word", answer: typingBetween(`{"status":"typing"}`), status: result.Passed},
		{name: "a typing indicator on again as on", answer: typingBetween(`{"typing":"ON"}`), status: result.Passed},
		{name: "a typing indicator on again as 1", answer: typingBetween(`{"is_typing":1}`), status: result.Passed},
		{name: "a typing indicator that says neither", answer: typingBetween(`{"state":"maybe"}`), status: result.Errored,
			want: `WS /ws: 101: malformed response: EVENT_TYPE_AGENT_TYPING: payload.state is "maybe", which says neither that the agent is typing nor that it stopped`},
		{name: "a typing indicator whose flag is an object", answer: typingBetween(`{"typing":{"on":true}}`), status: result.Errored,
			want: `EVENT_TYPE_AGENT_TYPING: payload.typing is "{\"on\":true}", which says neither`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// typingBetween is an answer in two messages with a typing indicator of
// payload between them, as EVENT_TYPE_AGENT_TYPING, whose payload says
// whether it is on or off.
func typingBetween(payload string) []platformtest.Frame {
	return []platformtest.Frame{platformtest.Message("3", "", "Your balance"),
		{Data: `{"id":"t","type":"EVENT_TYPE_AGENT_TYPING","payload":` + payload + `}`},
		platformtest.Message("4", "", "is 0.")}
}

// TestMessagingEndBetweenTurns: a session end that arrives after a turn
// settled is judged by its reason: the agent's (or a reason the platform
// does not give as its own) fails the turn sent after it, as an end that
// came with the turn does and as a turn after the end does over debug
// chat; an expiry is the platform's error, which a fresh session may not
// meet. The platform echoes client events, so an end read only once the
// next turn was sent, before that turn's echo, is the same end (the
// platform never took the turn): the verdict does not depend on when the
// client happened to read it. An end after the turn's echo is the turn's
// answer.
func TestMessagingEndBetweenTurns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		// at is when the end is sent: "trailing" the first turn's
		// answer, "before the echo" of the next turn, or "after the
		// echo" of the next turn.
		at     string
		reason string
		status result.Status
		// key and line are the failure's (status Failed), want its
		// message or the error's.
		key  string
		line int
		want string
	}{
		{"trailing", "agent_ended", result.Failed, "ended", 9, "the session ended before this turn (reason agent_ended)"},
		{"trailing", "", result.Failed, "ended", 9, "the session ended before this turn"},
		{"trailing", "expired", result.Errored, "", 0, "the platform ended the session before this turn (reason expired)"},
		{"before the echo", "agent_ended", result.Failed, "ended", 9, "the session ended before this turn (reason agent_ended)"},
		{"before the echo", "expired", result.Errored, "", 0, "the platform ended the session before this turn (reason expired)"},
		{"after the echo", "agent_ended", result.Failed, "response", 10, "reply does not contain the expected text"},
		{"after the echo", "expired", result.Errored, "", 0, "the platform ended the session (reason expired)"},
	} {
		t.Run(tc.at+" "+cmp.Or(tc.reason, "no reason"), func(t *testing.T) {
			t.Parallel()
			end := platformtest.SessionEnd("4", tc.reason)
			p := platformtest.StartMessaging(t, func(n int, event []byte) []platformtest.Frame {
				stop := platformtest.TypingStop("s" + string(rune('a'+n)))
				echo := platformtest.Echo(n, event)
				switch n {
				case 1:
					return []platformtest.Frame{echo, platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Welcome."), stop}
				case 2:
					answer := []platformtest.Frame{echo, platformtest.Message("3", "", "Goodbye."), stop}
					if tc.at == "trailing" {
						answer = append(answer, end)
					}
					return answer
				case 3:
					switch tc.at {
					case "before the echo":
						return []platformtest.Frame{end}
					case "after the echo":
						return []platformtest.Frame{echo, end}
					}
				}
				return nil
			})
			// One retry: the platform's end, as the agent's, is worth
			// another attempt (the same platform ends it again).
			o := hostileOptions(p)
			o.Retries = 1
			c := runOne(t, o, `suite: s
agent: billing
via: messaging
scenarios:
  - name: talks after goodbye
    turns:
      - say: bye
        expect: {response: {contains: Goodbye}}
      - say: one more thing
        expect: {response: {contains: hello}}
`)
			a := c.Last()
			if c.Status != tc.status || len(c.Attempts) != 2 {
				t.Fatalf("status %s after %d attempts, want %s after 2%s", c.Status, len(c.Attempts), tc.status, describe(c))
			}
			switch tc.status {
			case result.Failed:
				if len(a.Failures) != 1 || a.Failures[0].Key != tc.key || a.Failures[0].Message != tc.want || a.Failures[0].Pos.Line != tc.line {
					t.Errorf("failures %+v, want the second turn's %s at line %d: %q", a.Failures, tc.key, tc.line, tc.want)
				}
			default:
				if a.Error == nil || a.Error.Message != tc.want || len(a.Failures) > 0 {
					t.Errorf("error %+v, failures %+v, want the platform's %q", a.Error, a.Failures, tc.want)
				}
			}
		})
	}
}

// TestMessagingWholeMessageAfterTyping: a platform that streams a reply,
// turns its typing indicator off (the turn is complete) and only then
// sends the message whole (the same message id) has sent the earlier
// turn's last word on that message, not the next turn's answer: its text
// stays out of the next turn's reply whether it arrives between the turns
// or once the next message was sent, before or after its echo. One that
// says other words than the chunks the chat showed is the platform's
// error, never a pass or a failure of the next turn on the earlier words.
// So is a stream end, in its turn or after it, whose text is neither the
// chunks' words nor the last chunk's.
func TestMessagingWholeMessageAfterTyping(t *testing.T) {
	t.Parallel()
	var (
		chunk1 = platformtest.Chunk("3", "m1", "Your balance ", false)
		chunk2 = platformtest.Chunk("4", "m1", "is 0.", true)
		// cut is a stream cut off after a complete message: the
		// typing indicator goes off with m1 unfinished.
		first = platformtest.Message("3", "m0", "One moment.")
		cut   = platformtest.Chunk("4", "m1", "Your bal", false)
		same  = platformtest.Message("5", "m1", "Your balance is 0.")
		other = platformtest.Message("5", "m1", "Your balance is 10.")
		end   = platformtest.StreamEnd("5", "m1", "Your balance is 0.")
		// endTail is a stream end whose text is not the chunks' whole
		// but the last chunk's, which a stream end may repeat: in the
		// stream's turn it only ends the stream, and so after it.
		endTail = platformtest.StreamEnd("5", "m1", "is 0.")
		// endOther is a stream end whose text contradicts the chunks.
		endOther = platformtest.StreamEnd("5", "m1", "Your balance is 10.")
		// cutWord is a stream cut off after its first word, and
		// endPiece a stream end with the piece it lacked as its delta.
		cutWord  = platformtest.Chunk("4", "m1", "Your balance ", false)
		endPiece = platformtest.Event("5", "EVENT_TYPE_AGENT_MESSAGE_END", "message_id", "m1", "delta", "is 0.")
		none     platformtest.Frame
	)
	mismatch := `WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: message "m1" sent whole says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): ` +
		`the platform streamed one text and sent another as the whole message (the message was streamed in an earlier turn, and sent whole after that turn's answer was complete)`
	endMismatch := `WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE_END: stream end of message "m1" says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): ` +
		`the platform streamed one text and ended the stream with another (the message was streamed in an earlier turn, and its stream ended after that turn's answer was complete)`
	endMismatchInTurn := `WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE_END: stream end of message "m1" says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): ` +
		`the platform streamed one text and ended the stream with another`
	for _, tc := range []struct {
		name string
		// stream is the first turn's answer before the typing
		// indicator goes off; late the event sent after it, at: with
		// that answer ("trailing"), or with the next turn's, "before
		// the echo" of its message or "after the echo".
		stream []platformtest.Frame
		late   platformtest.Frame
		at     string
		// expect is the second turn's check; its agent says "Anything
		// else?".
		expect string
		status result.Status
		want   string
	}{
		{"same words trailing", []platformtest.Frame{chunk1, chunk2}, same, "trailing", `"Anything else?"`, result.Passed, ""},
		{"same words before the echo", []platformtest.Frame{chunk1, chunk2}, same, "before the echo", `"Anything else?"`, result.Passed, ""},
		{"same words after the echo", []platformtest.Frame{chunk1, chunk2}, same, "after the echo", `"Anything else?"`, result.Passed, ""},
		{"a stream end with its text", []platformtest.Frame{chunk1, chunk2}, end, "trailing", `"Anything else?"`, result.Passed, ""},
		{"a stream end repeating the last chunk, in its turn", []platformtest.Frame{chunk1, chunk2, endTail}, none, "", `"Anything else?"`, result.Passed, ""},
		{"a stream end repeating the last chunk, trailing", []platformtest.Frame{chunk1, chunk2}, endTail, "trailing", `"Anything else?"`, result.Passed, ""},
		{"a stream end repeating the last chunk, after the echo", []platformtest.Frame{chunk1, chunk2}, endTail, "after the echo", `"Anything else?"`, result.Passed, ""},
		{"a stream end with other words, in its turn", []platformtest.Frame{chunk1, chunk2, endOther}, none, "", `"Anything else?"`, result.Errored, endMismatchInTurn},
		{"a stream end with other words trailing", []platformtest.Frame{chunk1, chunk2}, endOther, "trailing", `"Anything else?"`, result.Errored, endMismatch},
		{"a stream end with other words, a check they would pass", []platformtest.Frame{chunk1, chunk2}, endOther, "before the echo", `{contains: "balance is 10"}`, result.Errored, endMismatch},
		{"a stream end with other words after the echo", []platformtest.Frame{chunk1, chunk2}, endOther, "after the echo", `"Anything else?"`, result.Errored, endMismatch},
		{"a stream cut off, then its end with the words it began", []platformtest.Frame{first, cut}, end, "trailing", `"Anything else?"`, result.Passed, ""},
		{"a stream cut off, then its end with the last piece", []platformtest.Frame{first, cutWord}, endPiece, "trailing", `"Anything else?"`, result.Passed, ""},
		{"a stream cut off, then whole", []platformtest.Frame{first, cut}, same, "trailing", `"Anything else?"`, result.Passed, ""},
		{"other words trailing", []platformtest.Frame{chunk1, chunk2}, other, "trailing", `"Anything else?"`, result.Errored, mismatch},
		{"other words, a check they would pass", []platformtest.Frame{chunk1, chunk2}, other, "before the echo", `{contains: "balance is 10"}`, result.Errored, mismatch},
		{"other words after the echo", []platformtest.Frame{chunk1, chunk2}, other, "after the echo", `"Anything else?"`, result.Errored, mismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := platformtest.StartMessaging(t, func(n int, event []byte) []platformtest.Frame {
				stop := platformtest.TypingStop("s" + string(rune('a'+n)))
				echo := platformtest.Echo(n, event)
				var out []platformtest.Frame
				switch n {
				case 1:
					return []platformtest.Frame{echo, platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Welcome."), stop}
				case 2:
					out = append(append([]platformtest.Frame{echo}, tc.stream...), stop)
					if tc.at == "trailing" {
						out = append(out, tc.late)
					}
				case 3:
					switch tc.at {
					case "before the echo":
						out = []platformtest.Frame{tc.late, echo}
					case "after the echo":
						out = []platformtest.Frame{echo, tc.late}
					default:
						out = []platformtest.Frame{echo}
					}
					out = append(out, platformtest.Message("6", "m2", "Anything else?"), stop)
				}
				return out
			})
			c := runOne(t, hostileOptions(p), `suite: s
agent: billing
via: messaging
streaming: true
scenarios:
  - name: balance, then more
    turns:
      - say: What is my balance?
        expect: {response: {not_contains: "Anything"}}
      - say: thanks
        expect: {response: `+tc.expect+`}
`)
			a := c.Last()
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s", c.Status, tc.status)
			}
			if len(a.Failures) > 0 {
				t.Errorf("failures %+v: the next turn was judged on the earlier turn's message", a.Failures)
			}
			if tc.want != "" && (a.Error == nil || a.Error.Kind != result.KindHTTP || a.Error.Message != tc.want) {
				t.Errorf("error %+v, want the platform's %q", a.Error, tc.want)
			}
			if tc.status == result.Passed {
				if got := a.Turns[len(a.Turns)-1].Result.Response; got != "Anything else?" {
					t.Errorf("the second turn's reply is %q, want the agent's answer to it alone", got)
				}
			}
		})
	}
}

// TestMessagingConversationNamedLate: the reference shows no payload of a
// Messaging event, so a platform may name the session's conversation in
// the joined event, first in a later event, or in none. The records a
// scenario confirms are the conversation's the events named, whichever
// named it first; a platform that named none errors the case as the
// Messaging platform's (it was "internal", agenttest's own bug, and a
// conversation named after the joined event was never confirmed).
func TestMessagingConversationNamedLate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// joined is the conversation the joined event names, answer
		// the user turn's message event.
		joined string
		answer platformtest.Frame
		// read is the record confirmed (""), want the error's message.
		read, want string
	}{
		{name: "in the joined event", joined: "c-1",
			answer: platformtest.Message("3", "", "Your balance is 0."), read: "c-1"},
		{name: "first in a later event",
			answer: platformtest.Frame{Data: `{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your balance is 0."},"metadata":{"conversation_id":"c-late"}}`}, read: "c-late"},
		{name: "in no event",
			answer: platformtest.Message("3", "", "Your balance is 0."),
			want: "confirm: no event of the Messaging session named its conversation (a conversation id in the joined event or any later one), " +
				"so the platform's record of it cannot be read; confirm the record in a scenario over debug chat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
				stop := platformtest.TypingStop("s" + string(rune('a'+n)))
				if n == 1 {
					return []platformtest.Frame{platformtest.Joined("1", tc.joined), platformtest.Message("2", "", "Welcome."), stop}
				}
				return []platformtest.Frame{tc.answer, stop}
			})
			// The runtime host: the conversation records of c-1 and
			// c-late, and the ids it was asked for.
			var mu sync.Mutex
			var asked []string
			rt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id := path.Base(r.URL.Path)
				mu.Lock()
				asked = append(asked, id)
				mu.Unlock()
				if id != "c-1" && id != "c-late" {
					http.NotFound(w, r)
					return
				}
				fmt.Fprint(w, record(id, "", "WEBCHAT", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), false, false, ""))
			}))
			t.Cleanup(rt.Close)
			o := hostileOptions(p)
			o.Records = hostileClient(t, rt.URL)
			clk := fakeclock.New()
			o.Now, o.Sleep, o.ConfirmTimeout = clk.Now, clk.Sleep, 30*time.Second
			c := runOne(t, o, balanceSuite+"    confirm: {conversation: {channel: WEBCHAT}}\n")
			a := c.Last()
			mu.Lock()
			defer mu.Unlock()
			if tc.want != "" {
				if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindMessaging || a.Error.Message != tc.want || len(asked) > 0 {
					t.Fatalf("status %s, error %+v, records read %v; want the Messaging platform's error %q", c.Status, a.Error, asked, tc.want)
				}
				return
			}
			if c.Status != result.Passed || !slices.Equal(asked, []string{tc.read}) || a.ConversationID != tc.read {
				t.Fatalf("status %s, records read %v, conversation %q; want %s confirmed%s", c.Status, asked, a.ConversationID, tc.read, describe(c))
			}
		})
	}
}

// TestMessagingStreamingAsked: the session-create body asks for streamed
// replies (streaming_enabled: true) exactly when the scenario does, its
// own word over the suite's over the channel's default, and the case says
// which it was; a Messaging channel that cannot ask errors the scenario
// that does, as a configuration error at its streaming:.
func TestMessagingStreamingAsked(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// suite and scenario are the lines of each level, channelOn the
		// channel's default.
		suite, scenario string
		channelOn       bool
		// opaque hides the channel behind a Channel of its own.
		opaque bool
		want   string // the body; "" when no session was made
		status result.Status
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
			stop := platformtest.TypingStop(fmt.Sprintf("stop-%d", n))
			msg := platformtest.Message(fmt.Sprintf("m-%d", n), "", "Your balance is 0.")
			if n == 1 {
				return []platformtest.Frame{platformtest.Joined("j", "c-1"), msg, stop}
			}
			return []platformtest.Frame{msg, stop}
		})
		o := hostileOptions(p)
		base := platform.Config{BuildURL: p.URL, MessagingURL: p.URL, MessagingHost: p.Host, AllowHTTP: true,
			Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}}
		o.Messaging = Messaging(MessagingClients(base, func(string, string) (string, error) { return hostileConnector, nil }),
			MessagingOptions{Streaming: tc.channelOn, TurnTimeout: 10 * time.Second, Settle: 10 * time.Second})
		if tc.opaque {
			o.Messaging = struct{ Channel }{o.Messaging}
		}
		c := runOne(t, o, "suite: s\nagent: billing\nvia: messaging\n"+tc.suite+`scenarios:
  - name: balance
`+tc.scenario+`    turns:
      - say: What is my balance?
        expect: {response: {contains: "balance is 0"}}
`)
		if c.Status != tc.status {
			t.Fatalf("status %s, want %s", c.Status, tc.status)
		}
		var want []string
		if tc.want != "" {
			want = []string{tc.want}
		}
		if got := p.Sessions(); !slices.Equal(got, want) {
			t.Errorf("session bodies %q, want %q", got, want)
		}
		// A case that errored before its session says what it asked for,
		// as it keeps its via.
		if on := tc.want == `{"streaming_enabled":true}` || tc.status == result.Errored; c.Streaming != on {
			t.Errorf("case says streaming %t, want %t", c.Streaming, on)
		}
		if tc.status == result.Errored {
			e := c.Last().Error
			if e == nil || e.Kind != result.KindConfig || e.Pos.Line != 6 || !strings.Contains(e.Message, "cannot ask for them") {
				t.Errorf("error %+v, want a config error at the scenario's streaming:", e)
			}
		}
	}
	const on, off = `{"streaming_enabled":true}`, `{"streaming_enabled":false}`
	for _, tc := range []testCase{
		{name: "not asked", want: off, status: result.Passed},
		{name: "the suite asks", suite: "streaming: true\n", want: on, status: result.Passed},
		{name: "the scenario asks", scenario: "    streaming: true\n", want: on, status: result.Passed},
		{name: "the scenario does not, whatever the suite says", suite: "streaming: true\n", scenario: "    streaming: false\n", want: off, status: result.Passed},
		{name: "the channel's default", channelOn: true, want: on, status: result.Passed},
		{name: "the scenario's word over the channel's", channelOn: true, scenario: "    streaming: false\n", want: off, status: result.Passed},
		{name: "a channel that cannot ask", opaque: true, scenario: "    streaming: true\n", status: result.Errored},
		{name: "a channel that cannot ask, not asked", opaque: true, want: off, status: result.Passed},
		// The reference's body has no conversation id: a scenario's is
		// not sent (only the embedded simulator takes one, named by
		// Options.ConversationIDs).
		{name: "a scenario's conversation_id is not sent", suite: "start: {conversation_id: mine}\n", want: off, status: result.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingEndAfterTyping: the reference shows no typing indicator,
// so a platform may turn it off and only then send the session end. The
// end still belongs to the turn whose checks expect it (it arrives within
// the settle window after the answer): the agent that ended the session
// passes, in YAML as in a feature, and the transcript shows the end; an
// expiry there is the platform's error. An agent that did not end the
// session still fails. A turn whose checks do not expect the end keeps
// the end for the turn after it (TestMessagingEndBetweenTurns). The
// greeting is such an answer too: an agent that greets and ends the
// session (closed, out of hours) passes a greeting that expects the end.
func TestMessagingEndAfterTyping(t *testing.T) {
	t.Parallel()
	var (
		joined  = platformtest.Joined("1", "c-1")
		welcome = platformtest.Message("2", "", "Welcome.")
		bye     = platformtest.Message("3", "", "Goodbye.")
		stop    = platformtest.TypingStop("4")
		// ended is the agent's end of the session.
		ended = platformtest.SessionEnd("5", "agent_ended")
	)
	yaml := func(expect string) string {
		return `suite: s
agent: billing
via: messaging
scenarios:
  - name: says goodbye
    turns:
      - say: bye
        expect: ` + expect + "\n"
	}
	greetingYAML := func(expect string) string {
		return `suite: s
agent: billing
via: messaging
scenarios:
  - name: says goodbye
    greeting: ` + expect + "\n"
	}
	const feature = `Feature: s
  @via:messaging
  Scenario: says goodbye
    Given the agent "billing"
    When the user says "bye"
    Then the agent's reply contains "Goodbye"
    And the session ends
`
	// A capture between the turn and its checks is no check: the end
	// is still awaited for the check after it.
	captureFeature := strings.Replace(feature, `Then the agent's reply contains "Goodbye"`, `Then I remember "word" from the reply matching "(Good)bye"`, 1)
	const greetingFeature = `Feature: s
  @via:messaging
  Scenario: says goodbye
    Given the agent "billing"
    Then the greeting contains "Goodbye"
    And the session ends
`
	for _, tc := range []struct {
		name string
		// after are the frames after the end of typing; src the suite
		// (a YAML file, or a feature when it starts so).
		after []platformtest.Frame
		src   string
		// greeting: the join's answer says goodbye, and after, instead
		// of the user turn's.
		greeting bool
		// status is the case's; want is the failure's or the error's
		// message.
		status result.Status
		want   string
	}{
		{name: "session_ended", after: []platformtest.Frame{ended},
			src: yaml(`{response: {contains: Goodbye}, session_ended: true}`), status: result.Passed},
		{name: "ended", after: []platformtest.Frame{ended},
			src: yaml(`{ended: true}`), status: result.Passed},
		{name: "events", after: []platformtest.Frame{platformtest.SessionEnd("5", "")},
			src: yaml(`{events: {sequence: [EVENT_TYPE_AGENT_TYPING_STOP, EVENT_TYPE_SESSION_END]}}`), status: result.Passed},
		{name: "a feature", after: []platformtest.Frame{ended},
			src: feature, status: result.Passed},
		{name: "a feature that captures before the check", after: []platformtest.Frame{ended},
			src: captureFeature, status: result.Passed},
		{name: "after a late system message", after: []platformtest.Frame{platformtest.System("5", "SYSTEM_MESSAGE_LEVEL_INFO", "The chat has ended."),
			platformtest.SessionEnd("6", "agent_ended")},
			src: yaml(`{session_ended: true}`), status: result.Passed},
		{name: "an expiry", after: []platformtest.Frame{platformtest.SessionEnd("5", "expired")},
			src: yaml(`{session_ended: true}`), status: result.Errored, want: "the platform ended the session (reason expired)"},
		// The platform closes the socket without an end: no wait for
		// the settle window, and the agent did not end the session.
		{name: "no end", after: nil, src: yaml(`{session_ended: true}`), status: result.Failed, want: "the session did not end"},
		{name: "the greeting, session_ended", after: []platformtest.Frame{ended},
			src: greetingYAML(`{response: {contains: Goodbye}, session_ended: true}`), greeting: true, status: result.Passed},
		{name: "the greeting, a feature", after: []platformtest.Frame{ended},
			src: greetingFeature, greeting: true, status: result.Passed},
		{name: "the greeting, a feature that checks the end first", after: []platformtest.Frame{ended},
			src:      strings.Replace(greetingFeature, "Then the greeting contains \"Goodbye\"\n    And the session ends", "Then the session ends\n    And the greeting contains \"Goodbye\"", 1),
			greeting: true, status: result.Passed},
		{name: "the greeting, an expiry", after: []platformtest.Frame{platformtest.SessionEnd("5", "expired")},
			src: greetingYAML(`{session_ended: true}`), greeting: true, status: result.Errored, want: "the platform ended the session (reason expired)"},
		{name: "the greeting, no end", after: nil, src: greetingYAML(`{session_ended: true}`), greeting: true, status: result.Failed, want: "the session did not end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := platformtest.StartMessaging(t, func(n int, event []byte) []platformtest.Frame {
				if n == 1 && !tc.greeting {
					return []platformtest.Frame{joined, welcome, platformtest.TypingStop("s")}
				}
				frames := []platformtest.Frame{bye, stop}
				if tc.greeting {
					frames = []platformtest.Frame{joined, bye, stop}
				}
				frames = append(frames, tc.after...)
				if tc.after == nil {
					frames = append(frames, platformtest.Frame{Close: true})
				}
				return frames
			})
			o := hostileOptions(p)
			var suites []*scenario.Suite
			if strings.HasPrefix(tc.src, "Feature") {
				var diags diag.Diagnostics
				suites, diags = scenario.Load(fstest.MapFS{"end.feature": {Data: []byte(tc.src)}}, nil)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
			} else {
				suites = loadYAML(t, tc.src)
			}
			res, err := Run(context.Background(), suites, o)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Files[0].Cases[0]
			a := c.Last()
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s%s", c.Status, tc.status, describe(c))
			}
			switch tc.status {
			case result.Passed:
				m := a.Turns[len(a.Turns)-1].Messaging
				if m == nil || !m.SessionEnded || m.Events[len(m.Events)-1].Type != "EVENT_TYPE_SESSION_END" {
					t.Errorf("the last turn's events %+v: the transcript lacks the end", m)
				}
			case result.Failed:
				if len(a.Failures) != 1 || a.Failures[0].Message != tc.want {
					t.Errorf("failures %+v, want %q", a.Failures, tc.want)
				}
			default:
				if a.Error == nil || a.Error.Message != tc.want || len(a.Failures) > 0 {
					t.Errorf("error %+v, failures %+v, want the platform's %q", a.Error, a.Failures, tc.want)
				}
			}
		})
	}
}

// TestMessagingGreetingJoinedInHistoryAwaitsEnd: on a platform that joins
// the agent itself (the socket's history batch holds the join and the
// greeting, so the client sends no join request), a greeting whose checks
// expect the session to end takes the end that follows typing-off, as a
// greeting answering the join does. The wait for the end returned no turn
// there (the session had made no exchange), and the greeting errored with
// "platform returned no turn result", its transcript lost.
func TestMessagingGreetingJoinedInHistoryAwaitsEnd(t *testing.T) {
	t.Parallel()
	history := platformtest.Batch("h", platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Goodbye."), platformtest.TypingStop("3"))
	for _, tc := range []struct {
		name string
		// after follows the history batch, unasked.
		after  []platformtest.Frame
		status result.Status
		want   string
	}{
		{name: "the end follows", after: []platformtest.Frame{platformtest.SessionEnd("4", "agent_ended")}, status: result.Passed},
		{name: "the socket closes without an end", after: []platformtest.Frame{{Close: true}}, status: result.Failed, want: "the session did not end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked atomic.Int32
			p := platformtest.StartMessagingWith(t, append([]platformtest.Frame{history}, tc.after...), func(int, []byte) []platformtest.Frame {
				asked.Add(1)
				return nil
			})
			res, err := Run(context.Background(), loadYAML(t, `suite: s
agent: billing
via: messaging
scenarios:
  - name: says goodbye
    greeting: {response: {contains: Goodbye}, session_ended: true}
`), hostileOptions(p))
			if err != nil {
				t.Fatal(err)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("%d client events: the agent joined in the history, nothing is asked of the platform", n)
			}
			c := res.Files[0].Cases[0]
			a := c.Last()
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s%s", c.Status, tc.status, describe(c))
			}
			if len(a.Turns) != 1 || a.Turns[0].Result == nil || a.Turns[0].Result.Response != "Goodbye." {
				t.Errorf("turns %+v: the greeting's transcript is missing", a.Turns)
			}
			if tc.status == result.Passed {
				if m := a.Turns[0].Messaging; m == nil || !m.SessionEnded {
					t.Errorf("the greeting's events %+v: the transcript lacks the end", m)
				}
			} else if len(a.Failures) != 1 || a.Failures[0].Message != tc.want {
				t.Errorf("failures %+v, want %q", a.Failures, tc.want)
			}
		})
	}
}

// TestMessagingClientTurnTimeout: a Messaging turn that runs out of the
// client's own turn timeout (MessagingOptions.TurnTimeout) errors the case
// as a timeout, as a debug-chat turn that runs out of the runner's does,
// not as a network error: the platform was reached and did not answer in
// time. Like a debug-chat timeout naming its call, it names the socket
// and what the turn still waited for. The clocks are fake; only the
// client's timer fires when the clock passes its timeout alone.
//
// The clock moves exactly to the first timer's due time, not past it:
// the timers fire on the goroutine that moves it, with the clock showing
// their time, and the turn reads the clock for its latency once it sees
// its cut, which on a loaded machine may be before Advance moved the
// clock on to its end or after. Moved past the timers, the latency was
// whichever (10s or a minute, 5s or 7s); moved to them, it is the same
// either way, the timeout a real clock would show.
func TestMessagingClientTurnTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		client, runner time.Duration
		// advance is how far the clock moves once the client event
		// the platform leaves unanswered arrived: the join (stall 1) or
		// the user message (stall 2), to the first timer's due time.
		advance time.Duration
		stall   int
		want    string
	}{
		{"the client's timer alone", 5 * time.Second, 10 * time.Second, 5 * time.Second, 2,
			"turn timeout of 5s exceeded (WS /ws: no answer to the user message)"},
		// Due together, the runner's timer, set first, fires first.
		{"the runner's timer first", 10 * time.Second, 10 * time.Second, 10 * time.Second, 2,
			"turn timeout of 10s exceeded (WS /ws: no answer to the user message)"},
		// The turn cut by the runner's timer took the runner's 10s, not
		// the client's timeout it never reached.
		{"the runner's timer alone", 20 * time.Second, 10 * time.Second, 10 * time.Second, 2,
			"turn timeout of 10s exceeded (WS /ws: no answer to the user message)"},
		{"the agent never joins", 5 * time.Second, 10 * time.Second, 5 * time.Second, 1,
			"turn timeout of 5s exceeded (WS /ws: no answer to the join request: the agent did not join)"},
		{"the agent never joins, the runner's timer first", 10 * time.Second, 10 * time.Second, 10 * time.Second, 1,
			"turn timeout of 10s exceeded (WS /ws: no answer to the join request: the agent did not join)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New()
			p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
				if n == tc.stall {
					// Both turn timers are set.
					clk.Advance(tc.advance)
					return nil
				}
				return []platformtest.Frame{platformtest.Joined("1", ""), platformtest.Message("2", "", "Welcome."), platformtest.TypingStop("3")}
			})
			// The client's timers run on its Now (Config.AfterFunc).
			base := platform.Config{BuildURL: p.URL, MessagingURL: p.URL, MessagingHost: p.Host, AllowHTTP: true, Now: clk.Now,
				Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}, AfterFunc: clk.AfterFunc}
			ch := Messaging(MessagingClients(base, func(string, string) (string, error) { return hostileConnector, nil }),
				MessagingOptions{TurnTimeout: tc.client, Settle: time.Hour})
			opts := Options{Channel: ch, Messaging: ch, Parallel: 1, RetryDelay: -1, TurnTimeout: tc.runner,
				Now: clk.Now, Sleep: clk.Sleep, AfterFunc: clk.AfterFunc}
			c := runOne(t, opts, balanceSuite)
			a := c.Last()
			if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindTimeout || a.Error.Message != tc.want {
				t.Errorf("status %s, error %+v: want errored, a timeout: %q", c.Status, a.Error, tc.want)
			}
			// The turn cut short took what it was waited for, as a
			// debug-chat call cut short does: the transcript says so.
			if n := len(a.Turns); n != tc.stall || a.Turns[n-1].Latency != tc.advance {
				t.Errorf("%d turns, the last taking %v; want %d, the stalled one taking %v", n, a.Turns[n-1].Latency, tc.stall, tc.advance)
			}
		})
	}
}

// TestMessagingIntegrationAttributes: the scenario's integration
// attributes travel as the custom metadata of the join, which starts the
// conversation, as debug chat sends them with its session: an agent that
// reads them is tested with them over messaging too.
func TestMessagingIntegrationAttributes(t *testing.T) {
	t.Parallel()
	joins := make(chan []byte, 1)
	p := platformtest.StartMessaging(t, func(n int, event []byte) []platformtest.Frame {
		if n == 1 {
			select {
			case joins <- event:
			default:
			}
			return []platformtest.Frame{platformtest.Joined("1", ""), platformtest.Message("2", "", "Welcome."), platformtest.TypingStop("3")}
		}
		return []platformtest.Frame{platformtest.Message("4", "", "Your balance is 0."), platformtest.TypingStop("5")}
	})
	src := strings.Replace(balanceSuite, "  - name: balance\n", "  - name: balance\n    start: {integration_attributes: {account: A-17}}\n", 1)
	if c := runOne(t, hostileOptions(p), src); c.Status != result.Passed {
		t.Fatalf("status %s", c.Status)
	}
	var join struct {
		Metadata struct {
			Custom map[string]any `json:"custom"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(<-joins, &join); err != nil || join.Metadata.Custom["account"] != "A-17" {
		t.Errorf("join's custom metadata %v (%v), want account A-17", join.Metadata.Custom, err)
	}
}

// TestMessagingEndBeforeJoin: a session that ends before the agent joined
// is judged by the end's reason wherever the end falls: in the history
// batch, just after it (read before the join request goes, or after,
// as the client happens to), or in answer to the join. An expiry is the
// platform's error, retried; any other end is the greeting's, which a
// check of the greeting judges. The client reads an end that follows the
// batch before or after it sends the join as the goroutines happen to
// run: the verdict must not depend on it.
func TestMessagingEndBeforeJoin(t *testing.T) {
	t.Parallel()
	const suite = `suite: s
agent: billing
via: messaging
scenarios:
  - name: closed
    greeting: {session_ended: true}
`
	type testCase struct {
		name string
		// opening follows the handshake; answer answers the join.
		opening, answer []platformtest.Frame
	}
	for _, reason := range []string{"agent_ended", "expired"} {
		end := platformtest.SessionEnd("1", reason)
		for _, tc := range []testCase{
			{name: "in the history batch", opening: []platformtest.Frame{platformtest.Batch("b", end)}},
			{name: "after the history batch", opening: []platformtest.Frame{platformtest.Batch("b"), end}},
			{name: "in answer to the join", opening: []platformtest.Frame{platformtest.Batch("b")}, answer: []platformtest.Frame{end}},
		} {
			t.Run(reason+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				p := platformtest.StartMessagingWith(t, tc.opening, func(int, []byte) []platformtest.Frame { return tc.answer })
				o := hostileOptions(p)
				o.Retries = 1
				c := runOne(t, o, suite)
				a := c.Last()
				if reason == "expired" {
					if c.Status != result.Errored || len(c.Attempts) != 2 || a.Error == nil || a.Error.Kind != result.KindMessaging ||
						a.Error.Message != "the platform ended the session (reason expired)" {
						t.Fatalf("status %s after %d attempts, error %+v: want the platform's error, retried%s", c.Status, len(c.Attempts), a.Error, describe(c))
					}
				} else if c.Status != result.Passed || len(c.Attempts) != 1 {
					t.Fatalf("status %s after %d attempts: want the greeting's check to pass%s", c.Status, len(c.Attempts), describe(c))
				}
				if m := a.Turns[0].Messaging; m == nil || !m.SessionEnded || m.EndReason != reason || m.Joined {
					t.Errorf("the greeting's events %+v: want the end, and no join", m)
				}
			})
		}
	}
}

// textFrameFault is a transport whose client connections fail the
// write of the n-th text frame the run sends (counted over all of them:
// the join is the first), once, with an error that quotes the access
// token, as a connection the platform reset mid-turn fails it.
func textFrameFault(n int32) *http.Transport {
	var frames atomic.Int32
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &frameFaultConn{Conn: c, frames: &frames, fail: n}, nil
	}
	return transport
}

type frameFaultConn struct {
	net.Conn
	frames *atomic.Int32
	fail   int32
}

func (c *frameFaultConn) Write(p []byte) (int, error) {
	// 0x81: a final text frame (RFC 6455, 5.2); the client masks the
	// rest.
	if len(p) > 0 && p[0] == 0x81 && c.frames.Add(1) == c.fail {
		return 0, fmt.Errorf("write to %s?access_token=%s: connection reset by peer", c.RemoteAddr(), platformtest.MessagingJWT)
	}
	return c.Conn.Write(p)
}

// TestMessagingWriteFails: a user message whose write fails after a good
// handshake is sent again on a reopened socket where the platform echoes
// client events, and the case passes on its first attempt; with
// reconnects off, the attempt errors as the platform's connection
// (KindNetwork, naming WS /ws), never as the agent's failure, with no
// credential in it, and the retry on a fresh session passes.
func TestMessagingWriteFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		maxReconnects int
		attempts      int
		status        result.Status
	}{
		{name: "reconnected", attempts: 1, status: result.Passed},
		{name: "reconnects off", maxReconnects: -1, attempts: 2, status: result.Flaky},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Each socket counts its client events from 1: the event's
			// type says which it is, and the ids go on across sockets,
			// as in one session's log.
			var seq atomic.Int32
			id := func() string { return fmt.Sprint(seq.Add(1)) }
			p := platformtest.StartMessaging(t, func(_ int, event []byte) []platformtest.Frame {
				echo := platformtest.Echo(int(seq.Add(1)), event)
				if strings.Contains(string(event), "JOIN") {
					return []platformtest.Frame{echo, platformtest.Joined(id(), "c-1"), platformtest.Message(id(), "", "Welcome."), platformtest.TypingStop(id())}
				}
				return []platformtest.Frame{echo, platformtest.Message(id(), "", "Your balance is 0."), platformtest.TypingStop(id())}
			})
			base := platform.Config{BuildURL: p.URL, MessagingURL: p.URL, MessagingHost: p.Host, AllowHTTP: true,
				HTTPClient: &http.Client{Transport: textFrameFault(2)},
				Retry:      platform.RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}}
			ch := Messaging(MessagingClients(base, func(string, string) (string, error) { return hostileConnector, nil }),
				MessagingOptions{TurnTimeout: 10 * time.Second, Settle: 10 * time.Second, MaxReconnects: tc.maxReconnects})
			o := Options{Channel: ch, Messaging: ch, Parallel: 1, RetryDelay: -1, TurnTimeout: 10 * time.Second, Retries: 1}
			c := runOne(t, o, balanceSuite)
			if c.Status != tc.status || len(c.Attempts) != tc.attempts {
				t.Fatalf("status %s after %d attempts, want %s after %d%s", c.Status, len(c.Attempts), tc.status, tc.attempts, describe(c))
			}
			first := c.Attempts[0]
			if tc.attempts == 1 {
				if m := first.Turns[1].Messaging; m == nil || m.Reconnects != 1 || m.Resent != 1 {
					t.Errorf("the turn's events %+v: want one reconnect and the message sent again", m)
				}
				return
			}
			if e := first.Error; e == nil || e.Kind != result.KindNetwork || len(first.Failures) > 0 ||
				!strings.HasPrefix(e.Message, "WS /ws: connection lost after the request was sent: socket closed (0 reconnects in this turn): ") {
				t.Errorf("first attempt: error %+v, failures %+v: want the platform's connection lost", e, first.Failures)
			}
			if s := describe(c); strings.Contains(s, "HOSTILE") {
				t.Errorf("a credential reached the case:%s", s)
			}
		})
	}
}

// TestMessagingFailedOpenClosesTheSocket: an opening that fails after the
// socket opened (here the join's answer cannot be used) leaves no socket
// behind: the channel closes it, since the run gets no conversation to
// close. The platform sees the client go.
func TestMessagingFailedOpenClosesTheSocket(t *testing.T) {
	t.Parallel()
	p := platformtest.StartMessaging(t, func(int, []byte) []platformtest.Frame {
		// A greeting whose text is no string: the platform's error.
		return platformtest.Texts(`{"id":"1","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":{"value":"Welcome."}}}`)
	})
	c := runOne(t, hostileOptions(p), balanceSuite)
	if c.Status != result.Errored {
		t.Fatalf("status %s, want errored%s", c.Status, describe(c))
	}
	select {
	case <-p.Gone():
	case <-time.After(5 * time.Second):
		t.Fatal("the socket of the failed opening is still open")
	}
}

// TestMessagingJoinedElsewhere: a joined event that names another agent
// (in the scenario's form) or another environment than the scenario's
// errors the case as a configuration error, not retried, whether its
// answer would pass or fail: the connector token opened the conversation
// of another agent or environment, and its answers are not this agent's.
// One that names the same, a form it cannot compare (PROJECT- against a
// slug), an environment no conversation has ("dev") or nothing is no
// evidence either way.
func TestMessagingJoinedElsewhere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		agent  string // the scenario's agent, when not billing
		joined []any  // the joined event's payload members after conversation_id
		again  bool   // a second joined event follows, naming only the conversation
		answer string
		status result.Status
		want   string
	}{
		{name: "the scenario's agent", joined: []any{"agent_id", "billing"}, answer: "Your balance is 0.", status: result.Passed},
		{name: "the scenario's agent in another case, in the scenario's environment", joined: []any{"projectId", "Billing", "environment", "SANDBOX"}, answer: "Your balance is 0.", status: result.Passed},
		{name: "a project in the other form", joined: []any{"project_id", "PROJECT-ab12cd34"}, answer: "Your balance is 0.", status: result.Passed},
		// A platform's internal id of the agent is no form a scenario
		// writes: nothing can be said of it.
		{name: "an internal id (a UUID)", joined: []any{"agent_id", "3f2a9c1e-7b4d-4e0a-9c1f-2b3c4d5e6f70"}, answer: "Your balance is 0.", status: result.Passed},
		{name: "a display name", joined: []any{"agent_id", "Billing Agent"}, answer: "Your balance is 0.", status: result.Passed},
		// A scenario's agent of no id form (the loaders do not hold it
		// to one) is compared with nothing, not even a display name.
		{name: "a scenario's agent of no form, a display name", agent: "billing team", joined: []any{"agent_id", "Billing Agent"}, answer: "Your balance is 0.", status: result.Passed},
		// A display name where the joined event names one (agent_name)
		// is no agent id, whatever it looks like; written where the
		// reference's id goes, one in a slug's form is another agent's
		// slug to any reader: the configuration's error, quoting it,
		// never the agent's failure (docs/configuration.md).
		{name: "a display name in a slug's form, beside the scenario's agent", joined: []any{"agent_name", "billing_bot", "agent_id", "billing"}, answer: "Your balance is 0.", status: result.Passed},
		{name: "a display name in a slug's form, as the agent id", joined: []any{"agent_id", "billing_bot"}, answer: "Your balance is 0.", status: result.Errored,
			want: "runs in project billing_bot, not billing"},
		{name: "an environment of no conversation", joined: []any{"env", "dev"}, answer: "Your balance is 0.", status: result.Passed},
		// The reference's ids are strings: a number is no name of the
		// agent a scenario could write, and the next member is read.
		{name: "a number, then the scenario's agent", joined: []any{"agent_id", 4711, "project_id", "billing"}, answer: "Your balance is 0.", status: result.Passed},
		{name: "a number, then another agent", joined: []any{"agent_id", 4711, "agentId", "clinic"}, answer: "Your balance is 0.", status: result.Errored,
			want: "runs in project clinic, not billing"},
		{name: "an empty name, then another agent", joined: []any{"agent_id", "", "agentId", "clinic"}, answer: "Your balance is 0.", status: result.Errored,
			want: "runs in project clinic, not billing"},
		{name: "another agent whose answer would pass", joined: []any{"agent_id", "clinic"}, answer: "Your balance is 0.", status: result.Errored,
			want: "start: the platform's joined event says the web chat's conversation runs in project clinic, not billing: a conversation over messaging runs in the agent and environment of its connector token, so the token sent is not the connector of agent billing in sandbox"},
		{name: "another agent whose answer would fail", joined: []any{"agentId", "clinic"}, answer: "I cannot say.", status: result.Errored,
			want: "runs in project clinic, not billing"},
		{name: "another environment", joined: []any{"client_env", "pre_release"}, answer: "Your balance is 0.", status: result.Errored,
			want: "runs in environment pre-release, not sandbox"},
		{name: "another agent and environment in camelCase", joined: []any{"projectId", "clinic", "clientEnv", "Live"}, answer: "Your balance is 0.", status: result.Errored,
			want: "runs in project clinic, not billing, environment live, not sandbox"},
		// The first joined event that names them is the session's: a
		// second that names nothing does not clear them.
		{name: "another agent, then a joined event that names none", joined: []any{"agent_id", "clinic", "env", "live"}, again: true, answer: "Your balance is 0.", status: result.Errored,
			want: "runs in project clinic, not billing, environment live, not sandbox"},
		{name: "another agent and environment", joined: []any{"project_id", "clinic", "environment", "live"},
			answer: "Your balance is 0.", status: result.Errored, want: "runs in project clinic, not billing, environment live, not sandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			joined := platformtest.Event("1", "EVENT_TYPE_AGENT_JOINED", append([]any{"conversation_id", "c-1"}, tc.joined...)...)
			p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
				stop := platformtest.TypingStop(fmt.Sprintf("s%d", n))
				if n == 1 && tc.again {
					return []platformtest.Frame{joined, platformtest.Joined("j2", "c-1"), platformtest.Message("2", "", "Welcome."), stop}
				}
				if n == 1 {
					return []platformtest.Frame{joined, platformtest.Message("2", "", "Welcome."), stop}
				}
				return []platformtest.Frame{platformtest.Message("3", "", tc.answer), stop}
			})
			o := hostileOptions(p)
			o.Retries = 2
			suite := balanceSuite
			if tc.agent != "" {
				suite = strings.Replace(suite, "agent: billing", "agent: "+tc.agent, 1)
			}
			c := runOne(t, o, suite)
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s", c.Status, tc.status)
			}
			if tc.want == "" {
				return
			}
			a := c.Last()
			if len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, tc.want) || len(a.Failures) > 0 {
				t.Errorf("%d attempts, error %+v, failures %+v: want one attempt, a configuration error with %q", len(c.Attempts), a.Error, a.Failures, tc.want)
			}
			// At the scenario's via:, with the greeting in the transcript.
			if a.Error != nil && a.Error.Pos.Line != 3 || len(a.Turns) == 0 || !strings.Contains(a.Turns[0].Result.Response, "Welcome") {
				t.Errorf("error at %v, turns %d: want line 3 and the greeting", a.Error.Pos, len(a.Turns))
			}
		})
	}
}

// TestMessagingNotRecordedNamesTheConnector: on a platform whose joined
// event names no agent, a connector of another agent goes unseen during
// the chat, and the record read under the scenario's agent is never
// found. The error stays the platform's (the record may be late), and
// says that a connector of another agent or environment puts the
// conversation where the read does not look.
func TestMessagingNotRecordedNamesTheConnector(t *testing.T) {
	t.Parallel()
	p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
		stop := platformtest.TypingStop(fmt.Sprintf("s%d", n))
		if n == 1 {
			return []platformtest.Frame{platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Welcome."), stop}
		}
		return []platformtest.Frame{platformtest.Message("3", "", "Your balance is 0."), stop}
	})
	h := &hostileRuntime{getAnswer: func(int) (int, string) { return http.StatusNotFound, `{"error_message":"conversation not found"}` }}
	c := runHostile(t, h, strings.Replace(balanceSuite, "agent: billing", "agent: p1", 1)+"    confirm: {conversation: {channel: WEBCHAT}}\n", func(o *Options) {
		o.Messaging = hostileOptions(p).Messaging
	})
	a := c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindTimeout ||
		!strings.Contains(a.Error.Message, "not recorded within the confirmation's wait of 30s") ||
		!strings.Contains(a.Error.Message, "unless the connector token sent for agent p1 in sandbox is another agent's or environment's") {
		t.Fatalf("%s, want errored, naming the connector%s", c.Status, describe(c))
	}
}

// TestMessagingTailBeforeEcho: an agent that turned its typing indicator
// off between the two messages of one answer, on a platform that echoes
// user messages, sends the second message (and its typing indicator's
// end) before the platform takes the next user message. Those belong to
// the turn they arrived in, but do not answer it: the turn waits for its
// own answer after its echo, so its reply is the earlier answer's tail
// and then its own, the documented symptom of a split answer without
// messaging_quiet, where it completed on the tail and left its answer to
// no turn.
func TestMessagingTailBeforeEcho(t *testing.T) {
	t.Parallel()
	p := platformtest.StartMessaging(t, func(n int, event []byte) []platformtest.Frame {
		stop := func(id string) platformtest.Frame { return platformtest.TypingStop(id) }
		echo := platformtest.Echo(n, event)
		switch n {
		case 1:
			return []platformtest.Frame{echo, platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Welcome."), stop("3")}
		case 2:
			return []platformtest.Frame{echo, platformtest.Message("4", "", "Let me check."), stop("5")}
		case 3:
			return []platformtest.Frame{platformtest.Message("6", "", "Your bill is £84.20."), stop("7"),
				echo, platformtest.Message("8", "", "We open at 9."), stop("9")}
		}
		return nil
	})
	c := runOne(t, hostileOptions(p), `suite: s
agent: billing
via: messaging
scenarios:
  - name: gives the hours after the bill
    turns:
      - say: my bill
      - say: hours
        expect: {response: {equals: "We open at 9."}}
`)
	a := c.Last()
	const want = "Your bill is £84.20. We open at 9."
	if c.Status != result.Failed || len(a.Failures) != 1 || a.Failures[0].Actual != want {
		t.Fatalf("status %s, failures %+v; want turn 2 to fail on %q%s", c.Status, a.Failures, want, describe(c))
	}
	if got := a.Turns[2].Messaging.CompletedBy; got != "typing" {
		t.Errorf("turn 2 completed by %q, want its own answer's typing indicator", got)
	}
}
