package godogsteps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/cucumber/godog"

	"github.com/agenttest/agenttest/godogsteps"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestExpandHandsNoKey: a team's step that expands its argument gets no
// key of the Options, nor one the environment holds in a key variable
// (AGENTTEST_RUNTIME_KEY, which the Options do not use), whether the
// feature file reads it from the environment (${env:LEAK}, which the
// Options' key is in) or pastes it;
// the step fails with an error that shows neither the key nor where it
// was. Before, Expand returned the key to the team's step, which sends
// it to its own backend, and the error of a text that failed for another
// reason quoted the pasted key.
func TestExpandHandsNoKey(t *testing.T) {
	const key, envKey = "eyJhbGci.PLANTED+key/0123", "rk-live-0123456789abcdef"
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: key})
	features := fstest.MapFS{"crm.feature": {Data: []byte(`@agent:restaurant
Feature: crm
  Scenario: read from the environment
    When the user says "hello"
    Then our CRM is told "${env:LEAK}"

  Scenario: pasted beside a reference
    When the user says "hello"
    Then our CRM is told "` + key + ` ${nothing}"

  Scenario: an ordinary reference
    When the user says "hello"
    Then our CRM is told "${env:OTHER}"

  Scenario: a key of the environment the Options do not hold
    When the user says "hello"
    Then our CRM is told "${env:AGENTTEST_RUNTIME_KEY}"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: s.BuildURL, BuildKey: key, Features: features,
		Getenv: func(name string) (string, bool) {
			switch name {
			case "LEAK":
				return key, true
			case "OTHER":
				return "table for 4", true
			case "AGENTTEST_RUNTIME_KEY":
				return envKey, true
			}
			return "", false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		told []string
	)
	status, errs := godogRun(steps, func(sc *godog.ScenarioContext) {
		sc.Step(`^our CRM is told "([^"]*)"$`, func(ctx context.Context, text string) error {
			out, err := godogsteps.Expand(ctx, text)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			told = append(told, out)
			return nil
		})
	}, features, godog.Options{Strict: true}, "crm.feature")
	if status != 1 || len(told) != 1 || told[0] != "table for 4" {
		t.Errorf("godog status %d, the CRM was told %q: want only the ordinary reference's text", status, told)
	}
	for name, want := range map[string]string{
		"read from the environment":                        `godogsteps: expand "${env:LEAK}": holds a key or secret of the target`,
		"pasted beside a reference":                        `godogsteps: expand "` + secret.Mask,
		"a key of the environment the Options do not hold": `godogsteps: expand "${env:AGENTTEST_RUNTIME_KEY}": holds a key or secret of the target`,
	} {
		if got := errs[name]; !strings.Contains(got, want) {
			t.Errorf("scenario %q failed with %q, want %q", name, got, want)
		}
	}
	for name, got := range errs {
		for _, form := range append(secret.Forms(key), secret.Forms(envKey)...) {
			if strings.Contains(got, form) {
				t.Errorf("scenario %q: the error shows %q: %s", name, form, got)
			}
		}
	}
}

// TestRegisteredSecretNeverShown: the signing secret RegisterWebhook gets
// from the platform is masked in everything godog prints from then on: a
// reply that echoes it fails a step, in godog's output, the step's error
// and its transcript attachment, as agenttest run masks the secret it
// learns. One too short to be masked is refused and its endpoint
// deleted. Before, the secret went into every formatter's output, and a
// short one was kept.
func TestRegisteredSecretNeverShown(t *testing.T) {
	for _, tc := range []struct {
		name, issued string
		wantErr      string
	}{
		{name: "masked from then on", issued: "whsec_LEARNT-7d2a9c41e0b3f856"},
		{name: "too short to mask", issued: "whsec_1", wantErr: "godogsteps: register webhook: the signing secret the platform issued for the webhook endpoint is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var deleted atomic.Bool
			steps := echoingPlatform(t, tc.issued, tc.issued, &deleted)
			err := steps.RegisterWebhook(context.Background(), "https://hooks.example.com/")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), tc.issued) || !deleted.Load() {
					t.Fatalf("RegisterWebhook: %v (endpoint deleted: %v); want %q, the endpoint deleted and no secret", err, deleted.Load(), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			status, errs, out := godogOutput(steps, echoFeature, "pretty,cucumber", "hook.feature")
			got := errs["an echo"]
			if status != 1 || !strings.Contains(got, "echo "+secret.Mask) || !strings.Contains(out, "embeddings") {
				t.Fatalf("godog status %d, error %q: want the echo failing the step, masked, with its transcript\n%s", status, got, out)
			}
			for _, form := range secret.Forms(tc.issued) {
				if strings.Contains(got, form) || strings.Contains(out, form) {
					t.Errorf("godog shows %q:\n%s\n%s", form, got, out)
				}
			}
		})
	}
}

