package config

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/secret"
)

// The environment variables that override the fields of a target. They win
// over the config file and lose to command-line flags.
const (
	EnvBuildURL     = "AGENTTEST_BUILD_URL"
	EnvRuntimeURL   = "AGENTTEST_RUNTIME_URL"
	EnvMessagingURL = "AGENTTEST_MESSAGING_URL"
	EnvAccountID    = "AGENTTEST_ACCOUNT_ID"
	EnvAgentID      = "AGENTTEST_AGENT_ID"
	EnvBuildKey     = "AGENTTEST_BUILD_KEY"
	EnvRuntimeKey   = "AGENTTEST_RUNTIME_KEY"
	EnvCallToken    = "AGENTTEST_CALL_TOKEN"
	EnvEnv          = "AGENTTEST_ENV"
)

// EnvTargetName is the name of the target built from AGENTTEST_* variables
// alone, when no config target is selected.
const EnvTargetName = "env"

// SimTargetName is the name of the embedded simulator target.
const SimTargetName = "sim"

// Secret is an API key. It formats as [REDACTED] with every fmt verb and in
// JSON/YAML, so printing a Target or an error built from one cannot leak
// it; Reveal is the one way to the value, for the HTTP client.
type Secret string

// String hides the value.
func (Secret) String() string { return "[REDACTED]" }

// GoString hides the value from %#v.
func (Secret) GoString() string { return "[REDACTED]" }

// MarshalText hides the value from encoders.
func (Secret) MarshalText() ([]byte, error) { return []byte("[REDACTED]"), nil }

// Reveal returns the key itself.
func (s Secret) Reveal() string { return string(s) }

// Source says where a resolved target came from.
type Source string

// Where a target can come from.
const (
	FromConfig   Source = "config"
	FromEnv      Source = "environment"
	FromEmbedded Source = "embedded"
)

// Target is the platform a run talks to, after precedence: flag >
// environment > config target > defaults.
type Target struct {
	// Name is the config target name, EnvTargetName, or SimTargetName.
	Name   string
	Source Source
	// Pos is where the target is defined in the config file, if it is.
	Pos          diag.Pos
	BuildURL     string
	RuntimeURL   string
	MessagingURL string
	// MessagingHost is X-Host of the Messaging API: the domain or app
	// namespace the connectors are registered to.
	MessagingHost string
	// MessagingQuiet is the target's messaging_quiet
	// (AGENTTEST_MESSAGING_QUIET overrides it); 0 when not set.
	MessagingQuiet time.Duration
	// Brand is the platform's word for Vendor in header and Messaging
	// event names (brand); empty is the reference's own.
	Brand string
	// ConnectorToken is the Messaging connector of AgentID in Env;
	// Connectors those of other agents and environments (agent -> env ->
	// token; env "" is the target's Env). Connector picks one.
	ConnectorToken Secret
	Connectors     map[string]map[string]Secret
	// connectorEnv is the env: the config file writes for the target, to
	// which its env-less connectors belong whatever env the run asks
	// for; empty when the file writes none (they follow Env).
	connectorEnv string
	// connectorTokenFromVar: ConnectorToken is AGENTTEST_CONNECTOR_TOKEN,
	// set beside the run's env rather than written beside the file's.
	connectorTokenFromVar bool
	AccountID             string
	// AgentID is the default agent for scenarios without `agent:`.
	AgentID string
	// Env is the default clientEnv; empty means the runner's default
	// (sandbox).
	Env        string
	BuildKey   Secret
	RuntimeKey Secret
	// CallToken is the X-<Brand>-Auth-Token of outbound calling and SMS
	// (probes). Empty means the runtime key: the reference does not say
	// whether they are one credential, so a workspace that issues a
	// separate token sets call_token (AGENTTEST_CALL_TOKEN).
	CallToken Secret
	// KeyVars maps each key setting that has a value ("build_key",
	// "runtime_key") to the environment variable it was read from, so
	// that a key the platform refuses can be named without showing it.
	KeyVars map[string]string
	// Embedded is true when no target is configured (or --sim is given):
	// the caller starts the built-in simulator and fills the URLs, ids and
	// keys from it.
	Embedded bool
	// Agents are the agents the embedded simulator serves, once it has
	// started: an agent id it does not know gets a "did you mean" from
	// them. Empty for a configured target, whose list agenttest does not
	// read.
	Agents []string
	// Forced is true when the embedded simulator was asked for with --sim.
	Forced bool
	// SimAgents says what gave the agent definitions the embedded
	// simulator serves in place of its examples ("--sim-agents agents/"):
	// the command sets it, the run's first line and its refusals name it.
	// Empty for the examples.
	SimAgents string
	// EnvFrom says what set Env, for the live-safety refusal: "--env",
	// "AGENTTEST_ENV", or the target's env key with its position.
	EnvFrom string
	// WebhookListen and WebhookURL configure the receiver of `run`
	// (AGENTTEST_WEBHOOK_LISTEN and AGENTTEST_WEBHOOK_URL override them).
	WebhookListen string
	WebhookURL    string
	// AllowLive is the target's allow_live.
	AllowLive bool
	// ProbeNumbers are the numbers probes may call or text (expanded);
	// ProbeNumbersPos is where the list is written.
	ProbeNumbers    []string
	ProbeNumbersPos diag.Pos
	// SMSConnectorID is the X-TOKEN-ID of SMS probes
	// (AGENTTEST_SMS_CONNECTOR_ID overrides it).
	SMSConnectorID string
	// SMSConnectorIDs are the X-TOKEN-IDs per agent and environment
	// (env "" is the one the file writes them beside), in place of
	// SMSConnectorID for those agents: sms_connector_ids, or the
	// embedded simulator's for each agent it serves (see SMSConnector).
	SMSConnectorIDs map[string]map[string]string
	// AllowHTTP is the target's allow_http: plain http:// to hosts that
	// are not loopback is accepted (with a warning on every run).
	AllowHTTP bool
	// MaxReplyBytes is the target's max_reply_bytes; 0 means the default
	// (the run flag and AGENTTEST_MAX_REPLY_BYTES win over it).
	MaxReplyBytes int64
	// Rate is the target's rate (requests per second per key; 0: none)
	// and RateWait its rate_wait, nil when not set (the run flags and
	// their variables win over both).
	Rate     float64
	RateWait *time.Duration
}

