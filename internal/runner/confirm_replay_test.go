package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/webhook"
)

// boundPassed is a receiver whose waits find their bound passed at once,
// after an optional delivery that arrives while the attempt runs: what
// the receiver holds by then decides, and no test waits out a bound.
type boundPassed struct {
	*webhook.Receiver
	during func() // delivers, once the attempt began; nil for none
}

func (b boundPassed) WaitAfter(ctx context.Context, conv, typ string, after webhook.Mark) (webhook.Event, error) {
	if b.during != nil {
		b.during()
	}
	ctx, cancel := context.WithDeadline(ctx, time.Time{})
	defer cancel()
	return b.Receiver.WaitAfter(ctx, conv, typ, after)
}

// servedReceiver is a webhook receiver of secret behind a test server.
func servedReceiver(t *testing.T, secret string) (*webhook.Receiver, *httptest.Server) {
	rcv := webhook.NewReceiver(webhook.Options{Secret: secret})
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	return rcv, hs
}

// deliver posts body to the receiver behind hs, signed with secret, and
// returns the answer's status. It may run on the runner's goroutine, so
// it reports with Error, not Fatal.
func deliver(t *testing.T, hs *httptest.Server, rcv *webhook.Receiver, body, secret string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
	req.Header.Set(rcv.SignatureHeader(), webhook.Sign(secret, []byte(body)))
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// completes is a suite of one scenario on conversation conv that
// confirms conversation.completed.
func completes(conv string) string {
	return `suite: s
agent: clinic
scenarios:
  - name: completes
    start: {conversation_id: ` + conv + `}
    turns:
      - say: I have chest pain
    confirm: {webhooks: [conversation.completed]}
`
}

// TestWebhookOfAnEarlierConversation: a verified event that arrived
// before the attempt began (a late retry or a replay of an earlier run's
// conversation with the same id, as a scenario that sets conversation_id
// meets every night) does not confirm the attempt's conversation; an
// event that arrives during the attempt does.
func TestWebhookOfAnEarlierConversation(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	const secret = "whsec_replay_test_0123456789"
	rcv, hs := servedReceiver(t, secret)
	post := func(body string) {
		t.Helper()
		if code := deliver(t, hs, rcv, body, secret); code != http.StatusNoContent {
			t.Errorf("delivery answered %d", code)
		}
	}
	type testCase struct {
		conv   string
		during bool
		status result.Status
		want   string
	}
	run := func(t *testing.T, tc testCase) {
		earlier := `{"id":"evt_` + tc.conv + `","type":"conversation.completed","data":{"conversation_id":"` + tc.conv + `","environment":"sandbox"}}`
		post(earlier)
		w := boundPassed{Receiver: rcv}
		if tc.during {
			w.during = func() {
				post(`{"id":"evt_` + tc.conv + `_2","type":"conversation.completed","data":{"conversation_id":"` + tc.conv + `","environment":"sandbox"}}`)
			}
		}
		o := e.opts()
		o.Webhooks = w
		c := runOne(t, o, completes(tc.conv))
		if c.Status != tc.status {
			t.Fatalf("status %s, want %s", c.Status, tc.status)
		}
		if tc.want != "" {
			if a := c.Last(); !strings.Contains(said(a), tc.want) {
				t.Errorf("error %+v, failures %+v, want one saying %q", a.Error, a.Failures, tc.want)
			}
		}
	}
	// The agent ended the chat (its record says so), and the attempt's
	// event never came: the platform's, not the agent's.
	t.Run("only the earlier conversation's event", func(t *testing.T) {
		run(t, testCase{conv: "conv-fixed-1", status: result.Errored,
			want: `not the agent's; 1 verified event arrived before this attempt began and did not count`})
	})
	t.Run("an event during the attempt", func(t *testing.T) {
		run(t, testCase{conv: "conv-fixed-2", during: true, status: result.Passed})
	})
}

// TestWebhookRejectedDeliveryErrors: when the event of the attempt's
// conversation came only as deliveries the receiver rejected (signed with
// another secret, a body that is no event), the platform (or the webhook
// secret) is at fault: the case errors naming the rejection, and is not
// failed as if the agent had not done what the event confirms. With no
// delivery at all, or only rejected deliveries that name no conversation
// (junk) or came before the attempt began, the record decides
// (TestWebhookMissingWhoseFault): here the agent ended the chat, so the
// event was the platform's to deliver, and the case errors too.
func TestWebhookRejectedDeliveryErrors(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	const secret = "whsec_rejected_test_0123456789"
	rcv, hs := servedReceiver(t, secret)
	for _, tc := range []struct {
		name, conv string
		during     func(conv string)
		status     result.Status
		want       string
	}{
		{"signed with another secret", "conv-rejected-1", func(conv string) {
			deliver(t, hs, rcv, `{"type":"conversation.completed","data":{"conversation_id":"`+conv+`","environment":"sandbox"}}`, "whsec_not_the_registered_one_0123")
		}, result.Errored, "1 delivery rejected: signature mismatch"},
		{"no delivery", "conv-rejected-2", nil, result.Errored, `no verified "conversation.completed" event for conversation conv-rejected-2 arrived within 3s, while the conversation ended`},
		// Junk posted to a public receiver names no conversation: it
		// says nothing of this one, and the agent is judged.
		{"junk naming no conversation", "conv-rejected-3", func(string) {
			deliver(t, hs, rcv, `not an event`, "whsec_not_the_registered_one_0123")
		}, result.Errored, `not the agent's: 1 delivery rejected`},
		// A signed body whose conversation id is this conversation's,
		// as a JSON number: the platform sent the event, malformed.
		{"signed, the conversation id a number", "4242", func(conv string) {
			deliver(t, hs, rcv, `{"type":"conversation.completed","data":{"conversation_id":`+conv+`,"environment":"sandbox"}}`, secret)
		}, result.Errored, "1 delivery rejected: signed body is not an event: data.conversation_id is a number, want a string"},
		// A rejected delivery of an earlier conversation with the same id
		// came before this attempt began: not this conversation's.
		{"rejected before the attempt", "conv-rejected-4", nil, result.Errored, `no verified "conversation.completed" event for conversation conv-rejected-4 arrived within 3s, while the conversation ended`},
		// A rejected body that names the event but no conversation, or
		// the conversation but no event, does not say the platform sent
		// this event of this conversation.
		{"the event of no conversation rejected", "conv-rejected-5", func(string) {
			deliver(t, hs, rcv, `{"type":"conversation.completed","data":{"environment":"sandbox"}}`, "whsec_not_the_registered_one_0123")
		}, result.Errored, `not the agent's: 1 delivery rejected`},
		{"the conversation with no event rejected", "conv-rejected-6", func(conv string) {
			deliver(t, hs, rcv, `{"data":{"conversation_id":"`+conv+`","environment":"sandbox"}}`, "whsec_not_the_registered_one_0123")
		}, result.Errored, `not the agent's: 1 delivery rejected`},
	} {
		if tc.name == "rejected before the attempt" {
			deliver(t, hs, rcv, `{"type":"conversation.completed","data":{"conversation_id":"`+tc.conv+`","environment":"sandbox"}}`, "whsec_not_the_registered_one_0123")
		}
		t.Run(tc.name, func(t *testing.T) {
			w := boundPassed{Receiver: rcv}
			if tc.during != nil {
				w.during = func() { tc.during(tc.conv) }
			}
			o := e.opts()
			o.Webhooks = w
			c := runOne(t, o, completes(tc.conv))
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s", c.Status, tc.status)
			}
			a := c.Last()
			if !strings.Contains(said(a), tc.want) {
				t.Errorf("error %+v, failures %+v, want one saying %q", a.Error, a.Failures, tc.want)
			}
		})
	}
}

