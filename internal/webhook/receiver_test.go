package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// deliver posts body to h with the given signature and returns the status.
func deliver(t *testing.T, h http.Handler, body, signature string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	if signature != "" {
		req.Header.Set(brand.SignatureHeader(""), signature)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func event(id, typ, conv string) string {
	return fmt.Sprintf(`{"id":%q,"type":%q,"created_at":"2026-03-01T12:00:00.000Z","data":{"conversation_id":%q,"environment":"sandbox"}}`, id, typ, conv)
}

func TestReceiverAnswers(t *testing.T) {
	type testCase struct {
		name      string
		secret    string
		method    string
		body      string
		signature string // "sign" signs the body with testSecret
		header    string // the signature's header, X-Vendor-Signature when empty
		status    int
		reason    string // the recorded rejection, if any
	}
	run := func(t *testing.T, tc testCase) {
		r := NewReceiver(Options{Secret: tc.secret})
		sig := tc.signature
		if sig == "sign" {
			sig = Sign(testSecret, []byte(tc.body))
		}
		req := httptest.NewRequest(tc.method, "/hook", strings.NewReader(tc.body))
		if sig != "" {
			req.Header.Set(cmp.Or(tc.header, "X-Vendor-Signature"), sig)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Fatalf("status = %d, want %d (%s)", rec.Code, tc.status, rec.Body)
		}
		rej := r.Rejections()
		switch {
		case tc.reason == "" && len(rej) > 0:
			t.Errorf("unexpected rejection %+v", rej)
		case tc.reason != "" && (len(rej) != 1 || !strings.Contains(rej[0].Reason, tc.reason)):
			t.Errorf("rejections = %+v, want one saying %q", rej, tc.reason)
		}
	}
	ok := event("evt_1", "conversation.completed", "c1")
	for _, tc := range []testCase{
		{name: "verified", secret: testSecret, method: "POST", body: ok, signature: "sign", status: 204},
		{name: "unsigned", secret: testSecret, method: "POST", body: ok, status: 401, reason: "missing X-Vendor-Signature header"},
		// A platform of another brand signs in its own header: the
		// receiver needs that brand, not another secret.
		{name: "another brand's header", secret: testSecret, method: "POST", body: ok, signature: "sign", header: "X-Acme-Signature", status: 401,
			reason: "missing X-Vendor-Signature header (the delivery is signed in X-Acme-Signature: the platform's brand is Acme: set brand: Acme on the target, or webhooks listen --brand Acme)"},
		{name: "another header", secret: testSecret, method: "POST", body: ok, signature: "sign", header: "X-Signature", status: 401, reason: "missing X-Vendor-Signature header"},
		{name: "bad hex", secret: testSecret, method: "POST", body: ok, signature: "xyz", status: 401, reason: "malformed signature"},
		{name: "wrong signature", secret: testSecret, method: "POST", body: ok, signature: Sign("other", []byte(ok)), status: 401, reason: "signature mismatch"},
		{name: "not an event", secret: testSecret, method: "POST", body: `{"data":{}}`, signature: "sign", status: 400, reason: `no "type" member`},
		{name: "no secret yet", secret: "", method: "POST", body: ok, signature: "sign", status: 503},
		{name: "GET", secret: testSecret, method: "GET", status: 405},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestReceiverStore(t *testing.T) {
	r := NewReceiver(Options{Secret: testSecret, MaxEvents: 3})
	post := func(body string) {
		if code := deliver(t, r, body, Sign(testSecret, []byte(body))); code != http.StatusNoContent {
			t.Fatalf("status %d", code)
		}
	}
	// A retry carries the same event id: stored once.
	post(event("evt_1", "conversation.completed", "c1"))
	post(event("evt_1", "conversation.completed", "c1"))
	if n := len(r.Events()); n != 1 {
		t.Fatalf("%d events after a retry, want 1", n)
	}
	for i := 2; i <= 5; i++ {
		post(event(fmt.Sprintf("evt_%d", i), "handoff.created", fmt.Sprintf("c%d", i)))
	}
	evs := r.Events()
	if len(evs) != 3 || evs[0].ID != "evt_3" || evs[2].ID != "evt_5" {
		t.Fatalf("events = %+v, want the 3 newest", evs)
	}
	if _, ok := r.Find("c1", "conversation.completed"); ok {
		t.Error("the oldest event was not dropped")
	}
	ev, ok := r.Find("c4", "handoff.created")
	if !ok || ev.Environment != "sandbox" || ev.Data["conversation_id"] != "c4" {
		t.Errorf("Find = %+v, %v", ev, ok)
	}
	// A dropped id may be stored again.
	post(event("evt_1", "conversation.completed", "c1"))
	if _, ok := r.Find("c1", "conversation.completed"); !ok {
		t.Error("a re-delivered dropped event was not stored")
	}
}

// TestWaitWakesOnArrival runs in a synctest bubble: synctest.Wait returns
// once Wait is parked, so "not returned yet" is a fact, not a guess after
// a sleep, and the matching event is delivered to a waiter that is
// already waiting.
func TestWaitWakesOnArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewReceiver(Options{Secret: testSecret})
		start := time.Now() // the bubble's clock: it moves only when every goroutine waits
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		type waited struct {
			ev  Event
			err error
		}
		got := make(chan waited, 1)
		go func() {
			ev, err := r.Wait(ctx, "c9", "handoff.created")
			got <- waited{ev, err}
		}()
		// Events of another conversation or type do not end the wait.
		for _, other := range []string{event("evt_a", "handoff.created", "c8"), event("evt_b", "conversation.completed", "c9")} {
			synctest.Wait()
			deliver(t, r, other, Sign(testSecret, []byte(other)))
			synctest.Wait()
			select {
			case w := <-got:
				t.Fatalf("Wait returned on %s: %+v, %v", other, w.ev, w.err)
			default:
			}
		}
		want := event("evt_c", "handoff.created", "c9")
		deliver(t, r, want, Sign(testSecret, []byte(want)))
		w := <-got
		if w.err != nil || w.ev.ID != "evt_c" || w.ev.ConversationID != "c9" || w.ev.Type != "handoff.created" {
			t.Fatalf("Wait = %+v, %v; want evt_c", w.ev, w.err)
		}
		// Woken by the arrival, not found when its deadline came.
		if waited := time.Since(start); waited != 0 {
			t.Errorf("Wait returned after %s of the bubble's time, want at the arrival", waited)
		}
	})
}

func TestWaitReportsRejections(t *testing.T) {
	r := NewReceiver(Options{Secret: testSecret})
	body := event("evt_1", "conversation.completed", "c1")
	deliver(t, r, body, Sign("stale-secret", []byte(body)))
	unrelated := event("evt_2", "conversation.completed", "c2")
	deliver(t, r, unrelated, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := r.Wait(ctx, "c1", "conversation.completed")
	var me *MissingError
	if !errors.As(err, &me) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a MissingError after the deadline", err)
	}
	if len(me.Rejected) != 1 || !errors.Is(me.Rejected[0].Err, ErrSignatureMismatch) {
		t.Fatalf("rejected = %+v, want the one mismatch of c1", me.Rejected)
	}
	want := `no verified "conversation.completed" event for conversation c1 arrived: 1 delivery rejected: signature mismatch`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message = %q, want it to start with %q", err, want)
	}
}

