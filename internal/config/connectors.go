package config

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// Messaging connectors. On the platform a web-chat connector belongs to
// one agent in one environment, and a conversation opened with its token
// runs there whatever the test says. A target therefore names its
// connectors per agent and environment, and a scenario over messaging
// whose agent and environment have no connector errors before anything is
// sent rather than talk to another agent:
//
//	connector_token: ${env:RESTAURANT_WEBCHAT}        # agent_id, in env
//	connectors:
//	  clinic: ${env:CLINIC_WEBCHAT}                   # clinic, in env
//	  utility-billing:                                # per environment
//	    sandbox: ${env:BILLING_SANDBOX_WEBCHAT}
//	    live: ${env:BILLING_LIVE_WEBCHAT}

// Environment variables of the Messaging settings of a target.
const (
	EnvConnectorToken = "AGENTTEST_CONNECTOR_TOKEN"
	EnvMessagingHost  = "AGENTTEST_MESSAGING_HOST"
)

// ConnectorDef is one entry of `connectors:` as written: the token of an
// agent in Env, or in the target's env when Env is empty.
type ConnectorDef struct {
	Agent string
	Env   string
	Token Field
}

// Setting names the entry in messages: connectors.AGENT, or
// connectors.AGENT.ENV.
func (c ConnectorDef) Setting() string {
	if c.Env == "" {
		return "connectors." + c.Agent
	}
	return "connectors." + c.Agent + "." + c.Env
}

// loadConnectors reads `connectors:`: agent -> ${env:NAME}, or agent ->
// env -> ${env:NAME}.
func (t *TargetDef) loadConnectors(path string, v *yaml.Node, diags diag.Diagnostics) diag.Diagnostics {
	v = resolveAlias(v)
	t.ConnectorsPos = pos(path, v)
	if v.Kind != yaml.MappingNode {
		return diags.Append(diag.Diagnostic{Pos: pos(path, v), Message: "connectors must be a mapping of agent to connector token",
			Hint: fmt.Sprintf("write %s or %s", connectorsYAML("AGENT", ""), connectorsYAML("AGENT", "ENV"))})
	}
	token := func(agent, env string, n *yaml.Node) {
		fld := Field{Pos: pos(path, n)}
		var ds diag.Diagnostics
		fld.Value, ds = scalar(path, n, "connector token", ds)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			return
		}
		key := "connectors." + agent
		if env != "" {
			key += "." + env
		}
		diags = checkKeyRef(key, "NAME", fld, diags)
		t.Connectors = append(t.Connectors, ConnectorDef{Agent: agent, Env: env, Token: fld})
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], resolveAlias(v.Content[i+1])
		if strings.TrimSpace(k.Value) == "" {
			diags = diags.Errorf(pos(path, k), "connectors: the agent must not be empty")
			continue
		}
		if val.Kind != yaml.MappingNode {
			token(k.Value, "", val)
			continue
		}
		for j := 0; j+1 < len(val.Content); j += 2 {
			ek, ev := val.Content[j], val.Content[j+1]
			if !reply.ValidEnv(ek.Value) {
				diags = diags.Append(diag.Diagnostic{Pos: pos(path, ek), Message: fmt.Sprintf("connectors.%s: %q is not an environment", k.Value, ek.Value),
					Hint: "one of " + strings.Join(reply.Envs, ", ")})
				continue
			}
			token(k.Value, ek.Value, ev)
		}
	}
	return diags
}

// Connector returns the connector token of agent in env: the entry of
// connectors for the agent in env, the agent's entry without an env when
// env is the target's, or connector_token when the agent is the target's
// agent_id (or the scenario names none) and env is the target's. The error
// names what to add.
func (t *Target) Connector(agent, env string) (Secret, error) {
	tok, _, err := t.connector(agent, env)
	return tok, err
}

// ConnectorSetting names the setting that holds the connector of agent in
// env, as Target.KeyVars keys it ("connector_token", "connectors.clinic",
// "connectors.clinic.live"), or "" when there is none: what to check when
// the platform refuses the token.
func (t *Target) ConnectorSetting(agent, env string) string {
	_, setting, _ := t.connector(agent, env)
	return setting
}

