package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestRunRemovesOnlyTheEndpointItRegistered: a run removes at its exit
// the webhook endpoint it registered, also when it was given a
// --webhook-secret for a URL that had no endpoint (the secret it got is
// another), and keeps an endpoint it reused with the secret it was given:
// that one is the user's, and the next run reuses it too.
func TestRunRemovesOnlyTheEndpointItRegistered(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// existing registers an endpoint for the URL before the run, and
		// gives the run its secret; otherwise the run gets secret.
		existing bool
		secret   string
		kept     bool
	}
	run := func(t *testing.T, tc testCase) {
		s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
		client, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		addr := platformtest.FreeAddr(t)
		url := "http://" + addr + "/"
		secret := tc.secret
		if tc.existing {
			ep, err := client.RegisterWebhook(ctx, platform.WebhookRegistration{URL: url, Events: []string{"conversation.completed"}})
			if err != nil {
				t.Fatal(err)
			}
			secret = ep.SigningSecret
		}
		dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
		c := newCLI(t, dir, simEnv(s), "run", "--webhook-listen", addr, "--webhook-url", url, "--webhook-secret", secret, "hooks.yaml")
		out := c.expect(t, exitOK, "\nstatus: passed\n")
		if strings.Contains(out, secret) {
			t.Errorf("the output shows the webhook secret:\n%s", out)
		}
		list, err := client.ListWebhooks(ctx)
		if err != nil || len(list) != map[bool]int{false: 0, true: 1}[tc.kept] {
			t.Errorf("endpoints after the run: %+v, %v; want kept: %t", list, err, tc.kept)
		}
	}
	for _, tc := range []testCase{
		{name: "a secret for a URL with no endpoint", secret: "whsec_not_of_any_endpoint_0123456789"},
		{name: "the secret of the URL's endpoint", existing: true, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// TestRunWebhookListenRefused: a run whose receiver cannot listen, or
// listens beyond loopback with no public URL to register, stops before
// anything runs saying so: the platform would deliver nowhere, and
// every scenario that confirms webhooks would fail or error for it.
func TestRunWebhookListenRefused(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	for _, tc := range []struct{ listen, want string }{
		{listen: platformtest.ClosedAddr(t) + "x", want: "run: --webhook-listen: "},
		{listen: "0.0.0.0:0", want: "run: --webhook-url is required when --webhook-listen is not a loopback address"},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
			c := newCLI(t, dir, simEnv(s), "run", "--webhook-listen", tc.listen, "hooks.yaml")
			out := c.expect(t, exitUsage, tc.want)
			if strings.Contains(out, "running ") {
				t.Errorf("something ran:\n%s", out)
			}
		})
	}
}

// TestWebhookURLProblems: --webhook-url must be an absolute http(s) URL,
// and the refusal does not show the URL's password.
func TestWebhookURLProblems(t *testing.T) {
	t.Parallel()
	for url, refused := range map[string]bool{
		"https://hooks.example.com/agenttest": false,
		"http://127.0.0.1:8080/":              false,
		"https://":                            true,
		"ftp://hooks.example.com/":            true,
		"hooks.example.com/agenttest":         true,
		"https://user:hunter2-password@/":     true,
	} {
		c := confirmOptions{webhookURL: url}
		got := strings.Join(c.problems(), "\n")
		if (got != "") != refused || (refused && !strings.Contains(got, "must be an absolute http(s) URL")) || strings.Contains(got, "hunter2") {
			t.Errorf("%s: problems %q, want refused: %t, no password", url, got, refused)
		}
	}
}
