package platform

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// turnBody is a valid debug-chat reply with the given metadata object.
func turnBody(metadata string) string {
	return `{"conversationId":"c1","userInput":"hi","response":"Hello","metadata":` + metadata +
		`,"conversationEnded":false,"delayedResponse":false}`
}

// A metadata member of a JSON type no reader accepts is the platform's
// error, named with the member, the endpoint and the status, on the fast
// and the general decoding path alike; the tolerated forms still read.
func TestWrongTypedMetadataIsAMalformedResponse(t *testing.T) {
	t.Parallel()
	type testCase struct {
		metadata string
		want     string // "" means accepted
	}
	cases := []testCase{
		{`{"state":[1,2]}`, "metadata.state is an array, want an object"},
		{`{"state":"day"}`, "metadata.state is a string that is not a JSON object, want an object"},
		{`{"state":7}`, "metadata.state is a number, want an object"},
		{`{"nodeTrace":{"a":1}}`, "metadata.nodeTrace is an object, want an array of strings"},
		{`{"nodeTrace":["A",["B"]]}`, "metadata.nodeTrace[1] is an array, want a string"},
		{`{"node_trace":true}`, "metadata.node_trace is a boolean, want an array of strings"},
		{`{"metrics":"CALL_TURN"}`, "metadata.metrics is a string, want an object"},
		{`{"metrics":[1]}`, "metadata.metrics[0] is a number, want an object"},
		{`{"functionEvents":"book_table"}`, "metadata.functionEvents is a string, want an array of objects"},
		{`{"functionEvents":[{"name":"a"},"b"]}`, "metadata.functionEvents[1] is a string, want an object"},
		{`{"retrievedTopics":{"t":1}}`, "metadata.retrievedTopics is an object, want an array of strings"},
		{`{"retrievedSources":5}`, "metadata.retrievedSources is a number, want an array of strings"},
		{`{"currentNode":["A"]}`, "metadata.currentNode is an array, want a string"},
		{`{"handoffDestination":{"x":1}}`, "metadata.handoffDestination is an object without a name, want a string"},
		{`{"llmRequests":{"model":"m"}}`, "metadata.llmRequests is an object, want an array of objects"},
		// Tolerated forms.
		{`{"state":"{\"day\":\"mon\"}","nodeTrace":"A","metrics":[{"name":"X","value":"1"}]}`, ""},
		{`{"functionEvents":{"name":"a"},"currentNode":{"name":"A"},"asrLangCode":1}`, ""},
		{`{"state":null,"nodeTrace":[null,"A",{"name":"B"},3],"llmRequests":[]}`, ""},
		// An empty state written as [], as PHP's json_encode writes an
		// empty map.
		{`{"state":[],"metrics":[]}`, ""},
	}
	for _, tc := range cases {
		for _, envelope := range []bool{false, true} {
			body := turnBody(tc.metadata)
			if envelope {
				// The {success, data} envelope takes the general path.
				body = `{"success":true,"data":` + body + `}`
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(body))
			}))
			c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			_, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox"})
			srv.Close()
			if tc.want == "" {
				if err != nil {
					t.Errorf("%s (envelope %v): %v", tc.metadata, envelope, err)
				}
				continue
			}
			var re *ResponseError
			want := "POST /v1/agents/a1/debug-chat/c1: 200: malformed response: " + tc.want
			if !errors.As(err, &re) || err.Error() != want {
				t.Errorf("%s (envelope %v):\n got  %v\n want %s", tc.metadata, envelope, err, want)
			}
		}
	}
}

