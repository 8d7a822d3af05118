// Package platformtest starts what tests of confirmations and probes
// need: the platform simulator with outbound calls that connect in tens of
// milliseconds and webhook deliveries retried quickly, a platform client
// of both host families, and a webhook receiver registered on the
// simulator, as `agenttest run` sets up the embedded simulator.
//
//	e := platformtest.Start(t, nil)
//	opts := runner.Options{Channel: runner.DebugChat(e.Client), Records: e.Client, Webhooks: e.Receiver,
//		Connector: e.Connector,
//		Messaging: runner.Messaging(runner.MessagingClients(e.MessagingConfig(), e.MessagingToken), runner.MessagingOptions{})}
//
// Everything is torn down with t.Cleanup.
package platformtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"github.com/agenttest/agenttest/internal/webhook"
)

// ClosedAddr returns a loopback address nothing listens on while t runs,
// where a platform that is down answers with a refused connection. A port
// merely freed was given to the listener of a test running in parallel
// (a simulator's, a hostile server's), which answered instead; on unix
// the port stays taken until t ends (closedAddr).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	return closedAddr(t)
}

// FreeAddr returns a loopback address for a listener that must be told
// its address before it starts (a receiver whose public URL is configured
// ahead). On Linux the port stays reserved for it until t ends: no other
// test's listener is given the port meanwhile, as one merely freed could
// be in the time the program under test takes to listen on it. Elsewhere
// it is only freed. Where any port will do, listen on 127.0.0.1:0 instead.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return freeAddr(t)
}

// Unreachable is a number the simulator's outbound calls fail to reach.
const Unreachable = "+447700900999"

// Env is a running simulator, a client of it and a webhook receiver that
// the simulator delivers to.
type Env struct {
	Sim      *simtest.Sim
	Client   *platform.Client
	Receiver *webhook.Receiver
	// http is the client's HTTP client, shared by the Messaging clients.
	http *http.Client
}

// Start starts the simulator, the client and the receiver. secret, when
// set, changes the signing secret the receiver verifies with (a test of
// bad signatures gives it another one).
func Start(t testing.TB, secret func(real string) string) *Env {
	t.Helper()
	s := simtest.Start(t, sim.Options{
		Seed:         1,
		Outbound:     sim.OutboundOptions{Queued: 20 * time.Millisecond, Calling: 30 * time.Millisecond, Unreachable: []string{Unreachable}},
		Webhooks:     sim.WebhookOptions{AllowInsecure: true, Backoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond},
		TickInterval: 10 * time.Millisecond,
	})
	tr := platform.NewTransport(64)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	c, err := platform.New(platform.Config{
		BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID,
		BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey, HTTPClient: hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	rcv := webhook.NewReceiver(webhook.Options{})
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	_, sec, err := webhook.Register(context.Background(), c, hs.URL+"/", nil, "")
	if err != nil {
		t.Fatalf("register webhook: %v", err)
	}
	if secret != nil {
		sec = secret(sec)
	}
	rcv.SetSecret(sec)
	return &Env{Sim: s, Client: c, Receiver: rcv, http: hc}
}

// Connector returns the simulator's SMS connector id of an agent in an
// environment (runner.Options.Connector).
func (e *Env) Connector(agent, env string) string {
	return e.Sim.Info.ConnectorIDs[agent][env]
}

// MessagingConfig is the client configuration of the simulator's
// Messaging API, without a connector token: runner.MessagingClients adds
// the one of each agent and environment (MessagingToken).
func (e *Env) MessagingConfig() platform.Config {
	return platform.Config{BuildURL: e.Sim.BuildURL, MessagingURL: e.Sim.MessagingURL, MessagingHost: e.Sim.Info.MessagingHost, HTTPClient: e.http}
}

// MessagingToken returns the simulator's Messaging connector token of an
// agent in an environment.
func (e *Env) MessagingToken(agent, env string) (string, error) {
	if tok := e.Sim.Info.MessagingConnectors[agent][env]; tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("the simulator has no Messaging connector for agent %s in %s", agent, env)
}