// Environment variables of the confirmation settings of a target.
const (
	EnvWebhookListen = "AGENTTEST_WEBHOOK_LISTEN"
	EnvWebhookURL    = "AGENTTEST_WEBHOOK_URL"
	// EnvWebhookSecret is the signing secret of a webhook endpoint
	// already registered (--webhook-secret): a secret a suite may not
	// read, like the keys.
	EnvWebhookSecret  = "AGENTTEST_WEBHOOK_SECRET"
	EnvSMSConnectorID = "AGENTTEST_SMS_CONNECTOR_ID"
	// EnvBrand is the brand word (brand:): the headers of probes and
	// webhook deliveries and the Messaging event names hold it.
	EnvBrand = "AGENTTEST_BRAND"
)

// AllowsNumber says whether a probe may call or text n on this target.
// The embedded simulator dials nobody, so it allows every number; any
// other target allows only its probe_numbers.
func (t *Target) AllowsNumber(n string) bool {
	if t.Embedded {
		return true
	}
	return ListsNumber(t.ProbeNumbers, n)
}

// ListsNumber says whether numbers holds n, however either is written
// (NormalizeNumber): the probe_numbers rule of a target, and of the
// godogsteps options that stand for one.
func ListsNumber(numbers []string, n string) bool {
	want := NormalizeNumber(n)
	return slices.ContainsFunc(numbers, func(p string) bool { return NormalizeNumber(p) == want })
}

// Secrets returns the non-empty keys and connector tokens, for
// redaction.
func (t *Target) Secrets() []string {
	var out []string
	for _, s := range []Secret{t.BuildKey, t.RuntimeKey, t.CallToken, t.ConnectorToken} {
		if s != "" {
			out = append(out, s.Reveal())
		}
	}
	for _, byEnv := range t.Connectors {
		for _, s := range byEnv {
			out = append(out, s.Reveal())
		}
	}
	return out
}

// Needs says which host families the command will call, so only the keys
// it uses are required.
type Needs struct {
	Build   bool
	Runtime bool
	// BuildKeyOnly says the command uses no key but the build key (gate
	// reads deployments and nothing else). A runtime_key, call_token,
	// connector, or a setting only a run reads (runField) that refers to
	// a variable not set is then no error, so a promotion job need hold
	// only the key it uses.
	BuildKeyOnly bool
}

// Selection is what the command line asks for.
type Selection struct {
	// Target is --target (or AGENTTEST_TARGET); empty selects the file's
	// default_target, if any.
	Target string
	// TargetFrom is the variable that set Target when the command line
	// did not (AGENTTEST_TARGET), for its problems to name it.
	TargetFrom string
	// Env is --env; it wins over AGENTTEST_ENV and the target's env.
	Env string
	// Sim is --sim: use the embedded simulator whatever is configured.
	Sim bool
	// Getenv reads the environment (State's, never the process's).
	Getenv func(string) (string, bool)
	Needs  Needs
}

// getenv is the value of a variable; set to nothing is as not set.
func (s Selection) getenv(name string) string {
	v, _ := s.lookup(name)
	return v
}

func (s Selection) lookup(name string) (string, bool) {
	if s.Getenv == nil || name == "" {
		return "", false
	}
	return s.Getenv(name)
}