// recorder keeps the raw deliveries that reach a handler, to check the
// signatures independently of the receiver.
type recorder struct {
	next http.Handler
	// tamper, when set, rewrites the body before next sees it (a proxy
	// changing the payload on the way).
	tamper func([]byte) []byte
	mu     sync.Mutex
	raw    []rawDelivery
	// changed is closed and replaced at each delivery recorded.
	changed chan struct{}
}

type rawDelivery struct {
	body      []byte
	signature string
	status    int
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if rc.tamper != nil {
		body = rc.tamper(body)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	rc.next.ServeHTTP(rec, r)
	rc.mu.Lock()
	rc.raw = append(rc.raw, rawDelivery{body: body, signature: r.Header.Get(brand.SignatureHeader("")), status: rec.Code})
	if rc.changed != nil {
		close(rc.changed)
		rc.changed = nil
	}
	rc.mu.Unlock()
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (rc *recorder) deliveries() []rawDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]rawDelivery(nil), rc.raw...)
}

// await returns the deliveries recorded once n of them carry conv,
// checking at each delivery recorded; it fails the test when ctx ends
// first.
func (rc *recorder) await(t *testing.T, ctx context.Context, conv string, n int) []rawDelivery {
	t.Helper()
	for {
		rc.mu.Lock()
		got := append([]rawDelivery(nil), rc.raw...)
		if rc.changed == nil {
			rc.changed = make(chan struct{})
		}
		changed := rc.changed
		rc.mu.Unlock()
		of := 0
		for _, d := range got {
			if bytes.Contains(d.body, []byte(conv)) {
				of++
			}
		}
		if of >= n {
			return got
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("%d deliveries for %s recorded, want %d: %v", of, conv, n, context.Cause(ctx))
		}
	}
}