// A debug-chat result about another conversation than the one the call
// was about (the turn's, or the session's custom id) is the platform's
// error, on both decoding paths: checked, it would pass or fail the case
// on another user's conversation. A session without a custom id takes
// the id the platform gives.
func TestResultOfAnotherConversation(t *testing.T) {
	t.Parallel()
	for _, envelope := range []bool{false, true} {
		body := turnBody(`{}`) // about conversation c1
		if envelope {
			body = `{"success":true,"data":` + body + `}`
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(body))
		}))
		c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			call func() (*Exchange, error)
			want string
		}{
			{"turn", func() (*Exchange, error) {
				return c.SendTurn(ctx, "a1", "c2", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
			}, `POST /v1/agents/a1/debug-chat/c2: 200: malformed response: conversationId is "c1", and the call was about conversation "c2"`},
			{"start with a custom id", func() (*Exchange, error) {
				return c.StartChat(ctx, "a1", ChatStart{ClientEnv: "sandbox", ConversationID: "mine"})
			}, `POST /v1/agents/a1/debug-chat: 200: malformed response: conversationId is "c1", and the call was about conversation "mine"`},
			{"the same conversation", func() (*Exchange, error) {
				return c.SendTurn(ctx, "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
			}, ""},
			{"start with the platform's id", func() (*Exchange, error) {
				return c.StartChat(ctx, "a1", ChatStart{ClientEnv: "sandbox"})
			}, ""},
		} {
			ex, err := tc.call()
			var re *ResponseError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s (envelope %v): %v", tc.name, envelope, err)
			case tc.want != "" && (!errors.As(err, &re) || err.Error() != tc.want):
				t.Errorf("%s (envelope %v):\n got  %v\n want %s", tc.name, envelope, err, tc.want)
			case tc.want != "" && (ex == nil || ex.Result != nil || len(ex.Response) == 0):
				// The transcript keeps the body, and no result to check.
				t.Errorf("%s (envelope %v): exchange %+v, want the body and no result", tc.name, envelope, ex)
			}
		}
		srv.Close()
	}
}