// embedded is the embedded simulator's target t with the settings the
// environment gives it: those of the agent behind it, which the
// simulator's definitions (--sim-agents) may play as any platform would
// (AGENTTEST_MESSAGING_QUIET, for an agent whose answers pause).
func embedded(t *Target, sel Selection, diags diag.Diagnostics) (*Target, diag.Diagnostics) {
	if v := sel.getenv(EnvMessagingQuiet); v != "" {
		d, err := ParseMessagingQuiet(v)
		if err != nil {
			return t, diags.Errorf(diag.Pos{}, "%s: messaging_quiet: %v", EnvMessagingQuiet, err)
		}
		t.MessagingQuiet = d
	}
	return t, diags
}

// Resolve picks the target and applies precedence. With --sim, or when no
// target is selected (no --target, no default_target) and neither
// AGENTTEST_BUILD_URL nor AGENTTEST_RUNTIME_URL is set, it returns an
// Embedded target. f may be nil (no config file). Problems are returned all
// at once; diagnostics never contain a key.
func Resolve(f *File, sel Selection) (*Target, diag.Diagnostics) {
	var diags diag.Diagnostics
	env := sel.Env
	if env == "" {
		env = sel.getenv(EnvEnv)
		if env != "" && !reply.ValidEnv(env) {
			diags = diags.Errorf(diag.Pos{}, "%s=%s", EnvEnv, notAnEnv(env))
		}
	}
	envFrom := ""
	switch {
	case sel.Env != "":
		envFrom = "--env"
	case env != "":
		envFrom = EnvEnv
	}
	if sel.Sim {
		return embedded(&Target{Name: SimTargetName, Source: FromEmbedded, Env: env, EnvFrom: envFrom, Embedded: true, Forced: true}, sel, diags)
	}

	name := sel.Target
	if name == "" && f != nil {
		name = f.DefaultTarget
	}
	var def *TargetDef
	if name != "" {
		def = f.Target(name)
		if def == nil {
			d := diag.Diagnostic{Message: fmt.Sprintf("unknown target %q", name)}
			if sel.TargetFrom != "" {
				d.Message += " (set by " + sel.TargetFrom + ")"
			}
			switch {
			case f == nil:
				// The usual cause: a run from another directory than the
				// config file's, or a CI job the file was not copied to.
				d.Hint = "no config file was read: ./agenttest.yaml is not in the working directory; targets are defined there, or in the file --config FILE names"
			case len(f.Targets) == 0:
				d.Hint = f.Path + " defines no targets: add it under targets:"
			case diag.Suggest(name, f.TargetNames()) != "":
				d.Hint = diag.DidYouMean(name, f.TargetNames())
			default:
				d.Hint = "targets: " + strings.Join(f.TargetNames(), ", ")
			}
			return nil, diags.Append(d)
		}
	}
	if def == nil && sel.getenv(EnvBuildURL) == "" && sel.getenv(EnvRuntimeURL) == "" {
		return embedded(&Target{Name: SimTargetName, Source: FromEmbedded, Env: env, EnvFrom: envFrom, Embedded: true}, sel, diags)
	}

	t := &Target{Name: EnvTargetName, Source: FromEnv}
	if def != nil {
		t.Name, t.Source, t.Pos = def.Name, FromConfig, def.Pos
	} else {
		def = &TargetDef{}
	}
	r := resolver{sel: sel, t: t, diags: diags}
	t.BuildURL = r.field("build_url", def.BuildURL, EnvBuildURL)
	t.RuntimeURL = r.field("runtime_url", def.RuntimeURL, EnvRuntimeURL)
	t.MessagingURL = r.field("messaging_url", def.MessagingURL, EnvMessagingURL)
	t.AccountID = r.field("account_id", def.AccountID, EnvAccountID)
	t.AgentID = r.field("agent_id", def.AgentID, EnvAgentID)
	if envFrom != "" {
		// --env stands alone, AGENTTEST_ENV unread (checked with the
		// selection above: reported once). The file's env: is still
		// read, without the variable it loses to: the connectors
		// written beside it belong to it (connectorEnv).
		r.field("env", def.Env, "")
		t.Env = env
	} else {
		t.Env = r.field("env", def.Env, EnvEnv)
	}
	t.EnvFrom = envFrom
	if envFrom == "" && t.Env != "" {
		t.EnvFrom = fmt.Sprintf("target %q env (%s)", t.Name, def.Env.Pos)
	}
	t.WebhookListen = r.runField("webhook_listen", def.WebhookListen, EnvWebhookListen)
	t.WebhookURL = r.runField("webhook_url", def.WebhookURL, EnvWebhookURL)
	t.SMSConnectorID = r.runField("sms_connector_id", def.SMSConnectorID, EnvSMSConnectorID)
	for _, c := range def.SMSConnectorIDs {
		setPerAgent(&t.SMSConnectorIDs, c, r.runField(c.Setting(), c.Token, ""))
	}
	t.Brand = r.field("brand", def.Brand, EnvBrand)
	if def.AllowLive != nil {
		t.AllowLive = *def.AllowLive
	}
	t.ProbeNumbersPos = def.ProbeNumbersPos
	for _, n := range def.ProbeNumbers {
		if v := r.runField("probe_numbers", n, ""); v != "" {
			t.ProbeNumbers = append(t.ProbeNumbers, v)
		}
	}
	t.BuildKey = r.key("build_key", def.BuildKey, EnvBuildKey)
	t.RuntimeKey = r.key("runtime_key", def.RuntimeKey, EnvRuntimeKey)
	t.CallToken = r.key("call_token", def.CallToken, EnvCallToken)
	r.resolveMessaging(def)
	if def.AllowHTTP != nil {
		t.AllowHTTP = *def.AllowHTTP
	}
	if v := r.field("max_reply_bytes", def.MaxReplyBytes, ""); v != "" {
		t.MaxReplyBytes, _ = ParseReplyBytes(v) // field reported a bad value
	}
	if v := r.field("rate", def.Rate, ""); v != "" {
		t.Rate, _ = ParseRate(v) // field reported a bad value
	}
	if v := r.field("rate_wait", def.RateWait, ""); v != "" {
		if d, err := ParseRateWait(v); err == nil {
			t.RateWait = &d
		}
	}
	r.transport(def)
	r.keysInSettings(def)
	r.probeNumbers(def)
	r.queries(def)
	r.keysFollowHosts(def)

	if sel.Needs.Build {
		r.require(t.BuildURL != "", "build_url", EnvBuildURL)
		r.require(t.BuildKey != "", "build_key", EnvBuildKey)
	}
	if sel.Needs.Runtime {
		r.require(t.RuntimeURL != "", "runtime_url", EnvRuntimeURL)
		r.require(t.RuntimeKey != "", "runtime_key", EnvRuntimeKey)
	}
	return t, redactDiags(r.diags, t.Secrets())
}

