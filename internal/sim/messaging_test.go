package sim_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/coder/websocket"
)

// The Messaging API of the reference, step by step, over real HTTP and
// WebSockets on the simulator's settable clock.

func TestMessagingAccessToken(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{Connectors: []sim.MessagingConnector{
		{Token: "ct_no_host_domain_0001", AgentID: "helpdesk"},
		{Token: "ct_app_namespace_00001", Host: "com.example.webchat", AgentID: "helpdesk", Env: "live"},
	}}})
	hdr := func(token, host string) map[string]string {
		h := map[string]string{"Content-Type": "application/json"}
		if token != "" {
			h["X-Token"] = token
		}
		if host != "" {
			h["X-Host"] = host
		}
		return h
	}
	type testCase struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		text   string // the error text; "" for success
	}
	host := sim.DefaultMessagingHost
	for _, tc := range []testCase{
		{"registered domain", hdr(m.token, host), "{}", 200, ""},
		{"subdomain (rule 4)", hdr(m.token, "shop.eu."+host), "{}", 200, ""},
		{"host in upper case", hdr(m.token, strings.ToUpper(host)), "{}", 200, ""},
		{"app namespace", hdr("ct_app_namespace_00001", "com.example.webchat"), "{}", 200, ""},
		{"empty body", hdr(m.token, host), "", 200, ""},
		{"no X-Token", hdr("", host), "{}", 401, "Missing authentication headers"},
		{"no X-Host", hdr(m.token, ""), "{}", 401, "Missing authentication headers"},
		{"unknown connector", hdr("ct_not_a_connector_000", host), "{}", 401, "Connector token does not exist"},
		{"host not registered", hdr(m.token, "example.org"), "{}", 401, "Failed to validate connector"},
		{"suffix without a dot", hdr(m.token, "evil"+host), "{}", 401, "Failed to validate connector"},
		{"parent of the domain", hdr(m.token, "example.com"), "{}", 401, "Failed to validate connector"},
		{"subdomain of an app namespace", hdr("ct_app_namespace_00001", "x.com.example.webchat"), "{}", 200, ""},
		{"connector without host domain", hdr("ct_no_host_domain_0001", host), "{}", 401, "Connector missing host domain"},
		{"malformed body", hdr(m.token, host), "{", 400, "Error parsing request"},
		{"body not an object", hdr(m.token, host), "[]", 400, "Error parsing request"},
		{"no Content-Type", map[string]string{"X-Token": m.token, "X-Host": host}, "{}", 400, "Missing required header Content-Type: application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := m.post("/api/v1/access-token", tc.hdr, tc.body)
			body, ok := checkAnswer(t, r, tc.status, tc.text)
			if !ok {
				return
			}
			tok, _ := body["access_token"].(string)
			if strings.Count(tok, ".") != 2 || body["expires_in"] != float64(3600) || body["token_type"] != "Bearer" {
				t.Errorf("token answer %s", r.body)
			}
			if strings.Contains(tok, m.token) {
				t.Error("the JWT carries the connector token")
			}
		})
	}

	t.Run("injected 500", func(t *testing.T) {
		f := startMessaging(t, sim.Options{Faults: sim.Faults{Error500: 1}})
		r := f.post("/api/v1/access-token", hdr(f.token, host), "{}")
		if r.status != 500 || r.json(t)["error"] != "Failed to create access token" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

// checkAnswer checks the status of an HTTP step and, for an error, its
// text; ok says a success body is there to check further.
func checkAnswer(t *testing.T, r response, status int, text string) (map[string]any, bool) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	body := r.json(t)
	if text != "" {
		if body["error"] != text {
			t.Errorf("error %q, want %q", body["error"], text)
		}
		return nil, false
	}
	return body, true
}

func TestMessagingSessions(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	jwt := m.jwt(m.token, sim.DefaultMessagingHost)
	parts := strings.Split(jwt, ".")
	tampered := parts[0] + "." + parts[1] + "x." + parts[2]
	type testCase struct {
		name   string
		auth   string
		body   string
		status int
		text   string
	}
	for _, tc := range []testCase{
		{"no body", "Bearer " + jwt, "", 200, ""},
		{"streaming", "Bearer " + jwt, `{"streaming_enabled":true}`, 200, ""},
		{"empty object", "Bearer " + jwt, `{}`, 200, ""},
		{"lower-case scheme", "bearer " + jwt, `{}`, 200, ""},
		{"no Authorization", "", "{}", 400, "Missing access token"},
		{"not Bearer", "Basic " + jwt, "{}", 401, "Missing authentication headers"},
		{"Bearer without token", "Bearer ", "{}", 401, "Missing authentication headers"},
		{"token alone", jwt, "{}", 401, "Missing authentication headers"},
		{"malformed token", "Bearer not-a-jwt", "{}", 401, "Invalid access token"},
		{"tampered token", "Bearer " + tampered, "{}", 401, "Invalid access token"},
		{"invalid JSON", "Bearer " + jwt, "{", 400, "Error parsing request"},
		{"streaming_enabled not a boolean", "Bearer " + jwt, `{"streaming_enabled":"yes"}`, 400, "Error parsing request"},
		{"named", "Bearer " + jwt, `{"conversation_id":"cmp-0123.a_b"}`, 200, ""},
		{"conversation_id null", "Bearer " + jwt, `{"conversation_id":null}`, 200, ""},
		{"conversation_id not a string", "Bearer " + jwt, `{"conversation_id":7}`, 400, "Error parsing request"},
		{"conversation_id empty", "Bearer " + jwt, `{"conversation_id":""}`, 400, `conversation_id "": use letters, digits, '-', '_' or '.', at most 128`},
		{"conversation_id with a space", "Bearer " + jwt, `{"conversation_id":"a b"}`, 400, `conversation_id "a b": use letters, digits, '-', '_' or '.', at most 128`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/json"}
			if tc.auth != "" {
				hdr["Authorization"] = tc.auth
			}
			r := m.post("/api/v1/sessions", hdr, tc.body)
			body, ok := checkAnswer(t, r, tc.status, tc.text)
			if !ok {
				return
			}
			if id, _ := body["session_id"].(string); !strings.HasPrefix(id, "ses_") {
				t.Errorf("session answer %s", r.body)
			}
			if want := strings.Contains(tc.body, "true"); body["streaming_enabled"] != want {
				t.Errorf("streaming_enabled %v, want %v", body["streaming_enabled"], want)
			}
		})
	}

	t.Run("conversation_id taken", func(t *testing.T) {
		s, _, _, join := m.named("taken-1")
		defer s.c.CloseNow()
		if e, ok := find(join, evJoined); !ok || e.str("conversation_id") != "taken-1" {
			t.Fatalf("join %v", types(join))
		}
		r := m.post("/api/v1/sessions", map[string]string{"Authorization": "Bearer " + jwt}, `{"conversation_id":"taken-1"}`)
		checkAnswer(t, r, 409, `conversation "taken-1" already exists`)
	})
	t.Run("expired token", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{TokenLifetime: time.Minute}})
		jwt := m.jwt(m.token, sim.DefaultMessagingHost)
		m.clk.Advance(time.Minute)
		r := m.post("/api/v1/sessions", map[string]string{"Authorization": "Bearer " + jwt}, "")
		if r.status != 401 || r.json(t)["error"] != "Invalid access token" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("token of another simulator", func(t *testing.T) {
		other := startMessaging(t, sim.Options{Seed: 99})
		r := m.post("/api/v1/sessions", map[string]string{"Authorization": "Bearer " + other.jwt(other.token, sim.DefaultMessagingHost)}, "")
		if r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("injected 500", func(t *testing.T) {
		// The first request (the token) passes, the second (the session)
		// gets the fault: draws are per request number under the seed.
		f := startMessaging(t, sim.Options{Seed: 3})
		jwt := f.jwt(f.token, sim.DefaultMessagingHost)
		g := startMessaging(t, sim.Options{Seed: 3, Faults: sim.Faults{Error500: 1}})
		r := g.post("/api/v1/sessions", map[string]string{"Authorization": "Bearer " + jwt}, "")
		if r.status != 500 || r.json(t)["error"] != "Failed to create session" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestMessagingHandshake(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{SessionExpiry: time.Minute}})
	id, jwt := m.session(false)
	_, otherJWT := m.session(false)
	parts := strings.Split(jwt, ".")
	type testCase struct {
		name   string
		q      url.Values
		status int
		text   string
	}
	for _, tc := range []testCase{
		{"no session_id", url.Values{"access_token": {jwt}}, 400, "invalid connection parameters"},
		{"no access_token", url.Values{"session_id": {id}}, 400, "invalid connection parameters"},
		{"unknown session", url.Values{"session_id": {"ses_0000000000000000"}, "access_token": {jwt}}, 404, "session not found"},
		{"malformed token", url.Values{"session_id": {id}, "access_token": {"abc"}}, 401, "authentication failed"},
		{"tampered token", url.Values{"session_id": {id}, "access_token": {parts[0] + "." + parts[1] + "." + parts[2][:10]}}, 401, "authentication failed"},
		{"token for another session", url.Values{"session_id": {id}, "access_token": {otherJWT}}, 401, "authentication failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r, err := m.dial(tc.q)
			if err == nil {
				t.Fatal("handshake accepted")
			}
			if r.status != tc.status || !strings.Contains(string(r.body), `"error":"`+tc.text+`"`) {
				t.Fatalf("%d %s, want %d %q", r.status, r.body, tc.status, tc.text)
			}
		})
	}

	t.Run("more than 10 connections", func(t *testing.T) {
		id, jwt := m.session(false)
		q := url.Values{"session_id": {id}, "access_token": {jwt}}
		var socks []*sock
		for i := range 10 {
			s, r, err := m.dial(q)
			if err != nil {
				t.Fatalf("connection %d: %v %d %s", i+1, err, r.status, r.body)
			}
			socks = append(socks, s)
		}
		_, r, err := m.dial(q)
		if err == nil || r.status != 429 || !strings.Contains(string(r.body), "connection limit exceeded for session") {
			t.Fatalf("11th connection: %v %d %s", err, r.status, r.body)
		}
		// A closed socket frees its place.
		socks[0].c.Close(websocket.StatusNormalClosure, "")
		waitFor(t, m.s.Server, func() bool { return m.s.Server.MessagingStats().OpenSockets == 9 })
		if _, r, err := m.dial(q); err != nil {
			t.Fatalf("after a close: %v %d %s", err, r.status, r.body)
		}
	})

	t.Run("expired session", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{SessionExpiry: time.Minute}})
		id, jwt := m.session(false)
		m.clk.Advance(time.Minute + time.Second)
		_, r, err := m.dial(url.Values{"session_id": {id}, "access_token": {jwt}})
		if err == nil || r.status != 404 {
			t.Fatalf("%v %d %s", err, r.status, r.body)
		}
	})

	t.Run("injected faults", func(t *testing.T) {
		f := startMessaging(t, sim.Options{Seed: 5})
		id, jwt := f.session(false)
		for _, tc := range []struct {
			faults sim.Faults
			status int
			text   string
		}{
			{sim.Faults{Error429: 1, RetryAfter: 1500 * time.Millisecond}, 429, "rate limit exceeded"},
			{sim.Faults{Error500: 1}, 500, "internal server error"},
		} {
			// A second simulator with the faults and the same seed
			// knows neither the session nor the token: the fault comes
			// first, as on the other hosts.
			g := startMessaging(t, sim.Options{Seed: 5, Faults: tc.faults})
			_, r, err := g.dial(url.Values{"session_id": {id}, "access_token": {jwt}})
			if err == nil || r.status != tc.status || !strings.Contains(string(r.body), tc.text) {
				t.Fatalf("%v %d %s", err, r.status, r.body)
			}
			if tc.status == 429 && r.header.Get("Retry-After") != "2" {
				t.Errorf("Retry-After %q, want whole seconds rounded up", r.header.Get("Retry-After"))
			}
		}
	})
}

