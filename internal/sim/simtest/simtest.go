// Package simtest starts the platform simulator on loopback for tests:
//
//	s := simtest.Start(t, sim.Options{Seed: 1})
//	resp, err := http.Post(s.BuildURL+"/v1/agents/"+s.AgentIDs[0]+"/debug-chat", ...)
//
// Everything is torn down with t.Cleanup.
package simtest

import (
	"net/http/httptest"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
)

// Sim is a running simulator and what a client needs to reach it.
type Sim struct {
	// BuildURL, RuntimeURL and MessagingURL are the base URLs of the
	// three host families (equal in single-host mode), without a
	// trailing slash.
	BuildURL     string
	RuntimeURL   string
	MessagingURL string
	AccountID    string
	BuildKey     string
	RuntimeKey   string
	// AgentIDs are the served agents, sorted.
	AgentIDs []string
	// Info carries the rest: account slug, PROJECT- aliases, scoped keys.
	Info   sim.Info
	Server *sim.Server
}

// Start serves the build, runtime and messaging families on three
// loopback listeners.
func Start(t testing.TB, opts sim.Options) *Sim {
	t.Helper()
	srv := newServer(t, opts)
	build := httptest.NewServer(srv.BuildHandler())
	runtime := httptest.NewServer(srv.RuntimeHandler())
	messaging := httptest.NewServer(srv.MessagingHandler())
	t.Cleanup(func() {
		// The simulator first: it closes the WebSockets, which the
		// httptest servers no longer track once hijacked.
		srv.Close()
		build.Close()
		runtime.Close()
		messaging.Close()
	})
	return finish(srv, build.URL, runtime.URL, messaging.URL)
}

// StartSingleHost serves every family on one listener (self-serve region).
func StartSingleHost(t testing.TB, opts sim.Options) *Sim {
	t.Helper()
	s, stop := Serve(t, opts)
	t.Cleanup(stop)
	return s
}

// Serve is StartSingleHost that returns its stop instead of registering
// it: a benchmark that wants a fresh simulator per iteration stops each
// one, and its memory goes, before the next.
func Serve(t testing.TB, opts sim.Options) (*Sim, func()) {
	t.Helper()
	srv := newServer(t, opts)
	hs := httptest.NewServer(srv.Handler())
	stop := func() {
		srv.Close()
		hs.Close()
	}
	return finish(srv, hs.URL, hs.URL, hs.URL), stop
}

func newServer(t testing.TB, opts sim.Options) *sim.Server {
	t.Helper()
	srv, err := sim.New(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	return srv
}

func finish(srv *sim.Server, buildURL, runtimeURL, messagingURL string) *Sim {
	srv.SetURLs(buildURL, runtimeURL)
	srv.SetMessagingURL(messagingURL)
	info := srv.Info()
	return &Sim{
		BuildURL:     buildURL,
		RuntimeURL:   runtimeURL,
		MessagingURL: messagingURL,
		AccountID:    info.AccountID,
		BuildKey:     info.BuildKey,
		RuntimeKey:   info.RuntimeKey,
		AgentIDs:     info.AgentIDs,
		Info:         info,
		Server:       srv,
	}
}
