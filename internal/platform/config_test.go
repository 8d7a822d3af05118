package platform

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		cfg     Config
		wantErr []string // every fragment must appear; none means valid
	}
	ok := Config{BuildURL: "https://build.us.example.com", RuntimeURL: "https://runtime.us-1.example.com/base/", AccountID: "ws-a1B2c3D4"}
	with := func(f func(*Config)) Config { c := ok; f(&c); return c }
	run := func(t *testing.T, tc testCase) {
		err := tc.cfg.Validate()
		if len(tc.wantErr) == 0 {
			if err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			return
		}
		if err == nil {
			t.Fatalf("Validate() = nil, want %q", tc.wantErr)
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate() = %q, want it to contain %q", err, w)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "valid", cfg: ok},
		{name: "slug account", cfg: with(func(c *Config) { c.AccountID = "acme-retail_eu" })},
		{name: "no runtime, no account", cfg: Config{BuildURL: "http://127.0.0.1:8080"}},
		{name: "no build URL", cfg: with(func(c *Config) { c.BuildURL = "" }), wantErr: []string{"build URL is required"}},
		{name: "obsolete prefix", cfg: with(func(c *Config) { c.AccountID = "ACCOUNT-a1b2c3d4" }),
			wantErr: []string{`account id "ACCOUNT-a1b2c3d4": the ACCOUNT- prefix is obsolete`, "ws-XXXXXXXX"}},
		{name: "short ws id", cfg: with(func(c *Config) { c.AccountID = "ws-abc" }), wantErr: []string{"ws- followed by 8 letters or digits"}},
		{name: "account with slash", cfg: with(func(c *Config) { c.AccountID = "a/b" }), wantErr: []string{`account id "a/b"`}},
		{name: "bad scheme", cfg: with(func(c *Config) { c.BuildURL = "ftp://x" }), wantErr: []string{"build URL", "scheme must be http or https"}},
		{name: "no host", cfg: with(func(c *Config) { c.RuntimeURL = "https://" }), wantErr: []string{"runtime URL", "must be an absolute URL, with a host"}},
		{name: "no scheme", cfg: with(func(c *Config) { c.BuildURL = "build.example.com" }), wantErr: []string{`build URL "build.example.com": must be an absolute URL, with a host and scheme http or https`}},
		{name: "bad scheme, query not shown", cfg: with(func(c *Config) { c.BuildURL = "ftp://x/?api_key=sk-9f8e7d6c5b4a" }),
			wantErr: []string{`build URL "ftp://x/": scheme must be http or https`}},
		{name: "messaging credentials", cfg: with(func(c *Config) { c.MessagingURL = "https://tok@messaging.example.com" }),
			wantErr: []string{`messaging URL "https://xxxxx@messaging.example.com": credentials in the URL are not allowed; use the connector token setting`}},
		{name: "unparsable", cfg: with(func(c *Config) { c.BuildURL = "http://[::1" }), wantErr: []string{"build URL"}},
		{name: "query", cfg: with(func(c *Config) { c.BuildURL = "https://x/?a=1" }), wantErr: []string{"must not have a query"}},
		// url.Parse's own words ("first path segment in URL cannot
		// contain colon") did not say what to write.
		{name: "host and port without a scheme", cfg: with(func(c *Config) { c.BuildURL = "127.0.0.1:8080" }),
			wantErr: []string{`build URL "127.0.0.1:8080": must be an absolute URL, with a host and scheme http or https (https://HOST)`}},
		{name: "blanks around", cfg: with(func(c *Config) { c.RuntimeURL = " https://runtime.us-1.example.com " }),
			wantErr: []string{`runtime URL " https://runtime.us-1.example.com ": has blanks around it`}},
		// A path where the endpoints' paths begin: the calls would go to
		// /v1/v1/...; a gateway's prefix (/base/ above) is kept.
		{name: "API version in the build URL", cfg: with(func(c *Config) { c.BuildURL = "https://build.us.example.com/v1" }),
			wantErr: []string{`build URL "https://build.us.example.com/v1": /v1 is part of the paths agenttest appends to it`, "write https://build.us.example.com"}},
		{name: "API version in the runtime URL", cfg: with(func(c *Config) { c.RuntimeURL = "https://runtime.us-1.example.com/base/V3/" }),
			wantErr: []string{`runtime URL "https://runtime.us-1.example.com/base/V3/": /V3 is part of`, "write https://runtime.us-1.example.com/base"}},
		{name: "Messaging API path in the messaging URL", cfg: with(func(c *Config) { c.MessagingURL = "https://m.example.com/api" }),
			wantErr: []string{`messaging URL "https://m.example.com/api": /api is part of`}},
		{name: "socket path in the messaging URL", cfg: with(func(c *Config) { c.MessagingURL = "wss://m.example.com/ws/" }),
			wantErr: []string{`messaging URL "wss://m.example.com/ws/": /ws is part of`}},
		{name: "a socket URL keeps its path", cfg: with(func(c *Config) {
			c.MessagingURL = "https://m.example.com/ws-gw"
			c.MessagingSocketURL = "wss://m.example.com/ws"
		})},
		{name: "a gateway's /ws prefix is kept", cfg: with(func(c *Config) { c.MessagingURL = "https://m.example.com/ws/gw" })},
		{name: "a version-like word is no version", cfg: with(func(c *Config) { c.BuildURL = "https://gw.example.com/v/vx/v1beta" })},
		{name: "key in URL", cfg: with(func(c *Config) { c.BuildKey = "sekrit-key"; c.BuildURL = "http://u:sekrit-key@x" }),
			wantErr: []string{"credentials in the URL are not allowed"}},
		{name: "plain http to a remote host", cfg: with(func(c *Config) { c.BuildURL = "http://build.example.com" }),
			wantErr: []string{`build URL: "http://build.example.com" sends the API key in clear text`}},
		{name: "plain http to a remote address", cfg: with(func(c *Config) { c.RuntimeURL = "http://10.1.2.3:8080" }),
			wantErr: []string{"runtime URL", "clear text"}},
		{name: "plain http accepted", cfg: with(func(c *Config) { c.BuildURL = "http://build.example.com"; c.AllowHTTP = true })},
		{name: "plain http to loopback", cfg: with(func(c *Config) { c.BuildURL = "http://[::1]:9000"; c.RuntimeURL = "http://localhost:9001" })},
		{name: "bad brand", cfg: with(func(c *Config) { c.Brand = "Ven dor" }), wantErr: []string{"cannot be part of a header name"}},
		{name: "every problem at once", cfg: Config{AccountID: "ACCOUNT-x", MaxPerHost: -1, Retry: RetryPolicy{MaxAttempts: -2}},
			wantErr: []string{"build URL is required", "ACCOUNT- prefix", "max requests per host", "retry attempts"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	if err := with(func(c *Config) { c.BuildKey = "sekrit-key"; c.BuildURL = "http://u:sekrit-key@x" }).Validate(); strings.Contains(err.Error(), "sekrit") {
		t.Errorf("key in config error: %v", err)
	}
}

func TestNewDefaults(t *testing.T) {
	t.Parallel()
	c, err := New(Config{BuildURL: "https://b.test/", RuntimeURL: "https://r.test/x/"})
	if err != nil {
		t.Fatal(err)
	}
	if c.BuildURL() != "https://b.test" || c.RuntimeURL() != "https://r.test/x" {
		t.Errorf("urls %q %q", c.BuildURL(), c.RuntimeURL())
	}
	tr, ok := c.http.Transport.(*http.Transport)
	if !ok || tr.MaxIdleConnsPerHost < DefaultMaxPerHost {
		t.Errorf("transport keeps %d idle connections per host, want >= %d", tr.MaxIdleConnsPerHost, DefaultMaxPerHost)
	}
	if c.retry.MaxAttempts != DefaultMaxAttempts || c.retry.BaseDelay != DefaultBaseDelay || c.retry.MaxDelay != DefaultMaxDelay {
		t.Errorf("retry defaults %+v", c.retry)
	}
	h := http.Header{}
	c.cfg.RuntimeKey = "rk"
	c.authenticate(h, &call{ep: endpoint{auth: authVendorToken}})
	if h.Get("X-Vendor-Auth-Token") != "rk" {
		t.Errorf("vendor header %v", h)
	}
	if _, err := New(Config{}); err == nil || !strings.HasPrefix(err.Error(), "platform config: ") {
		t.Errorf("New(empty) = %v", err)
	}
	// Runtime calls without a runtime URL or account fail clearly.
	if _, err := c.GetConversation(t.Context(), "p", "c"); err == nil || !strings.Contains(err.Error(), "account id is not configured") {
		t.Errorf("err = %v", err)
	}
	noRuntime, _ := New(Config{BuildURL: "https://b.test", AccountID: "acme"})
	if _, err := noRuntime.GetConversation(t.Context(), "p", "c"); err == nil || !strings.Contains(err.Error(), "runtime URL is not configured") {
		t.Errorf("err = %v", err)
	}
}

func TestBuildPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":      "/v1/agents/plain/debug-chat",
		"a/b?c#d":    "/v1/agents/a%2Fb%3Fc%23d/debug-chat",
		"..":         "/v1/agents/%2E%2E/debug-chat",
		"with space": "/v1/agents/with%20space/debug-chat",
	} {
		if got := buildPath("v1", "agents", in, "debug-chat"); got != want {
			t.Errorf("buildPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArgumentChecks: a call that cannot name its subject fails before
// the network (the client points at a closed port), saying what is
// missing, rather than reaching a path with an empty segment.
func TestArgumentChecks(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{MaxAttempts: 1})
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"bad env", func() error { _, err := c.StartChat(t.Context(), "a", ChatStart{ClientEnv: "prod"}); return err },
			`start debug chat: client env "prod": must be sandbox, pre-release or live`},
		{"no agent", func() error { _, err := c.SendTurn(t.Context(), "", "c", ChatTurn{ClientEnv: "live"}); return err },
			"send debug-chat turn: agent id is empty"},
		{"no conversation", func() error { _, err := c.SendTurn(t.Context(), "a", "", ChatTurn{ClientEnv: "live"}); return err },
			"send debug-chat turn: conversation id is empty"},
		{"no handoff ids", func() error { _, err := c.HandoffState(t.Context(), "p", "", ""); return err },
			"get handoff state: a conversation id or a shared id is required"},
		{"no conversation to read", func() error { _, err := c.GetConversation(t.Context(), "p", ""); return err },
			"get conversation: conversation id is empty"},
		{"no conversation to hear", func() error { _, _, err := c.ConversationAudio(t.Context(), "p", ""); return err },
			"get conversation audio: conversation id is empty"},
		{"no metric", func() error {
			_, err := c.CreateAlertRule(t.Context(), AlertRuleRequest{ThresholdValue: 1})
			return err
		},
			"create alert rule: metric is empty"},
		{"no rule to read", func() error { _, err := c.GetAlertRule(t.Context(), ""); return err }, "get alert rule: id is empty"},
		{"no rule to update", func() error { _, err := c.UpdateAlertRule(t.Context(), "", AlertRuleUpdate{}); return err },
			"update alert rule: id is empty"},
		{"no rule to delete", func() error { return c.DeleteAlertRule(t.Context(), "") }, "delete alert rule: id is empty"},
		{"no call", func() error { _, err := c.CallStatus(t.Context(), ""); return err }, "get call status: call sid is empty"},
		{"no SMS", func() error { _, err := c.SendSMS(t.Context(), SMSRequest{Message: " "}); return err },
			"send SMS: the recipient number is empty; the message is empty; the connector id (" + brand.TokenIDHeader + ") is empty"},
		{"SMS of spaces", func() error {
			_, err := c.SendSMS(t.Context(), SMSRequest{To: "+15550001", Message: " \n", ConnectorID: "tok"})
			return err
		}, "send SMS: the message is empty"},
		{"no agent to deploy", func() error { _, err := c.ActiveDeployment(t.Context(), "", "live"); return err },
			"get active deployment: agent id is empty"},
		{"no webhook url", func() error {
			_, err := c.RegisterWebhook(t.Context(), WebhookRegistration{Events: []string{"x"}})
			return err
		},
			"register webhook: url is empty"},
		{"no webhook events", func() error {
			_, err := c.RegisterWebhook(t.Context(), WebhookRegistration{URL: "https://example.com/hook"})
			return err
		}, "register webhook: no events given"},
		{"webhook id of a path", func() error { _, err := c.GetWebhook(t.Context(), "whe_1/x"); return err },
			`get webhook: endpoint id "whe_1/x" does not match ^whe_[A-Za-z0-9]+$`},
		{"webhook id with an underscore", func() error {
			_, err := c.UpdateWebhook(t.Context(), "whe_a_b", WebhookUpdate{})
			return err
		}, `update webhook: endpoint id "whe_a_b" does not match ^whe_[A-Za-z0-9]+$`},
		{"webhook id with a suffix", func() error { return c.DeleteWebhook(t.Context(), "whe_1?x") },
			`delete webhook: endpoint id "whe_1?x" does not match ^whe_[A-Za-z0-9]+$`},
	} {
		if err := tc.call(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestListQueryValues(t *testing.T) {
	yes := true
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	q := ListQuery{QueryType: "transcript", Query: "refund please", TurnType: "user", Channels: []string{"VOICE-SIP", "WEBCHAT"},
		ClientEnv: "pre-release", StartTime: start, EndTime: start.Add(24 * time.Hour), Limit: 50, Offset: 10, Cursor: "abc",
		VariantName: "Summer menu", InProgress: &yes, IncludeLatency: true, IncludeTurnMetadata: true,
		Extra: map[string][]string{"include_context_state": {"true"}}}
	if err := q.validate(false); err != nil {
		t.Fatal(err)
	}
	want := "channel=VOICE-SIP&channel=WEBCHAT&client_env=pre-release&cursor=abc&end_time=2026-03-02T00%3A00%3A00Z&in_progress=true" +
		"&include_context_state=true&include_latency=true&include_turn_metadata=true&limit=50&offset=10&query=refund+please" +
		"&query_type=transcript&start_time=2026-03-01T00%3A00%3A00Z&turn_type=user&variant_name=Summer+menu"
	if got := q.values().Encode(); got != want {
		t.Errorf("query\n%s\nwant\n%s", got, want)
	}
	if got := (ListQuery{}).values().Encode(); got != "" {
		t.Errorf("empty query sends %q", got)
	}
	for _, tc := range []struct {
		q    ListQuery
		v1   bool
		want string
	}{
		{ListQuery{Sample: "random"}, false, "need start_time and end_time"},
		{ListQuery{Sample: "all"}, false, `sample "all": must be random`},
		{ListQuery{QueryType: "fuzzy", Query: "x"}, false, `query_type "fuzzy"`},
		{ListQuery{Limit: 1001}, false, "limit 1001: must be 1 to 1000"},
		{ListQuery{Limit: 5000}, true, ""},
		{ListQuery{Offset: -1}, false, "offset -1"},
		{ListQuery{VariantID: "a", VariantName: "b"}, false, "mutually exclusive"},
		{ListQuery{TurnType: "bot"}, false, `turn_type "bot"`},
		{ListQuery{ClientEnv: "prod"}, true, `client_env "prod"`},
		{ListQuery{Cursor: "x"}, true, "the v1 list takes only"},
		{ListQuery{Version: 1}, false, "use ListConversationsV1"},
	} {
		err := tc.q.validate(tc.v1)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("validate(%+v, v1=%v) = %v, want %q", tc.q, tc.v1, err, tc.want)
		}
	}
}

// TestCredentialParam: the parameter names whose values RedactURL masks
// and a redactor learns, whatever their case and - or _, and names that
// only look like them.
func TestCredentialParam(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"token", "Access-Token", "access_token", "refresh_token", "id_token", "hub.verify_token",
		"X-Amz-Security-Token", "secret", "client_secret", "password", "passwd", "mysql_pwd", "api_key", "API-Key", "apikey", "x-api-key",
		"key", "KEY", "hook_key", "sig", "X-Hook-Sig", "signature", "X-Goog-Signature", "X-Amz-Credential", "credentials",
		"AWSAccessKeyId", "private_key", "hook.sig", "auth", "basic-auth", "authorization", "pass", "jwt", "code", "Code", "bearer",
		"hookKey", "webhookSig", "basicAuth", "APIKey", "HMACKey", "userPass", "sig2Key", "authToken"} {
		if !credentialParam(name) {
			t.Errorf("%q is not taken for a credential", name)
		}
	}
	for _, name := range []string{"", "q", "team", "monkey", "keys", "author", "signal", "zipcode", "zip_code", "country-code", "passenger", "state", "sigma",
		"zipCode", "authorName", "keysCount", "passengerCount", "monkeyId", "MONKEY", "SIGMA"} {
		if credentialParam(name) {
			t.Errorf("%q is taken for a credential", name)
		}
	}
}

// RedactURL masks the credentials of a URL's authority whatever they are:
// a password, a user name alone (https://TOKEN@host), or the userinfo of
// a URL that does not parse, where url.URL.Redacted keeps the first two
// and a message quoting the raw text keeps the last.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://build.example.com/v1", "https://build.example.com/v1"},
		{"https://apikey:sk-PLANTED-0123@build.example.com", "https://apikey:xxxxx@build.example.com"},
		{"https://sk-PLANTED-0123@build.example.com/x", "https://xxxxx@build.example.com/x"},
		{"https://apikey:sk-PLANTED-0123@build.example.com:99999", "https://apikey:xxxxx@build.example.com:99999"},
		{"https://apikey:sk-PLANTED-0123@build.example.com/%zz", "https://xxxxx@build.example.com/%zz"},
		{"https://a@b:sk-PLANTED-0123@build.example.com/%zz?q=@", "https://xxxxx@build.example.com/%zz?q=@"},
		{"not a url %zz", "not a url %zz"},
		{"https://build.example.com/%zz?who=me@example.com", "https://build.example.com/%zz?who=me@example.com"},
		// The values of credential parameters, whatever the case and
		// the - or _ of their names, the rest as written.
		{"https://hooks.example.com/in?token=PLANTED-tok", "https://hooks.example.com/in?token=xxxxx"},
		{"https://hooks.example.com/in?team=ops&Access-Token=PLANTED&sig=PLANTED&x=%2F&key=PLANTED#frag",
			"https://hooks.example.com/in?team=ops&Access-Token=xxxxx&sig=xxxxx&x=%2F&key=xxxxx#frag"},
		{"https://hooks.example.com/in?a=1;API_KEY=PLANTED;b", "https://hooks.example.com/in?a=1;API_KEY=xxxxx;b"},
		{"https://hooks.example.com/in?X-Amz-Signature=PLANTED&X-Amz-Credential=PLANTED&code=PLANTED&tok%65n=PLANTED",
			"https://hooks.example.com/in?X-Amz-Signature=xxxxx&X-Amz-Credential=xxxxx&code=xxxxx&tok%65n=xxxxx"},
		{"https://hooks.example.com/cb#access_token=PLANTED&state=s", "https://hooks.example.com/cb#access_token=xxxxx&state=s"},
		{"https://u:PLANTED@hooks.example.com/in?password=PLANTED", "https://u:xxxxx@hooks.example.com/in?password=xxxxx"},
		{"https://PLANTED@hooks.example.com/%zz?secret=PLANTED", "https://xxxxx@hooks.example.com/%zz?secret=xxxxx"},
		{"https://hooks.example.com/in?token=&tokens&q=token", "https://hooks.example.com/in?token=&tokens&q=token"},
		{"https://hooks.example.com/in?token=PLANTED&", "https://hooks.example.com/in?token=xxxxx&"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(RedactURL(tc.in), "PLANTED") {
			t.Errorf("RedactURL(%q) keeps the credentials", tc.in)
		}
	}
	// URLCredentials are what RedactURL masks of a URL that parses,
	// decoded, for a redactor to mask them in a platform's words too.
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"https://build.example.com/v1", nil},
		{"https://apikey:sk-PLANTED-0123@build.example.com", []string{"sk-PLANTED-0123"}},
		{"https://sk-PLANTED-0123@build.example.com/x", []string{"sk-PLANTED-0123"}},
		{"https://apikey:@build.example.com", nil},
		{"https://apikey:sk-PLANTED-0123@build.example.com/%zz", nil},
		{"https://hooks.example.com/in?team=ops&token=PLANTED%2Ftok+1&sig=PLANTED-sig", []string{"PLANTED/tok 1", "PLANTED-sig"}},
		{"https://u:PLANTED-pw@hooks.example.com/in?Access-Token=PLANTED-at", []string{"PLANTED-at", "PLANTED-pw"}},
		{"https://hooks.example.com/in?token=%zz", []string{"%zz"}},
	} {
		if got := URLCredentials(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("URLCredentials(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	q := Config{BuildURL: "https://build.example.com/?api_key=sk-PLANTED-0123", AccountID: "ws-abcd1234"}
	if err := q.Validate(); err == nil || strings.Contains(err.Error(), "PLANTED") || !strings.Contains(err.Error(), `"https://build.example.com/": must not have a query or fragment`) {
		t.Errorf("Validate of a query: %v", err)
	}
	for _, raw := range []string{"https://sk-PLANTED-0123@build.example.com", "https://u:sk-PLANTED-0123@build.example.com/%zz"} {
		c := Config{BuildURL: raw, AccountID: "ws-abcd1234"}
		if err := c.Validate(); err == nil || strings.Contains(err.Error(), "PLANTED") {
			t.Errorf("Validate of %q: %v", raw, err)
		}
		m := Config{MessagingURL: raw, BuildURL: "https://build.example.com", AccountID: "ws-abcd1234"}
		if err := m.Validate(); err == nil || strings.Contains(err.Error(), "PLANTED") {
			t.Errorf("Validate of messaging URL %q: %v", raw, err)
		}
	}
	// The Messaging URLs follow the base URLs' rules: a query there would
	// be printed and would corrupt the endpoint paths appended to it.
	for _, m := range []Config{
		{MessagingURL: "https://messaging.example.com/?api_key=sk-PLANTED-0123"},
		{MessagingURL: "wss://messaging.example.com/#sk-PLANTED-0123"},
		{MessagingURL: "https://messaging.example.com", MessagingSocketURL: "wss://messaging.example.com/ws?token=sk-PLANTED-0123"},
		{MessagingURL: "https://messaging.example.com", MessagingSocketURL: "wss://sk-PLANTED-0123@messaging.example.com/ws"},
	} {
		m.BuildURL, m.AccountID = "https://build.example.com", "ws-abcd1234"
		err := m.Validate()
		if err == nil || strings.Contains(err.Error(), "PLANTED") || !strings.Contains(err.Error(), "messaging") {
			t.Errorf("Validate of messaging URLs %q, %q: %v", m.MessagingURL, m.MessagingSocketURL, err)
		}
	}
}

// TestMessagingURLs: the socket of a Messaging URL given in any of its
// four schemes is wss://{host}/ws for a secure one and ws:// otherwise
// (reference, "Messaging API" step 3: the host alone, whatever path the
// HTTP base has), and the HTTP steps go over https or http to match; a
// socket URL given is used as it is.
func TestMessagingURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, socketURL, base, socket string }{
		{"https://m.test/gw/", "", "https://m.test/gw", "wss://m.test/ws"},
		{"wss://m.test", "", "https://m.test", "wss://m.test/ws"},
		{"http://m.test:8080/x", "", "http://m.test:8080/x", "ws://m.test:8080/ws"},
		{"ws://m.test", "", "http://m.test", "ws://m.test/ws"},
		{"https://m.test", "wss://sock.test/live", "https://m.test", "wss://sock.test/live"},
	} {
		c, err := New(Config{BuildURL: "https://b.test", MessagingURL: tc.url, MessagingSocketURL: tc.socketURL, AllowHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.messaging.String() != tc.base || c.socket != tc.socket {
			t.Errorf("%s %q: base %s, socket %s; want %s, %s", tc.url, tc.socketURL, c.messaging, c.socket, tc.base, tc.socket)
		}
	}
}
