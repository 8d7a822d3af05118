package main

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
)

// messagingScenarios lists the planned scenarios that run over the
// Messaging API.
func messagingScenarios(plan []*scenario.Suite) []*scenario.Scenario {
	var out []*scenario.Scenario
	for _, sc := range scenarios(plan) {
		if sc.Messaging() {
			out = append(out, sc)
		}
	}
	return out
}

// missingConnectors reports, before anything runs, the scenarios over
// messaging that the target cannot carry: no messaging_url or
// messaging_host, or no connector for the scenario's agent and
// environment (a conversation opened with another agent's connector would
// test the wrong agent).
func missingConnectors(plan []*scenario.Suite, t *config.Target) diag.Diagnostics {
	var ds diag.Diagnostics
	var missing []string
	if t.MessagingURL == "" {
		missing = append(missing, "messaging_url ("+config.EnvMessagingURL+")")
	}
	if t.MessagingHost == "" {
		missing = append(missing, "messaging_host ("+config.EnvMessagingHost+")")
	}
	for _, sc := range messagingScenarios(plan) {
		at := sc.Start.ViaPos
		if at.IsZero() {
			at = sc.Pos
		}
		if len(missing) > 0 {
			ds = ds.Append(diag.Diagnostic{Pos: at,
				Message: fmt.Sprintf("scenario %q runs over messaging, and target %q has no %s", sc.Name, t.Name, strings.Join(missing, " and ")),
				Hint:    "add them to the target in agenttest.yaml, or set the variables; docs/configuration.md, section Messaging"})
			continue
		}
		agent, env := agentEnv(sc, t)
		if _, err := t.Connector(agent, env); err != nil {
			ds = ds.Append(diag.Diagnostic{Pos: at, Message: fmt.Sprintf("scenario %q runs over messaging: %v", sc.Name, err)})
		}
	}
	return ds
}

// agentEnv is the agent and environment a scenario runs with on t, as the
// runner resolves them when it plans the run (the suite's are already the
// scenario's), for the checks made before it.
func agentEnv(sc *scenario.Scenario, t *config.Target) (agent, env string) {
	return cmp.Or(sc.Agent, t.AgentID), cmp.Or(sc.Env, t.Env, runner.DefaultEnv)
}

// messagingChannel is the run's Messaging channel: a platform client per
// connector token, made on first use from base (the run's client settings:
// transport, retry policy, limits) with the target's messaging URL and
// host. Nil when the target has no messaging URL.
func messagingChannel(base platform.Config, t *config.Target, turnTimeout time.Duration) runner.Channel {
	if t.MessagingURL == "" {
		return nil
	}
	base.MessagingURL, base.MessagingHost = t.MessagingURL, t.MessagingHost
	token := func(agent, env string) (string, error) {
		s, err := t.Connector(agent, env)
		return s.Reveal(), err
	}
	return runner.Messaging(runner.MessagingClients(base, token), runner.MessagingOptions{TurnTimeout: turnTimeout})
}