// simWithReceiver starts the simulator with fast outbound calls on clk, a
// receiver behind rc on loopback, and registers it.
func simWithReceiver(t *testing.T, rc *recorder, clk *fakeclock.Clock) (*simtest.Sim, *platform.Client, *Receiver, string) {
	t.Helper()
	s := simtest.Start(t, sim.Options{
		Seed:         11,
		Now:          clk.Now,
		TickInterval: 10 * time.Millisecond,
		Outbound:     sim.OutboundOptions{Queued: time.Millisecond, Calling: time.Millisecond},
		Webhooks:     sim.WebhookOptions{AllowInsecure: true, Backoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, MaxAttempts: 3},
	})
	c, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID,
		BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey, Brand: s.Info.Brand})
	if err != nil {
		t.Fatal(err)
	}
	rcv := NewReceiver(Options{Brand: s.Info.Brand})
	rc.next = rcv
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	ep, secret, err := Register(context.Background(), c, hs.URL+"/hook", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if ep.ID == "" || secret == "" {
		t.Fatalf("endpoint %+v, secret %q", ep, secret)
	}
	rcv.SetSecret(secret)
	return s, c, rcv, secret
}

// placeCall triggers an outbound call and returns the conversation it
// creates: with the simulator's clock moved past the call's queued and
// calling times (simWithReceiver: 1 ms each), the status read finishes
// it, and the callee hangs up at once, so the conversation completes.
func placeCall(t *testing.T, s *simtest.Sim, c *platform.Client, clk *fakeclock.Clock) string {
	t.Helper()
	ctx := context.Background()
	call, err := c.PlaceCall(ctx, platform.CallRequest{To: "+447700900001", AgentID: s.AgentIDs[0], Env: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Millisecond)
	st, err := c.CallStatus(ctx, call.SID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Final() || st.ConversationID == "" {
		t.Fatalf("call %s is %s, conversation %q, 10 ms after its 2 ms of queued and calling; want it ended with a conversation", call.SID, st.Status, st.ConversationID)
	}
	return st.ConversationID
}

func TestSignedDeliveryFromSimulator(t *testing.T) {
	rc := &recorder{}
	clk := fakeclock.New()
	s, c, rcv, secret := simWithReceiver(t, rc, clk)
	conv := placeCall(t, s, c, clk)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := rcv.Wait(ctx, conv, reply.EventConversationCompleted)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Environment != "sandbox" || ev.Data["channel"] != "VOICE-SIP" {
		t.Errorf("event = %+v, want a sandbox VOICE-SIP completion", ev)
	}
	// Check the delivery's signature with an HMAC computed here. The
	// recorder logs a delivery once the receiver has answered, which may
	// be just after Wait returned.
	var checked bool
	for _, d := range rc.await(t, ctx, conv, 1) {
		if !bytes.Contains(d.body, []byte(conv)) {
			continue
		}
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(d.body)
		if d.signature != hex.EncodeToString(m.Sum(nil)) {
			t.Errorf("signature %q is not the body's HMAC", d.signature)
		}
		if d.status/100 != 2 {
			t.Errorf("receiver answered %d to a valid delivery", d.status)
		}
		checked = true
	}
	if !checked {
		t.Error("the delivery was not recorded")
	}
	if rej := rcv.Rejections(); len(rej) > 0 {
		t.Errorf("rejections: %+v", rej)
	}
}

func TestTamperedDeliveryIsRejected(t *testing.T) {
	rc := &recorder{tamper: func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"environment":"sandbox"`), []byte(`"environment":"live"`), 1)
	}}
	clk := fakeclock.New()
	s, c, rcv, _ := simWithReceiver(t, rc, clk)
	conv := placeCall(t, s, c, clk)

	// Wait until the simulator has made every attempt at the completion
	// (simWithReceiver: 3), each tampered with; then the event must not
	// have been accepted, and the failure must carry the reason. The
	// check looks once, with a context already done: no real wait stands
	// for "nothing else arrived".
	// The recorder logs a delivery once the receiver has answered it.
	bound, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	rc.await(t, bound, conv, 3)
	if n := len(rcv.rejectionsFor(conv, reply.EventConversationCompleted, Mark{})); n != 3 {
		t.Fatalf("%d rejections of the completion, want the simulator's 3 attempts", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := rcv.Wait(ctx, conv, reply.EventConversationCompleted)
	var me *MissingError
	if !errors.As(err, &me) || len(me.Rejected) == 0 {
		t.Fatalf("err = %v, want a MissingError with rejections", err)
	}
	if !errors.Is(me.Rejected[0].Err, ErrSignatureMismatch) || me.Rejected[0].ConversationID != conv {
		t.Errorf("rejection = %+v, want a signature mismatch for %s", me.Rejected[0], conv)
	}
	if !strings.Contains(err.Error(), "signature mismatch") {
		t.Errorf("message %q does not give the reason", err)
	}
	for _, d := range rc.deliveries() {
		if d.status != http.StatusUnauthorized {
			t.Errorf("tampered delivery answered %d, want 401", d.status)
		}
	}
	if len(rcv.Events()) != 0 {
		t.Errorf("a tampered event was stored: %+v", rcv.Events())
	}
}

func TestRegisterReusesEndpoint(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 12, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	c, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := "http://127.0.0.1:9/hook"
	first, secret, err := Register(ctx, c, url, []string{reply.EventConversationCompleted}, "")
	if err != nil {
		t.Fatal(err)
	}
	// With the secret known, the same endpoint is reused and its events
	// widened.
	again, secret2, err := Register(ctx, c, url+"/", []string{reply.EventHandoffCreated}, secret)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || secret2 != secret || len(again.Events) != 2 {
		t.Fatalf("reuse: endpoint %+v (first %s), secret kept %v", again, first.ID, secret2 == secret)
	}
	// Without it, the stale endpoint is replaced, not duplicated.
	fresh, secret3, err := Register(ctx, c, url, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if fresh.ID == first.ID || secret3 == "" || secret3 == secret {
		t.Fatalf("replace: endpoint %+v, secret %q", fresh, secret3)
	}
	list, err := c.ListWebhooks(ctx)
	if err != nil || len(list) != 1 || list[0].ID != fresh.ID {
		t.Fatalf("endpoints = %+v, %v; want only the new one", list, err)
	}
}

// TestReplays: over HTTP, the same delivery twice is stored once when it
// carries an id; after a mark, neither an event that arrived before it
// (a replay, or an earlier conversation with the same id) nor one whose
// signed time is older than the allowed skew counts, and the wait's error
// says why; an event after the mark counts. The waits end at once on a
// passed deadline: what counts is decided by what is stored.
func TestReplays(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	r := NewReceiver(Options{Secret: testSecret, Now: clk.Now})
	hs := httptest.NewServer(r)
	t.Cleanup(hs.Close)
	post := func(body string) {
		t.Helper()
		if code := postSigned(t, hs, r.SignatureHeader(), body); code != http.StatusNoContent {
			t.Fatalf("answered %d", code)
		}
	}
	passed, cancel := context.WithDeadline(context.Background(), time.Time{})
	defer cancel()
	waitAfter := func(conv string, m Mark) (Event, *MissingError) {
		t.Helper()
		ev, err := r.WaitAfter(passed, conv, "conversation.completed", m)
		var me *MissingError
		if err != nil && !errors.As(err, &me) {
			t.Fatalf("err %v", err)
		}
		return ev, me
	}
	at := func(id, conv string, signed time.Time) string {
		return fmt.Sprintf(`{"id":%q,"type":"conversation.completed","created_at":%q,"data":{"conversation_id":%q}}`, id, signed.Format(time.RFC3339Nano), conv)
	}

	first := at("evt_1", "c1", clk.Now())
	post(first)
	post(first) // the platform's retry, or a replay
	if n := len(r.Events()); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
	m := r.Mark()
	post(first) // a replay after the mark is a duplicate still
	_, me := waitAfter("c1", m)
	const earlier = `no verified "conversation.completed" event for conversation c1 arrived; 1 verified event arrived before this attempt began and did not count`
	if me == nil || me.Earlier != 1 || !strings.HasPrefix(me.Error(), earlier) {
		t.Fatalf("after the mark: %v, want %q", me, earlier)
	}
	if _, me := waitAfter("c1", Mark{}); me != nil {
		t.Errorf("without a mark: %v", me)
	}

	// An event of an earlier conversation with the same id, signed two
	// hours before the mark, arrives after it.
	clk.Advance(3 * time.Hour)
	m = r.Mark()
	post(at("evt_2", "c1", clk.Now().Add(-2*time.Hour)))
	_, me = waitAfter("c1", m)
	if me == nil || me.Stale != 1 || me.Earlier != 1 || !strings.Contains(me.Error(), "1 verified event signed more than the allowed clock skew before this attempt began did not count") {
		t.Fatalf("a stale event: %v", me)
	}
	// A platform clock behind by less than the skew is no replay.
	post(at("evt_3", "c1", clk.Now().Add(-30*time.Minute)))
	if ev, me := waitAfter("c1", m); me != nil || ev.ID != "evt_3" {
		t.Errorf("within the skew: %+v, %v", ev, me)
	}
	// An event without a time counts once it arrives after the mark.
	m = r.Mark()
	post(`{"type":"conversation.completed","data":{"conversation_id":"c1"}}`)
	if ev, me := waitAfter("c1", m); me != nil || ev.ID != "" {
		t.Errorf("after the mark: %+v, %v", ev, me)
	}
}

// TestWrongTypedConversationIsRejected: over HTTP, a signed event whose
// conversation id is not a string is refused (400) with the reason, and
// a wait for the event says it, instead of that no event came.
func TestWrongTypedConversationIsRejected(t *testing.T) {
	t.Parallel()
	r := NewReceiver(Options{Secret: testSecret})
	hs := httptest.NewServer(r)
	t.Cleanup(hs.Close)
	body := `{"id":"evt_1","type":"conversation.completed","data":{"conversation_id":12}}`
	if code := postSigned(t, hs, r.SignatureHeader(), body); code != http.StatusBadRequest {
		t.Fatalf("answered %d, want 400", code)
	}
	passed, cancel := context.WithDeadline(context.Background(), time.Time{})
	defer cancel()
	_, err := r.Wait(passed, "12", "conversation.completed")
	const want = `no verified "conversation.completed" event for conversation 12 arrived: 1 delivery rejected: signed body is not an event: data.conversation_id is a number, want a string`
	if err == nil || err.Error() != want {
		t.Errorf("wait: %v\nwant %s", err, want)
	}
}

// postSigned delivers body to the receiver behind hs over HTTP, signed
// with testSecret in header, and returns the status.
func postSigned(t *testing.T, hs *httptest.Server, header, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(header, Sign(testSecret, []byte(body)))
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestReceiverBounds: over HTTP, a signed delivery one byte over MaxBody
// is answered 413 and recorded as rejected, not stored (a 2xx would stop
// the platform retrying, and a truncated read would blame the
// signature), while one of exactly MaxBody is stored; the stores of
// events and of rejections never hold more than their bounds.
func TestReceiverBounds(t *testing.T) {
	t.Parallel()
	const maxBody = 200
	r := NewReceiver(Options{Secret: testSecret, MaxBody: maxBody, MaxEvents: 2, MaxRejected: 2})
	hs := httptest.NewServer(r)
	t.Cleanup(hs.Close)
	sized := func(id string, n int) string {
		body := event(id, "conversation.completed", "c1")
		body = body[:len(body)-1] + `,"pad":"`
		body += strings.Repeat("x", n-len(body)-len(`"}`)) + `"}`
		if len(body) != n {
			t.Fatalf("body of %d bytes, want %d", len(body), n)
		}
		return body
	}
	if code := postSigned(t, hs, r.SignatureHeader(), sized("evt_1", maxBody)); code != http.StatusNoContent {
		t.Fatalf("a body of exactly MaxBody answered %d, want 204", code)
	}
	if code := postSigned(t, hs, r.SignatureHeader(), sized("evt_2", maxBody+1)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body one byte over MaxBody answered %d, want 413", code)
	}
	rej := r.Rejections()
	if len(rej) != 1 || rej[0].Reason != "body exceeds 200 bytes" {
		t.Fatalf("rejections = %+v, want the one oversized body", rej)
	}
	if evs := r.Events(); len(evs) != 1 || evs[0].ID != "evt_1" {
		t.Fatalf("events = %+v, want evt_1 alone", evs)
	}

	for i := 2; i <= 4; i++ {
		if code := postSigned(t, hs, r.SignatureHeader(), event(fmt.Sprintf("evt_%d", i), "handoff.created", "c2")); code != http.StatusNoContent {
			t.Fatalf("answered %d", code)
		}
		if n := len(r.Events()); n > 2 {
			t.Fatalf("%d events kept after evt_%d, MaxEvents is 2", n, i)
		}
	}
	for i := range 3 {
		deliver(t, r, event(fmt.Sprintf("evt_f%d", i), "handoff.created", "c2"), Sign("forger", []byte("x")))
		if n := len(r.Rejections()); n > 2 {
			t.Fatalf("%d rejections kept, MaxRejected is 2", n)
		}
	}
	if rej := r.Rejections(); rej[0].Reason == "body exceeds 200 bytes" {
		t.Errorf("the oldest rejection was kept over a newer one: %+v", rej)
	}
}

// TestWaitNamesOnlyItsRejections: a wait's error lists the rejected
// deliveries that may have been its event (of its type, or unreadable),
// not a forged delivery of another event type for the same conversation,
// which would name the wrong cause. A wait for any conversation ("")
// lists those of every conversation, and finds any's event.
func TestWaitNamesOnlyItsRejections(t *testing.T) {
	t.Parallel()
	r := NewReceiver(Options{Secret: testSecret})
	for _, body := range []string{
		event("evt_1", "handoff.created", "c1"),
		event("evt_2", "conversation.completed", "c2"),
		`{"type":`,
		// A member of another type does not hide the rest.
		`{"type":5,"data":{"conversation_id":"c1"}}`,
		`{"type":"conversation.completed","data":{"conversationId":"c1"}}`,
	} {
		deliver(t, r, body, Sign("forger", []byte(body)))
	}
	passed, cancel := context.WithDeadline(context.Background(), time.Time{})
	defer cancel()
	reasons := func(conv string) []string {
		t.Helper()
		_, err := r.Wait(passed, conv, "conversation.completed")
		var me *MissingError
		if !errors.As(err, &me) {
			t.Fatalf("Wait(%q) = %v, want a MissingError", conv, err)
		}
		var out []string
		for _, rej := range me.Rejected {
			out = append(out, rej.Type+"/"+rej.ConversationID)
		}
		return out
	}
	if got := reasons("c1"); !slices.Equal(got, []string{"/", "/c1", "conversation.completed/c1"}) {
		t.Errorf("rejections for c1 = %q, want all but the handoff and c2's", got)
	}
	if got := reasons("c2"); !slices.Equal(got, []string{"conversation.completed/c2", "/"}) {
		t.Errorf("rejections for c2 = %q, want c2's and the unreadable one", got)
	}
	if got := reasons(""); !slices.Equal(got, []string{"conversation.completed/c2", "/", "/c1", "conversation.completed/c1"}) {
		t.Errorf("rejections for any conversation = %q, want all but the handoff", got)
	}
	body := `{"type":"conversation.completed","data":{"conversationId":"c3"}}`
	deliver(t, r, body, Sign(testSecret, []byte(body)))
	if ev, ok := r.Find("", "conversation.completed"); !ok || ev.ConversationID != "c3" {
		t.Errorf("Find any conversation = %+v, %v; want c3's, named in camelCase", ev, ok)
	}
}

// TestWaitSaysNothingReachedTheReceiver: a nightly job whose tunnel is
// down (the webhook URL reaches no receiver) failed every webhook
// confirmation with "no verified event arrived" alone, as if the platform
// had skipped that one event. A wait that ends while no delivery of any
// kind has reached the receiver says so, with where to look; once any
// delivery has come, even a rejected one or another conversation's, the
// route works and it does not.
func TestWaitSaysNothingReachedTheReceiver(t *testing.T) {
	t.Parallel()
	passed, cancel := context.WithDeadline(context.Background(), time.Time{})
	defer cancel()
	const hint = "no delivery of any event has reached the receiver since it started"
	r := NewReceiver(Options{Secret: testSecret})
	if _, err := r.Wait(passed, "c1", "conversation.completed"); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("silent receiver: err = %v, want it to say %q", err, hint)
	}
	body := event("evt_2", "conversation.completed", "c2")
	deliver(t, r, body, Sign("forger", []byte(body)))
	if _, err := r.Wait(passed, "c1", "conversation.completed"); err == nil || strings.Contains(err.Error(), hint) {
		t.Errorf("after a rejected delivery: err = %v, want no %q", err, hint)
	}
	r = NewReceiver(Options{Secret: testSecret})
	deliver(t, r, body, Sign(testSecret, []byte(body)))
	if _, err := r.Wait(passed, "c1", "conversation.completed"); err == nil || strings.Contains(err.Error(), hint) {
		t.Errorf("after another conversation's event: err = %v, want no %q", err, hint)
	}
}

// TestMissingErrorMessage: the message names a cancelled wait as such,
// and of several rejections the last, the one nearest the deadline.
func TestMissingErrorMessage(t *testing.T) {
	rej := []Rejection{{Reason: "signature mismatch: first"}, {Reason: "malformed signature: last"}}
	for _, tc := range []struct {
		err  *MissingError
		want string
	}{
		{&MissingError{Type: "handoff.created", ConversationID: "c1", Err: context.DeadlineExceeded},
			`no verified "handoff.created" event for conversation c1 arrived`},
		{&MissingError{Type: "handoff.created", Err: context.Canceled},
			`no verified "handoff.created" event arrived (wait cancelled)`},
		{&MissingError{Type: "handoff.created", ConversationID: "c1", Rejected: rej, Err: context.DeadlineExceeded},
			`no verified "handoff.created" event for conversation c1 arrived: 2 deliveries rejected, the last: malformed signature: last`},
		// Nothing reached the receiver: either nothing happened that
		// sends an event, or, when the caller knows it happened, the
		// platform sent none or its deliveries do not reach it.
		{&MissingError{Type: "handoff.created", ConversationID: "c1", Unreached: true, State: ": its record says handoff=false", Err: context.DeadlineExceeded},
			`no verified "handoff.created" event for conversation c1 arrived: its record says handoff=false; no delivery of any event has reached the receiver since it started: nothing happened that sends one, or the platform's deliveries do not reach it (check that the webhook URL leads to the receiver, through the tunnel or ingress in front of it)`},
		{&MissingError{Type: "handoff.created", ConversationID: "c1", Unreached: true, Happened: true, State: ", while the agent handed off", Err: context.DeadlineExceeded},
			`no verified "handoff.created" event for conversation c1 arrived, while the agent handed off; no delivery of any event has reached the receiver since it started: the platform sent none, or its deliveries do not reach it (check that the webhook URL leads to the receiver, through the tunnel or ingress in front of it)`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q\nwant      %q", got, tc.want)
		}
	}
}

// TestClip: a rejected body's field is kept whole up to maxRejectedField
// bytes, else cut at a character's start and marked.
func TestClip(t *testing.T) {
	long := strings.Repeat("a", maxRejectedField-1) + "é" // the é straddles the bound
	for _, tc := range []struct{ in, want string }{
		{strings.Repeat("a", maxRejectedField), strings.Repeat("a", maxRejectedField)},
		{strings.Repeat("a", maxRejectedField+1), strings.Repeat("a", maxRejectedField) + clipMark},
		{long, long[:maxRejectedField-1] + clipMark},
	} {
		if got := clip(tc.in); got != tc.want {
			t.Errorf("clip(%d bytes) = %q, want %q", len(tc.in), got, tc.want)
		}
	}
}