func TestMessagingHandshakeRateLimit(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{HandshakeRate: 0.4, HandshakeBurst: 2}})
	id, jwt := m.session(false)
	q := url.Values{"session_id": {id}, "access_token": {jwt}}
	for i := range 2 {
		s, r, err := m.dial(q)
		if err != nil {
			t.Fatalf("handshake %d: %v %d", i+1, err, r.status)
		}
		s.c.CloseNow()
	}
	_, r, err := m.dial(q)
	if err == nil || r.status != 429 || !strings.Contains(string(r.body), "rate limit exceeded") {
		t.Fatalf("third handshake: %v %d %s", err, r.status, r.body)
	}
	// 1 / 0.4 = 2.5 s until a token: whole seconds, rounded up.
	if got := r.header.Get("Retry-After"); got != "3" {
		t.Errorf("Retry-After %q, want 3", got)
	}
	m.clk.Advance(3 * time.Second)
	if _, r, err := m.dial(q); err != nil {
		t.Fatalf("after Retry-After: %v %d", err, r.status)
	}
	// The limit is per session: another session is not affected.
	id2, jwt2 := m.session(false)
	if _, r, err := m.dial(url.Values{"session_id": {id2}, "access_token": {jwt2}}); err != nil {
		t.Fatalf("other session: %v %d", err, r.status)
	}
}