// TestErrorBesideATurnResult: a 200 that holds every member of a turn
// result and also says it failed, or holds a member twice under
// spellings encoding/json takes for one, is read as the general decoding
// path reads it, whatever the spelling: the platform's error (an
// APIError), or, for a member sent twice with different values, its
// malformed answer (sentTwice), and never the turn result it seems to
// be at first sight.
func TestErrorBesideATurnResult(t *testing.T) {
	t.Parallel()
	result := strings.TrimSuffix(turnBody(`{}`), "}") // about conversation c1
	for _, tc := range []struct {
		name, body, want string
	}{
		{"success false", result + `,"success":false,"error_code":"INTERNAL","error_message":"turn failed"}`,
			"POST /v1/agents/a1/debug-chat/c1: 200 INTERNAL: turn failed"},
		{"success false alone", result + `,"success":false}`,
			"POST /v1/agents/a1/debug-chat/c1: 200: " + result + `,"success":false}`},
		{"Success false alone", result + `,"Success":"false"}`,
			"POST /v1/agents/a1/debug-chat/c1: 200: " + result + `,"Success":"false"}`},
		{"another conversation's id last", result + `,"ConversationID":"c2"}`,
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "conversationId" is sent twice, with different values`},
		{"a reply twice in the envelope", `{"success":true,"data":` + result + `,"response":"Goodbye"}}`,
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "response" is sent twice, with different values`},
		// A metadata member the checks read, or a key of its state,
		// sent twice: a node, trace or state check would judge one
		// of two answers (metadataSentTwice). The same value twice,
		// two spellings and a member no check reads are read.
		{"two current nodes", turnBody(`{"currentNode":"Greeting","nodeTrace":["Greeting"],"currentNode":"Goodbye"}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.currentNode" is sent twice, with different values`},
		{"two traces, the second an object", turnBody(`{"node_trace":["A"],"node_trace":[{"name":"B"}]}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.node_trace" is sent twice, with different values`},
		{"two current nodes, the first an object", turnBody(`{"currentNode":{"name":"A"},"currentNode":"B"}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.currentNode" is sent twice, with different values`},
		{"two states", turnBody(`{"state":{"plan":"basic"},"currentNode":"N","state":{"plan":"premium"}}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.state" is sent twice, with different values`},
		{"a state key twice", turnBody(`{"state":{"plan":"basic","day":"mon","plan":"premium"}}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.state.plan" is sent twice, with different values`},
		{"a state key twice, once escaped", turnBody(`{"state":{"plan":"basic","pl\u0061n":"premium"}}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.state.plan" is sent twice, with different values`},
		{"a state key twice past the first 16", turnBody(`{"state":{` + stateKeys(20) + `,"k17":"x"}}`),
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.state.k17" is sent twice, with different values`},
		{"a state key twice in an envelope", `{"success":true,"data":` + turnBody(`{"state":{"plan":"basic","plan":"premium"}}`) + `}`,
			`POST /v1/agents/a1/debug-chat/c1: 200: malformed response: field "metadata.state.plan" is sent twice, with different values`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			ex, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
			if ex != nil && ex.Result != nil {
				t.Errorf("the body was read as the reply %q", ex.Result.Response)
			}
		})
	}
}

// chunked writes n bytes of a reply without a Content-Length, so the
// client cannot refuse it before reading.
func chunked(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"conversationId":"c1","response":"`))
	chunk := bytes.Repeat([]byte("a"), 32<<10)
	for sent := 0; sent < n; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func TestReplyLimit(t *testing.T) {
	t.Parallel()
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	zw.Write(bytes.Repeat([]byte(" "), 4<<20)) // 4 MiB of spaces in a few KiB
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/agents/big/debug-chat":
			chunked(w, 3<<19)
		case "/v1/agents/declared/debug-chat":
			w.Header().Set("Content-Length", "20000000")
			w.WriteHeader(200)
		case "/v1/agents/bomb/debug-chat":
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				t.Errorf("the transport did not ask for gzip")
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
		case "/v1/agents/fits/debug-chat":
			w.Write([]byte(turnBody(`{"state":{"blob":"` + strings.Repeat("b", 900<<10) + `"}}`)))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", MaxReplyHint: "raise it with --max-reply-bytes or the target's max_reply_bytes",
		Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"big", "declared", "bomb"} {
		_, err := c.StartChat(context.Background(), agent, ChatStart{ClientEnv: "sandbox"})
		want := "POST /v1/agents/" + agent + "/debug-chat: 200: malformed response: reply exceeds the limit of 1 MiB (raise it with --max-reply-bytes or the target's max_reply_bytes)"
		var re *ResponseError
		if !errors.As(err, &re) || err.Error() != want {
			t.Errorf("%s:\n got  %v\n want %s", agent, err, want)
		}
	}
	if p := c.budget.peak.Load(); p > 1<<20+budgetChunk {
		t.Errorf("a reply over the limit held %d bytes of budget", p)
	}
	if _, err := c.StartChat(context.Background(), "fits", ChatStart{ClientEnv: "sandbox"}); err != nil {
		t.Errorf("a 900 KiB reply: %v", err)
	}
	if h := c.budget.held.Load(); h != 0 {
		t.Errorf("%d bytes of budget still held after the calls", h)
	}
}

// TestBodyLimits: a recording or a JSON body of unknown length one byte
// over its limit is refused, never kept cut to the limit; one at the
// limit is read whole. The hint of the reply limit is for debug-chat
// replies only.
func TestBodyLimits(t *testing.T) {
	t.Parallel()
	const audioLimit, bodyLimit = 1000, 2000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("id")) // the handoff state's, else the conversation's
		if n == 0 {
			n, _ = strconv.Atoi(strings.Split(r.URL.Path, "/")[5])
		}
		if r.URL.Query().Get("shared_id") == "declared" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // without a Content-Length, the client reads to find the size
		w.Write(bytes.Repeat([]byte(" "), n))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234",
		MaxAudioBytes: audioLimit, MaxBodyBytes: bodyLimit, MaxReplyHint: "raise --max-reply-bytes",
		Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []int{audioLimit, audioLimit + 1} {
		audio, _, err := c.ConversationAudio(ctx, "p1", strconv.Itoa(n))
		switch want := "GET /v3/ws-abcd1234/p1/conversations/" + strconv.Itoa(n) + "/audio: 200: malformed response: body exceeds the limit of 1000 bytes"; {
		case n <= audioLimit && (err != nil || len(audio) != n):
			t.Errorf("a recording of %d bytes: %d bytes, %v", n, len(audio), err)
		case n > audioLimit && (err == nil || err.Error() != want):
			t.Errorf("a recording of %d bytes: %d bytes, %v; want %s", n, len(audio), err, want)
		}
	}
	// A body announced at the limit is read, not refused before reading.
	if _, err := c.HandoffState(ctx, "p1", strconv.Itoa(bodyLimit), "declared"); err == nil || err.Error() != "GET /v1/ws-abcd1234/p1/handoff_state: 200: malformed response: truncated JSON" {
		t.Errorf("a body announced at the limit: %v, want it read (and refused as JSON)", err)
	}
	_, err = c.HandoffState(ctx, "p1", strconv.Itoa(bodyLimit+1), "")
	if want := "GET /v1/ws-abcd1234/p1/handoff_state: 200: malformed response: body exceeds the limit of 2000 bytes"; err == nil || err.Error() != want {
		t.Errorf("a body over the limit: %v, want %s", err, want)
	}
}

// Replies of unknown length, many at once, never hold more than the
// budget together, and every call ends (no reader waits for ever).
func TestReplyBudgetBoundsReadsInFlight(t *testing.T) {
	t.Parallel()
	const calls = 32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/huge") {
			chunked(w, 3<<19)
			return
		}
		w.Write([]byte(turnBody(`{"state":{"blob":"` + strings.Repeat("b", 100<<10) + `"}}`)))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", MaxPerHost: calls,
		MaxBodyBytes: 1 << 20, ReplyBudget: 4 << 20, Retry: RetryPolicy{MaxAttempts: 1},
		HTTPClient: &http.Client{Transport: NewTransport(calls)}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, calls)
	for i := range calls {
		wg.Go(func() {
			agent := "ok"
			if i%2 == 0 {
				agent = "huge"
			}
			_, errs[i] = c.StartChat(context.Background(), agent, ChatStart{ClientEnv: "sandbox"})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 1 && err != nil {
			t.Errorf("call %d: %v", i, err)
		}
		if i%2 == 0 && (err == nil || !strings.Contains(err.Error(), "exceeds the limit of 1 MiB")) {
			t.Errorf("call %d: %v, want the limit", i, err)
		}
	}
	if peak := c.budget.peak.Load(); peak > c.budget.size || c.budget.size > 6<<20 {
		t.Errorf("peak %d, budget %d: want the peak within a budget of about 5 MiB", peak, c.budget.size)
	}
	if h := c.budget.held.Load(); h != 0 {
		t.Errorf("%d bytes of budget still held", h)
	}
}

// Reading a reply through the budget reads it to its end, so the transport
// keeps the connection: sequential turns share one.
func TestRepliesKeepTheConnection(t *testing.T) {
	t.Parallel()
	var conns sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(turnBody("{}"))))
		w.Write([]byte(turnBody("{}")))
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Store(c.RemoteAddr().String(), true)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	for range 10 {
		if _, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox"}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("10 turns opened %d connections, want 1", n)
	}
}

// A body that says Content-Encoding: gzip and does not decompress is the
// platform's malformed answer, named with the endpoint and the status,
// and not retried: before, it read as a connection lost after sending,
// which a read retried and the runner took for a transient failure.
func TestCorruptGzipBody(t *testing.T) {
	t.Parallel()
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	badSum := gz(`{"alerts":[]}`)
	badSum[len(badSum)-8] ^= 0xff // the CRC-32 of the trailer
	badData := gz(`{"alerts":[]}`)
	badData = append(badData[:10:10], 0xff, 0xff, 0xff, 0xff) // reserved block type
	type testCase struct {
		name string
		body []byte
		want string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var hits sync.Map
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(tc.body)
		}))
		t.Cleanup(srv.Close)
		c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
		for _, call := range []struct {
			path string
			do   func() error
		}{
			{"/v1/alerts", func() error { _, err := c.FiringAlerts(context.Background()); return err }},
			{"/v1/agents/a1/debug-chat/c1", func() error {
				_, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
				return err
			}},
			{"/v3/ws-abcd1234/p1/conversations/c1/audio", func() error {
				_, _, err := c.ConversationAudio(context.Background(), "p1", "c1")
				return err
			}},
		} {
			err := call.do()
			var re *ResponseError
			if !errors.As(err, &re) || IsTransient(err) ||
				!strings.Contains(err.Error(), call.path+": 200: malformed response: the gzip body does not decompress: "+tc.want) {
				t.Errorf("%s: got %T %v", call.path, err, err)
			}
			if n, _ := hits.Load(call.path); n.(*atomic.Int32).Load() != 1 {
				t.Errorf("%s: %d requests, want 1", call.path, n.(*atomic.Int32).Load())
			}
		}
	}
	for _, tc := range []testCase{
		{"not gzip", []byte(`{"alerts":[]}`), "gzip: invalid header"},
		{"wrong checksum", badSum, "gzip: invalid checksum"},
		{"corrupt deflate data", badData, "flate: corrupt input"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// A 101 Switching Protocols to a request that asked for no upgrade is the
// platform's error, at once. The body of a switch is the connection
// itself, which the call's context no longer governs: the client read it
// until the server closed it, whatever the deadline.
func TestSwitchingProtocolsIsAnErrorAtOnce(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		<-release // hold the connection open
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(free)
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }})
	for _, call := range []struct {
		want string
		do   func(ctx context.Context) error
	}{
		{"GET /v1/alerts: 101 Switching Protocols", func(ctx context.Context) error { _, err := c.FiringAlerts(ctx); return err }},
		{"POST /v1/agents/a1/debug-chat/c1: 101 Switching Protocols", func(ctx context.Context) error {
			_, err := c.SendTurn(ctx, "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
			return err
		}},
	} {
		done := make(chan error, 1)
		go func() { done <- call.do(context.Background()) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second): // only when the client hangs
			free()
			err = <-done
			t.Errorf("%s: the call waited until the server let go", call.want)
		}
		var ae *APIError
		if !errors.As(err, &ae) || err.Error() != call.want {
			t.Errorf("got %T %v, want %q", err, err, call.want)
		}
	}
}

