package godogsteps_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cucumber/godog"

	"github.com/agenttest/agenttest/godogsteps"
	"github.com/agenttest/agenttest/internal/secret"
)

// hostileKey is the build key of the hostile platform's tests, and
// hostileEnvKey a key the environment holds (AGENTTEST_RUNTIME_KEY) that
// the Options do not use: agenttest run masks it whatever its target,
// and the steps as well, though their client never sends it.
const (
	hostileKey    = "bk-live-0123456789abcdefXYZ"
	hostileEnvKey = "rk-live-9876543210fedcbaQRS"
)

// keyForms is key in the forms a platform's text may carry it in: as it
// is, in base64, URL-escaped, as JSON escapes inside the text, in upper
// case.
func keyForms(key string) string {
	var esc strings.Builder
	for _, r := range key {
		fmt.Fprintf(&esc, `\u%04x`, r)
	}
	return strings.Join([]string{key, base64.StdEncoding.EncodeToString([]byte(key)), url.QueryEscape(key), esc.String(), strings.ToUpper(key)}, " | ")
}

// hostilePlatform answers debug chat as a platform that echoes the key it
// was sent: in every reply, in a state value and a state key's name, in a
// node's name, to agent convkey in the conversation's id, and, to the
// user's "fail", in the body of a 400.
func hostilePlatform(t *testing.T, key string) string {
	t.Helper()
	echo := keyForms(key) + " | " + keyForms(hostileEnvKey)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(r.URL.Path, "/debug-chat") {
			http.NotFound(w, r)
			return
		}
		var body struct {
			Message string `json:"message"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Message == "fail" {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error_message": "bad request from " + echo})
			return
		}
		conv := "conv-1"
		if strings.Contains(r.URL.Path, "/agents/convkey/") {
			conv = "conv-" + key
		}
		json.NewEncoder(w).Encode(map[string]any{
			"conversationId": conv, "userInput": body.Message, "response": "echo " + echo,
			"metadata": map[string]any{
				"currentNode": "Node" + key, "nodeTrace": []string{"Node" + key},
				"state": map[string]any{"token": echo, "k" + key: "v"},
			},
			"conversationEnded": false, "delayedResponse": false,
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// hostileFeature holds no key: all the key godog could show comes from
// the platform, through what agenttest's steps hand godog.
var hostileFeature = fstest.MapFS{"hostile.feature": {Data: []byte(`@agent:restaurant
Feature: hostile
  Scenario: the reply echoes the key
    When the user says "hello"
    Then the agent says "nothing like this"

  Scenario: a state value echoes the key
    When the user says "hello"
    Then the state "token" is "x"

  Scenario: the state and the trace are compared
    When the user says "hello"
    Then the state includes:
      | other | 1 |
    And the node trace includes "Booking"

  Scenario: the platform refuses with the key in its body
    When the user says "fail"

  Scenario: a team step quotes the conversation
    When the user says "hello"
    Then our CRM has the conversation

  @agent:convkey
  Scenario: a team step quotes a conversation id that echoes the key
    When the user says "hello"
    Then our CRM has the conversation
`)}}

// TestGodogFormattersShowNoKey: a platform that echoes the key in its
// replies, state, node names, conversation id and error bodies, and a key
// the environment holds, has them masked in what every formatter of
// godog's writes (pretty, progress, cucumber, junit, events), the step
// errors and the transcript attachments included, and in what a team's
// step is handed (ConversationID). This was no gap: the test holds it.
func TestGodogFormattersShowNoKey(t *testing.T) {
	base := hostilePlatform(t, hostileKey)
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: base, BuildKey: hostileKey, AllowHTTP: true, Features: hostileFeature,
		Getenv: func(name string) (string, bool) { return hostileEnvKey, name == "AGENTTEST_RUNTIME_KEY" }})
	if err != nil {
		t.Fatal(err)
	}
	forms := append(secret.Forms(hostileKey), secret.Forms(hostileEnvKey)...)
	for _, format := range []string{"pretty", "progress", "cucumber", "junit", "events"} {
		t.Run(format, func(t *testing.T) {
			var out strings.Builder
			var failed scenarioErrors
			status := godog.TestSuite{
				ScenarioInitializer: func(sc *godog.ScenarioContext) {
					steps.Register(sc)
					sc.Step(`^our CRM has the conversation$`, func(ctx context.Context) error {
						return fmt.Errorf("our CRM has no conversation %s", godogsteps.ConversationID(ctx))
					})
					failed.record(sc)
				},
				Options: &godog.Options{Format: format, Output: &out, FS: hostileFeature, Paths: []string{"hostile.feature"}, Strict: true, NoColors: true},
			}.Run()
			// (godog's events formatter ends with status 0 whatever failed.)
			if status != 1 && format != "events" || len(failed.errs) != 6 {
				t.Fatalf("godog status %d, %d scenarios failed: want 1 and 6\n%s", status, len(failed.errs), out.String())
			}
			texts := map[string]string{"output": out.String()}
			for name, e := range failed.errs {
				texts["the error of "+name] = e
			}
			for name, text := range texts {
				for _, f := range forms {
					if strings.Contains(text, f) {
						t.Errorf("%s shows the key as %q:\n%s", name, f, text)
						break
					}
				}
			}
			if !strings.Contains(out.String(), secret.Mask) {
				t.Errorf("the output shows no masked key: the test tests nothing\n%s", out.String())
			}
		})
	}
}

// TestGodogStepErrorsQuoteNoKey: godog prints a feature file's steps as
// the team wrote them, but the errors agenttest's steps and hooks hand
// godog quote no key written there: a scenario that cannot be compiled
// (a pattern that is no regular expression), one refused for live, a
// step another definition ran (said by the next step, or at the
// scenario's end), each naming the step or the scenario where the key
// was. Before, each quoted the key as written.
func TestGodogStepErrorsQuoteNoKey(t *testing.T) {
	base := hostilePlatform(t, hostileKey)
	features := fstest.MapFS{"quoted.feature": {Data: []byte(`@agent:restaurant
Feature: quoted
  Scenario: a pattern that does not compile
    When the user says "hello"
    Then the agent's reply matches "(` + hostileKey + `"

  @env:live
  Scenario: live ` + hostileKey + `
    When the user says "hello"

  Scenario: a team step runs one of agenttest's
    When the user says "shadowed ` + hostileKey + `"
    Then the agent's reply contains "echo"

  Scenario: a team step runs agenttest's last
    When the user says "hello"
    And the user says "shadowed ` + hostileKey + `"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: base, BuildKey: hostileKey, AllowHTTP: true, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	// The team's step comes first: godog runs the first definition that
	// matches.
	var failed scenarioErrors
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(`^the user says "shadowed .*"$`, func() error { return nil })
			steps.Register(sc)
			failed.record(sc)
		},
		Options: &godog.Options{Format: "progress", Output: io.Discard, FS: features, Paths: []string{"quoted.feature"}, NoColors: true},
	}.Run()
	errs := failed.errs
	if status != 1 || len(errs) != 4 {
		t.Fatalf("godog status %d, errors %q: want 1 and four scenarios failed", status, errs)
	}
	for name, e := range errs {
		if f := keyIn(e, secret.Forms(hostileKey)); f != "" {
			t.Errorf("the error of %q shows the key as %q: %s", name, f, e)
		}
		if !strings.Contains(e, secret.Mask) {
			t.Errorf("the error of %q does not say where the key was: %s", name, e)
		}
	}
}

// keyIn is the first of forms text holds, or "".
func keyIn(text string, forms []string) string {
	for _, f := range forms {
		if strings.Contains(text, f) {
			return f
		}
	}
	return ""
}