func TestMessagingJoinAndTurns(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	id, jwt := m.session(false)
	s, hist := m.connect(id, jwt, "")
	if len(hist) != 0 {
		t.Fatalf("history of a new session: %v", types(hist))
	}
	custom := map[string]any{"page": "/checkout", "n": float64(7)}
	s.send(evJoin, map[string]any{}, custom)
	join := s.answer()
	want := []string{evJoin, evTyping, evJoined, evMessage, evTyping}
	if !slices.Equal(types(join), want) {
		t.Fatalf("join answer %v, want %v", types(join), want)
	}
	for i, e := range join {
		if e.ID != strconv.Itoa(i+1) {
			t.Errorf("event %d has id %q", i, e.ID)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
			t.Errorf("event %d timestamp %q: %v", i, e.Timestamp, err)
		}
		if got, _ := e.Metadata["custom"].(map[string]any); got["page"] != "/checkout" || got["n"] != float64(7) {
			t.Errorf("event %s does not echo the custom metadata: %v", e.Type, e.Metadata)
		}
	}
	if got := replyText(join); got != "Help desk here, how can I help?" {
		t.Errorf("greeting %q", got)
	}
	conv := join[2].str("conversation_id")
	if conv == "" || join[2].str("agent_id") != "helpdesk" {
		t.Fatalf("joined payload %v", join[2].Payload)
	}

	turn := s.say("ping")
	if !slices.Equal(types(turn), []string{sim.EvUserMessage, evTyping, evMessage, evTyping}) || replyText(turn) != "pong" {
		t.Fatalf("turn %v %q", types(turn), replyText(turn))
	}
	if turn[0].str("text") != "ping" || turn[2].str("message_id") == "" {
		t.Errorf("echo %v, message %v", turn[0].Payload, turn[2].Payload)
	}

	// The conversation is in the Conversations API, channel WEBCHAT.
	r := call(t, "GET", m.s.RuntimeURL+"/v3/"+m.s.AccountID+"/helpdesk/conversations/"+conv, m.s.RuntimeKey, nil)
	if r.status != 200 {
		t.Fatalf("conversation: %d %s", r.status, r.body)
	}
	c := r.json(t)
	turns, _ := c["turns"].([]any)
	if c["channel"] != "WEBCHAT" || c["environment"] != "sandbox" || c["in_progress"] != true || len(turns) != 2 {
		t.Errorf("conversation %s", r.body)
	} else if tt := turns[1].(map[string]any); tt["user_input"] != "ping" || tt["agent_response"] != "pong" {
		t.Errorf("turn %v", tt)
	}

	// A second join: the agent says it is there, nothing more.
	s.send(evJoin, map[string]any{}, nil)
	dup := s.answer()
	if !slices.Equal(types(dup), []string{evJoin, evTyping, evJoined, evTyping}) || dup[2].str("conversation_id") != conv {
		t.Errorf("second join %v", types(dup))
	}
	if got := m.s.Server.MessagingStats().DuplicateJoins; got != 1 {
		t.Errorf("duplicate joins %d", got)
	}

	// Goodbye ends the conversation and the session.
	bye := s.say("bye")
	if last := bye[len(bye)-1]; last.Type != sim.EvSessionEnd || last.str("reason") != sim.EndAgent {
		t.Fatalf("goodbye %v", types(bye))
	}
	if st := s.closedWith(); st != websocket.StatusNormalClosure {
		t.Errorf("closed with %v", st)
	}
	if c := call(t, "GET", m.s.RuntimeURL+"/v3/"+m.s.AccountID+"/helpdesk/conversations/"+conv, m.s.RuntimeKey, nil).json(t); c["in_progress"] != false {
		t.Errorf("conversation still in progress")
	}
	// The ended session replays its end to a reconnect, then closes.
	s2, hist := m.connect(id, jwt, strconv.Itoa(len(join)+len(turn)+len(dup)))
	if !slices.Equal(types(hist), types(bye)) {
		t.Errorf("replay of the end %v, want %v", types(hist), types(bye))
	}
	if st := s2.closedWith(); st != websocket.StatusNormalClosure {
		t.Errorf("replay closed with %v", st)
	}
}

func TestMessagingReplay(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	s, id, jwt, join := m.joined(false)
	turn := s.say("ping")
	all := append(join, turn...)
	s.c.CloseNow()
	for _, tc := range []struct {
		cursor string
		from   int // index of the first replayed event
	}{
		{"", 0},
		{"0", 0},
		{"3", 3},
		{strconv.Itoa(len(all)), len(all)},
		{"abc", 0},          // non-numeric: from the start (rule 3)
		{"-1", 0},           // invalid
		{"2.5", 0},          // invalid
		{"999999999999", 0}, // beyond the log: invalid
	} {
		t.Run("cursor "+tc.cursor, func(t *testing.T) {
			s, hist := m.connect(id, jwt, tc.cursor)
			defer s.c.CloseNow()
			if want := types(all[tc.from:]); !slices.Equal(types(hist), want) {
				t.Fatalf("replay %v, want %v", types(hist), want)
			}
			for i, e := range hist {
				if string(e.raw) != string(all[tc.from+i].raw) {
					t.Errorf("replayed event differs: %s vs %s", e.raw, all[tc.from+i].raw)
				}
			}
		})
	}
	// Rule 2: a replay that shows the agent joined needs no join; the
	// conversation goes on.
	s2, hist := m.connect(id, jwt, "1")
	if _, ok := find(hist, evJoined); !ok {
		t.Fatal("replay lacks the joined event")
	}
	if got := replyText(s2.say("ping")); got != "pong" {
		t.Errorf("after reconnect %q", got)
	}
}

func TestMessagingClientEventRule(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	s, _, _, _ := m.joined(false)
	for _, tc := range []struct {
		name  string
		frame string
		want  string
	}{
		{"server-only type", `{"type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE","payload":{"text":"hi"}}`, "Event type not allowed: EVENT_TYPE_VENDOR_AGENT_MESSAGE"},
		{"history batch", `{"type":"EVENT_TYPE_EVENT_BATCH","payload":{}}`, "Event type not allowed: EVENT_TYPE_EVENT_BATCH"},
		{"session end", `{"type":"EVENT_TYPE_SESSION_END","payload":{}}`, "Event type not allowed: EVENT_TYPE_SESSION_END"},
		{"joined", `{"type":"EVENT_TYPE_VENDOR_AGENT_JOINED","payload":{}}`, "Event type not allowed: EVENT_TYPE_VENDOR_AGENT_JOINED"},
		{"unknown type", `{"type":"EVENT_TYPE_HELLO","payload":{}}`, "Unknown event type or invalid message format"},
		{"no type", `{"payload":{}}`, "Unknown event type or invalid message format"},
		{"type not a string", `{"type":5,"payload":{}}`, "Unknown event type or invalid message format"},
		{"not JSON", `hello`, "Unknown event type or invalid message format"},
		{"no payload", `{"type":"EVENT_TYPE_USER_MESSAGE"}`, "Unknown event type or invalid message format"},
		{"payload not an object", `{"type":"EVENT_TYPE_USER_MESSAGE","payload":"hi"}`, "Unknown event type or invalid message format"},
		{"message without text", `{"type":"EVENT_TYPE_USER_MESSAGE","payload":{}}`, "Unknown event type or invalid message format"},
		{"custom not an object", `{"type":"EVENT_TYPE_USER_MESSAGE","payload":{"text":"x"},"metadata":{"custom":3}}`, "Unknown event type or invalid message format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.sendRaw(websocket.MessageText, tc.frame)
			e := s.next()
			if got := systemTexts([]event{e}); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("answer %s, want the error system message %q", e.raw, tc.want)
			}
		})
	}
	t.Run("binary frame", func(t *testing.T) {
		s.sendRaw(websocket.MessageBinary, `{"type":"EVENT_TYPE_USER_MESSAGE","payload":{"text":"ping"}}`)
		if got := systemTexts([]event{s.next()}); len(got) != 1 || got[0] != sim.SysInvalidEvent {
			t.Fatalf("got %v", got)
		}
	})
	// The connection stays open: the conversation goes on.
	if got := replyText(s.say("ping")); got != "pong" {
		t.Errorf("after the errors %q", got)
	}
	// The five client types are accepted: typing is echoed and answered
	// by nothing.
	s.send(sim.EvUserTyping, map[string]any{"typing": true}, nil)
	if e := s.next(); e.Type != sim.EvUserTyping {
		t.Errorf("typing answered with %s", e.Type)
	}
	client, server := sim.MessagingEventNames("")
	if len(client) != 5 || client[0] != evJoin || slices.ContainsFunc(client, func(c string) bool { return slices.Contains(server, c) }) {
		t.Errorf("client events %v, server events %v", client, server)
	}
}

