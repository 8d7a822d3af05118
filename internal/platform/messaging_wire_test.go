package platform

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/secret"
)

// frame is one frame a hostile platform sends: text unless binary.
type frame struct {
	data   string
	binary bool
}

// text frames.
func texts(fs ...string) []frame {
	out := make([]frame, len(fs))
	for i, f := range fs {
		out[i] = frame{data: f}
	}
	return out
}

// play reads the join and answers it with frames, then waits for the
// client to go.
func play(frames []frame) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		for _, f := range frames {
			typ := websocket.MessageText
			if f.binary {
				typ = websocket.MessageBinary
			}
			if c.Write(ctx, typ, []byte(f.data)) != nil {
				return
			}
		}
		c.Read(ctx)
	}
}

// leaks returns what of a turn and an error holds a planted credential,
// in the forms every report renders them.
func leaks(turn *MessagingTurn, err error) []string {
	return leaksBy(turn, err, func(s string) bool { return strings.Contains(s, "PLANTED") })
}

// leaksBy returns what of a turn and an error holds says holds a
// credential, in the forms every report renders them.
func leaksBy(turn *MessagingTurn, err error, holds func(string) bool) []string {
	var out []string
	look := func(what, s string) {
		if holds(s) {
			out = append(out, what+": "+s)
		}
	}
	if err != nil {
		look("error", fmt.Sprintf("%v %+v", err, err))
		if re, ok := errors.AsType[*ResponseError](err); ok {
			look("error body", string(re.Body))
		}
	}
	if turn == nil {
		return out
	}
	look("reply", turn.Reply)
	for _, r := range turn.Messages {
		look("message", r.Text)
	}
	for _, e := range turn.Events {
		look("event raw", string(e.Raw))
		look("event payload", string(e.Payload))
		look("event text", e.Text)
	}
	x := turn.Exchange("s-1", "c-1", "")
	look("exchange response", string(x.Response))
	look("exchange reply", x.Result.Response)
	for _, e := range x.Messaging.Events {
		look("exchange event", e.Text)
	}
	return out
}

const (
	joinedC1   = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
	typingStop = `{"id":"9","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`
	// hello completes an answer, so that a client that took what comes
	// before it fails the test at once instead of at the timeout.
	hello = `{"id":"8","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`
)

