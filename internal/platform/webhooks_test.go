package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
)

// TestWebhookAnswers reads webhook endpoints in the forms the reference
// leaves open, and refuses the answers that name no usable endpoint with
// the endpoint and status. The registration answer carries the signing
// secret, so no error about it keeps the body (the secret may be there
// under a name the client does not know), and no error shows a URL's
// credentials.
func TestWebhookAnswers(t *testing.T) {
	t.Parallel()
	const hook = "https://user:PLANTED-pass@hooks.example.com/in"
	type testCase struct {
		name   string
		status int // 200 unless set
		body   string
		// call is get or update (of whe_1), register or list.
		call string
		// check reads a good answer; want is the error otherwise.
		check func(ep []WebhookEndpoint) bool
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		status := tc.status
		if status == 0 {
			status = http.StatusOK
		}
		c := serveFixed(t, &fixed{status: status, body: tc.body})
		ctx := context.Background()
		var got []WebhookEndpoint
		var err error
		switch tc.call {
		case "get":
			var ep *WebhookEndpoint
			if ep, err = c.GetWebhook(ctx, "whe_1"); err == nil {
				got = []WebhookEndpoint{*ep}
			}
		case "update":
			var ep *WebhookEndpoint
			if ep, err = c.UpdateWebhook(ctx, "whe_1", WebhookUpdate{}); err == nil {
				got = []WebhookEndpoint{*ep}
			}
		case "register":
			var ep *WebhookEndpoint
			if ep, err = c.RegisterWebhook(ctx, WebhookRegistration{URL: hook, Events: []string{"conversation.completed"}}); err == nil {
				got = []WebhookEndpoint{*ep}
			}
		case "list":
			got, err = c.ListWebhooks(ctx)
		}
		if tc.check != nil {
			if err != nil || !tc.check(got) {
				t.Errorf("read %+v, %v", got, err)
			}
			return
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("err = %v\nwant %s", err, tc.want)
		}
		var re *ResponseError
		if errors.As(err, &re) && strings.Contains(string(re.Body), "PLANTED") || strings.Contains(fmt.Sprint(err), "PLANTED") {
			t.Errorf("the error keeps a secret: %v, body %q", err, re.Body)
		}
	}
	const pattern = " does not match ^whe_[A-Za-z0-9]+$"
	for _, tc := range []testCase{
		{name: "enabled unless said", call: "get", body: `{"id":"whe_1"}`, check: func(ep []WebhookEndpoint) bool { return ep[0].Enabled }},
		{name: "event_types over events", call: "get", body: `{"id":"whe_1","event_types":["a"],"events":["b"]}`,
			check: func(ep []WebhookEndpoint) bool { return reflect.DeepEqual(ep[0].Events, []string{"a"}) }},
		{name: "headers of text", call: "get", body: `{"id":"whe_1","headers":{"X-A":"1","X-B":2}}`,
			check: func(ep []WebhookEndpoint) bool {
				return reflect.DeepEqual(ep[0].Headers, map[string]string{"X-A": "1"})
			}},
		{name: "no id", call: "get", body: `{"url":"https://hooks.example.com/in"}`,
			want: `GET /v1/webhook-endpoints/whe_1: 200: malformed response: missing required field "id"`},
		{name: "id out of the pattern", call: "get", body: `{"id":"whe-1"}`,
			want: `GET /v1/webhook-endpoints/whe_1: 200: malformed response: endpoint id "whe-1"` + pattern},
		{name: "another endpoint", call: "get", body: `{"id":"whe_2"}`,
			want: `GET /v1/webhook-endpoints/whe_1: 200: malformed response: id is "whe_2", and the call was about endpoint "whe_1"`},
		{name: "another endpoint updated", call: "update", body: `{"id":"whe_2","enabled":true}`,
			want: `PATCH /v1/webhook-endpoints/whe_1: 200: malformed response: id is "whe_2", and the call was about endpoint "whe_1"`},
		{name: "updated", call: "update", body: `{"endpoint":{"id":"whe_1","enabled":false}}`, check: func(ep []WebhookEndpoint) bool { return !ep[0].Enabled }},
		{name: "registered", call: "register", status: http.StatusCreated, body: `{"id":"whe_1","signing_secret":"whsec_1"}`,
			check: func(ep []WebhookEndpoint) bool { return ep[0].ID == "whe_1" && ep[0].SigningSecret == "whsec_1" }},
		{name: "registered with a secret", call: "register", body: `{"id":"whe_1","secret":"whsec_1"}`,
			check: func(ep []WebhookEndpoint) bool { return ep[0].SigningSecret == "whsec_1" }},
		{name: "registered without the secret", call: "register", body: `{"id":"whe_1","hmac":"whsec_PLANTED"}`,
			want: `register webhook https://user:xxxxx@hooks.example.com/in: POST /v1/webhooks/endpoints: 200: malformed response: missing required field "signing_secret"`},
		{name: "registered without an id", call: "register", body: `{"signing_secret":"whsec_PLANTED"}`,
			want: `register webhook https://user:xxxxx@hooks.example.com/in: POST /v1/webhooks/endpoints: 200: malformed response: missing required field "id"`},
		{name: "registered with an id out of the pattern", call: "register", body: `{"id":"whe 1","signing_secret":"whsec_PLANTED"}`,
			want: `register webhook https://user:xxxxx@hooks.example.com/in: POST /v1/webhooks/endpoints: 200: malformed response: endpoint id "whe 1"` + pattern},
		{name: "registration refused", call: "register", status: http.StatusBadRequest, body: `{"error":"https only"}`,
			want: `register webhook https://user:xxxxx@hooks.example.com/in: POST /v1/webhooks/endpoints: 400: https only`},
		{name: "list", call: "list", body: `{"endpoints":[{"id":"whe_1"},{"id":"whe_2"}]}`, check: func(ep []WebhookEndpoint) bool { return len(ep) == 2 }},
		{name: "list with an id out of the pattern", call: "list", body: `[{"id":"whe_1"},{"id":"whe-2","signing_secret":"whsec_PLANTED"}]`,
			want: `GET /v1/webhooks/endpoints: 200: malformed response: endpoint 2 of 2: endpoint id "whe-2"` + pattern},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRefusedRegistrationShowsNoSecret: a platform that refuses a
// registration with the endpoint's signing secret in the body (it
// registered the endpoint and failed after, or echoes the record) has
// the secret learnt before the error quotes the body: masked in the
// error, in its kept body and, through the command's redactor, in every
// output from then on. A secret too short to mask leaves the error with
// the status alone. Before, the error quoted the body, secret and all.
func TestRefusedRegistrationShowsNoSecret(t *testing.T) {
	t.Parallel()
	const planted = "whsec_PLANTED0123456789"
	for _, tc := range []struct {
		name, body, gone string
		// keep is what of the body the error still shows: a secret
		// learnt is masked, not the body withheld.
		keep   string
		status int
		// noBase: the client has no redactor of the command's, and
		// learns into its own.
		noBase bool
	}{
		{name: "the record echoed", body: `{"id":"whe_1","signing_secret":"` + planted + `"}`, gone: planted, keep: "whe_1", status: http.StatusConflict},
		{name: "nested, beside a message", body: `{"error":"endpoint limit reached","data":{"endpoint":{"secret":"` + planted + `"}}}`, gone: planted, keep: "endpoint limit reached", status: http.StatusBadRequest},
		{name: "escaped", body: `{"signingSecret":"whsec_PLANTED\u00300123456789"}`, gone: `PLANTED\u0030`, status: http.StatusConflict},
		{name: "an escape JSON has not", body: `{"signing_secret":"whsec_PLANTED\q0123456789"}`, gone: `PLANTED\q`, status: http.StatusConflict},
		{name: "name escaped", body: `{"error":"endpoint limit reached","endpoint":{"\u0073igning_secret":"` + planted + `"}}`, gone: planted, keep: "endpoint limit reached", status: http.StatusConflict},
		{name: "name escaped, value split in escapes", body: `{"error":"x","data":[{"s\u0065cret" : "whsec_PLANTED\u0030123\u00345678\u0039"}]}`, gone: "whsec_PLANTED", status: http.StatusConflict},
		{name: "named twice", body: `{"error":"x","signing_secret":"` + planted + `","signing_secret":"whsec_OTHER0123456789"}`, gone: planted, keep: "409: x", status: http.StatusConflict},
		{name: "too short to mask", body: `{"signing_secret":"whsec_sh0rt"}`, gone: "sh0rt", status: http.StatusConflict},
		{name: "no redactor given", body: `{"id":"whe_1","signing_secret":"` + planted + `"}`, gone: planted, keep: "whe_1", status: http.StatusConflict, noBase: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&fixed{status: tc.status, body: tc.body})
			t.Cleanup(srv.Close)
			base, err := secret.New()
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{BuildURL: srv.URL, AccountID: "ws-abcd1234", BuildKey: "bk-secret-build", Redactor: base}
			if tc.noBase {
				cfg.Redactor = nil
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.RegisterWebhook(context.Background(), WebhookRegistration{URL: "https://hooks.example.com/in", Events: []string{"conversation.completed"}})
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tc.status {
				t.Fatalf("err = %v, want the platform's %d", err, tc.status)
			}
			if strings.Contains(err.Error(), tc.gone) || strings.Contains(string(ae.Body), tc.gone) {
				t.Errorf("the error shows the secret: %v, body %q", err, ae.Body)
			}
			if !strings.Contains(err.Error(), tc.keep) {
				t.Errorf("the error withholds the body: %v, want it to say %q", err, tc.keep)
			}
			if tc.gone == planted && !tc.noBase && base.String("later: "+planted) != "later: "+secret.Mask {
				t.Errorf("the command's redactor did not learn the secret: %q", base.String(planted))
			}
		})
	}
}