func TestMessagingBeforeJoinAndFailedJoin(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	id, jwt := m.session(false)
	s, _ := m.connect(id, jwt, "")
	if got := systemTexts(s.say("hello")); !slices.Equal(got, []string{sim.SysConvNotFound}) {
		t.Errorf("message before the join: %v", got)
	}
	s.send(sim.EvRequestLive, map[string]any{}, nil)
	if got := systemTexts(s.answer()); !slices.Equal(got, []string{sim.SysHandoffRejected}) {
		t.Errorf("handoff before the join: %v", got)
	}

	f := startMessaging(t, sim.Options{Faults: sim.Faults{JoinFailure: 1}})
	id, jwt = f.session(false)
	s, _ = f.connect(id, jwt, "")
	s.send(evJoin, map[string]any{}, nil)
	join := s.answer()
	if got := systemTexts(join); !slices.Equal(got, []string{sim.SysStartFailed}) {
		t.Fatalf("failed join: %v", got)
	}
	if _, ok := find(join, evJoined); ok {
		t.Error("a failed join says the agent joined")
	}
	if got := systemTexts(s.say("hello")); !slices.Equal(got, []string{sim.SysConvIDNotFound}) {
		t.Errorf("message after a failed join: %v", got)
	}
	if n := f.s.Server.Store().Len(); n != 0 {
		t.Errorf("a failed join stored %d conversations", n)
	}
}

func TestMessagingOverloadAndReplyFailure(t *testing.T) {
	t.Parallel()
	t.Run("overload", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Faults: sim.Faults{Overload: 1}})
		id, jwt := m.session(false)
		s, _ := m.connect(id, jwt, "")
		for i := range 2 { // transient: the socket stays open
			s.send(evJoin, map[string]any{}, nil)
			if got := systemTexts(s.answer()); !slices.Equal(got, []string{sim.SysOverload}) {
				t.Fatalf("join %d: %v", i+1, got)
			}
		}
	})
	t.Run("session lookup", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Faults: sim.Faults{LookupFailure: 1}})
		id, jwt := m.session(false)
		s, _ := m.connect(id, jwt, "")
		for i := range 2 { // transient: the socket and the session stay
			s.send(evJoin, map[string]any{}, nil)
			if got := systemTexts(s.answer()); !slices.Equal(got, []string{sim.SysLookupFailed}) {
				t.Fatalf("join %d: %v", i+1, got)
			}
		}
	})
	t.Run("whole reply", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Faults: sim.Faults{ReplyFailure: 1}})
		s, _, _, join := m.joined(false)
		turn := s.say("ping")
		if got := systemTexts(turn); !slices.Equal(got, []string{sim.SysReplyFailed}) || replyText(turn) != "" {
			t.Fatalf("turn %v %v", types(turn), got)
		}
		conv, _ := find(join, evJoined)
		c := call(t, "GET", m.s.RuntimeURL+"/v3/"+m.s.AccountID+"/helpdesk/conversations/"+conv.str("conversation_id"), m.s.RuntimeKey, nil).json(t)
		if n := len(c["turns"].([]any)); n != 1 {
			t.Errorf("a failed reply reached the agent: %d turns", n)
		}
	})
	t.Run("streamed reply", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Faults: sim.Faults{ReplyFailure: 1}})
		s, _, _, _ := m.joined(true)
		turn := s.say("what is the weather like on the moon")
		if got := systemTexts(turn); !slices.Equal(got, []string{sim.SysStreamFailed}) {
			t.Fatalf("turn %v %v", types(turn), got)
		}
		full := "Sorry, I can only ping, transfer or say goodbye."
		if got := replyText(turn); !strings.HasPrefix(full, got) || got == full {
			t.Errorf("partial reply %q", got)
		}
		for _, e := range turn {
			if e.Type == evChunk && e.Payload["final"] == true {
				t.Error("an interrupted stream has a final chunk")
			}
		}
	})
}

func TestMessagingStreaming(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	s, _, _, join := m.joined(true)
	var chunks []event
	for _, e := range join {
		if e.Type == evChunk {
			chunks = append(chunks, e)
		}
		if e.Type == evMessage {
			t.Error("a whole message in a streaming session")
		}
	}
	if len(chunks) < 2 {
		t.Fatalf("greeting in %d chunks", len(chunks))
	}
	for i, c := range chunks {
		if c.Payload["index"] != float64(i) || c.str("message_id") != chunks[0].str("message_id") || (c.Payload["final"] == true) != (i == len(chunks)-1) {
			t.Errorf("chunk %d: %v", i, c.Payload)
		}
	}
	if got := replyText(join); got != "Help desk here, how can I help?" {
		t.Errorf("chunks join to %q", got)
	}
	if got := replyText(s.say("ping")); got != "pong" {
		t.Errorf("one-chunk reply %q", got)
	}
}

func TestMessagingExpiry(t *testing.T) {
	t.Parallel()
	t.Run("idle session ends at Tick", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{SessionExpiry: 2 * time.Minute}})
		s, id, jwt, join := m.joined(false)
		conv, _ := find(join, evJoined)
		m.clk.Advance(2 * time.Minute)
		m.s.Server.Tick()
		if n := m.s.Server.MessagingStats().LiveSessions; n != 1 {
			t.Fatalf("expired at exactly the limit: %d sessions", n)
		}
		m.clk.Advance(time.Second)
		m.s.Server.Tick()
		e := s.next()
		if e.Type != sim.EvSessionEnd || e.str("reason") != sim.EndExpired {
			t.Fatalf("got %s %v", e.Type, e.Payload)
		}
		if st := s.closedWith(); st != websocket.StatusNormalClosure {
			t.Errorf("closed with %v", st)
		}
		if _, r, err := m.dial(url.Values{"session_id": {id}, "access_token": {jwt}}); err == nil || r.status != 404 {
			t.Errorf("handshake after expiry: %v %d", err, r.status)
		}
		c := call(t, "GET", m.s.RuntimeURL+"/v3/"+m.s.AccountID+"/helpdesk/conversations/"+conv.str("conversation_id"), m.s.RuntimeKey, nil).json(t)
		if c["in_progress"] != false {
			t.Error("the conversation of an expired session is in progress")
		}
		if n := m.s.Server.MessagingStats().LiveSessions; n != 0 {
			t.Errorf("%d sessions kept", n)
		}
	})
	t.Run("activity keeps it alive", func(t *testing.T) {
		m := startMessaging(t, sim.Options{})
		s, _, _, _ := m.joined(false)
		for i := range 3 {
			m.clk.Advance(9 * time.Minute)
			m.s.Server.Tick()
			if got := replyText(s.say("ping")); got != "pong" {
				t.Fatalf("turn %d: %q", i, got)
			}
		}
	})
	t.Run("an event finds it expired", func(t *testing.T) {
		m := startMessaging(t, sim.Options{})
		s, _, _, _ := m.joined(false)
		m.clk.Advance(sim.DefaultSessionExpiry + time.Second)
		evs := s.say("ping")
		if got := systemTexts(evs); !slices.Equal(got, []string{sim.SysSessionNotFound}) || evs[len(evs)-1].str("reason") != sim.EndExpired {
			t.Fatalf("got %v %v", types(evs), got)
		}
	})
	t.Run("ended sessions are forgotten after the expiry", func(t *testing.T) {
		m := startMessaging(t, sim.Options{})
		s, _, _, _ := m.joined(false)
		s.say("bye")
		m.s.Server.Tick()
		if n := m.s.Server.MessagingStats().LiveSessions; n != 1 {
			t.Fatalf("ended session dropped at once: %d", n)
		}
		m.clk.Advance(sim.DefaultSessionExpiry + time.Second)
		m.s.Server.Tick()
		if n := m.s.Server.MessagingStats().LiveSessions; n != 0 {
			t.Fatalf("%d sessions kept", n)
		}
	})
}

