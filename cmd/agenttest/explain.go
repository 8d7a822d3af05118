package main

import (
	"cmp"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
)

// emptyReason says why the selection has nothing to test in the suites
// loaded from paths (pathsGiven: named on the command line): no suite
// under them, or filters that select no scenario, with a did-you-mean for
// tags no scenario has (a case slip such as @Smoke for @smoke).
func (s *selection) emptyReason(suites []*scenario.Suite, paths []string, pathsGiven bool) string {
	if len(suites) == 0 && s.rerunFailed != "" && !pathsGiven {
		return fmt.Sprintf("--rerun-failed %s: no case of the report can run again", s.rerunFailed)
	}
	if len(suites) == 0 {
		return fmt.Sprintf("no suite file under %s (a suite is a .feature file, or a YAML file with a scenarios: key)", strings.Join(paths, ", "))
	}
	n := scenario.Count(suites)
	if n == 0 {
		// No filter left anything out: the files themselves are empty.
		return fmt.Sprintf("no scenario under %s (%d %s, none with a scenario)", strings.Join(paths, ", "), len(suites), plural(len(suites), "suite file", "suite files"))
	}
	filters := s.filters()
	msg := fmt.Sprintf("no scenario of the %d in %d %s", n, len(suites), plural(len(suites), "suite file", "suite files"))
	if len(filters) > 0 {
		msg += " matches " + strings.Join(filters, " and ")
	} else {
		msg += " is selected"
	}
	if s.sel.Tags != nil {
		if hint := tagHints(suites, s.sel.Tags.Tags()); hint != "" {
			msg += "; " + hint
		}
	}
	if hint := nameHint(suites, s.sel.Name, s.name); hint != "" {
		msg += "; " + hint
	}
	return msg
}

// nameHint is the did-you-mean of a --name no scenario name matches: the
// closest scenario name, by diag.Suggest's rule (a slip in a name copied
// from a report, "Books a table" for "books a table"); else, for a
// literal --name, the names that contain it in another case (--name
// Booking for "booking cancelled": the text matches with its case, as
// grep does, and the hint says how to ignore it rather than change
// what selects). It says nothing when some name matches: the other
// filters left it out.
func nameHint(suites []*scenario.Suite, re *regexp.Regexp, name string) string {
	if re == nil {
		return ""
	}
	var names []string
	for _, sc := range scenarios(suites) {
		if re.MatchString(sc.Name) {
			return ""
		}
		if !slices.Contains(names, sc.Name) {
			names = append(names, sc.Name)
		}
	}
	if h := diag.DidYouMean(name, names); h != "" {
		return h
	}
	if strings.HasPrefix(name, "/") && strings.HasSuffix(name, "/") {
		return ""
	}
	fold := regexp.MustCompile("(?i)" + regexp.QuoteMeta(name))
	var in []string
	for _, n := range names {
		if fold.MatchString(n) {
			in = append(in, n)
		}
	}
	if len(in) == 0 {
		return ""
	}
	h := fmt.Sprintf("--name is case-sensitive, and %d %s %q in another case, such as %q", len(in), plural(len(in), "name contains", "names contain"), name, in[0])
	if strings.Contains(name, "'") {
		return h // not written in shell quotes as it is
	}
	return h + fmt.Sprintf(" (--name '/(?i)%s/' ignores case)", regexp.QuoteMeta(name))
}

// tagHints names the tags of an expression that no scenario has, with the
// closest tag that exists.
func tagHints(suites []*scenario.Suite, named []string) string {
	have := map[string]bool{}
	for _, sc := range scenarios(suites) {
		for _, t := range sc.Tags {
			have[t] = true
		}
	}
	known := make([]string, 0, len(have))
	for t := range have {
		known = append(known, t)
	}
	sort.Strings(known)
	var hints []string
	for _, t := range named {
		if have[t] {
			continue
		}
		h := "no scenario is tagged @" + t
		if s := diag.Suggest(t, known); s != "" {
			h += fmt.Sprintf(" (did you mean @%s?)", s)
		}
		hints = append(hints, h)
	}
	return strings.Join(hints, "; ")
}