// redactDiags masks the target's keys in the diagnostics, which quote
// the values of other settings: a key that reached one of them (a
// build_url of https://apikey:${env:KEY}@host, a key variable named in
// account_id) would otherwise be printed.
func redactDiags(diags diag.Diagnostics, keys []string) diag.Diagnostics {
	if len(diags) == 0 {
		return diags // the usual case: no redactor to build
	}
	red, err := secret.New(keys...)
	if err != nil {
		return diags // key() refused every key New cannot take
	}
	return RedactDiags(diags, red)
}

// RedactDiags masks red's keys in what the diagnostics say and echo,
// and in the file they name: a key written where a setting or a suite
// has it by mistake is what a problem on that line quotes. An echoed
// line that holds a key is masked before it is cut to its excerpt, its
// column moved past the masks (diag.MaskedExcerpt). The diagnostics are
// changed in place.
func RedactDiags(diags diag.Diagnostics, red *secret.Redactor) diag.Diagnostics {
	if red.Empty() {
		return diags
	}
	// The diagnostics of a line share its text (a slice of the file's):
	// a long line with many problems is scanned once, not once each.
	var last, lastMasked string
	for i := range diags {
		d := &diags[i]
		d.Message, d.Hint = red.String(d.Message), red.String(d.Hint)
		// The file's path too: one holding a key is refused for it.
		d.Pos.File = red.String(d.Pos.File)
		if d.Source == "" {
			continue
		}
		if d.Source != last {
			last, lastMasked = d.Source, red.String(d.Source)
		}
		if lastMasked != last {
			d.Source, d.SourceCol = diag.MaskedExcerpt(d.Source, cmp.Or(d.SourceCol, d.Pos.Col), red.String, red.Reach())
		}
	}
	return diags
}

// resolver applies the precedence of one target field by field and
// collects the problems.
type resolver struct {
	sel   Selection
	t     *Target
	diags diag.Diagnostics
}

func (r *resolver) what() string {
	if r.t.Source == FromConfig {
		return fmt.Sprintf("target %q", r.t.Name)
	}
	return "the target from AGENTTEST_* variables"
}

