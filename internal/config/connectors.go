package config

import (
	"cmp"
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
	EnvMessagingQuiet = "AGENTTEST_MESSAGING_QUIET"
)

// ConnectorDef is one entry of `connectors:` (or `sms_connector_ids:`)
// as written: the token (or id) of an agent in Env, or in the target's
// env when Env is empty.
type ConnectorDef struct {
	// Key is the setting the entry is written under: "connectors" when
	// empty, or "sms_connector_ids".
	Key   string
	Agent string
	Env   string
	Token Field
}

// Setting names the entry in messages: connectors.AGENT, or
// connectors.AGENT.ENV (sms_connector_ids.AGENT...).
func (c ConnectorDef) Setting() string {
	return perAgentSetting(cmp.Or(c.Key, "connectors"), c.Agent, c.Env)
}

// perAgentSetting names the entry of agent (in env, when not empty)
// under key: key.AGENT or key.AGENT.ENV.
func perAgentSetting(key, agent, env string) string {
	if env == "" {
		return key + "." + agent
	}
	return key + "." + agent + "." + env
}

// loadConnectors reads `connectors:`: agent -> ${env:NAME}, or agent ->
// env -> ${env:NAME}.
func (t *TargetDef) loadConnectors(path string, v *yaml.Node, diags diag.Diagnostics) diag.Diagnostics {
	t.ConnectorsPos = pos(path, resolveAlias(v))
	defs, diags := loadPerAgent(path, v, "connectors", "connector token", diags, func(key string, fld Field, diags diag.Diagnostics) diag.Diagnostics {
		return checkKeyRef(key, "NAME", fld, diags)
	})
	t.Connectors = append(t.Connectors, defs...)
	return diags
}

// loadSMSConnectors reads `sms_connector_ids:`: agent -> id, or agent ->
// env -> id. An id is no key: it may be written as it is, as
// sms_connector_id may.
func (t *TargetDef) loadSMSConnectors(path string, v *yaml.Node, diags diag.Diagnostics) diag.Diagnostics {
	defs, diags := loadPerAgent(path, v, "sms_connector_ids", "SMS connector id", diags, nil)
	t.SMSConnectorIDs = append(t.SMSConnectorIDs, defs...)
	return diags
}

// loadPerAgent reads a mapping of agent -> value, or agent -> env ->
// value, written under key (what names a value in messages); check, when
// set, checks each value read, named by its setting.
func loadPerAgent(path string, v *yaml.Node, key, what string, diags diag.Diagnostics, check func(setting string, fld Field, diags diag.Diagnostics) diag.Diagnostics) ([]ConnectorDef, diag.Diagnostics) {
	v = resolveAlias(v)
	if v.Kind != yaml.MappingNode {
		return nil, diags.Append(diag.Diagnostic{Pos: pos(path, v), Message: fmt.Sprintf("%s must be a mapping of agent to %s", key, what),
			Hint: fmt.Sprintf("write %s or %s", perAgentYAML(key, "AGENT", ""), perAgentYAML(key, "AGENT", "ENV"))})
	}
	var defs []ConnectorDef
	value := func(agent, env string, n *yaml.Node) {
		fld := Field{Pos: pos(path, n)}
		var ds diag.Diagnostics
		fld.Value, ds = scalar(path, n, what, ds)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			return
		}
		if check != nil {
			diags = check(perAgentSetting(key, agent, env), fld, diags)
		}
		defs = append(defs, ConnectorDef{Key: key, Agent: agent, Env: env, Token: fld})
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], resolveAlias(v.Content[i+1])
		if strings.TrimSpace(k.Value) == "" {
			diags = diags.Errorf(pos(path, k), "%s: the agent must not be empty", key)
			continue
		}
		if val.Kind != yaml.MappingNode {
			value(k.Value, "", val)
			continue
		}
		for j := 0; j+1 < len(val.Content); j += 2 {
			ek, ev := val.Content[j], val.Content[j+1]
			if !reply.ValidEnv(ek.Value) {
				diags = diags.Append(diag.Diagnostic{Pos: pos(path, ek), Message: fmt.Sprintf("%s.%s: %q is not an environment", key, k.Value, ek.Value),
					Hint: "one of " + strings.Join(reply.Envs, ", ")})
				continue
			}
			value(k.Value, ek.Value, ev)
		}
	}
	return defs, diags
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
	written := t.writtenEnv()
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
func connectorsYAML(agent, env string) string { return perAgentYAML("connectors", agent, env) }

