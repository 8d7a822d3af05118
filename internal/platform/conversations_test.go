package platform

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

// TestListConversationsQuery pins the list's query over HTTP: a query the
// reference's rules refuse fails before the network with the parameter
// named, and an accepted one reaches the version's path with every
// parameter as the reference spells it, the boundary values included.
func TestListConversationsQuery(t *testing.T) {
	t.Parallel()
	c, rec := serveRecorded(t, http.StatusOK, `{"conversations":[]}`, func(r *http.Request) string { return r.URL.Path + "?" + r.URL.RawQuery })
	start := time.Date(2026, 3, 1, 0, 0, 0, 123e6, time.UTC)
	end := start.Add(time.Hour)
	no := false

	type testCase struct {
		name    string
		v1      bool
		project string // "" for p, "-" for none
		q       ListQuery
		want    string // the path and query sent, or the error
	}
	run := func(t *testing.T, tc testCase) {
		project := tc.project
		switch project {
		case "":
			project = "p"
		case "-":
			project = ""
		}
		var err error
		if tc.v1 {
			_, err = c.ListConversationsV1(context.Background(), project, tc.q)
		} else {
			_, err = c.ListConversations(context.Background(), project, tc.q)
		}
		sent := rec.take()
		if strings.HasPrefix(tc.want, "/") {
			if err != nil || sent != tc.want {
				t.Errorf("sent %q, %v; want %q", sent, err, tc.want)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || sent != "" {
			t.Errorf("err = %v (sent %q); want %q before the network", err, sent, tc.want)
		}
	}
	const v1Only = "the v1 list takes only client_env"
	for _, tc := range []testCase{
		{name: "v3 by default", want: "/v3/ws-abcd1234/p/conversations?"},
		{name: "v3", q: ListQuery{Version: 3}, want: "/v3/ws-abcd1234/p/conversations?"},
		{name: "v2", q: ListQuery{Version: 2}, want: "/v2/ws-abcd1234/p/conversations?"},
		{name: "v1", v1: true, q: ListQuery{Limit: 5000, Offset: 1}, want: "/v1/ws-abcd1234/p/conversations?limit=5000&offset=1"},
		{name: "version 4", q: ListQuery{Version: 4}, want: "version 4: the list has versions 2 and 3 here; use ListConversationsV1 for v1"},
		{name: "no project", project: "-", want: "list conversations: project id is empty"},
		{name: "v1 with query_type", v1: true, q: ListQuery{QueryType: "transcript"}, want: v1Only},
		{name: "v1 with sample", v1: true, q: ListQuery{Sample: "random"}, want: v1Only},
		{name: "v1 with query", v1: true, q: ListQuery{Query: "x"}, want: v1Only},
		{name: "v1 with turn_type", v1: true, q: ListQuery{TurnType: "user"}, want: v1Only},
		{name: "v1 with a channel", v1: true, q: ListQuery{Channels: []string{"WEBCHAT"}}, want: v1Only},
		{name: "v1 with include_latency", v1: true, q: ListQuery{IncludeLatency: true}, want: v1Only},
		{name: "v1 with include_turn_metadata", v1: true, q: ListQuery{IncludeTurnMetadata: true}, want: v1Only},
		{name: "v1 limit past 5000", v1: true, q: ListQuery{Limit: 5001}, want: "limit 5001: must be 1 to 5000"},
		{name: "semantic search of agent turns", q: ListQuery{QueryType: "semantic", Query: "refund", TurnType: "agent", StartTime: start, EndTime: end},
			want: "/v3/ws-abcd1234/p/conversations?end_time=2026-03-01T01%3A00%3A01Z&query=refund&query_type=semantic&start_time=2026-03-01T00%3A00%3A00Z&turn_type=agent"},
		{name: "random sample", q: ListQuery{Sample: "random", StartTime: start, EndTime: end},
			want: "/v3/ws-abcd1234/p/conversations?end_time=2026-03-01T01%3A00%3A01Z&sample=random&start_time=2026-03-01T00%3A00%3A00Z"},
		// Whole seconds in UTC, whatever the zone: the range sent holds
		// the one asked for, and a time already whole is kept.
		{name: "times of another zone, whole", q: ListQuery{StartTime: start.Truncate(time.Second).In(time.FixedZone("", 3600)), EndTime: end.Add(-123 * time.Millisecond).In(time.FixedZone("", -7200))},
			want: "/v3/ws-abcd1234/p/conversations?end_time=2026-03-01T01%3A00%3A00Z&start_time=2026-03-01T00%3A00%3A00Z"},
		{name: "times a nanosecond past a second", q: ListQuery{StartTime: start.Truncate(time.Second).Add(time.Nanosecond), EndTime: end.Truncate(time.Second).Add(time.Nanosecond)},
			want: "/v3/ws-abcd1234/p/conversations?end_time=2026-03-01T01%3A00%3A01Z&start_time=2026-03-01T00%3A00%3A00Z"},
		{name: "sample with a query", q: ListQuery{Sample: "random", Query: "x", StartTime: start, EndTime: end}, want: "sample takes no query"},
		{name: "search without end_time", q: ListQuery{QueryType: "transcript", Query: "x", StartTime: start}, want: "query_type and sample need start_time and end_time"},
		{name: "search without start_time", q: ListQuery{QueryType: "transcript", Query: "x", EndTime: end}, want: "query_type and sample need start_time and end_time"},
		{name: "limit 1000", q: ListQuery{Limit: 1000}, want: "/v3/ws-abcd1234/p/conversations?limit=1000"},
		{name: "limit 1 and offset 1", q: ListQuery{Limit: 1, Offset: 1}, want: "/v3/ws-abcd1234/p/conversations?limit=1&offset=1"},
		{name: "negative limit", q: ListQuery{Limit: -1}, want: "limit -1: must be 1 to 1000"},
		{name: "finished only", q: ListQuery{InProgress: &no}, want: "/v3/ws-abcd1234/p/conversations?in_progress=false"},
		{name: "variant by id", q: ListQuery{VariantID: "v-1"}, want: "/v3/ws-abcd1234/p/conversations?variant_id=v-1"},
		{name: "a repeated extra parameter", q: ListQuery{Extra: map[string][]string{"x": {"1", "2"}}}, want: "/v3/ws-abcd1234/p/conversations?x=1&x=2"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestConversationAudio reads a recording from a server that holds to
// content negotiation: the request admits any type (the reference does
// not show the recording's), and the bytes come back as sent, outside
// the reply budget of the JSON answers (a recording is not text to hold
// against it).
func TestConversationAudio(t *testing.T) {
	t.Parallel()
	audio := bytes.Repeat([]byte("RIFF\x00\x01wav"), 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/ws-abcd1234/p/conversations/c1/audio" {
			http.NotFound(w, r)
			return
		}
		if accept := r.Header.Get("Accept"); accept != "*/*" && !strings.Contains(accept, "audio/") {
			http.Error(w, "not acceptable: "+accept, http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(audio)
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	got, ctype, err := c.ConversationAudio(context.Background(), "p", "c1")
	if err != nil || !bytes.Equal(got, audio) || ctype != "audio/wav" {
		t.Fatalf("audio: %d bytes (want %d), %q, %v", len(got), len(audio), ctype, err)
	}
	if peak := c.budget.peak.Load(); peak != 0 {
		t.Errorf("the recording held %d bytes of the reply budget", peak)
	}
}

// The page after a page: its cursor when it has one other than the one
// sent (the reference uses the cursor when both are sent; an empty page
// may come before more in a filtered scan), else its next_offset when it moves on
// from a page that held conversations, else none.
func TestConversationPageNext(t *testing.T) {
	t.Parallel()
	three, four, seven := 3, 4, 7
	one := []reply.Conversation{{ID: "c"}}
	q := ListQuery{ClientEnv: "live", Cursor: "c0", Offset: 3}
	for _, tc := range []struct {
		name string
		page ConversationPage
		want ListQuery
		more bool
	}{
		{"cursor over next_offset", ConversationPage{Conversations: one, Cursor: "c1", NextOffset: &seven}, ListQuery{ClientEnv: "live", Cursor: "c1", Offset: 3}, true},
		{"next_offset alone", ConversationPage{Conversations: one, NextOffset: &seven}, ListQuery{ClientEnv: "live", Offset: 7}, true},
		{"next_offset one on", ConversationPage{Conversations: one, NextOffset: &four}, ListQuery{ClientEnv: "live", Offset: 4}, true},
		{"next_offset where it was", ConversationPage{Conversations: one, NextOffset: &three}, q, false},
		{"next_offset after an empty page", ConversationPage{NextOffset: &seven}, q, false},
		{"the last page", ConversationPage{Conversations: one}, q, false},
		{"the cursor sent", ConversationPage{Cursor: "c0", NextOffset: &seven}, q, false},
		{"the cursor sent, of a page that held conversations", ConversationPage{Conversations: one, Cursor: "c0"}, q, false},
		{"a new cursor of an empty page", ConversationPage{Cursor: "c1"}, ListQuery{ClientEnv: "live", Cursor: "c1", Offset: 3}, true},
	} {
		got, more := tc.page.Next(q)
		if more != tc.more || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Next = %+v, %v; want %+v, %v", tc.name, got, more, tc.want, tc.more)
		}
	}
	// The first page, asked for without a cursor, pages on by its
	// next_offset when it has no cursor either.
	first := ListQuery{ClientEnv: "live"}
	if got, more := (&ConversationPage{Conversations: one, NextOffset: &seven}).Next(first); !more || got.Offset != 7 {
		t.Errorf("first page by offset: Next = %+v, %v", got, more)
	}
}