// TestMessagingHostileEvents plays what a hostile or broken platform may
// send on the socket in answer to the join, over a real WebSocket: each
// answer either reads as what the agent said, or is the platform's error
// (a *ResponseError of WS /ws saying what was wrong, never transient),
// never a reply that would pass or fail a check on the agent by mistake,
// and no credential it echoes, in any encoding or split across frames,
// reaches the turn or the error.
func TestMessagingHostileEvents(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		frames []frame
		// want is the error after "open messaging session s-1: join: WS
		// /ws: 101: malformed response: ", "" for none.
		want string
		// reply and conversation are the opening's, when no error.
		reply, conversation string
	}
	sig := plantedJWT[strings.LastIndexByte(plantedJWT, '.')+1:]
	connB64 := base64.StdEncoding.EncodeToString([]byte(plantedConnector))
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		p := &hostileMessaging{socket: play(tc.frames)}
		srv := httptest.NewServer(p)
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		// Every answer completes on its typing indicator: the settle
		// wait and the timeout are never reached.
		m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute})
		if m == nil {
			t.Fatalf("no session: %v", err)
		}
		defer m.Close()
		if l := leaks(m.Opening(), err); len(l) > 0 {
			t.Errorf("a credential leaked:\n%s", strings.Join(l, "\n"))
		}
		if tc.want == "" {
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if o := m.Opening(); o.Reply != tc.reply || m.ConversationID() != tc.conversation {
				t.Errorf("reply %q in conversation %q, want %q in %q", o.Reply, m.ConversationID(), tc.reply, tc.conversation)
			}
			return
		}
		var re *ResponseError
		if !errors.As(err, &re) || IsTransient(err) {
			t.Fatalf("got %T %v, want the platform's error", err, err)
		}
		const prefix = "open messaging session s-1: join: WS /ws: 101: malformed response: "
		if strings.Contains(tc.want, "not valid UTF-8") && re.Body != nil {
			t.Errorf("a frame that is not text is kept: %q", re.Body)
		}
		if got := err.Error(); got != prefix+tc.want {
			t.Errorf("error\n%s\nwant\n%s", got, prefix+tc.want)
		}
	}
	// twoUnderOneID is the case of two events sent under the id "2",
	// the second the platform's error.
	twoUnderOneID := func(name, first, second string) testCase {
		var e struct{ Type string }
		json.Unmarshal([]byte(second), &e)
		with := func(f string) string { return `{"id":"2",` + f[1:] }
		return testCase{name: "two events under one id, " + name, frames: texts(joinedC1, with(first), with(second), hello, typingStop),
			want: e.Type + `: event id "2" came before as another event: the platform gave two events one id`}
	}
	for _, tc := range []testCase{
		{
			name:   "a joined event whose conversation id is a number",
			frames: texts(`{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":12}}`, hello, typingStop),
			want:   "EVENT_TYPE_AGENT_JOINED: payload.conversation_id is a number, want a string",
		},
		{
			name:   "a joined event whose conversation id is an object",
			frames: texts(`{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversationId":{"id":"c-1"}}}`, hello, typingStop),
			want:   "EVENT_TYPE_AGENT_JOINED: payload.conversationId is an object, want a string",
		},
		{
			name:   "a joined event whose conversation is an object with an id",
			frames: texts(`{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation":{"id":"c-7"}}}`, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`, typingStop),
			reply:  "Hello.", conversation: "c-7",
		},
		{
			name:   "a joined event naming two conversations",
			frames: texts(`{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","conversation_id":"c-1","payload":{"conversation_id":"c-2"}}`, hello, typingStop),
			want:   `EVENT_TYPE_AGENT_JOINED names two conversations, "c-1" and "c-2"`,
		},
		{
			name: "another conversation's reply in the payload",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"conversation_id":"c-OTHER","text":"Your balance is 0."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE names conversation "c-OTHER", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name: "another conversation's reply named by the event",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","conversationId":"c-OTHER","payload":{"text":"Your balance is 0."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE names conversation "c-OTHER", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name: "another conversation's reply named by its metadata",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","metadata":{"conversation_id":"c-OTHER"},"payload":{"text":"Your balance is 0."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE names conversation "c-OTHER", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name: "a conversation id in the echoed custom metadata is the client's own",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","metadata":{"conversation_id":"c-1","custom":{"conversation_id":"mine"}},"payload":{"text":"Hello."}}`, typingStop),
			reply: "Hello.", conversation: "c-1",
		},
		{
			name: "a second joined event for another conversation",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-2"}}`, hello, typingStop),
			want: `EVENT_TYPE_AGENT_JOINED names conversation "c-2", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name:   "a history batch naming another conversation",
			frames: texts(joinedC1, `{"type":"EVENT_TYPE_EVENT_BATCH","conversation_id":"c-OTHER","payload":[]}`, hello, typingStop),
			want:   `EVENT_TYPE_EVENT_BATCH names conversation "c-OTHER", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name: "a history batch of another conversation",
			frames: texts(joinedC1,
				`{"type":"EVENT_TYPE_EVENT_BATCH","payload":{"events":[{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"conversation_id":"c-OTHER","text":"Hi."}}]}}`, typingStop),
			want: `in the history batch: EVENT_TYPE_AGENT_MESSAGE names conversation "c-OTHER", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name:   "a text frame that is not UTF-8",
			frames: texts(joinedC1, "{\"id\":\"2\",\"type\":\"EVENT_TYPE_AGENT_MESSAGE\",\"payload\":{\"text\":\"Caf\xe9.\"}}", typingStop),
			want:   "a frame of 71 bytes is not valid UTF-8 (a JSON event is text): byte 66 is 0xe9",
		},
		{
			name:   "a binary frame holding an event",
			frames: []frame{{data: joinedC1, binary: true}, {data: `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`, binary: true}, {data: typingStop}},
			reply:  "Hello.", conversation: "c-1",
		},
		{
			name:   "a binary frame of bytes",
			frames: []frame{{data: joinedC1}, {data: "\x00\x01\x02\xff\xfe\xfdabcd", binary: true}, {data: typingStop}},
			want:   "a frame of 10 bytes is not valid UTF-8 (a JSON event is text): byte 3 is 0xff",
		},
		{
			name: "the same event twice",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`, typingStop),
			reply: "Hello.", conversation: "c-1",
		},
		{
			name: "two events under one id",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your balance is 0."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE: event id "2" came before as another event: the platform gave two events one id`,
		},
		// An error-level system message answers the turn, whatever the
		// case of its level: the end of typing completes it.
		{
			name: "an error in lower case",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_SYSTEM_MESSAGE","payload":{"level":"system_message_level_error","message":"Sorry."}}`, typingStop,
				hello, `{"id":"10","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`),
			conversation: "c-1",
		},
		{
			name:   "an event whose type is empty",
			frames: texts(joinedC1, `{"id":"2","type":"","payload":{}}`, hello, typingStop),
			want:   `event without a "type"`,
		},
		// A history batch's events: its payload, or the first member
		// of its payload that is not null; a batch of nothing.
		{
			name:   "a history batch whose payload is null",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":null}`, joinedC1, hello, typingStop),
			reply:  "Hello.", conversation: "c-1",
		},
		{
			name: "a history batch under its second member",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":{"events":null,"items":[`+joinedC1+`,`+hello+`]}}`, typingStop,
				`{"id":"10","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Again."}}`, `{"id":"11","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`),
			reply: "Hello.", conversation: "c-1",
		},
		{
			name:   "a history batch whose events are a string",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":{"history":"[]"}}`, hello, typingStop),
			want:   `history batch member "history": expected an array, got string`,
		},
		{
			name:   "a history batch holding a number",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[5]}`, joinedC1, hello, typingStop),
			want:   `in the history batch: expected an object, got number`,
		},
		{
			name:   "a history batch whose payload is a number",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":7}`, hello, typingStop),
			want:   `history batch payload is number, not an object or a list`,
		},
		{
			name: "a whole message without an id while a stream is open",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","text":"Hel"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Wait."}}`, typingStop),
			reply: "Wait.", conversation: "c-1",
		},
		{
			name: "two events under one negative numeric id",
			frames: texts(joinedC1, `{"id":-2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"id":-2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Bye."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE: event id "-2" came before as another event: the platform gave two events one id`,
		},
		// A stream end is held to the last chunk that had text, and
		// ends its own message: the last stream only when it names none.
		{
			name: "a stream end that repeats the last chunk with text",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Hello "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"world."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","final":true}}`,
				`{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","text":"world."}}`, typingStop),
			reply: "Hello world.", conversation: "c-1",
		},
		{
			name: "a stream end of another message after a stream",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Hello.","final":true}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m9","text":"Bye."}}`, typingStop),
			reply: "Hello. Bye.", conversation: "c-1",
		},
		{
			name:   "a stream end without an id after a whole message",
			frames: texts(joinedC1, hello, `{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"text":"Bye."}}`, typingStop),
			reply:  "Hello. Bye.", conversation: "c-1",
		},
		// Only an answer lets the end of typing complete the turn: not
		// a system message below error level, nor nothing.
		{
			name: "a warning, then the end of typing",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_SYSTEM_MESSAGE","payload":{"level":"SYSTEM_MESSAGE_LEVEL_WARNING","message":"Slow."}}`, typingStop,
				hello, `{"id":"10","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`),
			reply: "Hello.", conversation: "c-1",
		},
		{
			name:   "the end of typing before the answer",
			frames: texts(joinedC1, typingStop, hello, `{"id":"10","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`),
			reply:  "Hello.", conversation: "c-1",
		},
		{
			name: "the end of typing amid a stream",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Hello "}}`, typingStop,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"again.","final":true}}`, `{"id":"10","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`),
			reply: "Hello again.", conversation: "c-1",
		},
		// What the agent says, or who joins, past the session end.
		{
			name:   "a joined event after the session end",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[{"id":"2","type":"EVENT_TYPE_SESSION_END","payload":{}},` + joinedC1 + `]}`),
			want:   "in the history batch: EVENT_TYPE_AGENT_JOINED after the session ended: the platform's event log goes on past its end",
		},
		{
			name:   "a stream end after the session end",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[{"id":"2","type":"EVENT_TYPE_SESSION_END","payload":{}},{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1"}}]}`),
			want:   "in the history batch: EVENT_TYPE_AGENT_MESSAGE_END after the session ended: the platform's event log goes on past its end",
		},
		{
			name:   "a live agent's message after the session end",
			frames: texts(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[{"id":"2","type":"EVENT_TYPE_SESSION_END","payload":{}},{"id":"3","type":"EVENT_TYPE_LIVE_AGENT_MESSAGE","payload":{"text":"Hi."}}]}`),
			want:   "in the history batch: EVENT_TYPE_LIVE_AGENT_MESSAGE after the session ended: the platform's event log goes on past its end",
		},
		// Each member the client reads tells two events apart, the
		// members' edges too.
		twoUnderOneID("other message ids", `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Hello."}}`,
			`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"Hello."}}`),
		twoUnderOneID("a chunk and the final chunk", `{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","text":"Hello."}}`,
			`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","text":"Hello.","final":true}}`),
		twoUnderOneID("other types", `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
			`{"type":"EVENT_TYPE_LIVE_AGENT_MESSAGE","payload":{"text":"Hello."}}`),
		twoUnderOneID("one naming the conversation", `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
			`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello.","conversation_id":"c-1"}}`),
		twoUnderOneID("a text moved to the message id", `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
			`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"Hello."}}`),
		{
			name: "two events under one id of 64 bytes",
			frames: texts(joinedC1, `{"id":"iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"id":"iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Bye."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE: event id "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii" came before as another event: the platform gave two events one id`,
		},
		{
			name: "two events under one id of 65 bytes",
			frames: texts(joinedC1, `{"id":"iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiix","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"id":"iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiix","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Bye."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE: event id "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii"... came before as another event: the platform gave two events one id`,
		},
		{
			name:   "another conversation's event of a type named in 64 bytes",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX","conversation_id":"c-2","payload":{}}`, hello, typingStop),
			want:   `EVENT_TYPE_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX names conversation "c-2", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name:   "another conversation's event of a type named in 65 bytes",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX","conversation_id":"c-2","payload":{}}`, hello, typingStop),
			want:   `"EVENT_TYPE_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"... names conversation "c-2", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name:   "another conversation's event of a type that is no name",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_X\u001b[2J\nPASS","conversation_id":"c-2","payload":{}}`, hello, typingStop),
			want:   `"EVENT_TYPE_X\x1b[2J\nPASS" names conversation "c-2", and this session's conversation is "c-1": the platform sent another conversation's event on this session's socket`,
		},
		{
			name: "the log out of order",
			frames: texts(joinedC1, `{"id":"m-b","seq":3,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Then this."}}`,
				`{"id":"m-a","seq":2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"First this."}}`, typingStop),
			want: "EVENT_TYPE_AGENT_MESSAGE: seq 2 after seq 3: the platform sent its event log out of order",
		},
		{
			name: "an event without an id sent twice at one position",
			frames: texts(joinedC1, `{"seq":2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"seq":2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`, `{"seq":3,"type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`),
			reply: "Hello.", conversation: "c-1",
		},
		{
			name: "two events without ids at one position",
			frames: texts(joinedC1, `{"seq":2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
				`{"seq":2,"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Goodbye."}}`, typingStop),
			want: "EVENT_TYPE_AGENT_MESSAGE: seq 2 came before as another event: the platform gave two events one id",
		},
		{
			name: "a chunk after the final chunk",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"lo.","final":true}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Hel"}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE_CHUNK: a chunk of message "m1" after the message was complete: the platform sent the stream out of order`,
		},
		{
			name: "a whole message after its chunks, the same words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0. "}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Your balance is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a whole message without text after its chunks",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1"}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a whole message after its chunks, other words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Your balance is 10."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE: message "m1" sent whole says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): the platform streamed one text and sent another as the whole message`,
		},
		{
			name: "a whole message after its final chunk, other words, long",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Thank you for waiting. `+strings.Repeat("Your bill is ready. ", 4)+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance is 0 €, due on 1 May. `+strings.Repeat("Anything else? ", 5)+`","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Thank you for waiting. `+strings.Repeat("Your bill is ready. ", 4)+`Your balance is 0 £, due on 1 May. `+strings.Repeat("Anything else? ", 5)+`"}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE: message "m1" sent whole says ..."eady. Your balance is 0 £, due on 1 May. Anything else? Anything else? "... where its chunks said ..."eady. Your balance is 0 €, due on 1 May. Anything else? Anything else?"... (from byte 121): the platform streamed one text and sent another as the whole message`,
		},
		{
			name: "a stream end after its chunks, the same words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","text":" Your balance is 0. "}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end that repeats its last chunk",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","delta":"is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end whose delta is the whole text, on an open stream",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","delta":"Your balance is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end without an id after the final chunk, the whole text",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"is 0.","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"text":"Your balance is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end without an id after the final chunk, its last piece again",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"is 0.","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"delta":"is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end without an id after the final chunk, other words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"is 0.","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"text":"Your balance is 10."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE_END: stream end says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): the platform streamed one text and ended the stream with another`,
		},
		{
			name: "a stream end whose delta is the last piece",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","delta":"is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end whose delta is the last piece, without an id",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"delta":"is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end whose delta follows the final chunk, other words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0.","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","delta":"is 10."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE_END: stream end of message "m1" says "is 10." where its chunks said "Your balance is 0." (from byte 0): the platform streamed one text and ended the stream with another`,
		},
		{
			name: "a stream end whose text is blank",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","text":"\n"}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a whole message that is blank after its chunks",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":" "}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			// Blank text says no words whether or not the message was
			// streamed: it cannot take the words already said away.
			name: "a whole message sent again blank",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Your balance is 0."}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":" "}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end without text",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1"}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end with the text of chunks without any",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","content":"Your balance is 0."}}`, typingStop),
			reply: "Your balance is 0.", conversation: "c-1",
		},
		{
			name: "a stream end after its chunks, other words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","text":"Your balance is 10."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE_END: stream end of message "m1" says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): the platform streamed one text and ended the stream with another`,
		},
		{
			name: "a stream end after its final chunk, other words, under another member",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0.","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_COMPLETE","payload":{"message_id":"m1","message":"is 10."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE_COMPLETE: stream end of message "m1" says "is 10." where its chunks said "Your balance is 0." (from byte 0): the platform streamed one text and ended the stream with another`,
		},
		{
			name: "a stream end without an id, other words",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"delta":"is 0."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"text":"Your balance is 10."}}`, typingStop),
			want: `EVENT_TYPE_AGENT_MESSAGE_END: stream end says "Your balance is 10." where its chunks said "Your balance is 0." (from byte 16): the platform streamed one text and ended the stream with another`,
		},
		{
			name: "a message after the session end",
			frames: texts(joinedC1,
				`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[{"id":"2","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}},`+
					`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}]}`),
			want: "in the history batch: EVENT_TYPE_AGENT_MESSAGE after the session ended: the platform's event log goes on past its end",
		},
		{
			name:   "a typing indicator after the session end",
			frames: texts(joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Bye."}}`, `{"id":"3","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`, typingStop),
			reply:  "Bye.", conversation: "c-1",
		},
		{
			name: "the access token's signature split across chunks",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"token `+sig[:12]+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"`+sig[12:]+` ok","final":true}}`, typingStop),
			reply: "token [REDACTED] ok", conversation: "c-1",
		},
		{
			name: "the connector token split across chunks of an unfinished stream",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"`+plantedConnector[:10]+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"`+plantedConnector[10:]+`"}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"Hi."}}`, typingStop),
			reply: "Hi.", conversation: "c-1",
		},
		// A platform that cuts a long answer into messages of a few
		// hundred characters, or an agent that goes on after a pause
		// (messaging_quiet), can cut a key between two messages, each
		// frame redacted alone: the reply joins them (with a space), so
		// the pieces are masked where they meet, in both messages and
		// their events.
		{
			name: "the connector token split between two messages",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"token `+plantedConnector[:10]+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"`+plantedConnector[10:]+` ok"}}`, typingStop),
			reply: "token [REDACTED] [REDACTED] ok", conversation: "c-1",
		},
		{
			name: "the connector token split between two messages, an empty one between",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"token `+plantedConnector[:10]+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m2","delta":"","final":true}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m3","text":"`+plantedConnector[10:]+` ok"}}`, typingStop),
			reply: "token [REDACTED] [REDACTED] ok", conversation: "c-1",
		},
		{
			name: "the connector token's base64 split between a message and a stream",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"token `+connB64[:9]+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m2","delta":"`+connB64[9:20]+`"}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m2","delta":"`+connB64[20:]+` ok","final":true}}`, typingStop),
			reply: "token [REDACTED] [REDACTED] ok", conversation: "c-1",
		},
		{
			name: "the access token's signature split between two messages, a third between",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"token `+sig[:12]+`"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"`+sig[12:]+` ok"}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"","final":true}}`, typingStop),
			reply: "token [REDACTED] [REDACTED] ok", conversation: "c-1",
		},
		{
			name: "the connector token echoed in every encoding",
			frames: texts(joinedC1,
				`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"`+jsonEscapeAll(plantedConnector)+` `+
					base64.StdEncoding.EncodeToString([]byte(plantedConnector))+` `+strings.ReplaceAll(plantedConnector, "_", "%5F")+`"}}`, typingStop),
			reply: "[REDACTED] [REDACTED] [REDACTED]", conversation: "c-1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// jsonEscapeAll writes every character of s as a \u escape.
func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// TestMessagingKeySpreadOverManyChunks: a hostile platform streams the
// configured connector token and the session's access token, each in
// every form the redactor knows, cut into chunks of a few bytes after
// text longer than the redactor's reach (so the form starts before the
// window of the chunk that completes it, and a scan of the last chunk
// alone would miss it), some chunks escaped in the frame itself. No form
// of either reaches the reply, a message, an event's text, payload or
// raw JSON, the exchange, or the error, and every chunk of a message
// that spelled one lost its text.
func TestMessagingKeySpreadOverManyChunks(t *testing.T) {
	t.Parallel()
	sig := plantedJWT[strings.LastIndexByte(plantedJWT, '.')+1:]
	var forms []string
	for _, key := range []string{plantedConnector, sig} {
		forms = append(forms, secret.Forms(key)...)
		b64 := base64.StdEncoding.EncodeToString([]byte("user:" + key + "!tail"))
		// Escaped twice, every character as \u005cuXXXX: the longest
		// forms, which start far before the chunk that ends them.
		twice := func(s string) string { return strings.ReplaceAll(jsonEscapeAll(s), `\`, `\u005c`) }
		forms = append(forms, b64, jsonEscapeAll(key), twice(key), twice(b64))
	}
	// Longer than the reach of the two keys' forms (a few hundred bytes).
	lead := "Your reference is " + strings.Repeat("on its way, ", 60)
	rng := rand.New(rand.NewPCG(5, 8))
	frames := []string{joinedC1}
	chunk := func(id, msg, delta string, final, escape bool) string {
		d, _ := json.Marshal(delta)
		if escape {
			// The frame's own JSON escapes the delta: its text is raw.
			d = []byte(`"` + jsonEscapeAll(delta) + `"`)
		}
		return fmt.Sprintf(`{"id":%q,"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":%q,"delta":%s,"final":%v}}`, id, msg, d, final)
	}
	red, err := secret.New(plantedConnector, sig)
	if err != nil {
		t.Fatal(err)
	}
	// spelled[i] is how many chunks of message i it takes to spell a
	// key: those chunks lose their text (the ones after keep theirs).
	var spelled []int
	n := 0
	for i, form := range forms {
		msg := fmt.Sprintf("m%d", i)
		n++
		frames = append(frames, chunk(fmt.Sprintf("c%d", n), msg, lead, false, false))
		text, rest := lead, form+" thanks."
		spelled = append(spelled, 0)
		for c := 2; len(rest) > 0; c++ {
			k := min(len(rest), 1+rng.IntN(6))
			for !utf8.ValidString(rest[:k]) { // a JSON string holds whole characters
				k++
			}
			n++
			frames = append(frames, chunk(fmt.Sprintf("c%d", n), msg, rest[:k], k == len(rest), i%3 == 0))
			text, rest = text+rest[:k], rest[k:]
			if spelled[i] == 0 && red.Contains(text) {
				spelled[i] = c
			}
		}
	}
	check := func(t *testing.T, turn *MessagingTurn, err error) {
		// Any form of either key, mixtures included, or a part of
		// one that names it.
		leaked := leaksBy(turn, err, func(s string) bool { return red.Contains(s) || strings.Contains(s, "PLANTED") })
		if len(leaked) > 0 {
			t.Fatalf("a key leaked:\n%s", strings.Join(leaked, "\n"))
		}
		if len(turn.Messages) != len(forms) {
			t.Fatalf("%d messages, want %d", len(turn.Messages), len(forms))
		}
		for i, r := range turn.Messages {
			if !r.Complete || !strings.HasPrefix(r.Text, lead) || !strings.Contains(r.Text, secret.Mask) || !strings.HasSuffix(r.Text, " thanks.") {
				t.Errorf("message %d: %q", i, r.Text)
			}
			if len(r.events) < spelled[i] || spelled[i] < 2 {
				t.Fatalf("message %d: %d chunks, %d spell a key", i, len(r.events), spelled[i])
			}
			for _, j := range r.events[:spelled[i]] {
				if e := turn.Events[j]; e.Text != secret.Mask || string(e.Payload) != `"`+secret.Mask+`"` {
					t.Errorf("message %d keeps a chunk: %q %s", i, e.Text, e.Payload)
				}
			}
		}
	}
	run := func(t *testing.T, frames []string, wantErr string) {
		srv := httptest.NewServer(&hostileMessaging{socket: play(texts(frames...))})
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		m, err := c.OpenMessaging(context.Background(), MessagingStart{Streaming: true, TurnTimeout: time.Minute, Settle: time.Minute})
		if m == nil {
			t.Fatalf("no session: %v", err)
		}
		defer m.Close()
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Fatalf("error %v, want %q", err, wantErr)
		}
		check(t, m.Opening(), err)
	}
	t.Run("complete", func(t *testing.T) {
		t.Parallel()
		run(t, append(slices.Clip(frames), typingStop), "")
	})
	t.Run("then a malformed event", func(t *testing.T) {
		t.Parallel()
		bad := `{"id":"bad","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":{"v":"` + plantedConnector[:9] + `"}}}`
		run(t, append(slices.Clip(frames), bad, typingStop), "payload.text is an object")
	})
}

// TestEventTimestampForms reads an event's timestamp in the forms another
// implementation may send it (the reference shows no format): ISO 8601 as
// the simulator writes it and without fraction or with a zone of hours,
// Unix seconds or milliseconds as a number or a string.
func TestEventTimestampForms(t *testing.T) {
	t.Parallel()
	noon := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, ts := range []string{`"2026-03-01T12:00:00.000Z"`, `"2026-03-01T12:00:00Z"`, `"2026-03-01T13:00:00+01"`,
		`1772366400`, `1772366400000`, `"1772366400"`} {
		e, err := decodeEvent([]byte(`{"id":"1","type":"EVENT_TYPE_SYSTEM_MESSAGE","timestamp":` + ts + `,"payload":{}}`))
		if err != nil {
			t.Fatalf("%s: %v", ts, err)
		}
		if !e.Time.Equal(noon) {
			t.Errorf("timestamp %s read as %v, want %v", ts, e.Time, noon)
		}
	}
	e, err := decodeEvent([]byte(`{"id":"1","type":"EVENT_TYPE_SYSTEM_MESSAGE","timestamp":"soon","payload":{}}`))
	if err != nil || !e.Time.IsZero() || e.Timestamp != "soon" {
		t.Errorf("an unreadable timestamp: %+v, %v; want it kept as sent, no time, no error", e, err)
	}
}

// TestBeginsWords: the chunks of a stream cut off begin its whole
// message, word for word, the last maybe cut short.
func TestBeginsWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, part string
		want       bool
	}{
		{"Your balance is 0.", "", true},
		{"Your balance is 0.", "Your bal", true},
		{"Your balance is 0.", "Your balance ", true},
		{"Your balance is 0.", "Your  balance is 0.", true},
		{"Your balance is 0.", "Your bal ", false},
		{"Your balance is 0.", "Your balance is 0. More", false},
		{"Your balance is 0.", "The bal", false},
		{"Your balance is 0.", "Your balances", false},
	} {
		if got := beginsWords(tc.text, tc.part); got != tc.want {
			t.Errorf("beginsWords(%q, %q) = %v, want %v", tc.text, tc.part, got, tc.want)
		}
	}
}

// reading is what the client read of an event: its kind and the members
// it took, for a test to compare.
func reading(e MessagingEvent) string {
	s := e.Kind.String()
	for _, f := range []struct{ name, v string }{
		{"text", e.Text}, {"id", e.MessageID}, {"name", e.Name}, {"level", e.Level},
		{"reason", e.Reason}, {"to", e.Destination}, {"conversation", e.ConversationID},
	} {
		if f.v != "" {
			s += fmt.Sprintf(" %s=%q", f.name, f.v)
		}
	}
	if e.Seq != 0 {
		s += fmt.Sprintf(" seq=%d", e.Seq)
	}
	if e.logged {
		s += " logged"
	}
	if e.Final {
		s += " final"
	}
	if e.Delayed {
		s += " delayed"
	}
	return s
}

// TestMessagingEventReading plays events in each form the client accepts
// (the reference shows no payload members: docs/simulator.md's and the
// other plausible ones, messaging_events.go) over a real socket in answer
// to the join, and holds the client to its reading of each: the kind and
// the members taken, which the turn, the transcript and the checks read.
// Each case ends with an answer and the end of typing.
func TestMessagingEventReading(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name  string
		event string
		want  string // the event's reading
		reply string // the opening's reply, "Hello." when empty
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		srv := httptest.NewServer(&hostileMessaging{socket: answer(tc.event, hello, typingStop)})
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute})
		o := m.Opening()
		if len(o.Events) != 3 {
			t.Fatalf("events %v", o.Types())
		}
		if got := reading(o.Events[0]); got != tc.want {
			t.Errorf("read as\n%s\nwant\n%s", got, tc.want)
		}
		if len(o.Errors()) != 0 {
			t.Errorf("errors %v", o.Errors())
		}
		if want := cmp.Or(tc.reply, "Hello."); o.Reply != want {
			t.Errorf("reply %q, want %q", o.Reply, want)
		}
		// The transcript and the JSON report name the kind as read, and
		// the report keeps the event as it came.
		x := o.Exchange("s-1", "", "")
		if x.Messaging.Events[0].Kind != o.Events[0].Kind.String() {
			t.Errorf("the exchange's kind %q", x.Messaging.Events[0].Kind)
		}
		if want := "[" + tc.event + "," + hello + "," + typingStop + "]"; string(x.Response) != want {
			t.Errorf("the exchange's events\n%s\nwant\n%s", x.Response, want)
		}
	}
	for _, tc := range []testCase{
		// The platform's log of the client's own events (all four, and
		// the user's typing, which the client never sends).
		{name: "the join's echo", event: `{"id":"e1","type":"EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN","payload":{}}`, want: `echo`},
		{name: "a message's echo", event: `{"id":"e1","type":"EVENT_TYPE_USER_MESSAGE","payload":{"text":"hi"}}`, want: `echo text="hi"`},
		{name: "a live-agent request's echo", event: `{"id":"e1","type":"EVENT_TYPE_REQUEST_LIVE_AGENT","payload":{"reason":"billing"}}`, want: `echo`},
		{name: "an end request's echo", event: `{"id":"e1","type":"EVENT_TYPE_END_SESSION","payload":{}}`, want: `echo`},
		{name: "the user's typing", event: `{"id":"e1","type":"EVENT_TYPE_USER_TYPING","payload":{}}`, want: `echo`},
		// Typing indicators: on by a boolean or a state.
		{name: "typing by state", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"state":"start"}}`, want: `typing_start`},
		{name: "typing off by state", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"state":"stop"}}`, want: `typing_stop`},
		{name: "typing as a string", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"isTyping":"true"}}`, want: `typing_start`},
		{name: "typing off as a string", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"active":"false"}}`, want: `typing_stop`},
		{name: "typing without a member", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"who":"agent"}}`, want: `typing_stop`},
		{name: "typing by a null flag, then a state", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":null,"state":"Typing"}}`, want: `typing_start`},
		{name: "typing by a flag before a state", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"is_typing":0,"state":"typing"}}`, want: `typing_stop`},
		// Streams: a final chunk under each of its members.
		{name: "a final chunk by is_final", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"messageId":"m","delta":"Hi.","is_final":true}}`,
			want: `agent_chunk text="Hi." id="m" final`, reply: "Hi. Hello."},
		{name: "a final chunk by done", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"id":"m","content":"Hi.","done":"true","is_delayed":true}}`,
			want: `agent_chunk text="Hi." id="m" final delayed`, reply: "Hi. Hello."},
		{name: "a chunk not final by its first member", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","text":"Hi","final":"false","done":true}}`,
			want: `agent_chunk text="Hi" id="m"`},
		{name: "a chunk not final", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","text":"Hi","last":false}}`,
			want: `agent_chunk text="Hi" id="m"`},
		// A live agent, by name.
		{name: "a live agent's message", event: `{"id":"e1","type":"EVENT_TYPE_LIVE_AGENT_MESSAGE","payload":{"agentName":"Ann","message":"Hi."}}`,
			want: `live_agent_message text="Hi." name="Ann"`, reply: "Hi. Hello."},
		{name: "a live agent joins", event: `{"id":"e1","type":"EVENT_TYPE_LIVE_AGENT_JOINED","payload":{"agent_name":"Ann","queue":"billing","reason":"asked"}}`,
			want: `live_agent_joined name="Ann" reason="asked" to="billing"`},
		{name: "a handoff", event: `{"id":"e1","type":"EVENT_TYPE_HANDOFF","payload":{"handoff_destination":"billing","reason":"asked"}}`,
			want: `handoff reason="asked" to="billing"`},
		{name: "a system message by severity", event: `{"id":"e1","type":"EVENT_TYPE_SYSTEM_MESSAGE","payload":{"severity":"warn","content":"Slow."}}`,
			want: `system text="Slow." level="warn"`},
		// A position in the log: a seq, else a numeric id; neither at
		// or below 0.
		{name: "a numeric id", event: `{"id":"12","type":"EVENT_TYPE_AGENT_JOINED","payload":{}}`, want: `joined seq=12`},
		{name: "a negative id", event: `{"id":"-12","type":"EVENT_TYPE_AGENT_JOINED","payload":{}}`, want: `joined`},
		{name: "a seq as a string", event: `{"id":"e1","seq":"7","type":"EVENT_TYPE_AGENT_JOINED","payload":{}}`, want: `joined seq=7 logged`},
		{name: "a seq of 0", event: `{"id":"e1","seq":0,"type":"EVENT_TYPE_AGENT_JOINED","payload":{}}`, want: `joined`},
		// A text is the message's whatever the other members hold.
		{name: "a message with text and an object under another member", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hi.","content":{"type":"card"}}}`,
			want: `agent_message text="Hi."`, reply: "Hi. Hello."},
		// Conversation members: null is absent; an object whose id is no
		// string is something else than an id, and left alone.
		{name: "a null conversation id", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_JOINED","conversation_id":null,"payload":{"conversationId":null,"conversation":"c-1"}}`,
			want: `joined conversation="c-1"`},
		{name: "a conversation whose id is a number", event: `{"id":"e1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation":{"id":7}}}`,
			want: `joined`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// Every word a typing indicator may say it with, in the state
	// member and a letter case of their own.
	for word, want := range map[string]string{
		"on": "typing_start", "Start": "typing_start", "started": "typing_start", "starting": "typing_start",
		"TYPING": "typing_start", "active": "typing_start", "composing": "typing_start", " true ": "typing_start", "1": "typing_start",
		"off": "typing_stop", "STOP": "typing_stop", "stopped": "typing_stop", "end": "typing_stop", "ended": "typing_stop",
		"idle": "typing_stop", "inactive": "typing_stop", "paused": "typing_stop", "done": "typing_stop", "": "typing_stop",
		"false": "typing_stop", "0": "typing_stop",
	} {
		t.Run("typing state "+strconv.Quote(word), func(t *testing.T) {
			run(t, testCase{event: `{"id":"e1","type":"EVENT_TYPE_AGENT_TYPING","payload":{"state":` + strconv.Quote(word) + `}}`, want: want})
		})
	}
}