// perAgentYAML is the entry of agent (in env, when not empty) under key,
// as a hint writes it on one line.
func perAgentYAML(key, agent, env string) string {
	if env == "" {
		return fmt.Sprintf("%s: {%s: '${env:NAME}'}", key, agent)
	}
	return fmt.Sprintf("%s: {%s: {%s: '${env:NAME}'}}", key, agent, env)
}

// resolveMessaging resolves the Messaging settings of a target.
func (r *resolver) resolveMessaging(def *TargetDef) {
	t := r.t
	t.MessagingHost = r.field("messaging_host", def.MessagingHost, EnvMessagingHost)
	if v := r.field("messaging_quiet", def.MessagingQuiet, EnvMessagingQuiet); v != "" {
		t.MessagingQuiet, _ = ParseMessagingQuiet(v) // field reported a bad value
	}
	t.ConnectorToken = r.key("connector_token", def.ConnectorToken, EnvConnectorToken)
	t.connectorTokenFromVar = r.sel.getenv(EnvConnectorToken) != ""
	if v, missing := r.expand(def.Env.Value); len(missing) == 0 && reply.ValidEnv(v) {
		t.connectorEnv = v // an invalid env: is reported where it is read
	}
	for _, c := range def.Connectors {
		setPerAgent(&t.Connectors, c, r.key(c.Setting(), c.Token, ""))
	}
}

// setPerAgent sets the value of entry c in *m (agent -> env -> value),
// making the maps it needs; an empty value (one not resolved) is left
// out.
func setPerAgent[V ~string](m *map[string]map[string]V, c ConnectorDef, v V) {
	if v == "" {
		return
	}
	if *m == nil {
		*m = map[string]map[string]V{}
	}
	if (*m)[c.Agent] == nil {
		(*m)[c.Agent] = map[string]V{}
	}
	(*m)[c.Agent][c.Env] = v
}

// writtenEnv is the environment an env-less connector (or SMS connector
// id) the file writes belongs to: the env the file writes beside it, not
// one --env or AGENTTEST_ENV moves the run to, since the platform would
// open the conversation in the file's; the target's env when the file
// writes none.
func (t *Target) writtenEnv() string {
	return cmp.Or(t.connectorEnv, t.Env, reply.Envs[0])
}

// SMSConnector is the X-TOKEN-ID of the SMS probes of agent in env, or ""
// when the target has none.
func (t *Target) SMSConnector(agent, env string) string {
	id, _ := t.smsConnector(agent, env)
	return id
}

// SMSConnectorSetting names the setting that gives the SMS connector id
// of agent in env ("sms_connector_ids.clinic",
// "sms_connector_ids.clinic.live", "sms_connector_id"), or "" when none
// does.
func (t *Target) SMSConnectorSetting(agent, env string) string {
	_, setting := t.smsConnector(agent, env)
	return setting
}

// smsConnector is the one rule behind SMSConnector and
// SMSConnectorSetting: the agent's entry of sms_connector_ids in env, its
// env-less one in the environment the file writes it beside, else the
// target's one sms_connector_id, for every agent and environment.
func (t *Target) smsConnector(agent, env string) (id, setting string) {
	if env == "" {
		env = cmp.Or(t.Env, reply.Envs[0])
	}
	if t.Embedded {
		// The simulator's are every agent's it serves; an agent it does
		// not serve has none (unservedAgents refuses it).
		if id := t.SMSConnectorIDs[agent][env]; id != "" {
			return id, perAgentSetting("sms_connector_ids", agent, env)
		}
		return "", ""
	}
	if byEnv, ok := t.SMSConnectorIDs[agent]; ok {
		if id := byEnv[env]; id != "" {
			return id, perAgentSetting("sms_connector_ids", agent, env)
		}
		if id := byEnv[""]; id != "" && env == t.writtenEnv() {
			return id, perAgentSetting("sms_connector_ids", agent, "")
		}
	}
	if t.SMSConnectorID != "" {
		return t.SMSConnectorID, "sms_connector_id"
	}
	return "", ""
}