// A list answered 200 with no body is the platform's malformed answer:
// read as an empty list, it told the alert gate that nothing fired. A 204
// No Content is an empty list.
func TestEmptyListBody(t *testing.T) {
	t.Parallel()
	type testCase struct {
		status int
		err    string // "" for an empty list
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tc.status) }))
		t.Cleanup(srv.Close)
		c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		ctx := context.Background()
		for _, call := range []struct {
			path string
			list func() (int, error)
		}{
			{"GET /v1/alerts", func() (int, error) { l, err := c.FiringAlerts(ctx); return len(l), err }},
			{"GET /v1/alert-rules", func() (int, error) { l, err := c.ListAlertRules(ctx, AlertRuleFilter{}); return len(l), err }},
			{"GET /v1/webhooks/endpoints", func() (int, error) { l, err := c.ListWebhooks(ctx); return len(l), err }},
		} {
			n, err := call.list()
			var re *ResponseError
			switch {
			case tc.err == "" && (err != nil || n != 0):
				t.Errorf("%s: %d items, %v; want an empty list", call.path, n, err)
			case tc.err != "" && (!errors.As(err, &re) || err.Error() != call.path+": "+tc.err):
				t.Errorf("%s: got %T %v, want %q", call.path, err, err, tc.err)
			}
		}
	}
	for _, tc := range []testCase{
		{status: 200, err: "200: malformed response: empty body, want a list"},
		{status: 204},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) { run(t, tc) })
	}
}