// field returns the environment override when set, else the config value
// with its ${env:NAME} references expanded, and validates the result.
func (r *resolver) field(key string, fld Field, envName string) string {
	if v := r.sel.getenv(envName); v != "" {
		if msg := validateValue(key, v); msg != "" {
			r.diags = r.diags.Errorf(diag.Pos{}, "%s: %s", envName, msg)
		}
		return v
	}
	if fld.Value == "" {
		return ""
	}
	v, missing := r.expand(fld.Value)
	if len(missing) > 0 {
		hint := "set " + strings.Join(missing, ", ")
		// Some settings have no variable of their own, and one may refer
		// to its own (build_url: ${env:AGENTTEST_BUILD_URL}).
		if envName != "" && !slices.Contains(missing, envName) {
			hint += fmt.Sprintf(", or %s to override it", envName)
		}
		r.diags = r.diags.Append(diag.Diagnostic{Pos: fld.Pos,
			Message: fmt.Sprintf("%s: %s refers to %s", r.what(), key, r.notSet(missing)),
			Hint:    hint})
		return ""
	}
	if msg := validateValue(key, v); msg != "" {
		r.diags = r.diags.Errorf(fld.Pos, "%s: %s", r.what(), msg)
	}
	return v
}

// runField is field for a setting only a run reads (the webhook
// receiver's addresses, the SMS connector ids, the probe numbers): a
// command that uses the build key alone (gate) never reads them, so a
// variable they refer to that is not set is no error there, as for the
// keys beside them, and a promotion job need not hold the nightly job's
// variables to gate on its target.
func (r *resolver) runField(key string, fld Field, envName string) string {
	if r.sel.Needs.BuildKeyOnly && r.sel.getenv(envName) == "" {
		if _, missing := r.expand(fld.Value); len(missing) > 0 {
			return ""
		}
	}
	return r.field(key, fld, envName)
}

// setting is a target setting as resolved: its key, its value, the
// variable that overrides it and where the config file wrote it.
type setting struct {
	key, value, envName string
	fld                 Field
}

// urlSettings are the target's base URLs.
func (r *resolver) urlSettings(def *TargetDef) []setting {
	return []setting{
		{"build_url", r.t.BuildURL, EnvBuildURL, def.BuildURL},
		{"runtime_url", r.t.RuntimeURL, EnvRuntimeURL, def.RuntimeURL},
		{"messaging_url", r.t.MessagingURL, EnvMessagingURL, def.MessagingURL},
	}
}

// source is where a diagnostic of s points and how it names s: at its
// place in the config file by its key, or, when its variable set it, at
// no place by the variable's name.
func (r *resolver) source(s setting) (diag.Pos, string) {
	if r.sel.getenv(s.envName) != "" {
		return diag.Pos{}, s.envName
	}
	return s.fld.Pos, s.key
}

// transport refuses plain http:// (and ws://) URLs to hosts that are not
// loopback, where a key would cross the network in clear text, unless the
// target sets allow_http: true, which warns instead.
func (r *resolver) transport(def *TargetDef) {
	t := r.t
	for _, u := range r.urlSettings(def) {
		if u.value == "" {
			continue
		}
		if platform.CheckScheme(u.value, false) == nil {
			continue
		}
		// CheckScheme parsed it. Shown as the URL settings' own problems
		// show it: a query or fragment may hold a key of another service.
		parsed, _ := url.Parse(u.value)
		pos, where := r.source(u)
		if t.AllowHTTP {
			r.diags = r.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: def.AllowHTTPPos,
				Message: fmt.Sprintf("%s: allow_http is set, so the API key travels in clear text to %s (%s)", r.what(), hostOf(u.value), where),
				Hint:    "use https:// and remove allow_http"})
			continue
		}
		r.diags = r.diags.Append(diag.Diagnostic{Pos: pos,
			Message: fmt.Sprintf("%s: %s %q is plain http to a host that is not loopback: the API key would travel in clear text", r.what(), where, platform.WithoutQuery(parsed)),
			Hint:    "use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run)"})
	}
}

