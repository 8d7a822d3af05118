package platformtest

import "testing"

// TestMessagingEvents: the builders write each event as a test would by
// hand, member for member, and the frames the tests wrote out before
// them, byte for byte.
func TestMessagingEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got  Frame
		want string
	}{
		{Joined("1", "c-1"), `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`},
		{Joined("1", ""), `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{}}`},
		{Message("2", "", "Welcome."), `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Welcome."}}`},
		{Message("5", "m1", "Your balance is 0."), `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Your balance is 0."}}`},
		{Message("6", "", `<a href="x">"quoted" & \ é</a>`), `{"id":"6","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"<a href=\"x\">\"quoted\" & \\ é</a>"}}`},
		{Chunk("3", "m1", "Your balance ", false), `{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"Your balance "}}`},
		{Chunk("4", "m1", "is 0.", true), `{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","delta":"is 0.","final":true}}`},
		{StreamEnd("5", "m1", "is 0."), `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1","text":"is 0."}}`},
		{StreamEnd("5", "m1", ""), `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m1"}}`},
		{TypingStop("sa"), `{"id":"sa","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`},
		{SessionEnd("4", "agent_ended"), `{"id":"4","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`},
		{SessionEnd("5", ""), `{"id":"5","type":"EVENT_TYPE_SESSION_END","payload":{}}`},
		{System("5", "SYSTEM_MESSAGE_LEVEL_INFO", "The chat has ended."), `{"id":"5","type":"EVENT_TYPE_SYSTEM_MESSAGE","payload":{"level":"SYSTEM_MESSAGE_LEVEL_INFO","message":"The chat has ended."}}`},
		{Batch("batch"), `{"id":"batch","type":"EVENT_TYPE_EVENT_BATCH","payload":{"events":[]}}`},
		{Batch("h", Joined("1", "c-1"), TypingStop("3")), `{"id":"h","type":"EVENT_TYPE_EVENT_BATCH","payload":{"events":[` +
			`{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}},{"id":"3","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}]}}`},
		{Event("", "EVENT_TYPE_X", "n", 1, "on", false), `{"type":"EVENT_TYPE_X","payload":{"n":1,"on":false}}`},
		{Event("2", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false), `{"id":"2","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":false}}`},
	} {
		if tc.got.Data != tc.want || tc.got.Binary || tc.got.Close {
			t.Errorf("frame %+v\nwant text %s", tc.got, tc.want)
		}
	}
}

// TestEventMisused: members that are not name, value pairs are the
// test's own mistake, said at once.
func TestEventMisused(t *testing.T) {
	t.Parallel()
	for _, members := range [][]any{{"text"}, {1, "x"}, {"f", func() {}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Event with members %v did not panic", members)
				}
			}()
			Event("1", "EVENT_TYPE_X", members...)
		}()
	}
}
