package platform

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// counted is a simulator behind handlers that count requests and track the
// most requests in flight at once, so tests can see what the client sent.
type counted struct {
	info     sim.Info
	hits     atomic.Int32
	inFlight atomic.Int32
	maxSeen  atomic.Int32
}

func (c *counted) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		n := c.inFlight.Add(1)
		defer c.inFlight.Add(-1)
		for {
			m := c.maxSeen.Load()
			if n <= m || c.maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		h.ServeHTTP(w, r)
	})
}

func startCounted(t *testing.T, opts sim.Options) *counted {
	t.Helper()
	srv, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := &counted{}
	build := httptest.NewServer(c.wrap(srv.BuildHandler()))
	runtime := httptest.NewServer(c.wrap(srv.RuntimeHandler()))
	t.Cleanup(func() {
		build.Close()
		runtime.Close()
		srv.Close()
	})
	srv.SetURLs(build.URL, runtime.URL)
	c.info = srv.Info()
	return c
}

// sleeps records the retry waits instead of waiting, so tests of
// Retry-After stay fast and can check the exact waits.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func clientFor(t testing.TB, info sim.Info, p RetryPolicy) *Client {
	t.Helper()
	c, err := New(Config{
		BuildURL: info.BuildURL, RuntimeURL: info.RuntimeURL, AccountID: info.AccountID,
		BuildKey: info.BuildKey, RuntimeKey: info.RuntimeKey, Retry: p,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func simClient(t testing.TB, s *simtest.Sim, p RetryPolicy) *Client {
	return clientFor(t, s.Info, p)
}

func TestChatAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	c := simClient(t, s, RetryPolicy{})
	ctx := context.Background()
	const agent = "restaurant"

	ex, err := c.StartChat(ctx, agent, ChatStart{ClientEnv: "sandbox", Channel: "WEBCHAT", IntegrationAttributes: map[string]any{"crm_id": "42"}})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != 200 || ex.Attempts != 1 || ex.Result == nil || ex.Result.ConversationID == "" || !strings.Contains(ex.Result.Response, "Bella Tavola") {
		t.Fatalf("greeting exchange %+v result %+v", ex, ex.Result)
	}
	var sent map[string]any
	if err := json.Unmarshal(ex.Request, &sent); err != nil || sent["clientEnv"] != "sandbox" || sent["channel"] != "WEBCHAT" {
		t.Errorf("request body %s: %v", ex.Request, err)
	}
	if !json.Valid(ex.Response) || ex.Latency <= 0 || ex.Started.IsZero() {
		t.Errorf("response %s latency %v started %v", ex.Response, ex.Latency, ex.Started)
	}
	if !json.Valid(ex.Result.RawMetadata) {
		t.Errorf("raw metadata %s", ex.Result.RawMetadata)
	}
	id := ex.Result.ConversationID

	ex, err = c.SendTurn(ctx, agent, id, ChatTurn{ClientEnv: "sandbox", Message: "I'd like to book a table"})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Result.ConversationID != id || ex.Result.UserInput != "I'd like to book a table" || ex.Result.Response == "" {
		t.Errorf("turn result %+v", ex.Result)
	}
	if _, ok := ex.Result.Meta()["nodeTrace"]; !ok {
		t.Errorf("metadata without nodeTrace: %s", ex.Result.RawMetadata)
	}
	if !strings.Contains(string(ex.Request), `"message":"I'd like to book a table"`) {
		t.Errorf("request %s", ex.Request)
	}

	// The session is now a conversation record on the runtime host.
	conv, err := c.GetConversation(ctx, agent, id)
	if err != nil {
		t.Fatal(err)
	}
	if conv.ID != id || conv.ProjectID != agent || conv.Environment != "sandbox" || !conv.InProgress || len(conv.Turns) == 0 {
		t.Errorf("conversation %+v", conv)
	}
	last := conv.Turns[len(conv.Turns)-1]
	if last.UserInput != "I'd like to book a table" || last.AgentResponse != ex.Result.Response {
		t.Errorf("last turn %+v", last)
	}

	// A custom conversation id is kept.
	ex, err = c.StartChat(ctx, agent, ChatStart{ClientEnv: "sandbox", ConversationID: "my-own-id-1"})
	if err != nil || ex.Result.ConversationID != "my-own-id-1" {
		t.Fatalf("custom id: %v %+v", err, ex)
	}
}

func TestSingleHost(t *testing.T) {
	t.Parallel()
	s := simtest.StartSingleHost(t, sim.Options{Seed: 2})
	c := simClient(t, s, RetryPolicy{})
	ex, err := c.StartChat(context.Background(), s.AgentIDs[0], ChatStart{ClientEnv: "live"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetConversation(context.Background(), s.AgentIDs[0], ex.Result.ConversationID); err != nil {
		t.Fatal(err)
	}
}

func TestConversationsAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 3, SeedConversations: 90})
	c := simClient(t, s, RetryPolicy{})
	ctx := context.Background()
	project := s.AgentIDs[0]

	// Walk every page by cursor, then by offset; both see the same set.
	byCursor := map[string]reply.Conversation{}
	q := ListQuery{Limit: 7}
	for pages := 0; ; pages++ {
		if pages > 50 {
			t.Fatal("cursor pagination does not end")
		}
		page, err := c.ListConversations(ctx, project, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, cv := range page.Conversations {
			byCursor[cv.ID] = cv
		}
		if page.Cursor == "" {
			break
		}
		q.Cursor = page.Cursor
	}
	if len(byCursor) == 0 {
		t.Fatal("no seeded conversations listed")
	}
	all, err := c.ListConversations(ctx, project, ListQuery{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Conversations) != len(byCursor) || all.More() {
		t.Errorf("v2 single page: %d conversations (more %v), cursor walk %d", len(all.Conversations), all.More(), len(byCursor))
	}
	n := 0
	for q := (ListQuery{Limit: 5}); ; {
		page, err := c.ListConversationsV1(ctx, project, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Conversations)
		if page.NextOffset == nil {
			break
		}
		if *page.NextOffset <= q.Offset {
			t.Fatalf("offset does not advance: %d", *page.NextOffset)
		}
		q.Offset = *page.NextOffset
	}
	if n != len(byCursor) {
		t.Errorf("v1 offset walk saw %d conversations, v3 cursor walk %d", n, len(byCursor))
	}

	// Filters are sent as the reference names them.
	finished := false
	page, err := c.ListConversations(ctx, project, ListQuery{InProgress: &finished, Channels: []string{"VOICE-SIP"}, ClientEnv: "live"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cv := range page.Conversations {
		if cv.InProgress || cv.Channel != "VOICE-SIP" || cv.Environment != "live" {
			t.Errorf("filter not applied: %+v", cv)
		}
	}

	// Audio: voice conversations have a recording, chat ones answer 404.
	var voice, chat, handoff *reply.Conversation
	for _, cv := range byCursor {
		switch {
		case cv.Channel == "VOICE-SIP" && voice == nil:
			voice = &cv
		case cv.Channel != "VOICE-SIP" && chat == nil:
			chat = &cv
		}
		if cv.Handoff && handoff == nil {
			handoff = &cv
		}
	}
	if voice == nil || chat == nil || handoff == nil {
		t.Fatalf("seed lacks a voice, chat or handoff conversation: %v %v %v", voice, chat, handoff)
	}
	audio, ctype, err := c.ConversationAudio(ctx, project, voice.ID)
	if err != nil || len(audio) == 0 || ctype == "" {
		t.Errorf("audio: %d bytes, %q, %v", len(audio), ctype, err)
	}
	if _, _, err := c.ConversationAudio(ctx, project, chat.ID); !IsNotFound(err) {
		t.Errorf("audio of a chat conversation: %v, want not found", err)
	}

	// Handoff state by conversation id and by shared id.
	hs, err := c.HandoffState(ctx, project, handoff.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if hs.ID != handoff.ID || hs.SharedID == "" || len(hs.Data) == 0 {
		t.Errorf("handoff state %+v", hs)
	}
	hs2, err := c.HandoffState(ctx, project, "", hs.SharedID)
	if err != nil || hs2.ID != handoff.ID {
		t.Errorf("by shared id: %+v %v", hs2, err)
	}
	if _, err := c.HandoffState(ctx, project, chat.ID+"-nope", ""); !IsNotFound(err) {
		t.Errorf("handoff state of an unknown conversation: %v", err)
	}

	dep, err := c.ActiveDeployment(ctx, project, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dep.ID, "dep-") || dep.Environment != "sandbox" || dep.Version == "" {
		t.Errorf("deployment %+v", dep)
	}

	// Bad queries fail before the network, naming the parameter.
	_, err = c.ListConversations(ctx, project, ListQuery{QueryType: "transcript", Sample: "random"})
	if err == nil || !strings.Contains(err.Error(), "query_type and sample are mutually exclusive") || !strings.Contains(err.Error(), "query_type needs query") {
		t.Errorf("invalid query: %v", err)
	}
}

func TestErrorsAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 4})
	ctx := context.Background()
	good := simClient(t, s, RetryPolicy{})
	ex, err := good.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	convID := ex.Result.ConversationID

	withKeys := func(build, runtime string) *Client {
		info := s.Info
		info.BuildKey, info.RuntimeKey = build, runtime
		return clientFor(t, info, RetryPolicy{})
	}
	wrong := withKeys("wrong-build-key", "wrong-runtime-key")
	swapped := withKeys(s.RuntimeKey, s.BuildKey)
	scoped := withKeys(s.Info.ScopedBuildKey, s.Info.ScopedRuntimeKey)

	type testCase struct {
		name    string
		call    func() error
		pred    func(error) bool
		wantMsg string
	}
	run := func(t *testing.T, tc testCase) {
		err := tc.call()
		if err == nil {
			t.Fatal("no error")
		}
		if !tc.pred(err) {
			t.Errorf("predicate false for %v", err)
		}
		if !strings.Contains(err.Error(), tc.wantMsg) {
			t.Errorf("error %q does not contain %q", err, tc.wantMsg)
		}
	}
	turn := func(c *Client, agent, id string) func() error {
		return func() error {
			_, err := c.SendTurn(ctx, agent, id, ChatTurn{ClientEnv: "sandbox", Message: "hello"})
			return err
		}
	}
	get := func(c *Client, id string) func() error {
		return func() error { _, err := c.GetConversation(ctx, "restaurant", id); return err }
	}
	for _, tc := range []testCase{
		{"wrong build key", turn(wrong, "restaurant", convID), IsAuth, "POST /v1/agents/restaurant/debug-chat/" + convID + ": 401"},
		{"wrong runtime key", get(wrong, convID), IsAuth, "GET /v3/" + s.AccountID + "/restaurant/conversations/" + convID + ": 401"},
		{"keys of the other family", get(swapped, convID), IsAuth, ": 401"},
		{"scoped build key", turn(scoped, "restaurant", convID), IsAuth, ": 403"},
		{"scoped runtime key", get(scoped, convID), IsAuth, ": 403"},
		{"unknown agent", func() error {
			_, err := good.StartChat(ctx, "no-such-agent", ChatStart{ClientEnv: "sandbox"})
			return err
		}, IsNotFound, "POST /v1/agents/no-such-agent/debug-chat: 404"},
		{"unknown conversation", turn(good, "restaurant", "no-such-conv"), func(err error) bool {
			var ae *APIError
			return IsNotFound(err) && errors.As(err, &ae) && ae.Code == CodeConversationsNotFound && !IsTransient(err)
		}, "404 CONVERSATIONS_NOT_FOUND"},
		{"unknown stored conversation", get(good, "no-such-conv"), IsNotFound, ": 404"},
		{"malformed cursor", func() error {
			_, err := good.ListConversations(ctx, "restaurant", ListQuery{Cursor: "%%%not-a-cursor"})
			return err
		}, func(err error) bool { var ae *APIError; return errors.As(err, &ae) && ae.Status == 400 }, ": 400"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestChatTimeoutAgainstSim(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s := simtest.Start(t, sim.Options{Seed: 5, Now: clk.Now, ChatIdleTimeout: 50 * time.Millisecond})
	c := simClient(t, s, RetryPolicy{})
	ctx := context.Background()
	ex, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(120 * time.Millisecond)
	_, err = c.SendTurn(ctx, "restaurant", ex.Result.ConversationID, ChatTurn{ClientEnv: "sandbox", Message: "still there?"})
	if !IsChatTimeout(err) || !IsTransient(err) {
		t.Fatalf("err = %v, want CHAT_TIMEOUT", err)
	}
	var ae *APIError
	if errors.As(err, &ae); ae.Attempts != 1 {
		t.Errorf("CHAT_TIMEOUT retried: %d attempts", ae.Attempts)
	}

	// The injected form, on a fresh session.
	s2 := simtest.Start(t, sim.Options{Seed: 5, Faults: sim.Faults{ChatTimeout: 1}})
	c2 := simClient(t, s2, RetryPolicy{})
	ex, err = c2.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c2.SendTurn(ctx, "restaurant", ex.Result.ConversationID, ChatTurn{ClientEnv: "sandbox", Message: "hi"})
	if !IsChatTimeout(err) {
		t.Fatalf("err = %v, want CHAT_TIMEOUT", err)
	}
}

func TestRateLimitRetriedHonouringRetryAfter(t *testing.T) {
	t.Parallel()
	s := startCounted(t, sim.Options{Seed: 6, Faults: sim.Faults{Error429: 0.4, RetryAfter: 2 * time.Second}})
	rec := &sleeps{}
	// The client's clock is a fake one that its waits move: a pause is
	// measured from the 429's arrival, and on the real clock the
	// moments before the wait starts, long on a loaded machine, were
	// taken off it.
	clk := fakeclock.New()
	sleep := func(ctx context.Context, d time.Duration) error {
		if err := rec.sleep(ctx, d); err != nil {
			return err
		}
		return clk.Sleep(ctx, d)
	}
	// Few attempts: a 429 is not one.
	c, err := New(Config{BuildURL: s.info.BuildURL, BuildKey: s.info.BuildKey, Now: clk.Now,
		Retry: RetryPolicy{MaxAttempts: 2, BaseDelay: 10 * time.Millisecond, Sleep: sleep}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ex, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	const turns = 15
	for i := range turns {
		if _, err := c.SendTurn(ctx, "restaurant", ex.Result.ConversationID, ChatTurn{ClientEnv: "sandbox", Message: "what is on the menu"}); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	limited := int(s.hits.Load()) - turns - 1
	if limited == 0 {
		t.Fatal("no 429 met; raise the fault rate")
	}
	// Each 429 paused the key for its Retry-After. The other waits are
	// the pace the client learnt from them.
	pauses := 0
	for _, w := range rec.all() {
		if w >= 2*time.Second {
			pauses++
		}
	}
	if pauses < limited {
		t.Errorf("%d waits of the Retry-After of 2s for %d answers 429", pauses, limited)
	}
}

func TestRateLimitGivesUpPastTheWaitBudget(t *testing.T) {
	t.Parallel()
	s := startCounted(t, sim.Options{Seed: 7, Faults: sim.Faults{Error429: 1}})
	clk := fakeclock.New()
	c, err := New(Config{
		BuildURL: s.info.BuildURL, BuildKey: s.info.BuildKey, Now: clk.Now,
		Retry:    RetryPolicy{MaxAttempts: 2, Sleep: clk.Sleep},
		RateWait: 3 * time.Second, RateWaitHint: "raise it with --rate-wait",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartChat(context.Background(), "restaurant", ChatStart{ClientEnv: "sandbox"})
	const want = "rate limited: waited 3s for POST /v1/agents/restaurant/debug-chat (4 answers 429); " +
		"the next try could go in 1s, past the wait budget of 3s per scenario (raise it with --rate-wait)"
	var rl *RateLimitError
	if !errors.As(err, &rl) || err.Error() != want || !IsRateLimited(err) {
		t.Fatalf("err = %v, want\n%s", err, want)
	}
	// Every 429 waited its Retry-After of 1s, none counted as an attempt.
	if s.hits.Load() != 4 || clk.Now().Sub(fakeclock.Start) != 3*time.Second {
		t.Errorf("%d requests in %s; want 4 in 3s", s.hits.Load(), clk.Now().Sub(fakeclock.Start))
	}
}

// TestServerErrorsOnTurnsAndReads: a 500 on a turn is returned at once (the
// turn may have been applied), while reads and session creation retry.
func TestServerErrorsOnTurnsAndReads(t *testing.T) {
	t.Parallel()
	s := startCounted(t, sim.Options{Seed: 8, Faults: sim.Faults{Error500: 0.35}, SeedConversations: 6})
	rec := &sleeps{}
	c := clientFor(t, s.info, RetryPolicy{MaxAttempts: 30, Sleep: rec.sleep})
	ctx := context.Background()
	ex, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		t.Fatalf("session creation is retried on 500: %v", err)
	}
	failed := 0
	for i := range 30 {
		before := s.hits.Load()
		_, err := c.SendTurn(ctx, "restaurant", ex.Result.ConversationID, ChatTurn{ClientEnv: "sandbox", Message: "opening hours"})
		sent := s.hits.Load() - before
		if err == nil {
			continue
		}
		failed++
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 500 || !IsTransient(err) || ae.Attempts != 1 || sent != 1 {
			t.Fatalf("turn %d: %v (%d requests sent), want one 500", i, err, sent)
		}
	}
	if failed == 0 {
		t.Fatal("no 500 met; raise the fault rate")
	}
	for i := range 10 {
		if _, err := c.ListConversations(ctx, "restaurant", ListQuery{}); err != nil {
			t.Fatalf("list %d: 500s on GETs are retried: %v", i, err)
		}
	}
}

func TestDroppedConnections(t *testing.T) {
	t.Parallel()
	s := startCounted(t, sim.Options{Seed: 9, Faults: sim.Faults{Drop: 0.35}, SeedConversations: 6})
	rec := &sleeps{}
	c := clientFor(t, s.info, RetryPolicy{MaxAttempts: 30, Sleep: rec.sleep})
	ctx := context.Background()
	ex, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		t.Fatalf("session creation is retried after a drop: %v", err)
	}
	dropped := 0
	for i := range 30 {
		before := s.hits.Load()
		_, err := c.SendTurn(ctx, "restaurant", ex.Result.ConversationID, ChatTurn{ClientEnv: "sandbox", Message: "opening hours"})
		sent := s.hits.Load() - before
		if err == nil {
			continue
		}
		dropped++
		var ne *NetworkError
		if !errors.As(err, &ne) || !ne.Sent || !IsTransient(err) || sent != 1 {
			t.Fatalf("turn %d: %v (%d requests), want one lost connection", i, err, sent)
		}
		if !strings.Contains(err.Error(), "POST /v1/agents/restaurant/debug-chat/"+ex.Result.ConversationID+": connection lost after the request was sent") {
			t.Errorf("message %q", err)
		}
	}
	if dropped == 0 {
		t.Fatal("no drop met; raise the fault rate")
	}
	for i := range 10 {
		if _, err := c.GetConversation(ctx, "restaurant", ex.Result.ConversationID); err != nil {
			t.Fatalf("get %d: dropped GETs are retried: %v", i, err)
		}
	}
}

// TestCancellationStopsRetries: a call cut off by its caller gives up at
// once, whatever it was waiting for. Every request is refused with 429
// and Retry-After 5s; the waits go through the retry policy's Sleep on a
// fake clock that nothing advances, so each case is decided by what the
// client asked to wait and what it sent, not by how long it took.
func TestCancellationStopsRetries(t *testing.T) {
	t.Parallel()
	s := startCounted(t, sim.Options{Seed: 10, Faults: sim.Faults{Error429: 1, RetryAfter: 5 * time.Second}})
	client := func(sleep func(context.Context, time.Duration) error) *Client {
		t.Helper()
		info := s.info
		c, err := New(Config{BuildURL: info.BuildURL, RuntimeURL: info.RuntimeURL, AccountID: info.AccountID,
			BuildKey: info.BuildKey, RuntimeKey: info.RuntimeKey, Now: fakeclock.New().Now,
			Retry: RetryPolicy{MaxAttempts: 10, Sleep: sleep}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("cancelled while waiting for Retry-After", func(t *testing.T) {
		// The caller cancels as soon as the client starts waiting out
		// the 429; the wait is the real Sleep, which must end with
		// the cancellation instead of running its 5s course.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var waits []time.Duration
		completed := false
		c := client(func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			cancel()
			err := Sleep(ctx, d)
			completed = completed || err == nil
			return err
		})
		before := s.hits.Load()
		_, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
		if !errors.Is(err, context.Canceled) || IsTransient(err) {
			t.Errorf("err = %v, want cancellation", err)
		}
		if len(waits) != 1 || waits[0] < 5*time.Second || completed {
			t.Errorf("waits %v (completed %v), want one wait of the 5s Retry-After, cut off", waits, completed)
		}
		if n := s.hits.Load() - before; n != 1 {
			t.Errorf("%d requests sent, want the one refused before the wait", n)
		}
	})

	t.Run("deadline shorter than Retry-After", func(t *testing.T) {
		// The 429 itself, at once: waiting could only end in "deadline
		// exceeded". The deadline leaves seconds for the one request.
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		defer cancel()
		var waits []time.Duration
		c := client(func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			return ctx.Err()
		})
		before := s.hits.Load()
		_, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
		if !IsRateLimited(err) || len(waits) != 0 {
			t.Errorf("err = %v after waits %v, want the 429 without a wait", err, waits)
		}
		if n := s.hits.Load() - before; n != 1 {
			t.Errorf("%d requests sent, want 1", n)
		}
	})

	t.Run("already cancelled", func(t *testing.T) {
		// Nothing is sent, nothing waited.
		var waits []time.Duration
		c := client(func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			return ctx.Err()
		})
		before := s.hits.Load()
		_, err := c.StartChat(ctx0(), "restaurant", ChatStart{ClientEnv: "sandbox"})
		if !errors.Is(err, context.Canceled) || s.hits.Load() != before || len(waits) != 0 {
			t.Errorf("err = %v, %d requests sent, waits %v", err, s.hits.Load()-before, waits)
		}
	})
}

func ctx0() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestPerHostCap(t *testing.T) {
	t.Parallel()
	s := startCounted(t, sim.Options{Seed: 11, Faults: sim.Faults{Latency: 20 * time.Millisecond}})
	info := s.info
	c, err := New(Config{BuildURL: info.BuildURL, RuntimeURL: info.RuntimeURL, AccountID: info.AccountID,
		BuildKey: info.BuildKey, RuntimeKey: info.RuntimeKey, MaxPerHost: 3})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for range 24 {
		wg.Go(func() {
			if _, err := c.StartChat(context.Background(), "restaurant", ChatStart{ClientEnv: "sandbox"}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := s.maxSeen.Load(); m > 3 || m < 2 {
		t.Errorf("max %d requests in flight, want at most 3 (and some parallelism)", m)
	}

	// Waiting for a slot respects the context.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	sem := c.sem(hostOf(info.BuildURL))
	for i := 0; i < cap(sem); i++ {
		sem <- struct{}{}
	}
	_, err = c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline while waiting for a slot", err)
	}
	// The cap is per host: a full build host holds no runtime call. The
	// deadline only ends the test if it does.
	if info.RuntimeURL == info.BuildURL {
		t.Fatal("the simulator serves both hosts at one address")
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	if _, err := c.GetConversation(rctx, "restaurant", "c-unknown"); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a runtime call waited for a slot of the build host: %v", err)
	}
}

func hostOf(u string) string { return strings.TrimPrefix(u, "http://") }

// TestProjectTogglesAgainstSim covers the per-project settings the
// reference mentions: hidden transcripts, v1 field whitelisting and chunked
// streaming.
func TestProjectTogglesAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 13, SeedConversations: 30, Projects: map[string]sim.ProjectOptions{
		"restaurant": {HideTranscripts: true, V1Whitelist: true, Streaming: true},
	}})
	c := simClient(t, s, RetryPolicy{})
	ctx := context.Background()

	page, err := c.ListConversations(ctx, "restaurant", ListQuery{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Conversations) == 0 || page.Cursor == "" {
		t.Fatalf("streamed page: %d conversations, cursor %q", len(page.Conversations), page.Cursor)
	}
	for _, cv := range page.Conversations {
		if len(cv.Turns) != 0 || cv.NumTurns == 0 {
			t.Errorf("hidden transcripts: %d turns, num_turns %d", len(cv.Turns), cv.NumTurns)
		}
	}

	v1, err := c.ListConversationsV1(ctx, "restaurant", ListQuery{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(v1.Conversations) == 0 {
		t.Fatal("v1: no conversations")
	}
	for _, cv := range v1.Conversations {
		if cv.ID == "" || cv.StartedAt.IsZero() || cv.Channel != "" {
			t.Errorf("whitelisted v1 conversation %+v", cv)
		}
	}
}