// keysInSettings refuses a key written into a setting that is not a key
// (build_url: https://build.example.com/${env:BUILD_KEY}, agent_id:
// ${env:BUILD_KEY}). Keys travel only in the headers of a call; such a
// setting would carry the key in a URL, and into every report that names
// the target's URLs and ids.
func (r *resolver) keysInSettings(def *TargetDef) {
	t := r.t
	type keySetting struct {
		name, key string
		// red is the key's own redactor, built when a setting holds one
		// of the keys: the one that says which is rarely needed.
		red *secret.Redactor
	}
	var keys []keySetting
	add := func(name string, s Secret) {
		if s == "" || secret.CheckKey(name, s.Reveal()) != nil {
			return
		}
		keys = append(keys, keySetting{name: name, key: s.Reveal()})
	}
	add("build_key", t.BuildKey)
	add("runtime_key", t.RuntimeKey)
	add("call_token", t.CallToken)
	add("connector_token", t.ConnectorToken)
	for _, c := range def.Connectors {
		add(c.Setting(), t.Connectors[c.Agent][c.Env])
	}
	if len(keys) == 0 {
		return
	}
	// Every setting is checked against all the keys at once, and only
	// one that holds some key against each: a redactor per key, built
	// for every command though a setting rarely holds a key, cost about a
	// quarter of what the command's own redactor does.
	all := make([]string, len(keys))
	for i, k := range keys {
		all[i] = k.key
	}
	anyKey, err := secret.New(all...)
	if err != nil {
		return // checked: not reached
	}
	settings := append(r.urlSettings(def), []setting{
		{"messaging_host", t.MessagingHost, EnvMessagingHost, def.MessagingHost},
		{"brand", t.Brand, EnvBrand, def.Brand},
		{"account_id", t.AccountID, EnvAccountID, def.AccountID},
		{"agent_id", t.AgentID, EnvAgentID, def.AgentID},
		{"webhook_listen", t.WebhookListen, EnvWebhookListen, def.WebhookListen},
		{"webhook_url", t.WebhookURL, EnvWebhookURL, def.WebhookURL},
		{"sms_connector_id", t.SMSConnectorID, EnvSMSConnectorID, def.SMSConnectorID},
	}...)
	for _, c := range def.SMSConnectorIDs {
		settings = append(settings, setting{c.Setting(), t.SMSConnectorIDs[c.Agent][c.Env], "", c.Token})
	}
	// The settings the target holds parsed (or, probe numbers, one by
	// one) have no variable: a key of digits alone reads as a number, a
	// size or a rate, so their text is checked as the file expands it.
	// (env cannot hold a key: its three values are shorter than one.)
	fileOnly := []setting{{key: "max_reply_bytes", fld: def.MaxReplyBytes}, {key: "rate", fld: def.Rate}, {key: "rate_wait", fld: def.RateWait}}
	for _, n := range def.ProbeNumbers {
		fileOnly = append(fileOnly, setting{key: "probe_numbers", fld: n})
	}
	for _, f := range fileOnly {
		f.value, _ = r.expand(f.fld.Value) // a missing variable is reported
		settings = append(settings, f)
	}
	for _, f := range settings {
		if f.value == "" || r.alreadyReported(f.key) {
			continue
		}
		if !anyKey.Contains(f.value) {
			continue
		}
		pos, where := r.source(f)
		for i := range keys {
			k := &keys[i]
			if k.red == nil {
				k.red, _ = secret.New(k.key) // checked: one of all's keys
			}
			if k.red.Contains(f.value) {
				r.diags = r.diags.Append(diag.Diagnostic{Pos: pos,
					Message: fmt.Sprintf("%s: %s holds the %s: a key is sent only in the headers of a call, never in a URL or an id", r.what(), where, k.name),
					Hint:    fmt.Sprintf("remove the key from %s; agenttest sends the %s with every call itself", where, k.name)})
				break
			}
		}
	}
}

// probeNumbers refuses a probe number whose ${env:NAME} references
// expand to something that is not a phone number: Load checks the numbers
// written out, and what a variable holds shows only here. The message
// names the reference as written and its variables, never the value,
// which may be anything the environment holds (a key there is reported
// as such by keysInSettings, at the same place, and not again).
func (r *resolver) probeNumbers(def *TargetDef) {
	for _, n := range def.ProbeNumbers {
		v, missing := r.expand(n.Value)
		if v == "" || len(missing) > 0 || IsPhoneNumber(v) || r.reportedAt(n.Pos) {
			continue
		}
		var names []string
		for _, m := range envRefRe.FindAllStringSubmatch(n.Value, -1) {
			names = append(names, m[1])
		}
		vars := strings.Join(names, ", ")
		r.diags = r.diags.Append(diag.Diagnostic{Pos: n.Pos,
			Message: fmt.Sprintf("%s: probe_numbers: %s is not a phone number once %s is expanded", r.what(), n.Value, vars),
			Hint:    fmt.Sprintf("set %s so that it reads as an E.164 number such as +447700900001 (+ and 6 to 15 digits)", vars)})
	}
}

// reportedAt reports whether a diagnostic points at pos already.
func (r *resolver) reportedAt(pos diag.Pos) bool {
	for _, d := range r.diags {
		if d.Pos == pos {
			return true
		}
	}
	return false
}

// queries refuses a query or fragment in the target's URL settings
// (queryProblem), from the file or a variable, once nothing
// more telling was said of the setting.
func (r *resolver) queries(def *TargetDef) {
	for _, f := range r.urlSettings(def) {
		if f.value == "" || r.alreadyReported(f.key) || r.alreadyReported(f.envName) {
			continue
		}
		msg := queryProblem(f.key, f.value)
		if msg == "" {
			continue
		}
		if r.sel.getenv(f.envName) != "" {
			r.diags = r.diags.Errorf(diag.Pos{}, "%s: %s", f.envName, msg)
		} else {
			r.diags = r.diags.Errorf(f.fld.Pos, "%s: %s", r.what(), msg)
		}
	}
}