// TestMessagingEarlyExpiry: under the EarlyExpiry fault a session expires
// right after its answer, though the server clock never moves: the usual
// expiry follows (the next event, Tick, the handshake), with nothing left
// to the scheduler.
func TestMessagingEarlyExpiry(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T) (*msgSim, *sock, string, string) {
		m := startMessaging(t, sim.Options{Faults: sim.Faults{EarlyExpiry: 1}})
		s, id, jwt, join := m.joined(false)
		// The answer that draws the fault is whole.
		if _, ok := find(join, evJoined); !ok || replyText(join) == "" || join[len(join)-1].Type != evTyping {
			t.Fatalf("join answered %v", types(join))
		}
		return m, s, id, jwt
	}
	ended := func(t *testing.T, m *msgSim, s *sock, id, jwt string) {
		t.Helper()
		if st := s.closedWith(); st != websocket.StatusNormalClosure {
			t.Errorf("closed with %v", st)
		}
		if _, r, err := m.dial(url.Values{"session_id": {id}, "access_token": {jwt}}); err == nil || r.status != 404 {
			t.Errorf("handshake after expiry: %v %d", err, r.status)
		}
		if n := m.s.Server.MessagingStats().LiveSessions; n != 0 {
			t.Errorf("%d sessions kept", n)
		}
	}
	t.Run("the next event finds it expired", func(t *testing.T) {
		m, s, id, jwt := start(t)
		evs := s.say("ping")
		if got := systemTexts(evs); !slices.Equal(got, []string{sim.SysSessionNotFound}) || evs[len(evs)-1].str("reason") != sim.EndExpired {
			t.Fatalf("got %v %v", types(evs), got)
		}
		ended(t, m, s, id, jwt)
	})
	t.Run("Tick ends it", func(t *testing.T) {
		m, s, id, jwt := start(t)
		m.s.Server.Tick()
		if e := s.next(); e.Type != sim.EvSessionEnd || e.str("reason") != sim.EndExpired {
			t.Fatalf("got %s %v", e.Type, e.Payload)
		}
		ended(t, m, s, id, jwt)
	})
	t.Run("the handshake finds it expired", func(t *testing.T) {
		m, s, id, jwt := start(t)
		s.c.Close(websocket.StatusNormalClosure, "")
		if _, r, err := m.dial(url.Values{"session_id": {id}, "access_token": {jwt}}); err == nil || r.status != 404 {
			t.Fatalf("handshake: %v %d %s", err, r.status, r.body)
		}
	})
}

// TestMessagingNormalClosures: a socket the client closes with a normal
// closure is counted; one the simulator closes (the client only echoing
// its closure) is not.
func TestMessagingNormalClosures(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	s, _, _, _ := m.joined(false)
	s.c.Close(websocket.StatusNormalClosure, "")
	waitFor(t, m.s.Server, func() bool { return m.s.Server.MessagingStats().OpenSockets == 0 })
	s, _, _, _ = m.joined(false)
	s.say("bye")
	if st := s.closedWith(); st != websocket.StatusNormalClosure {
		t.Fatalf("closed with %v", st)
	}
	waitFor(t, m.s.Server, func() bool { return m.s.Server.MessagingStats().OpenSockets == 0 })
	if n := m.s.Server.MessagingStats().NormalClosures; n != 1 {
		t.Errorf("%d normal closures, want 1", n)
	}
}

func TestMessagingEndAndRevoke(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{})
	s, _, _, _ := m.joined(false)
	s.send(sim.EvEndSession, map[string]any{}, nil)
	evs := []event{s.next(), s.next()}
	if evs[0].Type != sim.EvEndSession || evs[1].Type != sim.EvSessionEnd || evs[1].str("reason") != sim.EndUser {
		t.Fatalf("end: %v %v", types(evs), evs[1].Payload)
	}
	if st := s.closedWith(); st != websocket.StatusNormalClosure {
		t.Errorf("closed with %v", st)
	}

	s, _, _, _ = m.joined(false)
	if !m.s.Server.RevokeConnector(m.token) {
		t.Fatal("connector not revoked")
	}
	evs = s.say("ping")
	if got := systemTexts(evs); !slices.Equal(got, []string{sim.SysConnectorNotFound}) || evs[len(evs)-1].str("reason") != sim.EndError {
		t.Fatalf("after revoke: %v %v", types(evs), got)
	}
	r := m.post("/api/v1/access-token", map[string]string{"X-Token": m.token, "X-Host": sim.DefaultMessagingHost, "Content-Type": "application/json"}, "{}")
	if r.status != 401 || r.json(t)["error"] != "Connector token does not exist" {
		t.Errorf("token for a revoked connector: %d %s", r.status, r.body)
	}
}

