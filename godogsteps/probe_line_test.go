package godogsteps

// An internal test: it tells the runtime when a probe waits for its
// number's line, through the steps' runner options.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cucumber/godog"
)

// smsRuntime is a runtime host that never names the conversation of an
// SMS (202, no body): each send opens conv-TEXT with the number it went
// to and the state key tag TEXT, listed at once among project p1's
// conversations. It holds the first send unanswered until a second one
// comes, or a probe waits for its line: without a line shared by the
// scenarios, their probes' searches overlap whatever godog's scheduler
// does. Every answer goes over real HTTP.
type smsRuntime struct {
	mu    sync.Mutex
	convs []string // records, in send order
	sends int
	// release opens the first send.
	release chan struct{}
	once    sync.Once
}

func (h *smsRuntime) open() { h.once.Do(func() { close(h.release) }) }

func (h *smsRuntime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	const convs = "/v3/ws-abcd1234/p1/conversations"
	switch p := r.URL.Path; {
	case r.Method == http.MethodPost && p == "/v1/outbound-sms":
		var body struct {
			To      string `json:"to_number"`
			Message string `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.sends++
		first := h.sends == 1
		h.mu.Unlock()
		if first {
			select {
			case <-h.release:
			case <-r.Context().Done():
				return
			}
		} else {
			h.open()
		}
		h.mu.Lock()
		h.convs = append(h.convs, fmt.Sprintf(`{"id":"conv-%s","account_id":"ws-abcd1234","project_id":"p1","environment":"sandbox",`+
			`"started_at":%q,"channel":"SMS","to_number":%q,"in_progress":true,"num_turns":1,"state":{"tag":%q}}`,
			body.Message, time.Now().UTC().Format(time.RFC3339Nano), body.To, body.Message))
		h.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodGet && p == convs:
		h.mu.Lock()
		defer h.mu.Unlock()
		fmt.Fprintf(w, `{"conversations":[%s],"cursor":null}`, strings.Join(h.convs, ","))
	case r.Method == http.MethodGet && strings.HasPrefix(p, convs+"/"):
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.convs {
			if strings.Contains(c, fmt.Sprintf(`"id":%q`, strings.TrimPrefix(p, convs+"/"))) {
				fmt.Fprint(w, c)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error_message":"no such conversation"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error_message":"no such path"}`)
	}
}

// TestConcurrentScenariosProbeOneNumber: two godog scenarios running
// side by side (godog's Concurrency) that text one number, whose
// conversations the platform does not name, searched for them side by
// side: each saw both conversations, and both failed on two equal matches
// (or one took the other's, had its own been listed later). The steps'
// scenarios share one probe line, as the cases of one agenttest run do:
// the second probe waits for the first to find its conversation, and
// each scenario checks its own.
func TestConcurrentScenariosProbeOneNumber(t *testing.T) {
	t.Parallel()
	h := &smsRuntime{release: make(chan struct{})}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	feature := func(tag string) []byte {
		return fmt.Appendf(nil, `@agent:p1
Feature: probe %[1]s
  Scenario: SMS %[1]s
    When the SMS "%[1]s" is sent to "+447700900002"
    Then the conversation record shows:
      | state.tag | %[1]s |
`, tag)
	}
	features := fstest.MapFS{
		"a.feature": {Data: feature("A")},
		"b.feature": {Data: feature("B")},
	}
	steps, err := New(Options{
		BuildURL: srv.URL, BuildKey: "bk-secret-build",
		RuntimeURL: srv.URL, AccountID: "ws-abcd1234", RuntimeKey: "rk-secret-runtime",
		TurnTimeout: 5 * time.Second, ConfirmTimeout: 5 * time.Second,
		ProbeNumbers: []string{"+447700900002"},
		SMSConnector: func(string, string) string { return "conn-1" },
		Features:     features,
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := 0
	if !steps.opts.OnProbeWait(func(string) {
		mu.Lock()
		waits++
		mu.Unlock()
		h.open()
	}) {
		t.Error("the steps' sessions share no probe lines")
	}
	errs := map[string]error{}
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
				mu.Lock()
				errs[p.Name] = err
				mu.Unlock()
				return ctx, nil
			})
		},
		Options: &godog.Options{Format: "progress", Output: io.Discard, FS: features, Paths: []string{"a.feature", "b.feature"},
			Concurrency: 2, Strict: true, NoColors: true},
	}.Run()
	for _, name := range []string{"SMS A", "SMS B"} {
		if err, ok := errs[name]; !ok || err != nil {
			t.Errorf("scenario %q ended with %v, want it passed on its own conversation (ran: %t)", name, err, ok)
		}
	}
	if status != 0 || waits != 1 {
		t.Errorf("godog status %d, %d probes waited for the line; want 0 and 1", status, waits)
	}
}