// stopMessage says why the run stopped before its end, once, with the
// host and what to check: the setting or the variable that holds the
// value, never the value of a key.
func stopMessage(st *result.Stop, t *config.Target) string {
	cause := st.Cause
	switch st.Kind {
	case result.StopUnreachable:
		setting, envName := urlSetting(st.Host, t)
		return fmt.Sprintf("the platform at %s is unreachable: %s; check %s, that the platform is up, and the network in between (DNS, proxy, firewall, TLS)",
			st.Host, cause, where(t, setting, envName))
	case result.StopCredentials:
		setting := credentialSetting[st.Credential]
		if st.Credential == platform.CredentialConnectorToken {
			// connector_token, or the connectors entry of the agent.
			setting = cmp.Or(t.ConnectorSetting(st.Agent, st.Env), setting)
		}
		envName := t.KeyVars[setting]
		check := "the " + st.Credential
		switch {
		case t.Embedded:
			check = "the embedded simulator's keys"
		case envName != "":
			check = fmt.Sprintf("%s, which holds the %s of target %q", envName, setting, t.Name)
		}
		if st.Credential == platform.CredentialConnectorToken {
			// The access-token step also answers 401 when X-Host is not
			// the domain the connector is registered to.
			// The host is a name, not a secret: shown, a typo or a
			// variable left from another job is seen at once.
			return fmt.Sprintf("the platform at %s refused the connector token: %s; check %s: it must be the web-chat connector of agent %s in %s, and %s, which sent X-Host %q, must be the domain it is registered to",
				st.Host, cause, check, st.Agent, cmp.Or(st.Env, t.Env, runner.DefaultEnv), where(t, "messaging_host", config.EnvMessagingHost), t.MessagingHost)
		}
		msg := fmt.Sprintf("the platform at %s refused the %s: %s; check %s: the key must be valid for this workspace and have rights on the agent",
			st.Host, st.Credential, cause, check)
		if st.Credential == platform.CredentialRuntimeKeyAsCallToken {
			msg += fmt.Sprintf(", or set call_token (%s) if outbound calling and SMS take a token of their own", config.EnvCallToken)
		}
		if st.Credential == platform.CredentialRuntimeKeyAsCallToken || st.Credential == platform.CredentialCallToken {
			// A platform of another brand finds no token at all.
			msg += fmt.Sprintf("; it went as %s: if the platform's brand word is not %s, set brand (%s)",
				brand.AuthTokenHeader(t.Brand), brand.Word(t.Brand), config.EnvBrand)
		}
		if st.Endpoint == platform.EndpointSMS {
			msg += fmt.Sprintf("; the SMS endpoint also checks the connector id it is sent (%s): check %s (or the agent's entry of sms_connector_ids), the SMS connector of the agent's project in that environment",
				brand.TokenIDHeader, where(t, "sms_connector_id", config.EnvSMSConnectorID))
		}
		return msg
	case result.StopUnknownAgent:
		// The embedded simulator's agents are known: unservedAgents
		// refused the others before the run.
		return fmt.Sprintf("the platform at %s does not know agent %q: %s; check the agent id (agent: of the suite or scenario, @agent: of a feature, %s) and that %s is the build host of the workspace's region",
			st.Host, st.Agent, cause, where(t, "agent_id", config.EnvAgentID), where(t, "build_url", config.EnvBuildURL))
	case result.StopNoMessagingAPI:
		return fmt.Sprintf("no Messaging API answers at %s: %s; check %s: it must be the address of the platform's Messaging API, not of its build or runtime host",
			st.Host, cause, where(t, "messaging_url", config.EnvMessagingURL))
	}
	return st.Reason + ": " + cause
}

// unservedAgent says that the embedded simulator does not serve agent,
// naming the one meant: its agents are known. It is said at the place
// the agent is written (unservedAgents), so it does not list the places
// an agent can be written, nor AGENTTEST_AGENT_ID, which the embedded
// simulator does not read. from is what gave the user's definitions
// (config.Target.SimAgents), empty for the built-in examples.
func unservedAgent(agent string, agents []string, from string) string {
	serves := "it serves " + strings.Join(agents, ", ")
	switch s := diag.Suggest(agent, agents); {
	case s != "":
		serves = fmt.Sprintf("did you mean %q? %s", s, serves)
	case from != "":
		// The designer's own definitions are served: the suite names an
		// agent by another id than its definition's.
		serves += ", the agents of " + from + ": check the id: of the definition meant"
	default:
		// Not a typo: most likely the designer's own agent, on their
		// platform, which a target reaches, or which run serves once
		// given its definition. Named with its command: the same refusal
		// meets a side of compare, which has no such flag.
		serves += "; for your agent on the platform, configure a target (agenttest.yaml, or AGENTTEST_* variables): docs/configuration.md;" +
			" for an agent definition of your own, serve it with --sim-agents DIR (run, compare): docs/agent-definition.md"
	}
	return fmt.Sprintf("the embedded simulator does not serve agent %q (%s)", agent, serves)
}

// credentialSetting maps a refused credential to the target setting that
// holds it.
var credentialSetting = map[string]string{
	platform.CredentialBuildKey:              "build_key",
	platform.CredentialRuntimeKey:            "runtime_key",
	platform.CredentialRuntimeKeyAsCallToken: "runtime_key",
	platform.CredentialCallToken:             "call_token",
	platform.CredentialConnectorToken:        "connector_token",
}

// urlSetting names the URL setting whose host is host, with its variable.
func urlSetting(host string, t *config.Target) (setting, envName string) {
	for _, u := range []struct{ setting, env, value string }{
		{"build_url", config.EnvBuildURL, t.BuildURL},
		{"runtime_url", config.EnvRuntimeURL, t.RuntimeURL},
		{"messaging_url", config.EnvMessagingURL, t.MessagingURL},
	} {
		if p, err := url.Parse(u.value); err == nil && p.Host == host {
			return u.setting, u.env
		}
	}
	return "build_url", config.EnvBuildURL
}

// where names a target setting for a user to check: in the config file
// and the variable that overrides it.
func where(t *config.Target, setting, envName string) string {
	if t.Source == config.FromConfig {
		return fmt.Sprintf("the %s of target %q (or %s)", setting, t.Name, envName)
	}
	return envName
}