func TestMessagingHandoff(t *testing.T) {
	t.Parallel()
	t.Run("live agent", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{
			Name: "Ada", Script: []sim.LiveAgentLine{{Contains: "refund", Reply: "I've refunded you."}, {Contains: "thanks", Reply: "Bye now.", End: true}},
		}}})
		s, _, _, join := m.joined(false)
		evs := s.say("I want a human")
		want := []string{sim.EvUserMessage, evTyping, evMessage, sim.EvHandoffInitiated, sim.EvLiveAgentJoined, sim.EvLiveAgentMessage, evTyping}
		if !slices.Equal(types(evs), want) {
			t.Fatalf("handoff %v, want %v", types(evs), want)
		}
		if evs[3].str("destination") != "tier2" || evs[3].str("reason") != "caller asked for a human" || evs[4].str("name") != "Ada" {
			t.Errorf("handoff payloads %v %v", evs[3].Payload, evs[4].Payload)
		}
		if got := replyText(s.say("a refund please")); got != "I've refunded you." {
			t.Errorf("scripted line %q", got)
		}
		if got := replyText(s.say("what else")); got != "Thanks, I'm looking into that for you." {
			t.Errorf("default reply %q", got)
		}
		end := s.say("thanks")
		if replyText(end) != "Bye now." || end[len(end)-1].str("reason") != sim.EndLiveAgent {
			t.Errorf("end %v", types(end))
		}
		// The agent's conversation records the handoff.
		conv, _ := find(join, evJoined)
		c := call(t, "GET", m.s.RuntimeURL+"/v3/"+m.s.AccountID+"/helpdesk/conversations/"+conv.str("conversation_id"), m.s.RuntimeKey, nil).json(t)
		if c["handoff_destination"] != "tier2" || c["in_progress"] != false {
			t.Errorf("conversation handoff %v, in progress %v", c["handoff_destination"], c["in_progress"])
		}
	})
	t.Run("no live agent", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}})
		s, _, _, _ := m.joined(false)
		evs := s.say("human please")
		if got := systemTexts(evs); !slices.Equal(got, []string{sim.SysNoLiveAgent}) {
			t.Fatalf("got %v", got)
		}
		// The agent ended its conversation with the handoff.
		if last := evs[len(evs)-1]; last.str("reason") != sim.EndHandoffFailed {
			t.Errorf("ends with %s %v", last.Type, last.Payload)
		}
	})
	t.Run("destination refused", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Destinations: []string{"billing"}}}})
		s, _, _, _ := m.joined(false)
		evs := s.say("human please")
		if got := systemTexts(evs); !slices.Equal(got, []string{sim.SysHandoffRejected}) {
			t.Fatalf("got %v", got)
		}
		if _, ok := find(evs, sim.EvHandoffInitiated); ok {
			t.Error("a refused handoff was initiated")
		}
	})
	t.Run("forward failure", func(t *testing.T) {
		m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{ForwardFailures: []int{2}}}})
		s, _, _, _ := m.joined(false)
		s.say("human")
		if got := replyText(s.say("one")); got == "" {
			t.Error("first message not answered")
		}
		if got := systemTexts(s.say("two")); !slices.Equal(got, []string{sim.SysForwardFailed}) {
			t.Errorf("second message: %v", got)
		}
		if got := replyText(s.say("bye")); got != "You're welcome. Goodbye!" {
			t.Errorf("default script %q", got)
		}
	})
	t.Run("requested by the client", func(t *testing.T) {
		m := startMessaging(t, sim.Options{})
		s, _, _, _ := m.joined(false)
		s.send(sim.EvRequestLive, map[string]any{"reason": "prefers a person"}, nil)
		evs := s.answer()
		ini, ok := find(evs, sim.EvHandoffInitiated)
		if !ok || ini.str("destination") != "live_agent" || ini.str("reason") != "prefers a person" {
			t.Fatalf("got %v", types(evs))
		}
		if _, ok := find(evs, sim.EvLiveAgentJoined); !ok {
			t.Fatalf("no live agent: %v", types(evs))
		}
		// Asked again while the live agent has the chat: the live agent
		// answers, without a second handoff (a request answered by the
		// typing indicator alone would leave the client waiting).
		s.send(sim.EvRequestLive, map[string]any{}, nil)
		evs = s.answer()
		if got := replyText(evs); got != "You're already talking to Sam, a live agent. How can I help?" {
			t.Errorf("second request answered %q: %v", got, types(evs))
		}
		for _, typ := range []string{sim.EvHandoffInitiated, sim.EvLiveAgentJoined, sim.EvSystemMessage} {
			if _, ok := find(evs, typ); ok {
				t.Errorf("second request answered with %s: %v", typ, types(evs))
			}
		}
		if got := replyText(s.say("my bill")); got != "Thanks, I'm looking into that for you." {
			t.Errorf("the live agent after the second request: %q", got)
		}
	})
}

func TestMessagingMessageRate(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{MessageRate: 1, MessageBurst: 3}})
	s, _, _, _ := m.joined(false) // the join takes one
	for range 4 {
		s.send(sim.EvUserTyping, map[string]any{}, nil)
	}
	s.send(sim.EvUserMessage, map[string]any{"text": "ping"}, nil)
	// Two typing events pass; the rest is dropped unanswered. The clock
	// moves only once the server has dropped them: moved earlier, the
	// refill would let a late one through and the next ping be dropped.
	for i := range 2 {
		if e := s.next(); e.Type != sim.EvUserTyping {
			t.Fatalf("event %d: %s", i, e.Type)
		}
	}
	waitFor(t, m.s.Server, func() bool { return m.s.Server.MessagingStats().DroppedEvents == 3 })
	m.clk.Advance(time.Second)
	if got := replyText(s.say("ping")); got != "pong" {
		t.Errorf("after a second: %q", got)
	}
	if got := m.s.Server.MessagingStats().DroppedEvents; got != 3 {
		t.Errorf("dropped %d events, want 3", got)
	}
	// Unlimited turns the limit off.
	u := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{Unlimited: true, MessageBurst: 1}})
	s, _, _, _ = u.joined(false)
	for i := range 5 {
		if got := replyText(s.say("ping")); got != "pong" {
			t.Fatalf("turn %d: %q", i, got)
		}
	}
}

func TestMessagingSocketDrop(t *testing.T) {
	t.Parallel()
	// Every join and message drops the socket at a point drawn from the
	// seed; the log keeps everything, so a reconnect with the cursor
	// completes the answer, and a lost event is not in the log.
	run := func(seed int64) []string {
		m := startMessaging(t, sim.Options{Seed: seed, Faults: sim.Faults{SocketDrop: 1}})
		id, jwt := m.session(false)
		var seen []event
		var trace []string
		s, _ := m.connect(id, jwt, "")
		send := func(typ string, payload map[string]any) {
			for range 6 {
				before := len(seen)
				s.send(typ, payload, nil)
				got := 0
				for {
					e, err := s.read()
					if err != nil {
						break // dropped
					}
					seen = append(seen, e)
					got++
				}
				var hist []event
				s, hist = m.connect(id, jwt, strconv.Itoa(len(seen)))
				seen = append(seen, hist...)
				trace = append(trace, fmt.Sprintf("%s: %d live, %d replayed", typ, got, len(hist)))
				if len(seen) > before {
					return // received: the replay completed the answer
				}
			}
			t.Fatalf("seed %d: %s lost six times", seed, typ)
		}
		send(evJoin, map[string]any{})
		send(sim.EvUserMessage, map[string]any{"text": "ping"})
		for i, e := range seen {
			if e.ID != strconv.Itoa(i+1) {
				t.Fatalf("seed %d: event %d has id %s: a gap or a duplicate", seed, i, e.ID)
			}
		}
		if !strings.Contains(replyText(seen), "pong") {
			t.Fatalf("seed %d: no reply in %v", seed, types(seen))
		}
		if st := m.s.Server.MessagingStats(); st.DroppedSockets < 2 || st.DuplicateJoins != 0 {
			t.Errorf("seed %d: stats %+v", seed, st)
		}
		t.Logf("seed %d: %v", seed, trace)
		return trace
	}
	for seed := int64(1); seed <= 4; seed++ {
		a, b := run(seed), run(seed)
		if !slices.Equal(a, b) {
			t.Errorf("seed %d: drops differ between runs: %v vs %v", seed, a, b)
		}
	}
}