// keysFollowHosts refuses a key written in the config file for a host
// that an AGENTTEST_*_URL variable replaces with another: precedence works
// field by field, so the target's key would go to the variable's host,
// which the file never named for it (a variable left in a CI job's
// environment for another target would collect the keys of every target
// run there). A key from its own variable goes with the variable's host,
// as does a key of a target whose file names no URL for it.
func (r *resolver) keysFollowHosts(def *TargetDef) {
	type key struct {
		name, envName string
		fld           Field
	}
	connectors := []key{{"connector_token", EnvConnectorToken, def.ConnectorToken}}
	for _, c := range def.Connectors {
		connectors = append(connectors, key{c.Setting(), "", c.Token})
	}
	for _, h := range []struct {
		urlKey, urlEnv string
		fld            Field
		keys           []key
	}{
		{"build_url", EnvBuildURL, def.BuildURL, []key{{"build_key", EnvBuildKey, def.BuildKey}}},
		{"runtime_url", EnvRuntimeURL, def.RuntimeURL, []key{{"runtime_key", EnvRuntimeKey, def.RuntimeKey}, {"call_token", EnvCallToken, def.CallToken}}},
		{"messaging_url", EnvMessagingURL, def.MessagingURL, connectors},
	} {
		over := r.sel.getenv(h.urlEnv)
		if over == "" || h.fld.Value == "" {
			continue
		}
		b := origin(over)
		if b == nil {
			continue // field refused the variable's URL
		}
		// A file URL that names no host (its variable unset, or a value
		// without one) is not the variable's host either: the file wrote
		// the key for whatever host that variable names in another job.
		own, missing := r.expand(h.fld.Value)
		a := origin(own)
		var configuredFor string
		sentTo := b.Host
		switch {
		case len(missing) > 0:
			configuredFor = "the host of " + r.notSet(missing)
		case a == nil:
			configuredFor = fmt.Sprintf("a %s without a host", h.urlKey)
		case platform.SameOrigin(a, b):
			continue
		case strings.EqualFold(a.Host, b.Host):
			// Only the schemes differ (http:// beside https://): the
			// hosts alone would name one host twice.
			configuredFor, sentTo = schemeHost(own), schemeHost(over)
		default:
			configuredFor = a.Host
		}
		for _, k := range h.keys {
			if k.fld.Value == "" || (k.envName != "" && r.sel.getenv(k.envName) != "") {
				continue
			}
			hint := fmt.Sprintf("unset %s, or set the target's %s to it", h.urlEnv, h.urlKey)
			if k.envName != "" {
				hint = fmt.Sprintf("set %s to the key of %s as well, or unset %s", k.envName, sentTo, h.urlEnv)
			}
			r.diags = r.diags.Append(diag.Diagnostic{Pos: k.fld.Pos,
				Message: fmt.Sprintf("%s: %s is written for %s (%s at %s), but %s sends it to %s: a key goes only to the host it was configured for",
					r.what(), k.name, configuredFor, h.urlKey, h.fld.Pos, h.urlEnv, sentTo),
				Hint: hint})
		}
	}
}

// origin parses a target URL for SameOrigin, a WebSocket scheme as the
// HTTP one it upgrades from; nil when it has no host.
func origin(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	switch strings.ToLower(u.Scheme) {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	return u
}

// schemeHost is the scheme and host:port of a URL, for a message that
// tells apart two URLs whose hosts are the same.
func schemeHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return raw
}

// hostOf is the host:port of a URL, for messages.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// key resolves an API key: AGENTTEST_*_KEY wins, else the variable the
// config's ${env:NAME} reference names. A key too short (or otherwise
// unusable) to be told apart from ordinary text is refused.
func (r *resolver) key(key string, fld Field, envName string) Secret {
	if v := r.sel.getenv(envName); v != "" {
		if err := secret.CheckKey(fmt.Sprintf("%s (from %s)", key, envName), v); err != nil {
			r.diags = r.diags.Errorf(diag.Pos{}, "%s: %v", r.what(), err)
			return ""
		}
		r.keyVar(key, envName)
		return Secret(v)
	}
	if fld.Value == "" {
		return ""
	}
	m := keyRefRe.FindStringSubmatch(fld.Value)
	if m == nil {
		// Load already reported the literal; never use or echo it.
		return ""
	}
	v := r.sel.getenv(m[1])
	if v == "" && r.sel.Needs.BuildKeyOnly && key != "build_key" {
		return ""
	}
	if v == "" {
		hint := "set " + m[1]
		if envName != "" && envName != m[1] {
			hint += fmt.Sprintf(" (or %s)", envName)
		}
		r.diags = r.diags.Append(diag.Diagnostic{Pos: fld.Pos,
			Message: fmt.Sprintf("%s: %s refers to %s", r.what(), key, r.notSet([]string{m[1]})),
			Hint:    hint})
		return ""
	}
	if err := secret.CheckKey(fmt.Sprintf("%s (from %s)", key, m[1]), v); err != nil {
		r.diags = r.diags.Errorf(fld.Pos, "%s: %v", r.what(), err)
		return ""
	}
	r.keyVar(key, m[1])
	return Secret(v)
}

