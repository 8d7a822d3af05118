package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestChatBodyKeys holds startKey and turnKey to the members of ChatStart
// and ChatTurn: a member added to a request and not to its key would
// have chatBody send the body of another request.
func TestChatBodyKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		req, key reflect.Type
		maps     []string
	}{
		{reflect.TypeFor[ChatStart](), reflect.TypeFor[startKey](), []string{"IntegrationAttributes"}},
		{reflect.TypeFor[ChatTurn](), reflect.TypeFor[turnKey](), []string{"Metadata"}},
	} {
		var members, maps []string
		for f := range tc.req.Fields() {
			if f.Type.Kind() == reflect.String {
				members = append(members, strings.ToLower(f.Name))
			} else {
				maps = append(maps, f.Name)
			}
		}
		var keys []string
		for f := range tc.key.Fields() {
			keys = append(keys, strings.ToLower(f.Name))
		}
		if !reflect.DeepEqual(members, keys) || !reflect.DeepEqual(maps, tc.maps) {
			t.Errorf("%v: strings %v, others %v; %v holds %v and chatBody checks %v", tc.req, members, maps, tc.key, keys, tc.maps)
		}
	}
}

// TestChatBodyRemembered checks that a request without a map is encoded
// once (the next body is the same memory, at no allocation) and as
// encoding/json encodes it, that its kept copy is redacted while the body
// sent is not, and that a request with a map is encoded every time.
func TestChatBodyRemembered(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{})
	turn := ChatTurn{ClientEnv: "sandbox", Message: "my key is bk-secret-build"}
	key := turnKey{turn.ClientEnv, turn.ASRLang, turn.TTSLang, turn.Message}
	body, kept, err := chatBody(c, &c.turns, key, true, turn)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(turn); !bytes.Equal(body, want) {
		t.Errorf("body %s, want %s", body, want)
	}
	if want := `{"clientEnv":"sandbox","message":"my key is [REDACTED]"}`; string(kept) != want {
		t.Errorf("kept %s, want %s", kept, want)
	}
	if n := testing.AllocsPerRun(10, func() {
		again, keptAgain, err := chatBody(c, &c.turns, key, true, turn)
		if err != nil || &again[0] != &body[0] || &keptAgain[0] != &kept[0] {
			t.Errorf("the second body is another: %s, %s, %v", again, keptAgain, err)
		}
	}); n != 0 {
		t.Errorf("a remembered body takes %v allocations", n)
	}

	turn.Metadata = map[string]any{"n": 1}
	with, _, err := chatBody(c, &c.turns, key, turn.Metadata == nil, turn)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(turn); !bytes.Equal(with, want) {
		t.Errorf("body with metadata %s, want %s", with, want)
	}
	if len(c.turns.m) != 1 {
		t.Errorf("%d bodies remembered, want 1", len(c.turns.m))
	}
}

// TestChatBodyEveryMember sends, over HTTP, a request without a map and
// then the same request with one string member changed, for each member
// of ChatStart and ChatTurn: each body the platform receives is the one
// encoding/json gives the request sent. TestChatBodyKeys holds the key
// types to the structs; this holds StartChat and SendTurn to putting
// every member in the key they build (one left out, or read twice, would
// send the first request's body for the second).
func TestChatBodyEveryMember(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		conv := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		var req struct{ ConversationID string }
		if json.Unmarshal(b, &req) == nil && req.ConversationID != "" {
			conv = req.ConversationID
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"conversationId": conv, "userInput": "", "response": "Hi",
			"metadata": map[string]any{"currentNode": "greet"}, "conversationEnded": false, "delayedResponse": false})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	ctx := context.Background()
	for _, tc := range []struct {
		base any
		send func(req any) error
	}{
		{ChatStart{ClientEnv: "sandbox"}, func(req any) error {
			_, err := c.StartChat(ctx, "agent-1", req.(ChatStart))
			return err
		}},
		{ChatTurn{ClientEnv: "sandbox", Message: "hello"}, func(req any) error {
			_, err := c.SendTurn(ctx, "agent-1", "conv-1", req.(ChatTurn))
			return err
		}},
	} {
		reqs := []any{tc.base}
		typ := reflect.TypeOf(tc.base)
		for i := range typ.NumField() {
			if typ.Field(i).Type.Kind() != reflect.String {
				continue
			}
			v := reflect.New(typ).Elem()
			v.Set(reflect.ValueOf(tc.base))
			changed := v.Field(i).String() + "-" + strings.ToLower(typ.Field(i).Name)
			if typ.Field(i).Name == "ClientEnv" {
				changed = "live" // checkChat takes only the three
			}
			v.Field(i).SetString(changed)
			reqs = append(reqs, v.Interface())
		}
		for _, req := range reqs {
			mu.Lock()
			got = nil
			mu.Unlock()
			if err := tc.send(req); err != nil {
				t.Errorf("%+v: %v", req, err)
				continue
			}
			want, _ := json.Marshal(req)
			mu.Lock()
			if len(got) != 1 || !bytes.Equal(got[0], want) {
				t.Errorf("%T %+v: the platform received %q, want %s", req, req, got, want)
			}
			mu.Unlock()
		}
	}
}

// TestKeptRepliesAreApart: the replies kept for transcripts share large
// chunks (keeper), so each is capped at its length: an append to one
// (a report adding a newline) must reallocate, never write over the
// next reply in the chunk, nor the decoded strings that share its memory.
func TestKeptRepliesAreApart(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"conversationId":"c1","userInput":"hi","response":"ok","metadata":{},"conversationEnded":false,"delayedResponse":false}`))
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	var replies [][]byte
	for range 2 {
		ex, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, ex.Response)
	}
	want := string(replies[1])
	_ = append(replies[0], strings.Repeat("x", len(want))...)
	if string(replies[1]) != want {
		t.Errorf("an append to the first reply wrote over the second: %q", replies[1])
	}
}