func TestMessagingHosts(t *testing.T) {
	t.Parallel()
	s := startMessaging(t, sim.Options{})
	// The messaging paths belong to the messaging host only.
	r := call(t, "POST", s.s.BuildURL+"/api/v1/access-token", "", map[string]any{})
	if r.status != 404 || !strings.Contains(string(r.body), "messaging host family") {
		t.Errorf("build host: %d %s", r.status, r.body)
	}
	r = s.post("/v1/agents/helpdesk/debug-chat", map[string]string{"x-api-key": s.s.BuildKey}, `{"clientEnv":"live"}`)
	if r.status != 404 || !strings.Contains(string(r.body), "build host family") {
		t.Errorf("messaging host: %d %s", r.status, r.body)
	}
	if s.s.MessagingURL == s.s.BuildURL || s.s.Info.MessagingURL != s.s.MessagingURL {
		t.Errorf("messaging URL %q (info %q)", s.s.MessagingURL, s.s.Info.MessagingURL)
	}

	// Brand: the event names follow it.
	a := startMessaging(t, sim.Options{Brand: "Acme"})
	id, jwt := a.session(false)
	sock, _ := a.connect(id, jwt, "")
	sock.send(evJoin, map[string]any{}, nil)
	if got := systemTexts([]event{sock.next()}); !slices.Equal(got, []string{sim.SysInvalidEvent}) {
		t.Errorf("VENDOR join under brand Acme: %v", got)
	}
	sock.send("EVENT_TYPE_REQUEST_ACME_AGENT_JOIN", map[string]any{}, nil)
	var got []string
	for len(got) < 5 {
		got = append(got, sock.next().Type)
	}
	want := []string{"EVENT_TYPE_REQUEST_ACME_AGENT_JOIN", "EVENT_TYPE_ACME_AGENT_TYPING", "EVENT_TYPE_ACME_AGENT_JOINED", "EVENT_TYPE_ACME_AGENT_MESSAGE", "EVENT_TYPE_ACME_AGENT_TYPING"}
	if !slices.Equal(got, want) {
		t.Errorf("Acme join answered %v, want %v", got, want)
	}
}

// TestMessagingNamedConversationsDrawAlike: a session named by the
// session call (conversation_id) opens a conversation of that id, whose
// draws depend on the seed and the name alone. Two simulators of one
// seed whose sessions join in opposite orders draw the same code for
// each name; before, the join numbered the conversation server-wide, so
// which session met which code changed with the order sessions joined
// in, and agenttest compare saw a booking reference "change" over web
// chat that nothing had changed.
func TestMessagingNamedConversationsDrawAlike(t *testing.T) {
	t.Parallel()
	def, diags := agent.Load("coder.yaml", []byte("id: helpdesk\nname: Coder\nstart: Hello\nnodes:\n  Hello:\n    say: \"Your code is ${random.code:8}.\"\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	names := []string{"cmp-a", "cmp-b", "cmp-c", "cmp-d"}
	greetings := func(order []string) map[string]string {
		m := startMessaging(t, sim.Options{Seed: 7, Agents: []*agent.Definition{def}})
		out := map[string]string{}
		for _, name := range order {
			s, _, _, join := m.named(name)
			if e, _ := find(join, evJoined); e.str("conversation_id") != name {
				t.Errorf("%s: joined %v, want conversation %s", name, e.Payload, name)
			}
			out[name] = replyText(join)
			s.c.CloseNow()
		}
		return out
	}
	forward := greetings(names)
	backward := greetings([]string{"cmp-d", "cmp-c", "cmp-b", "cmp-a"})
	codes := map[string]bool{}
	for _, name := range names {
		if forward[name] != backward[name] {
			t.Errorf("%s: %q joined first, %q joined last", name, forward[name], backward[name])
		}
		codes[forward[name]] = true
	}
	if len(codes) != len(names) {
		t.Errorf("the names drew %d different codes, want %d: %v", len(codes), len(names), forward)
	}
}

// TestMessagingNamedSessionsMeetFaultsAlike: the injected faults of a
// named session's events are drawn from its name, so two simulators of
// one seed whose sessions are created and join in opposite orders fail
// the same replies of each; drawn from the session id, which numbers the
// sessions server-wide, they changed with the order.
func TestMessagingNamedSessionsMeetFaultsAlike(t *testing.T) {
	t.Parallel()
	names := []string{"cmp-a", "cmp-b", "cmp-c", "cmp-d"}
	outcomes := func(order []string) map[string]string {
		m := startMessaging(t, sim.Options{Seed: 7, Faults: sim.Faults{ReplyFailure: 0.5}})
		out := map[string]string{}
		for _, name := range order {
			s, _, _, _ := m.named(name)
			var seen []string
			for range 8 {
				turn := s.say("ping")
				switch sys := systemTexts(turn); {
				case replyText(turn) == "pong" && len(sys) == 0:
					seen = append(seen, "pong")
				case slices.Equal(sys, []string{sim.SysReplyFailed}):
					seen = append(seen, "failed")
				default:
					seen = append(seen, fmt.Sprintf("%q %q", replyText(turn), sys))
				}
			}
			out[name] = strings.Join(seen, " ")
			s.c.CloseNow()
		}
		return out
	}
	forward := outcomes(names)
	backward := outcomes([]string{"cmp-d", "cmp-c", "cmp-b", "cmp-a"})
	patterns := map[string]bool{}
	for _, name := range names {
		if forward[name] != backward[name] {
			t.Errorf("%s: created first %q, created last %q", name, forward[name], backward[name])
		}
		patterns[forward[name]] = true
	}
	if len(patterns) < 2 {
		t.Errorf("every name met the same replies: %v", forward)
	}
}

// TestMessagingHandshakeIsActivity pins that a connection counts as
// activity for the session's expiry, as a client event does.
func TestMessagingHandshakeIsActivity(t *testing.T) {
	t.Parallel()
	m := startMessaging(t, sim.Options{Messaging: sim.MessagingOptions{SessionExpiry: 2 * time.Minute}})
	id, jwt := m.session(false)
	m.clk.Advance(90 * time.Second)
	m.connect(id, jwt, "")
	m.clk.Advance(90 * time.Second)
	m.s.Server.Tick()
	if n := m.s.Server.MessagingStats().LiveSessions; n != 1 {
		t.Errorf("%d live sessions 90s after a connection, 180s after the session began, want 1", n)
	}
}

// heldSleep is a simulator's Sleep that waits until the test releases
// it, and tells the test each wait it starts.
type heldSleep struct {
	calls    chan time.Duration
	release  chan struct{}
	returned chan struct{} // a wait returned
}

func newHeldSleep() *heldSleep {
	return &heldSleep{calls: make(chan time.Duration, 8), release: make(chan struct{}), returned: make(chan struct{}, 8)}
}

func (h *heldSleep) sleep(ctx context.Context, d time.Duration) {
	defer func() { h.returned <- struct{}{} }()
	h.calls <- d
	select {
	case <-h.release:
	case <-ctx.Done():
	}
}

// ended fails t unless a wait returned (without a release).
func (h *heldSleep) ended(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.returned:
	case <-time.After(readTimeout):
		t.Errorf("the pause did not end with %s", what)
	}
}

// waiting returns the wait the simulator started, failing the test when
// none starts.
func (h *heldSleep) waiting(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-h.calls:
		return d
	case <-time.After(readTimeout):
		t.Fatal("the simulator never paused")
		return 0
	}
}

