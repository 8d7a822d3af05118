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
	// The scenarios of one via: (a suite's, a Feature's tag) meet one
	// problem: it is said once at it, with how many it stops.
	type problem struct {
		at     diag.Pos
		what   string // after "runs over messaging"
		hint   string
		scenes []string
	}
	var problems []*problem
	seen := map[string]*problem{}
	for _, sc := range messagingScenarios(plan) {
		at := sc.Start.ViaPos
		if at.IsZero() {
			at = sc.Pos
		}
		var p problem
		if len(missing) > 0 {
			p = problem{at: at, what: fmt.Sprintf(", and target %q has no %s", t.Name, strings.Join(missing, " and ")),
				hint: "add them to the target in agenttest.yaml, or set the variables; docs/configuration.md, section Messaging"}
		} else if _, err := t.Connector(agentEnv(sc, t)); err != nil {
			p = problem{at: at, what: ": " + err.Error()}
		} else {
			continue
		}
		key := at.String() + p.what
		if seen[key] == nil {
			seen[key] = &p
			problems = append(problems, &p)
		}
		seen[key].scenes = append(seen[key].scenes, sc.Name)
	}
	for _, p := range problems {
		who := fmt.Sprintf("scenario %q runs", p.scenes[0])
		if n := len(p.scenes); n > 1 {
			who = fmt.Sprintf("%d scenarios (%q and %d more) run", n, p.scenes[0], n-1)
		}
		ds = ds.Append(diag.Diagnostic{Pos: p.at, Message: who + " over messaging" + p.what, Hint: p.hint})
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
// host, and the options mo (messagingOptions). Nil when the target has
// no messaging URL.
func messagingChannel(base platform.Config, t *config.Target, mo runner.MessagingOptions) runner.Channel {
	if t.MessagingURL == "" {
		return nil
	}
	base.MessagingURL, base.MessagingHost = t.MessagingURL, t.MessagingHost
	token := func(agent, env string) (string, error) {
		s, err := t.Connector(agent, env)
		return s.Reveal(), err
	}
	return runner.Messaging(runner.MessagingClients(base, token), mo)
}

// messagingOptions are the Messaging channel's options on target t: the
// turn timeout and the target's messaging_quiet, which must be shorter
// (a usage error: runner.MessagingOptions.CheckQuiet).
func messagingOptions(t *config.Target, turnTimeout time.Duration) (runner.MessagingOptions, error) {
	mo := runner.MessagingOptions{TurnTimeout: turnTimeout, Quiet: t.MessagingQuiet}
	if err := mo.CheckQuiet(); err != nil {
		return runner.MessagingOptions{}, usageErrorf("target %s: %v; lower messaging_quiet or raise --turn-timeout", t.Name, err)
	}
	return mo, nil
}