// The firing list keeps every record whose state says it fires, in any
// letter case, and drops the ones in a state that says it does not (an
// implementation that lists every rule): an ALERT read as another state
// passed the alert gate. The reference shows no state in this list (it
// calls its records active alerts), so a state it does not name (active,
// ALARM, open) is firing: read as not, it would pass the gate on alerts
// that fire.
func TestFiringAlertStates(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"alerts":[` +
			`{"rule_id":"a1","state":"alert"},{"rule_id":"a2","state":"ALERT"},{"rule_id":"a3","state":" Firing "},` +
			`{"rule_id":"a4","status":"TRIGGERED"},{"rule_id":"a5"},` +
			`{"rule_id":"a6","status":"active"},{"rule_id":"a7","state":"ALARM"},{"rule_id":"a8","state":"open"},` +
			`{"rule_id":"o1","state":"ok"},{"rule_id":"o2","state":"OK"},{"rule_id":"o3","state":"no_data"},{"rule_id":"o4","state":"unknown"},` +
			`{"rule_id":"o5","state":"NO-DATA"},{"rule_id":"o6","state":"noData"},{"rule_id":"o7","status":"resolved"},` +
			`{"rule_id":"o8","state":"inactive"},{"rule_id":"o9","state":"pending"},{"rule_id":"o10","state":"normal"}]}`))
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	firing, err := c.FiringAlerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range firing {
		ids = append(ids, a.RuleID)
	}
	if got, want := strings.Join(ids, " "), "a1 a2 a3 a4 a5 a6 a7 a8"; got != want {
		t.Errorf("firing: %s, want %s", got, want)
	}
}

// A record read back about another subject than the one asked for (a
// conversation, a handoff state, a call's status) is the platform's
// error, as a debug-chat result of another conversation is: checked, it
// would pass or fail a case on someone else's conversation or call. A
// record that names no subject is taken to be the one asked for.
func TestRecordOfAnotherSubject(t *testing.T) {
	t.Parallel()
	const conv = `"account_id":"ws-abcd1234","project_id":"p1","started_at":"2026-03-02T10:00:00Z","environment":"live","channel":"WEBCHAT","in_progress":false`
	type testCase struct {
		name, body string
		call       func(ctx context.Context, c *Client) error
		want       string // "" for no error
	}
	getConv := func(ctx context.Context, c *Client) error { _, err := c.GetConversation(ctx, "p1", "c1"); return err }
	byID := func(ctx context.Context, c *Client) error { _, err := c.HandoffState(ctx, "p1", "c1", ""); return err }
	byShared := func(ctx context.Context, c *Client) error {
		_, err := c.HandoffState(ctx, "p1", "", "crm-1")
		return err
	}
	status := func(ctx context.Context, c *Client) error { _, err := c.CallStatus(ctx, "OUT-1"); return err }
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.body)) }))
		t.Cleanup(srv.Close)
		err := tc.call(context.Background(), newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}))
		var re *ResponseError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("err = %v", err)
		case tc.want != "" && (!errors.As(err, &re) || err.Error() != tc.want):
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"conversation", `{"id":"c1",` + conv + `}`, getConv, ""},
		{"another conversation", `{"id":"c2",` + conv + `}`, getConv,
			`GET /v3/ws-abcd1234/p1/conversations/c1: 200: malformed response: id is "c2", and the call was about conversation "c1"`},
		{"handoff state", `{"id":"c1","data":{"reason":"billing"}}`, byID, ""},
		{"handoff state without an id", `{"data":{"reason":"billing"}}`, byID, ""},
		{"handoff state of empty data as an array", `{"id":"c1","data":[]}`, byID, ""},
		{"handoff state of data a list", `{"id":"c1","data":["billing"]}`, byID,
			`GET /v1/ws-abcd1234/p1/handoff_state: 200: malformed response: field "data": expected an object, got array`},
		{"handoff state of another conversation", `{"id":"c2","data":{"reason":"billing"}}`, byID,
			`GET /v1/ws-abcd1234/p1/handoff_state: 200: malformed response: id is "c2", and the call was about conversation "c1"`},
		{"handoff state by shared id", `{"id":"c9","shared_id":"crm-1","data":{}}`, byShared, ""},
		{"handoff state by shared id that names none", `{"id":"c9","data":{}}`, byShared, ""},
		{"handoff state of only a shared id", `{"shared_id":"crm-1"}`, byShared, ""},
		{"handoff state of none of its members", `{"reason":"billing"}`, byID,
			`GET /v1/ws-abcd1234/p1/handoff_state: 200: malformed response: missing required fields "id", "data"`},
		{"handoff state of another shared id", `{"id":"c9","shared_id":"crm-2","data":{}}`, byShared,
			`GET /v1/ws-abcd1234/p1/handoff_state: 200: malformed response: shared_id is "crm-2", and the call was about shared id "crm-1"`},
		{"call status", `{"call_sid":"OUT-1","status":"success"}`, status, ""},
		{"call status without a sid", `{"status":"success"}`, status, ""},
		{"status of another call", `{"call_sid":"OUT-2","status":"success"}`, status,
			`GET /v1/outbound-calling/OUT-1/status: 200: malformed response: call_sid is "OUT-2", and the call was about call "OUT-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// A registration answered without the signing secret names the status