// TestWebhookOfAnotherEnvironment: the platform sends every environment's
// events to every endpoint (reference: filter on data.environment), so an
// event of the attempt's conversation id that says another environment
// than the case's is of another conversation with that id (a scenario
// that sets conversation_id, run against live while it runs against
// sandbox): it does not confirm the attempt, and the failure says why.
// One that names the case's environment, or none, does, in any letter
// case or separator (an enum's PRE_RELEASE).
func TestWebhookOfAnotherEnvironment(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	const secret = "whsec_environment_test_0123456789"
	rcv, hs := servedReceiver(t, secret)
	for i, tc := range []struct {
		data   string
		env    string // the suite's; "" is sandbox
		status result.Status
		want   string
	}{
		// The agent ended the chat, and no event of its environment
		// came: the platform's (TestWebhookMissingWhoseFault).
		{`"environment":"live"`, "", result.Errored, `1 verified event of another environment than sandbox did not count`},
		{`"environment":"sandbox"`, "", result.Passed, ""},
		{`"environment":"Sandbox"`, "", result.Passed, ""},
		{``, "", result.Passed, ""},
		{`"environment":"PRE_RELEASE"`, "pre-release", result.Passed, ""},
		{`"environment":"PRE_RELEASE"`, "", result.Errored, `1 verified event of another environment than sandbox did not count`},
	} {
		conv := fmt.Sprintf("conv-env-%d", i)
		t.Run(conv, func(t *testing.T) {
			data := `"conversation_id":"` + conv + `"`
			if tc.data != "" {
				data += "," + tc.data
			}
			w := boundPassed{Receiver: rcv, during: func() {
				if code := deliver(t, hs, rcv, `{"type":"conversation.completed","data":{`+data+`}}`, secret); code != http.StatusNoContent {
					t.Errorf("delivery answered %d", code)
				}
			}}
			o := e.opts()
			o.Webhooks = w
			src := completes(conv)
			if tc.env != "" {
				src = strings.Replace(src, "agent: clinic\n", "agent: clinic\nenv: "+tc.env+"\n", 1)
			}
			c := runOne(t, o, src)
			if c.Status != tc.status {
				t.Fatalf("status %s, want %s%s", c.Status, tc.status, describe(c))
			}
			if a := c.Last(); tc.want != "" && !strings.Contains(said(a), tc.want) {
				t.Errorf("error %+v, failures %+v, want one saying %q", a.Error, a.Failures, tc.want)
			}
			// The line of a verified event says whose and where.
			if a := c.Last(); tc.status == result.Passed {
				want := "verified, conversation " + conv
				if env := strings.TrimPrefix(tc.data, `"environment":`); env != "" {
					want += ", environment " + strings.Trim(env, `"`)
				}
				if last := a.Confirmations[len(a.Confirmations)-1]; last.Kind != result.ConfirmWebhook || !last.Found || last.Summary != want {
					t.Errorf("webhook line %+v, want found: %q", last, want)
				}
			}
		})
	}
}

// said is what ended attempt a: its error's message, or its one
// failure's ("" for more or none).
func said(a *result.Attempt) string {
	if a.Error != nil {
		return a.Error.Message
	}
	if len(a.Failures) == 1 {
		return a.Failures[0].Message
	}
	return ""
}
