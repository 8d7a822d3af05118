package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// deletionKeys are the keys of the target of TestWebhookEndpointDeletion:
// only the build key may reach the build host's webhook endpoints.
const (
	deletionBuildKey   = "build-key-0123456789abcdef"
	deletionRuntimeKey = "runtime-key-0123456789abcdef"
)

// deletionPlatform is a build host that registers the run's webhook
// endpoint (whe_1), greets every debug chat, and answers the n-th
// deletion of the endpoint with answer, which may move the run's clock
// before it answers (the platform taking its time) or hold the request
// until the client gives it up.
type deletionPlatform struct {
	clk    *fakeclock.Clock
	answer deletionAnswer

	mu      sync.Mutex
	deletes int
	keys    []string // the x-api-key of each deletion
}

func (p *deletionPlatform) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/webhook-endpoints/whe_1" && r.Method == http.MethodDelete:
		p.mu.Lock()
		p.deletes++
		n := p.deletes
		p.keys = append(p.keys, r.Header.Get("x-api-key"))
		p.mu.Unlock()
		p.answer(n, w, r, p.clk)
	case strings.Contains(r.URL.Path, "/debug-chat"):
		fmt.Fprint(w, `{"conversationId":"conv-1","userInput":"","response":"hello","metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"state":{}},"conversationEnded":false,"delayedResponse":false}`)
	default:
		http.NotFound(w, r)
	}
}

// holdUntilCut holds a request until the client gives it up. A bound
// that did not cut it at once on the run's clock leaves it held:
// failsafe then answers 200 well after, far above what a cut needs, so
// that the run ends and the test fails on the deletion it reports done.
func holdUntilCut(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(20 * time.Second):
		w.WriteHeader(http.StatusNoContent)
	}
}

// deletionAnswer answers the n-th deletion of the endpoint.
type deletionAnswer = func(n int, w http.ResponseWriter, r *http.Request, clk *fakeclock.Clock)

// status answers with code and, for a 429 or a 503, Retry-After.
func status(code int, retryAfter string) deletionAnswer {
	return func(_ int, w http.ResponseWriter, _ *http.Request, _ *fakeclock.Clock) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error_message":"status %d"}`, code)
	}
}