// the platform answered with: a 201 was reported as a 200.
func TestWebhookRegistrationWithoutSecret(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusOK, http.StatusCreated} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			w.Write([]byte(`{"id":"whe_1","url":"https://example.com/hook"}`))
		}))
		c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		_, err := c.RegisterWebhook(context.Background(), WebhookRegistration{URL: "https://example.com/hook", Events: []string{"conversation.completed"}})
		want := fmt.Sprintf(`register webhook https://example.com/hook: POST /v1/webhooks/endpoints: %d: malformed response: missing required field "signing_secret"`, status)
		var re *ResponseError
		if !errors.As(err, &re) || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		srv.Close()
	}
}

// The reference's Webhook endpoint record has no signing secret, and its
// registration answer shows only id and signing_secret: an implementation
// may answer with the record wrapped and the secret beside it, once.
func TestWebhookRegistrationSecretBesideTheEndpoint(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"endpoint":{"id":"whe_1","url":"https://example.com/hook","event_types":["conversation.completed"]},"signing_secret":"whsec_0123456789abcdef"}`,
		`{"data":{"id":"whe_1","url":"https://example.com/hook"},"signingSecret":"whsec_0123456789abcdef"}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(body))
		}))
		c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		ep, err := c.RegisterWebhook(context.Background(), WebhookRegistration{URL: "https://example.com/hook", Events: []string{"conversation.completed"}})
		srv.Close()
		if err != nil || ep.ID != "whe_1" || ep.SigningSecret != "whsec_0123456789abcdef" {
			t.Errorf("%s: got %+v, %v; want whe_1 with its secret", body, ep, err)
		}
	}
}

