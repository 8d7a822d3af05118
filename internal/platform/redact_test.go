package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// echoKey answers every request in a different broken way, each time
// echoing the x-api-key it received, as a misbehaving server or proxy
// might.
func echoKey(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Api-Key")
	switch r.URL.Query().Get("mode") + r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:] {
	case "json401":
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error_message":"invalid key %s"}`, key)
	case "code400":
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error_code":"%s","error":"bad %s"}`, key, key)
	case "html502":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		fmt.Fprintf(w, `<html><title>Bad gateway for %s</title></html>`, key)
	case "utf16401":
		// A gateway answering in UTF-16: the key's bytes interleaved
		// with NULs, which an error message then quotes as \x00.
		w.Header().Set("Content-Type", "application/json; charset=utf-16le")
		w.WriteHeader(401)
		for _, u := range utf16.Encode([]rune(`{"error_message":"invalid key ` + key + `"}`)) {
			w.Write([]byte{byte(u), byte(u >> 8)})
		}
	case "text500":
		w.WriteHeader(500)
		fmt.Fprintf(w, "upstream said: x-api-key: %s\n", key)
	case "rate429":
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"message":"slow down %s"}`, key)
	case "malformed200":
		fmt.Fprintf(w, `{"conversations": "%s"}`, key)
	case "missing200":
		fmt.Fprintf(w, `{"conversationId":"%s"}`, key)
	case "audio":
		// A recording whose content type echoes the key.
		w.Header().Set("Content-Type", "audio/wav; name="+key)
		w.Write([]byte("RIFF...."))
	case "success200":
		fmt.Fprintf(w, `{"conversationId":"success200","userInput":"","response":"your key is %s","metadata":{"k":"%s"},"conversationEnded":false,"delayedResponse":false}`, key, key)
	default:
		w.WriteHeader(404)
		fmt.Fprintf(w, "no route for %s (key %s)", r.URL.Path, key)
	}
}

func TestKeysNeverLeak(t *testing.T) {
	t.Parallel()
	const buildKey, runtimeKey = "bk-PLANTED-build-0123456789", "rk-PLANTED-runtime-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(echoKey))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234", BuildKey: buildKey, RuntimeKey: runtimeKey,
		Retry: RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var texts []string
	collect := func(err error) {
		if err == nil {
			return
		}
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		if ae, ok := errors.AsType[*APIError](err); ok {
			texts = append(texts, string(ae.Body), ae.Code, ae.Message)
		}
		if re, ok := errors.AsType[*ResponseError](err); ok {
			texts = append(texts, string(re.Body))
		}
	}
	// The rate limit is waited out on a fake clock, within a small
	// budget, by a client of its own: its pacing would slow the others.
	clk := fakeclock.New()
	limited, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234", BuildKey: buildKey, RuntimeKey: runtimeKey,
		Now: clk.Now, Retry: RetryPolicy{Sleep: clk.Sleep}, RateWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"json401", "code400", "html502", "utf16401", "text500", "rate429", "missing200", "other"} {
		c := c
		if mode == "rate429" {
			c = limited
		}
		_, err := c.SendTurn(ctx, "a", mode, ChatTurn{ClientEnv: "sandbox", Message: "my key is " + buildKey})
		if err == nil {
			t.Errorf("%s: no error", mode)
		}
		collect(err)
		_, err = c.GetConversation(ctx, "p", mode)
		collect(err)
	}
	_, err = c.ListConversations(ctx, "p", ListQuery{Extra: map[string][]string{"mode": {"malformed200"}}})
	if err == nil {
		t.Error("malformed200: no error")
	}
	collect(err)

	_, ctype, err := c.ConversationAudio(ctx, "p", "c1")
	if err != nil || !strings.HasPrefix(ctype, "audio/wav") {
		t.Errorf("audio: content type %q, %v", ctype, err)
	}
	texts = append(texts, ctype)

	ex, err := c.SendTurn(ctx, "a", "success200", ChatTurn{ClientEnv: "sandbox", Message: "my key is " + buildKey})
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, string(ex.Request), string(ex.Response), ex.Result.Response, string(ex.Result.RawMetadata), fmt.Sprint(ex.Result.Meta()))
	if !strings.Contains(ex.Result.Response, "[REDACTED]") {
		t.Errorf("response not redacted: %q", ex.Result.Response)
	}

	// Transport failures and config errors.
	dead, _ := New(Config{BuildURL: "http://127.0.0.1:1", BuildKey: buildKey, Retry: RetryPolicy{MaxAttempts: 1}})
	_, err = dead.StartChat(ctx, "a", ChatStart{ClientEnv: "sandbox"})
	collect(err)
	_, err = New(Config{BuildURL: "http://user:" + buildKey + "@example.com", BuildKey: buildKey})
	collect(err)

	// The simulator's own errors, with the planted keys as wrong keys.
	s := simtest.Start(t, sim.Options{Seed: 12, Faults: sim.Faults{Error500: 0.3, Error429: 0.2, Drop: 0.2}})
	info := s.Info
	info.BuildKey, info.RuntimeKey = buildKey, runtimeKey
	sc, err := New(Config{BuildURL: info.BuildURL, RuntimeURL: info.RuntimeURL, AccountID: info.AccountID,
		BuildKey: info.BuildKey, RuntimeKey: info.RuntimeKey, Retry: RetryPolicy{MaxAttempts: 1}, RateWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, err := sc.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
		collect(err)
		_, err = sc.ListConversations(ctx, "restaurant", ListQuery{})
		collect(err)
	}

	if len(texts) < 40 {
		t.Fatalf("only %d texts collected", len(texts))
	}
	for _, s := range texts {
		// NULs dropped, either raw or as an error message renders them,
		// a UTF-16 key would read "PLANTED" again.
		plain := strings.NewReplacer("\x00", "", `\x00`, "").Replace(s)
		if strings.Contains(plain, buildKey) || strings.Contains(plain, runtimeKey) || strings.Contains(plain, "PLANTED") {
			t.Errorf("key leaked: %q", s)
		}
	}
}

// TestMaskedSecrets: a secret of the workspace the client never sends
// (Config.Redactor: another agent's connector token, a webhook signing
// secret) is masked in what the platform sends back, as a key is; so is
// one the redactor learns after the client was made (the signing secret
// of an endpoint registered through it), in replies and in errors.
func TestMaskedSecrets(t *testing.T) {
	t.Parallel()
	const buildKey, masked, learnt = "bk-build-0123456789", "whsec-PLANTED-0123456789", "whsec-LEARNT-9876543210"
	var sent []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, fmt.Sprint(r.Header), r.URL.String())
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/c-error") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error_message":"signed with %s"}`, learnt)
			return
		}
		fmt.Fprintf(w, `{"conversationId":"c1","userInput":"","response":"signed with %s and %s","metadata":{"k":"%s","l":"%s"},"conversationEnded":false,"delayedResponse":false}`, masked, learnt, masked, learnt)
	}))
	t.Cleanup(srv.Close)
	red, err := secret.New(masked)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{BuildURL: srv.URL, BuildKey: buildKey, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	turn := func(conv string) (*Exchange, error) {
		return c.SendTurn(context.Background(), "a", conv, ChatTurn{ClientEnv: "sandbox", Message: "hi"})
	}
	ex, err := turn("c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "signed with [REDACTED] and " + learnt; ex.Result.Response != want {
		t.Errorf("before learning: response %q, want %q", ex.Result.Response, want)
	}
	if err := red.Learn("the signing secret", learnt); err != nil {
		t.Fatal(err)
	}
	ex, err = turn("c1")
	if err != nil {
		t.Fatal(err)
	}
	_, turnErr := turn("c-error")
	if turnErr == nil {
		t.Fatal("the 400 was no error")
	}
	for _, s := range append(sent, string(ex.Response), ex.Result.Response, fmt.Sprint(ex.Result.Meta()), turnErr.Error(), c.Redact(learnt)) {
		if strings.Contains(s, "PLANTED") || strings.Contains(s, "LEARNT") {
			t.Errorf("a masked secret shows: %q", s)
		}
	}
	if ex.Result.Response != "signed with [REDACTED] and [REDACTED]" {
		t.Errorf("response %q", ex.Result.Response)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "https://x.test", RetryPolicy{})
	got := c.Redact("a bk-secret-build b rk-secret-runtime c")
	if got != "a [REDACTED] b [REDACTED] c" {
		t.Errorf("Redact = %q", got)
	}
	noKeys, _ := New(Config{BuildURL: "https://x.test"})
	if got := noKeys.Redact("unchanged"); got != "unchanged" {
		t.Errorf("Redact without keys = %q", got)
	}
}