// turns answers the join and then each client event with the next of
// answers, then waits for the client to go.
func turns(answers ...[]string) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		for _, frames := range answers {
			if _, _, err := c.Read(ctx); err != nil || !writeAll(ctx, c, frames...) {
				return
			}
		}
		c.Read(ctx)
	}
}

// TestMessagingLateWholeMessage: a message id names one message in a
// session. A whole message or a stream end that names a message
// streamed in an earlier turn, sent once that turn was complete, is kept
// out of the turn it arrives in, held to the latest such stream's
// chunks (the words they began, for a stream cut off); a chunk under an
// earlier turn's id begins a message of this turn, and a whole message
// after this turn's own chunks completes them.
func TestMessagingLateWholeMessage(t *testing.T) {
	t.Parallel()
	const (
		stop  = `{"type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`
		hello = `{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Hello","final":true}}`
		bye   = `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"Bye."}}`
	)
	type testCase struct {
		name    string
		answers [][]string // the join's, then one for each message
		reply   string     // the last turn's
		want    string     // the last turn's error, "" for none
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		srv := httptest.NewServer(&hostileMessaging{socket: turns(tc.answers...)})
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute})
		var turn *MessagingTurn
		var err error
		for range tc.answers[1:] {
			if turn, err = m.Say(context.Background(), "hi"); err != nil {
				break
			}
		}
		if tc.want != "" {
			if _, ok := errors.AsType[*ResponseError](err); !ok || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want the platform's error saying %q", err, tc.want)
			}
			return
		}
		if err != nil || turn.Reply != tc.reply {
			t.Fatalf("reply %q, error %v; want %q", turn.Reply, err, tc.reply)
		}
	}
	for _, tc := range []testCase{
		{name: "the same words", answers: [][]string{{hello, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Hello"}}`, bye, stop}}, reply: "Bye."},
		{name: "other words", answers: [][]string{{hello, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Goodbye"}}`, bye, stop}},
			want: "the message was streamed in an earlier turn, and sent whole after that turn's answer was complete"},
		{name: "a stream end, other words", answers: [][]string{{hello, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","text":"Goodbye"}}`, bye, stop}},
			want: "the message was streamed in an earlier turn, and its stream ended after that turn's answer was complete"},
		{name: "the words a stream cut off began", answers: [][]string{
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Hel"}}`, `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Wait."}}`, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Hello there."}}`, bye, stop}}, reply: "Bye."},
		{name: "a chunk under an earlier id", answers: [][]string{{hello, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Again.","final":true}}`, stop}}, reply: "Again."},
		{name: "a whole message after this turn's chunks", answers: [][]string{{hello, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Again."}}`,
				`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Again."}}`, stop}}, reply: "Again."},
		{name: "held to the latest stream", answers: [][]string{{hello, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Again.","final":true}}`, stop},
			{`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Again."}}`, bye, stop}}, reply: "Bye."},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingKeyCutBetweenMessages: of a key a hostile platform cuts
// between two messages, neither message, nor any event of either, keeps
// its part; what came around the key stays, and a message after them is
// untouched.
func TestMessagingKeyCutBetweenMessages(t *testing.T) {
	t.Parallel()
	cut := 10
	p := &hostileMessaging{socket: play(texts(joinedC1,
		`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"your "}}`,
		`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"token `+plantedConnector[:cut]+`","final":true}}`,
		`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"`+plantedConnector[cut:]+`, keep it safe."}}`,
		`{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m3","text":"Anything else?"}}`, typingStop))}
	srv := httptest.NewServer(p)
	defer srv.Close()
	c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	m, err := c.OpenMessaging(context.Background(), MessagingStart{Streaming: true, TurnTimeout: time.Minute, Settle: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	turn := m.Opening()
	pieces := []string{plantedConnector[:cut], plantedConnector[cut:]}
	if l := leaksBy(turn, nil, func(s string) bool { return strings.Contains(s, pieces[0]) || strings.Contains(s, pieces[1]) }); len(l) > 0 {
		t.Errorf("a part of the key is left:\n%s", strings.Join(l, "\n"))
	}
	var texts []string
	for _, r := range turn.Messages {
		texts = append(texts, r.Text)
	}
	if want := []string{"your token [REDACTED]", "[REDACTED], keep it safe.", "Anything else?"}; !slices.Equal(texts, want) {
		t.Errorf("messages %q, want %q", texts, want)
	}
	var events []string
	for _, e := range turn.Events {
		if e.Kind == EventAgentChunk || e.Kind == EventAgentMessage {
			events = append(events, e.Text)
		}
	}
	if want := []string{secret.Mask, secret.Mask, secret.Mask, "Anything else?"}; !slices.Equal(events, want) {
		t.Errorf("events %q, want %q", events, want)
	}
}

// A key that begins or ends with what a mask reads as, cut between two
// messages close to that end, is masked whole: the masked text's start
// or end runs on past where the key was. A key the redactor learnt since
// a message was redacted, in one of them whole, leaves the other's text
// to it.
func TestMaskBetweenSpans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, a, b, wantA, wantB string
	}{
		{key: "[REDACTED]PLANTED-0123", a: "token [RE", b: "DACTED]PLANTED-0123 ok", wantA: "token [REDACTED]", wantB: "[REDACTED] ok"},
		{key: "PLANTED-0123[REDACTED]", a: "token PLANTED-0123[REDA", b: "CTED] ok", wantA: "token [REDACTED]", wantB: "[REDACTED] ok"},
		{key: "PLANTED-0123456", a: "token PLANTED-0123456 and", b: " more", wantA: "token [REDACTED]", wantB: "[REDACTED] more"},
		{key: "PLANTED-0123456", a: "token", b: " PLANTED-0123456 ok", wantA: "token[REDACTED]", wantB: "[REDACTED] ok"},
	} {
		red, err := secret.New(tc.key)
		if err != nil {
			t.Fatal(err)
		}
		turn := &MessagingTurn{Messages: []MessagingReply{{Text: tc.a, Complete: true}, {Text: tc.b, Complete: true}}}
		turn.maskBetween(red, 0, 1)
		if a, b := turn.Messages[0].Text, turn.Messages[1].Text; a != tc.wantA || b != tc.wantB {
			t.Errorf("%q | %q: masked %q | %q, want %q | %q", tc.a, tc.b, a, b, tc.wantA, tc.wantB)
		}
	}
}

// maskedSpan finds the one span a mask replaced, also where the mask's
// bytes are the text's; a text of two masks is masked whole.
func TestMaskedSpan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, clean string
		start, end  int
	}{
		{"a PLANTED-0123 b", "a [REDACTED] b", 2, 14},
		{"a [REDACTED]KEY b", "a [REDACTED] b", 2, 15},
		{"PLANTED-0123", "[REDACTED]", 0, 12},
		// The text shares more of its start with clean than the mask
		// leaves (the key "[REDACTED]bb" before more b's), and a text
		// of the mask's words before the key.
		{"a[REDACTED]bbbbbb", "a[REDACTED]bbbb", 1, 13},
		{"[REDACTED]PLANTED-0123", "[REDACTED][REDACTED]", 10, 22},
		{"a PLANTED-0123 b PLANTED-0123 c", "a [REDACTED] b [REDACTED] c", 0, 31},
	} {
		if s, e := maskedSpan(tc.text, tc.clean); s != tc.start || e != tc.end {
			t.Errorf("%q, %q: %d-%d, want %d-%d", tc.text, tc.clean, s, e, tc.start, tc.end)
		}
	}
}

func TestCommonPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"abc", "abc", 3},
		{"ab", "abc", 2},
		{"abc", "ab", 2},
		{"xbc", "abc", 0},
		{"", "a", 0},
	} {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("%q, %q: %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