// A call's status is one of the reference's four values. Another value
// (a telephony provider's completed, busy, no-answer or canceled) is a
// malformed response, not a call still in progress: read as one, the
// probe polled it until its bound and then failed the agent. The four
// values are read in any letter case.
func TestCallStatusValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ status, want, err string }{
		{status: "queued", want: "queued"},
		{status: "calling", want: "calling"},
		{status: "success", want: "success"},
		{status: "failure", want: "failure"},
		{status: "SUCCESS", want: "success"},
		{status: " Failure ", want: "failure"},
		{status: "completed", err: `status is "completed", want one of queued, calling, success, failure`},
		{status: "busy", err: `status is "busy"`},
		{status: "no-answer", err: `status is "no-answer"`},
		{status: "failed", err: `status is "failed"`},
		{status: "canceled", err: `status is "canceled"`},
		{status: "in-progress", err: `status is "in-progress"`},
	} {
		t.Run(tc.status, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"call_sid":"OUT-1","status":%q}`, tc.status)
			}))
			t.Cleanup(srv.Close)
			st, err := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}).CallStatus(context.Background(), "OUT-1")
			var re *ResponseError
			switch {
			case tc.err == "" && (err != nil || st.Status != tc.want):
				t.Errorf("status %+v, err %v; want %s", st, err, tc.want)
			case tc.err != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), "GET /v1/outbound-calling/OUT-1/status: 200: malformed response: "+tc.err)):
				t.Errorf("err = %v, want a malformed response: %s", err, tc.err)
			}
		})
	}
}
