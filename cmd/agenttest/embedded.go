package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// embeddedSim is the platform simulator started in-process, on loopback
// with real HTTP, when no target is configured.
type embeddedSim struct {
	info   sim.Info
	cancel context.CancelFunc
	errc   chan error
	srv    *sim.Server
	// agents are the definitions it serves: the universe of node
	// coverage.
	agents []*agent.Definition
}

// simFlagsEnv holds `agenttest sim` flags for the embedded simulator of
// `agenttest run`, e.g. "--error-500=0.1 --error-429=0.05 --latency=5ms".
// It exists for the fault drills (docs/reliability.md): the same harness,
// the same run, against a platform that misbehaves on purpose. It is an
// environment variable rather than a flag of run because it tests
// agenttest itself, not an agent, and stays out of --help.
const simFlagsEnv = "AGENTTEST_SIM_FLAGS"

// embeddedOptions are the options of the embedded simulator: the run's
// seed, plus whatever simFlagsEnv sets, parsed by the very parser of
// `agenttest sim` so both spell faults the same way.
func embeddedOptions(st *State, seed int64) (embeddedConfig, error) {
	v := strings.TrimSpace(st.Getenv(simFlagsEnv))
	if v == "" {
		return embeddedConfig{opts: sim.Options{Seed: seed}}, nil
	}
	quiet := &State{Env: st.Env, Stdout: io.Discard, Stderr: io.Discard, Dir: st.Dir, FS: st.FS}
	o, err := parseSimFlags(quiet, strings.Fields(v))
	if err != nil {
		if errors.Is(err, errHelp) {
			err = errors.New("-h/--help is not a simulator setting")
		}
		var lines []string
		for line := range strings.SplitSeq(err.Error(), "\n") {
			lines = append(lines, fmt.Sprintf("%s=%q: %s", simFlagsEnv, v, strings.TrimPrefix(line, "sim: ")))
		}
		return embeddedConfig{}, usageErrorf("%s", strings.Join(lines, "\n"))
	}
	if o.listen != "127.0.0.1:0" || o.runtimeListen != "" || o.messagingListen != "" || o.printEnv {
		return embeddedConfig{}, usageErrorf("%s=%q: --listen, --runtime-listen, --messaging-listen and --print-env do not apply to the embedded simulator", simFlagsEnv, v)
	}
	if o.agentsDir != "" {
		defs, err := loadSimAgents(st, "sim", o.agentsDir)
		if err != nil {
			return embeddedConfig{}, err
		}
		o.opts.Agents = defs
	}
	if o.opts.Seed == 0 {
		o.opts.Seed = seed
	}
	return embeddedConfig{opts: o.opts, singleHost: o.singleHost}, nil
}

// embeddedConfig is how to start the embedded simulator.
type embeddedConfig struct {
	opts       sim.Options
	singleHost bool
}

// startSimulator serves the built-in example agents (or those a tweak
// sets, as --sim-agents does: servedAgents) on 127.0.0.1 with separate
// build and runtime hosts, like the platform. It does not share
// the run's context: after an interrupt the simulator must keep serving
// until the run has concluded and its reports are written.
func startSimulator(st *State, seed int64, tweaks ...func(*sim.Options)) (*embeddedSim, error) {
	cfg, err := embeddedOptions(st, seed)
	if err != nil {
		return nil, err
	}
	for _, tweak := range tweaks {
		tweak(&cfg.opts)
	}
	agents := cfg.opts.Agents
	if agents == nil {
		if agents, err = agent.Builtin(); err != nil {
			return nil, err
		}
		cfg.opts.Agents = agents
	}
	srv, err := sim.New(cfg.opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &embeddedSim{cancel: cancel, errc: make(chan error, 1), srv: srv, agents: agents}
	ready := make(chan sim.Info, 1)
	go func() {
		e.errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", cfg.singleHost, func(i sim.Info) { ready <- i })
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

// fill completes an embedded target with the simulator's URLs, ids, keys
// and Messaging connectors. The default agent is the first of the
// simulator's agents.
func (e *embeddedSim) fill(t *config.Target) {
	t.BuildURL = e.info.BuildURL
	t.RuntimeURL = e.info.RuntimeURL
	t.AccountID = e.info.AccountID
	t.BuildKey = config.Secret(e.info.BuildKey)
	t.RuntimeKey = config.Secret(e.info.RuntimeKey)
	t.CallToken = config.Secret(e.info.CallToken)
	t.Brand = e.info.Brand
	if len(e.info.AgentIDs) > 0 {
		t.AgentID = e.info.AgentIDs[0]
	}
	t.Agents = e.info.AgentIDs
	t.SMSConnectorIDs = e.info.ConnectorIDs
	// Messaging: every agent's connector in every environment, so a
	// scenario over messaging reaches its own agent wherever it runs.
	t.MessagingURL = e.info.MessagingURL
	t.MessagingHost = e.info.MessagingHost
	t.Connectors = make(map[string]map[string]config.Secret, len(e.info.MessagingConnectors))
	for agent, byEnv := range e.info.MessagingConnectors {
		t.Connectors[agent] = make(map[string]config.Secret, len(byEnv))
		for env, tok := range byEnv {
			t.Connectors[agent][env] = config.Secret(tok)
		}
	}
}

// maxNamedTargets is how many of the config file's targets the first
// line of a run on the embedded simulator names.
const maxNamedTargets = 8

// embeddedLine is the first line of a run on the embedded simulator: a
// user who meant to test a real agent must see at once that they did not.
func embeddedLine(t *config.Target, e *embeddedSim, cfg *config.File) string {
	why := "no target configured"
	switch {
	case t.SimAgents != "":
		why = t.SimAgents
	case t.Forced:
		why = "--sim"
	}
	line := fmt.Sprintf("agenttest: %s; using the embedded simulator (agents: %s)", why, strings.Join(e.info.AgentIDs, ", "))
	if !t.Forced && cfg != nil && len(cfg.Targets) > 0 {
		names := cfg.TargetNames()
		// The first line, not a listing: a workspace's file may hold a
		// target per agent, region and environment.
		if len(names) > maxNamedTargets {
			names = append(names[:maxNamedTargets:maxNamedTargets], fmt.Sprintf("and %d more", len(names)-maxNamedTargets))
		}
		line += fmt.Sprintf("; %s defines targets %s but none is selected (use --target or default_target)", cfg.Path, strings.Join(names, ", "))
	}
	return line
}

// servedAgents is the tweak of startSimulator that serves defs, the
// user's definitions (--sim-agents), in place of the built-in examples.
func servedAgents(defs []*agent.Definition) func(*sim.Options) {
	return func(o *sim.Options) { o.Agents = defs }
}