// TestInterruptionCauseShowsNoKey: an agenttest step whose context a
// team's step or hook ended says why, with the context's cause: the
// team's own text, which may quote a key of the Options (an error of
// theirs that dumps the request it sent). It is masked as every other
// error the steps return. Before, the cause went into godog's output as
// it was.
func TestInterruptionCauseShowsNoKey(t *testing.T) {
	const key = "eyJhbGci.PLANTED+key/0123"
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: key})
	features := fstest.MapFS{"cause.feature": {Data: []byte(`@agent:restaurant
Feature: cause
  Scenario: our CRM gives up
    When the user says "hello"
    And our CRM gives up
    Then the agent's reply contains "a"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: key, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	status, errs := godogRun(steps, func(sc *godog.ScenarioContext) {
		sc.Step(`^our CRM gives up$`, func(ctx context.Context) context.Context {
			ctx, cancel := context.WithCancelCause(ctx)
			cancel(fmt.Errorf("our CRM refused the request with x-api-key: %s", key))
			return ctx
		})
	}, features, godog.Options{Strict: true}, "cause.feature")
	got := errs["our CRM gives up"]
	if status != 1 || !strings.Contains(got, "run interrupted (our CRM refused the request with x-api-key: "+secret.Mask+")") {
		t.Fatalf("godog status %d, error %q: want the step interrupted, with the cause masked", status, got)
	}
	for _, form := range secret.Forms(key) {
		if strings.Contains(got, form) {
			t.Errorf("the error shows %q: %s", form, got)
		}
	}
}

// TestRegisterWebhookShowsNoURLCredential: the URL a team registers may
// carry a credential its receiver or a proxy in front of it checks (a
// ?token=, a password). agenttest run masks it wherever it shows
// (--webhook-url); RegisterWebhook masks it too, in the refusal of a
// platform that echoes what it was sent, and in what the steps print
// after (a reply that quotes it). Before, both showed it.
func TestRegisterWebhookShowsNoURLCredential(t *testing.T) {
	const token = "tok-0123456789abcdef"
	public := "https://hooks.example.com/in?token=" + token
	for _, refuse := range []bool{true, false} {
		t.Run(fmt.Sprintf("refused %v", refuse), func(t *testing.T) {
			issued := "whsec_LEARNT-7d2a9c41e0b3f856"
			if refuse {
				issued = ""
			}
			steps := echoingPlatform(t, issued, public, new(atomic.Bool))
			err := steps.RegisterWebhook(context.Background(), public)
			var shown string
			if refuse {
				if err == nil {
					t.Fatal("RegisterWebhook: no error from a refusal")
				}
				shown = err.Error()
			} else {
				if err != nil {
					t.Fatal(err)
				}
				_, errs := godogRun(steps, nil, echoFeature, godog.Options{Strict: true}, "hook.feature")
				shown = errs["an echo"]
			}
			if !strings.Contains(shown, "hooks.example.com") {
				t.Fatalf("the URL is not in %q: the test tests nothing", shown)
			}
			if strings.Contains(shown, token) {
				t.Errorf("the URL's credential shows: %s", shown)
			}
		})
	}
}

// echoFeature is a scenario whose check fails on whatever the reply says.
var echoFeature = fstest.MapFS{"hook.feature": {Data: []byte(`@agent:clinic
Feature: webhooks
  Scenario: an echo
    When the user says "hello"
    Then the agent says "hello"
`)}}

// echoingPlatform registers every webhook endpoint with the signing
// secret issued, or refuses the registration with a 400 whose body
// quotes echo when issued is "", deletes endpoint whe_1 (deleted says
// it did), and answers every debug-chat turn with a reply that quotes
// echo. It returns the Steps of echoFeature against it, with a receiver.
func echoingPlatform(t *testing.T, issued, echo string, deleted *atomic.Bool, edits ...func(*godogsteps.Options)) *godogsteps.Steps {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet:
			fmt.Fprint(w, `{"endpoints":[]}`)
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost && issued == "":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error_message":"cannot reach %s"}`, echo)
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost:
			var reg struct {
				URL    string   `json:"url"`
				Events []string `json:"events"`
			}
			json.NewDecoder(r.Body).Decode(&reg)
			json.NewEncoder(w).Encode(map[string]any{"id": "whe_1", "url": reg.URL, "events": reg.Events, "signing_secret": issued})
		case r.URL.Path == "/v1/webhook-endpoints/whe_1" && r.Method == http.MethodDelete:
			deleted.Store(true)
			w.WriteHeader(http.StatusNoContent)
		case strings.Contains(r.URL.Path, "/debug-chat"):
			fmt.Fprintf(w, `{"conversationId":"conv-1","userInput":"","response":"echo %s","metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"state":{}},"conversationEnded":false,"delayedResponse":false}`, echo)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	o := godogsteps.Options{BuildURL: srv.URL, BuildKey: "bk_0123456789abcdef", AllowHTTP: true, Features: echoFeature,
		WebhookReceiver: godogsteps.NewWebhookReceiver("")}
	for _, edit := range edits {
		edit(&o)
	}
	steps, err := godogsteps.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// TestUnregisterWebhook: the endpoint RegisterWebhook registered is
// deleted by UnregisterWebhook, as agenttest run deletes its own at exit:
// the platform would otherwise send the events of every environment, for
// as long as it exists, to a URL the job no longer holds. A second call,
// or one with nothing registered, does nothing. Before, a Go team had no
// way to remove it.
func TestUnregisterWebhook(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	hs := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(hs.Close)
	endpoints := func() int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.BuildURL+"/v1/webhooks/endpoints", nil)
		req.Header.Set("x-api-key", s.BuildKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct {
			Endpoints []json.RawMessage `json:"endpoints"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		return len(list.Endpoints)
	}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, WebhookReceiver: godogsteps.NewWebhookReceiver("")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := steps.UnregisterWebhook(ctx); err != nil {
		t.Errorf("with nothing registered: %v", err)
	}
	if err := steps.RegisterWebhook(ctx, hs.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if n := endpoints(); n != 1 {
		t.Fatalf("%d endpoints after RegisterWebhook, want 1", n)
	}
	for range 2 {
		if err := steps.UnregisterWebhook(ctx); err != nil {
			t.Fatal(err)
		}
		if n := endpoints(); n != 0 {
			t.Errorf("%d endpoints after UnregisterWebhook, want none", n)
		}
	}
}