// A server that answers with no HTTP at all, its first line the key it
// was sent, has Go's transport quote that line in its error ("malformed
// HTTP response ..."): the connection's error is the client's message
// built from server text, and is masked as a body is.
func TestNetworkErrorQuotingTheKey(t *testing.T) {
	t.Parallel()
	const key = "bk-PLANTED-0123456789"
	addr := rawServer(t, func(req *http.Request) string { return req.Header.Get("x-api-key") + "\r\n\r\n" })
	c, err := New(Config{BuildURL: "http://" + addr, BuildKey: key, Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendTurn(context.Background(), "a", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
	var ne *NetworkError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "malformed HTTP response \""+secret.Mask) {
		t.Fatalf("err = %v, want the connection's error quoting the masked key", err)
	}
	for _, form := range secret.Forms(key) {
		if strings.Contains(err.Error(), form) {
			t.Errorf("the error shows %q: %v", form, err)
		}
	}
}

// rawServer answers every request with the bytes answer gives, as they
// are: a server that breaks HTTP itself. It returns its address.
func rawServer(t *testing.T, answer func(req *http.Request) string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				fmt.Fprint(conn, answer(req))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestNetworkErrorIsCut: the transport's error quotes what the server
// sent (a malformed header line, up to 10 MiB): server text, cut to one
// line with its controls escaped, as an error body's message is. Before,
// a header of 100 KB went whole into the case's error and every report.
func TestNetworkErrorIsCut(t *testing.T) {
	t.Parallel()
	addr := rawServer(t, func(*http.Request) string {
		return "HTTP/1.1 200 OK\r\nContent-Type: \x1b[2J" + strings.Repeat("a", 100_000) + "\r\n\r\n"
	})
	c, err := New(Config{BuildURL: "http://" + addr, BuildKey: "bk-0123456789abcdef", Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendTurn(context.Background(), "a", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
	var ne *NetworkError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), `malformed MIME header line: "Content-Type: \x1b[2Jaaa`) || len(err.Error()) > 500 || strings.Contains(err.Error(), "\x1b") {
		t.Fatalf("err = %.200q (%d bytes), want the transport's error on one line, cut, its escape escaped", err, len(fmt.Sprint(err)))
	}
}

// What the client makes of an error answer is masked again once made:
// the message and code collapse the body's whitespace onto one line,
// which can spell a key that holds a space out of a body that did not
// (its space written as a line break), and a same-origin redirect's path
// is the platform's choice, key and all.
func TestErrorTextMaskedOnceMade(t *testing.T) {
	t.Parallel()
	const key = "has inner space 0123" // a key with a space, which the redactor takes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/agents/") {
			http.Redirect(w, r, "/moved/"+r.Header.Get("x-api-key"), http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error_code":"has inner\n space 0123","error_message":"has inner\n\tspace 0123"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: key, Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendTurn(context.Background(), "a", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != secret.Mask || ae.Message != secret.Mask || !strings.Contains(ae.Redirected, secret.Mask) {
		t.Fatalf("err = %v (%+v), want its code, message and redirected path masked", err, ae)
	}
	for _, form := range secret.Forms(key) {
		if strings.Contains(err.Error(), form) {
			t.Errorf("the error shows %q: %v", form, err)
		}
	}
}

// A key given to another setting of the configuration (an account id
// read from the wrong variable) is masked in New's refusal, which quotes
// the setting's value.
func TestConfigErrorsShowNoKey(t *testing.T) {
	t.Parallel()
	const key = "rk+PLANTED/0123456789" // no slug: refused as an account id
	_, err := New(Config{BuildURL: "https://build.example.com", BuildKey: "bk-0123456789abcdef",
		RuntimeURL: "https://runtime.example.com", AccountID: key, RuntimeKey: key})
	if err == nil || !strings.Contains(err.Error(), `account id "`+secret.Mask+`"`) {
		t.Fatalf("err = %v, want the account id refused, masked", err)
	}
	for _, form := range secret.Forms(key) {
		if strings.Contains(err.Error(), form) {
			t.Errorf("the error shows %q: %v", form, err)
		}
	}
}