// startBiller serves testdata/agents/biller.yaml, whose answer to "my
// bill" is split, with its pauses held by h, on opts.
func startBiller(t *testing.T, h *heldSleep, opts sim.Options) *msgSim {
	t.Helper()
	src, err := os.ReadFile("testdata/agents/biller.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts.Agents, opts.Sleep = []*agent.Definition{loadAgent(t, "biller.yaml", string(src))}, h.sleep
	m := startMessaging(t, opts)
	m.token = m.s.Info.MessagingConnectors["biller"]["sandbox"]
	return m
}

// TestMessagingSplitAnswer: an answer split by a node's pauseMs is two
// messages over the socket, the typing indicator off between them for
// the pause (on the simulator's Sleep), and a user message sent during
// the pause waits for the answer to end, its echo included: the socket's
// events are taken in order.
func TestMessagingSplitAnswer(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			t.Parallel()
			h := newHeldSleep()
			m := startBiller(t, h, sim.Options{})
			s, _, _, greeting := m.joined(streaming)
			if got := replyText(greeting); got != "Hi, this is billing." {
				t.Fatalf("greeting %q", got)
			}
			s.send(sim.EvUserMessage, map[string]any{"text": "my bill"}, nil)
			first := s.answer()
			if got := replyText(first); got != "Let me check." {
				t.Errorf("first message %q", got)
			}
			if d := h.waiting(t); d != 800*time.Millisecond {
				t.Errorf("paused %s, want the node's pauseMs", d)
			}
			s.send(sim.EvUserMessage, map[string]any{"text": "hours"}, nil)
			close(h.release)
			second := s.answer()
			if got := replyText(second); got != "Your bill is £84.20." {
				t.Errorf("second message %q", got)
			}
			if types(second)[0] != evTyping || second[0].Payload["typing"] != true {
				t.Errorf("the second message does not start with the typing indicator on: %v", types(second))
			}
			if a, b := messageID(first), messageID(second); a == "" || a == b {
				t.Errorf("message ids %q and %q: want two messages", a, b)
			}
			next := s.answer()
			if types(next)[0] != sim.EvUserMessage {
				t.Errorf("the message sent during the pause was taken before the answer ended: %v, then %v", types(second), types(next))
			}
			if got := replyText(next); got != "We open at 9." {
				t.Errorf("the next answer %q", got)
			}
		})
	}
}

// TestMessagingThinkTime: a node's latencyMs is waited over web chat as
// over debug chat (on the simulator's Sleep), with the agent's typing
// indicator on, before the answer: an agent slower than the client's
// turn timeout never answers in time.
func TestMessagingThinkTime(t *testing.T) {
	t.Parallel()
	h := newHeldSleep()
	opts := sim.Options{Agents: []*agent.Definition{loadAgent(t, "slow.yaml", `id: slow
name: Slow
start: Hello
intents:
  slow: {keywords: [slow]}
routes:
  - {intent: slow, goto: Slow}
nodes:
  Hello: {say: "Hi."}
  Slow: {latencyMs: 60000, say: "Here you are at last."}
`)}, Sleep: h.sleep}
	m := startMessaging(t, opts)
	m.token = m.s.Info.MessagingConnectors["slow"]["sandbox"]
	s, _, _, _ := m.joined(false)
	s.send(sim.EvUserMessage, map[string]any{"text": "slow please"}, nil)
	if d := h.waiting(t); d != time.Minute {
		t.Errorf("thought %s, want the node's latencyMs", d)
	}
	close(h.release)
	answer := s.answer()
	if got := replyText(answer); got != "Here you are at last." {
		t.Errorf("answer %q", got)
	}
	if ty := types(answer); len(ty) < 2 || ty[0] != sim.EvUserMessage || ty[1] != evTyping || answer[1].Payload["typing"] != true {
		t.Errorf("the answer %v does not open with the echo and the typing indicator on", ty)
	}
}

// messageID is the message id of the first agent message or chunk of
// evs.
func messageID(evs []event) string {
	for _, e := range evs {
		if e.Type == evMessage || e.Type == evChunk {
			return e.str("message_id")
		}
	}
	return ""
}

// TestMessagingSplitAnswerEndsWithTheSession: a session that expires
// during a split answer's pause ends it (SESSION_END, the socket
// closed, no more of the answer), and a simulator that shuts down during
// a pause does not wait for it.
func TestMessagingSplitAnswerEndsWithTheSession(t *testing.T) {
	t.Parallel()
	t.Run("expiry", func(t *testing.T) {
		t.Parallel()
		h := newHeldSleep()
		m := startBiller(t, h, sim.Options{})
		s, _, _, _ := m.joined(false)
		s.send(sim.EvUserMessage, map[string]any{"text": "my bill"}, nil)
		s.answer()
		h.waiting(t)
		m.clk.Advance(sim.DefaultSessionExpiry + time.Second)
		m.s.Server.Tick()
		if e := s.next(); e.Type != sim.EvSessionEnd || e.str("reason") != sim.EndExpired {
			t.Fatalf("got %s %v, want the session's end", e.Type, e.Payload)
		}
		if st := s.closedWith(); st != websocket.StatusNormalClosure {
			t.Errorf("closed with %v", st)
		}
		h.ended(t, "the session")
	})
	t.Run("shutdown", func(t *testing.T) {
		t.Parallel()
		h := newHeldSleep()
		// Never released: the simulator's shutdown at the test's end
		// (a cleanup that runs before this one) ends the pause.
		t.Cleanup(func() { h.ended(t, "the simulator's shutdown") })
		m := startBiller(t, h, sim.Options{})
		s, _, _, _ := m.joined(false)
		s.send(sim.EvUserMessage, map[string]any{"text": "my bill"}, nil)
		s.answer()
		h.waiting(t)
	})
}

// TestMessagingSplitAnswerCutStream: a streamed split answer that the
// reply-failure fault cuts is one stream, cut as an answer in one
// message is, with no pause: the fault draws its cut over the whole
// reply.
func TestMessagingSplitAnswerCutStream(t *testing.T) {
	t.Parallel()
	m := startBiller(t, newHeldSleep(), sim.Options{Faults: sim.Faults{ReplyFailure: 1}})
	s, _, _, _ := m.joined(true)
	s.send(sim.EvUserMessage, map[string]any{"text": "my bill"}, nil)
	evs := s.answer()
	if got := systemTexts(evs); !slices.Equal(got, []string{sim.SysStreamFailed}) {
		t.Errorf("system messages %v (events %v), want the stream's failure", got, types(evs))
	}
	ids := map[string]bool{}
	for _, e := range evs {
		if e.Type == evChunk {
			ids[e.str("message_id")] = true
		}
	}
	if len(ids) != 1 {
		t.Errorf("chunks of %d messages, want one stream", len(ids))
	}
	if got := replyText(evs); !strings.HasPrefix("Let me check. Your bill is £84.20.", got) || got == "" {
		t.Errorf("the cut stream says %q", got)
	}
}
