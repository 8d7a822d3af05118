package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/sim"
)

// embeddedSim is the platform simulator started in-process, on loopback
// with real HTTP, when no target is configured.
type embeddedSim struct {
	info   sim.Info
	cancel context.CancelFunc
	errc   chan error
	srv    *sim.Server
}

// startSimulator serves the built-in example agents on 127.0.0.1 with
// separate build and runtime hosts, like the platform. It does not share
// the run's context: after an interrupt the simulator must keep serving
// until the run has concluded and its reports are written.
func startSimulator(seed int64) (*embeddedSim, error) {
	srv, err := sim.New(sim.Options{Seed: seed})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &embeddedSim{cancel: cancel, errc: make(chan error, 1), srv: srv}
	ready := make(chan sim.Info, 1)
	go func() {
		e.errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", false, func(i sim.Info) { ready <- i })
	}()
	select {
	case e.info = <-ready:
		return e, nil
	case err := <-e.errc:
		cancel()
		srv.Close()
		return nil, err
	}
}

// stop shuts the simulator down and waits for it.
func (e *embeddedSim) stop() {
	e.cancel()
	<-e.errc
	e.srv.Close()
}

// fill completes an embedded target with the simulator's URLs, ids and
// keys. The default agent is the first of the simulator's agents.
func (e *embeddedSim) fill(t *config.Target) {
	t.BuildURL = e.info.BuildURL
	t.RuntimeURL = e.info.RuntimeURL
	t.AccountID = e.info.AccountID
	t.BuildKey = config.Secret(e.info.BuildKey)
	t.RuntimeKey = config.Secret(e.info.RuntimeKey)
	if len(e.info.AgentIDs) > 0 {
		t.AgentID = e.info.AgentIDs[0]
	}
}

// embeddedLine is the first line of a run on the embedded simulator: a
// user who meant to test a real agent must see at once that they did not.
func embeddedLine(t *config.Target, e *embeddedSim, cfg *config.File) string {
	why := "no target configured"
	if t.Forced {
		why = "--sim"
	}
	line := fmt.Sprintf("agenttest: %s; using the embedded simulator (agents: %s)", why, strings.Join(e.info.AgentIDs, ", "))
	if !t.Forced && cfg != nil && len(cfg.Targets) > 0 {
		line += fmt.Sprintf("; %s defines targets %s but none is selected (use --target or default_target)", cfg.Path, strings.Join(cfg.TargetNames(), ", "))
	}
	return line
}