// TestWebhookEndpointDeletion: the webhook endpoint a run registered is
// deleted when the run ends, with the build key and on the build host,
// within 5s of its own time plus up to a minute of rate-limit waits, all
// on the run's clock: a platform that holds the request, fails it, or
// keeps asking to come back later costs the exit that much and no more,
// and is named in one warning with the endpoint and the status, while
// the exit code stays the run's verdict.
func TestWebhookEndpointDeletion(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		answer deletionAnswer
		// deleted is whether the endpoint is gone at exit; else the
		// warning names it and its call, and says warn.
		deleted bool
		warn    string
		deletes int
		// failing runs a suite whose check fails: exit 1 either way.
		failing bool
		// redirect answers the deletion with a redirect to another host,
		// which must see nothing.
		redirect bool
	}
	run := func(t *testing.T, tc testCase) {
		clk := fakeclock.New()
		build := &deletionPlatform{clk: clk, answer: tc.answer}
		buildSrv := registeringPlatform(t, learntSecret, &endpointLog{}, build.ServeHTTP)
		// Other hosts: the runtime host, and one a redirect names.
		var elsewhere sync.Map
		other := func() *httptest.Server {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				elsewhere.Store(r.Host+" "+r.Method+" "+r.URL.Path, true)
				http.NotFound(w, r)
			}))
			t.Cleanup(srv.Close)
			return srv
		}
		runtimeSrv, thief := other(), other()
		if tc.redirect {
			build.answer = func(_ int, w http.ResponseWriter, r *http.Request, _ *fakeclock.Clock) {
				http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}
		}
		suite := greetSuite
		code := exitOK
		if tc.failing {
			suite += "        expect: {response: {contains: goodbye}}\n"
			code = exitFailed
		}
		dir := writeTree(t, map[string]string{"greet.yaml": suite})
		env := map[string]string{"AGENTTEST_BUILD_URL": buildSrv.URL, "AGENTTEST_BUILD_KEY": deletionBuildKey,
			"AGENTTEST_RUNTIME_URL": runtimeSrv.URL, "AGENTTEST_RUNTIME_KEY": deletionRuntimeKey, "AGENTTEST_ACCOUNT_ID": "acc"}
		c := newCLI(t, dir, env, "run", "--webhook-listen", "127.0.0.1:0", "greet.yaml")
		c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		out := c.expect(t, code)
		warning := ""
		for line := range strings.SplitSeq(c.stderr.String(), "\n") {
			if strings.Contains(line, "could not delete") {
				warning += line
			}
		}
		switch {
		case tc.deleted && warning != "":
			t.Errorf("the endpoint was deleted, and a warning says otherwise:\n%s", out)
		case !tc.deleted && !strings.Contains(warning, "agenttest: could not delete webhook endpoint whe_1: DELETE /v1/webhook-endpoints/whe_1") || !strings.Contains(warning, tc.warn):
			t.Errorf("the warning does not name the endpoint and %q:\n%s", tc.warn, out)
		}
		build.mu.Lock()
		defer build.mu.Unlock()
		if build.deletes != tc.deletes {
			t.Errorf("%d deletions, want %d\n%s", build.deletes, tc.deletes, out)
		}
		for _, k := range build.keys {
			if k != deletionBuildKey {
				t.Errorf("a deletion was sent with x-api-key %q, want the build key", k)
			}
		}
		elsewhere.Range(func(k, _ any) bool {
			t.Errorf("another host than the build host was sent %s", k)
			return true
		})
	}
	// held moves the clock by d, then answers with then, or holds the
	// request until the client gives it up.
	held := func(d time.Duration, then deletionAnswer) deletionAnswer {
		return func(n int, w http.ResponseWriter, r *http.Request, clk *fakeclock.Clock) {
			clk.Advance(d)
			if then == nil {
				holdUntilCut(w, r)
				return
			}
			then(n, w, r, clk)
		}
	}
	// seq answers the n-th deletion with the n-th answer, the last one
	// after that.
	seq := func(answers ...deletionAnswer) deletionAnswer {
		return func(n int, w http.ResponseWriter, r *http.Request, clk *fakeclock.Clock) {
			answers[min(n, len(answers))-1](n, w, r, clk)
		}
	}
	for _, tc := range []testCase{
		{name: "deleted", answer: seq(status(http.StatusNoContent, "")), deleted: true, deletes: 1},
		{name: "redirected to another host", redirect: true, deletes: 1, warn: "307 redirect to"},
		{name: "answered just within its bound", answer: held(deleteBound-time.Millisecond, status(http.StatusNoContent, "")), deleted: true, deletes: 1},
		{name: "held past its bound", answer: held(deleteBound, nil), deletes: 1,
			warn: "(the deletion's bound of 5s exceeded)"},
		{name: "a failing run stays failed", failing: true, answer: held(deleteBound, nil), deletes: 1,
			warn: "(the deletion's bound of 5s exceeded)"},
		{name: "5xx outlasting the retries", answer: seq(status(http.StatusInternalServerError, "")), deletes: 5,
			warn: ": 500"},
		{name: "5xx then deleted", answer: seq(status(http.StatusBadGateway, ""), status(http.StatusNoContent, "")), deleted: true, deletes: 2},
		// A 503's Retry-After is the deletion's own time, not a rate
		// limit's: past the bound, the deletion gives up.
		{name: "503 asking for more than the bound", answer: seq(status(http.StatusServiceUnavailable, "30"), status(http.StatusNoContent, "")), deletes: 1,
			warn: "(the deletion's bound of 5s exceeded)"},
		// A rate limit is waited out beyond the 5s, and the bound's own
		// time counts from before the wait.
		{name: "429 waited out", answer: seq(status(http.StatusTooManyRequests, "30"), held(deleteBound-time.Second, status(http.StatusNoContent, ""))), deleted: true, deletes: 2},
		{name: "429s past a minute", answer: seq(status(http.StatusTooManyRequests, "40"), status(http.StatusTooManyRequests, "40"), status(http.StatusNoContent, "")), deletes: 2,
			warn: "(1m0s of rate-limit waits exceeded)"},
		{name: "429 asking for more than a minute", answer: seq(status(http.StatusTooManyRequests, "120"), status(http.StatusNoContent, "")), deletes: 1,
			warn: "(1m0s of rate-limit waits exceeded)"},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// TestDeletionWarningMasksTheEndpointID: an endpoint id that holds the
// signing secret issued with it (read before the secret was known, so
// left as it came) is masked in the warning of a failed deletion, as the
// rest of the warning is. Before, the warning named the id as it came,
// secret and all.
func TestDeletionWarningMasksTheEndpointID(t *testing.T) {
	t.Parallel()
	const issued = "whsecLEARNT7d2a9c41e0b3f856"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet:
			fmt.Fprint(w, `{"endpoints":[]}`)
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost:
			fmt.Fprintf(w, `{"id":"whe_%s","url":"http://127.0.0.1/","events":["conversation.completed"],"signing_secret":%q}`, issued, issued)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusInternalServerError)
		default:
			(&deletionPlatform{}).ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := writeTree(t, map[string]string{"greet.yaml": greetSuite})
	c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}, "run", "--webhook-listen", "127.0.0.1:0", "greet.yaml")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	out := c.expect(t, exitOK, "agenttest: could not delete webhook endpoint whe_[REDACTED]: DELETE /v1/webhook-endpoints/whe_[REDACTED]: 500")
	if strings.Contains(out, "LEARNT") {
		t.Errorf("the output shows the signing secret:\n%s", out)
	}
}

// TestWebhookRegistrationBoundOnTheRunsClock: each call of the
// registration of the run's endpoint is bounded by the turn timeout on
// the run's clock, as the deletion is: a platform that takes the
// registration and holds it past the bound has it cut at once, and the
// run says it could not register and goes on (its scenario passes).
func TestWebhookRegistrationBoundOnTheRunsClock(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet:
			fmt.Fprint(w, `{"endpoints":[]}`)
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost:
			// Read whole, so that the server sees the client go.
			io.Copy(io.Discard, r.Body)
			clk.Advance(30 * time.Second)
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
				// Not cut on the run's clock: registered, well after.
				fmt.Fprintf(w, `{"id":"whe_1","url":"http://127.0.0.1/","events":["conversation.completed"],"signing_secret":%q}`, learntSecret)
			}
		default:
			(&deletionPlatform{answer: status(http.StatusNoContent, "")}).ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := writeTree(t, map[string]string{"greet.yaml": greetSuite})
	c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey},
		"run", "--webhook-listen", "127.0.0.1:0", "--turn-timeout", "30s", "greet.yaml")
	c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	c.expect(t, exitOK, "agenttest: the run's webhook endpoint could not be registered: ", "(turn timeout of 30s exceeded)")
}