// keyVar records the variable a key setting was read from.
func (r *resolver) keyVar(key, envName string) {
	if r.t.KeyVars == nil {
		r.t.KeyVars = map[string]string{}
	}
	r.t.KeyVars[key] = envName
}

// KeyVariables maps every environment variable that holds an API key,
// token or secret to what it holds: AGENTTEST_BUILD_KEY,
// AGENTTEST_RUNTIME_KEY, AGENTTEST_CALL_TOKEN, AGENTTEST_CONNECTOR_TOKEN,
// AGENTTEST_WEBHOOK_SECRET (the webhook signing secret), and each variable a
// build_key, runtime_key, call_token, connector_token or connectors entry
// of f refers to. A suite may not read any of them (lint refuses
// ${env:NAME} of one). f may be nil.
func KeyVariables(f *File) map[string]string {
	vars := map[string]string{
		EnvBuildKey:       "the build key",
		EnvRuntimeKey:     "the runtime key",
		EnvCallToken:      "the call token",
		EnvConnectorToken: "the connector token",
		EnvWebhookSecret:  "the webhook signing secret",
	}
	if f == nil {
		return vars
	}
	type keyField struct {
		name string
		fld  Field
	}
	for _, t := range f.Targets {
		keys := []keyField{{"build_key", t.BuildKey}, {"runtime_key", t.RuntimeKey}, {"call_token", t.CallToken}, {"connector_token", t.ConnectorToken}}
		for _, c := range t.Connectors {
			keys = append(keys, keyField{c.Setting(), c.Token})
		}
		for _, k := range keys {
			if m := keyRefRe.FindStringSubmatch(k.fld.Value); m != nil {
				if _, known := vars[m[1]]; !known {
					vars[m[1]] = fmt.Sprintf("the %s of target %q (%s)", k.name, t.Name, k.fld.Pos)
				}
			}
		}
	}
	return vars
}

func (r *resolver) require(ok bool, key, envName string) {
	if ok || r.alreadyReported(key) {
		return
	}
	r.diags = r.diags.Append(diag.Diagnostic{Pos: r.t.Pos,
		Message: fmt.Sprintf("%s has no %s", r.what(), key),
		Hint:    fmt.Sprintf("set %s, or add %s to the target in agenttest.yaml", envName, keyHint(key))})
}

// alreadyReported avoids a second "has no build_key" after "build_key
// refers to X, which is not set".
func (r *resolver) alreadyReported(key string) bool {
	for _, d := range r.diags {
		if strings.Contains(d.Message, ": "+key+" ") {
			return true
		}
	}
	return false
}

func keyHint(key string) string {
	if isKeySetting(key) {
		return key + ": ${env:NAME}"
	}
	return key
}

// keyEnv is the AGENTTEST_* variable of a key field.
func keyEnv(key string) string {
	switch key {
	case "runtime_key":
		return EnvRuntimeKey
	case "call_token":
		return EnvCallToken
	case "connector_token":
		return EnvConnectorToken
	}
	return EnvBuildKey
}

// notSet names the variables expand found missing and says what they
// are: not set, or set to nothing, which counts as not set but is what a
// CI job passes for a secret the repository does not have (GitHub's
// ${{ secrets.X }}), and which "not set" would contradict.
func (r *resolver) notSet(names []string) string {
	empty := 0
	for _, n := range names {
		if _, ok := r.sel.lookup(n); ok {
			empty++
		}
	}
	list := strings.Join(names, ", ")
	switch {
	case empty == 0 && len(names) == 1:
		return list + ", which is not set"
	case empty == 0:
		return list + ", which are not set"
	case len(names) == 1:
		return list + ", which is set but empty (a CI secret that does not exist is passed as an empty value)"
	}
	return list + ", which are not set or empty (a CI secret that does not exist is passed as an empty value)"
}

// expand replaces ${env:NAME} references and lists the unset (or empty) ones.
func (r *resolver) expand(s string) (string, []string) {
	var missing []string
	out := envRefRe.ReplaceAllStringFunc(s, func(ref string) string {
		name := envRefRe.FindStringSubmatch(ref)[1]
		v := r.sel.getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	return out, missing
}

// notAnEnv says that v is not a platform environment, with the one meant
// by its spelling or by a pipeline's name for it (prod for live).
func notAnEnv(v string) string {
	msg := fmt.Sprintf("%q is not one of %s", v, strings.Join(reply.Envs, ", "))
	if env := cmp.Or(diag.Suggest(v, reply.Envs), reply.EnvMeant(v)); env != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", env)
	}
	return msg
}