// connector is the one rule behind Connector and ConnectorSetting.
func (t *Target) connector(agent, env string) (tok Secret, setting string, err error) {
	home := t.Env
	if home == "" {
		home = reply.Envs[0]
	}
	if env == "" {
		env = home
	}
	// An env-less connector the file writes belongs to the env: the file
	// writes beside it, not to one --env or AGENTTEST_ENV moves the run
	// to: the platform would open the conversation in the file's.
	written := home
	if t.connectorEnv != "" {
		written = t.connectorEnv
	}
	if byEnv, ok := t.Connectors[agent]; ok {
		if tok, ok := byEnv[env]; ok {
			return tok, "connectors." + agent + "." + env, nil
		}
		if tok, ok := byEnv[""]; ok && env == written {
			return tok, "connectors." + agent, nil
		}
	}
	tokenEnv := written
	if t.connectorTokenFromVar {
		tokenEnv = home // AGENTTEST_CONNECTOR_TOKEN goes with the run's env
	}
	if t.ConnectorToken != "" && (agent == t.AgentID || agent == "") && env == tokenEnv {
		return t.ConnectorToken, "connector_token", nil
	}
	return "", "", fmt.Errorf("target %q has no Messaging connector for agent %s in %s: %s", t.Name, agent, env, t.connectorHint(agent, env, written))
}

// connectorHint says how to give the missing connector.
func (t *Target) connectorHint(agent, env, home string) string {
	if t.Source == FromEnv {
		// No file: the variables name one agent's connector in one
		// environment, and connectors: is out of reach.
		var why string
		switch {
		case t.ConnectorToken == "":
			why = EnvConnectorToken + " is not set"
		case env != home:
			why = fmt.Sprintf("%s is a connector in %s", EnvConnectorToken, home)
		case t.AgentID == "":
			// A connector token belongs to one agent, which only
			// AGENTTEST_AGENT_ID says: it is not lent to whichever agent
			// a suite names.
			why = fmt.Sprintf("%s is not set, so %s is the connector of no agent", EnvAgentID, EnvConnectorToken)
		default:
			why = fmt.Sprintf("%s is the connector of %s (%s)", EnvConnectorToken, t.AgentID, EnvAgentID)
		}
		return fmt.Sprintf("%s; set %s=%s, %s=%s and %s to its connector, or write a target with connectors: in agenttest.yaml for several agents",
			why, EnvAgentID, agent, EnvEnv, env, EnvConnectorToken)
	}
	var have []string
	for e := range t.Connectors[agent] {
		if e == "" {
			e = home
		}
		have = append(have, e)
	}
	sort.Strings(have)
	switch {
	case len(have) > 0:
		return fmt.Sprintf("its connectors are for %s; add %s", strings.Join(have, ", "), connectorsYAML(agent, env))
	case env != home:
		return fmt.Sprintf("a connector token belongs to one environment, and the target's is %s; add %s", home, connectorsYAML(agent, env))
	case agent != t.AgentID && t.ConnectorToken != "":
		return fmt.Sprintf("connector_token is the connector of %s; add %s", t.AgentID, connectorsYAML(agent, ""))
	}
	return fmt.Sprintf("add connector_token: ${env:NAME} (or %s), or %s", EnvConnectorToken, connectorsYAML(agent, ""))
}

// connectorsYAML is the connectors: entry of agent (in env, when not
// empty) as a hint writes it on one line. The reference is quoted: a
// flow mapping ends a plain value at its "{", so {clinic: ${env:NAME}}
// pasted into agenttest.yaml would not parse.
func connectorsYAML(agent, env string) string {
	if env == "" {
		return fmt.Sprintf("connectors: {%s: '${env:NAME}'}", agent)
	}
	return fmt.Sprintf("connectors: {%s: {%s: '${env:NAME}'}}", agent, env)
}

// resolveMessaging resolves the Messaging settings of a target.
func (r *resolver) resolveMessaging(def *TargetDef) {
	t := r.t
	t.MessagingHost = r.field("messaging_host", def.MessagingHost, EnvMessagingHost)
	t.ConnectorToken = r.key("connector_token", def.ConnectorToken, EnvConnectorToken)
	t.connectorTokenFromVar = r.sel.getenv(EnvConnectorToken) != ""
	if v, missing := r.expand(def.Env.Value); len(missing) == 0 && reply.ValidEnv(v) {
		t.connectorEnv = v // an invalid env: is reported where it is read
	}
	for _, c := range def.Connectors {
		tok := r.key(c.Setting(), c.Token, "")
		if tok == "" {
			continue
		}
		if t.Connectors == nil {
			t.Connectors = map[string]map[string]Secret{}
		}
		if t.Connectors[c.Agent] == nil {
			t.Connectors[c.Agent] = map[string]Secret{}
		}
		t.Connectors[c.Agent][c.Env] = tok
	}
}

// SMSConnector is the X-TOKEN-ID of the SMS probes of agent in env, or ""
// when the target has none.
func (t *Target) SMSConnector(agent, env string) string {
	if t.SMSConnectorIDs != nil {
		return t.SMSConnectorIDs[agent][env]
	}
	return t.SMSConnectorID
}
