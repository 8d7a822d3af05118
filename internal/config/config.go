// Package config loads agenttest.yaml, the file of named targets and run
// defaults, and resolves the target a run talks to from that file, the
// AGENTTEST_* environment and the command line.
//
// The file is decoded through yaml.Node so that every problem carries
// file:line:col, and every problem of the file is reported at once:
//
//	f, diags := config.Load("agenttest.yaml", src)
//	if diags.HasErrors() { ... }
//	t, diags := config.Resolve(f, config.Selection{Target: "sandbox", Getenv: getenv})
//	if t.Embedded { ... start the simulator ... }
//
// API keys never live in the file: build_key, runtime_key, call_token,
// connector_token and the tokens of connectors accept only ${env:NAME}
// references, and a literal value is an error. Values of keys
// are held as Secret, which prints as [REDACTED].
package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/yamlerr"
)

// DefaultPath is the config file read when --config is not given and the
// file exists in the working directory.
const DefaultPath = "agenttest.yaml"

// File is a decoded agenttest.yaml.
type File struct {
	// Path is the file as read, for positions.
	Path string
	// DefaultTarget names the target used when --target is not given;
	// empty means "none": without --target or AGENTTEST_* URLs the run uses
	// the embedded simulator.
	DefaultTarget    string
	DefaultTargetPos diag.Pos
	// Targets in file order.
	Targets []*TargetDef
	// Run holds run defaults; flags and AGENTTEST_* variables override them.
	Run RunDefaults

	// masked is the source with the values of secret-looking keys blanked,
	// for echoing source lines under diagnostics.
	masked []byte
}

// Target returns the target named name, or nil.
func (f *File) Target(name string) *TargetDef {
	if f == nil {
		return nil
	}
	for _, t := range f.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TargetNames lists the target names in file order.
func (f *File) TargetNames() []string {
	if f == nil {
		return nil
	}
	names := make([]string, len(f.Targets))
	for i, t := range f.Targets {
		names[i] = t.Name
	}
	return names
}

// Source returns the file's text with the value of every key whose name
// looks secret (build_key, runtime_key, or any key containing "key",
// "secret", "token", "password" or "connector") replaced by [REDACTED]. Print this, never
// the raw file, under diagnostics: a literal key is exactly the kind of
// mistake a diagnostic points at.
func (f *File) Source() []byte {
	if f == nil {
		return nil
	}
	return f.masked
}

// Field is one string value of a target as written, with its position.
// Value may contain ${env:NAME} references, expanded by Resolve.
type Field struct {
	Value string
	Pos   diag.Pos
}

// TargetDef is one entry of `targets:` as written.
type TargetDef struct {
	Name string
	Pos  diag.Pos
	// BuildURL is {build_url}: debug chat, agents, alerts, webhooks.
	BuildURL Field
	// RuntimeURL is {runtime_url}: conversations, handoff state.
	RuntimeURL Field
	// MessagingURL is {messaging_url}: the real-time Messaging API.
	MessagingURL Field
	// MessagingHost is the domain or app namespace the connectors are
	// registered to, sent as X-Host.
	MessagingHost Field
	// MessagingQuiet is how long a web chat waits for the agent to go on
	// after its typing indicator went off with an answer (a duration;
	// ParseMessagingQuiet).
	MessagingQuiet Field
	// Brand is the platform's brand word, for which the reference writes
	// Vendor (X-Vendor-Auth-Token, X-Vendor-Signature) or VENDOR
	// (EVENT_TYPE_VENDOR_AGENT_JOINED).
	Brand Field
	// ConnectorToken is the Messaging connector of the target's agent in
	// its env: an ${env:NAME} reference, never a literal.
	ConnectorToken Field
	// Connectors are the connectors of other agents (or other
	// environments): agent -> token for the target's env, or agent ->
	// env -> token. Each token is an ${env:NAME} reference.
	Connectors []ConnectorDef
	// ConnectorsPos is where connectors: is written.
	ConnectorsPos diag.Pos
	// AccountID is the workspace: ws-XXXXXXXX or a slug.
	AccountID Field
	// AgentID is the default agent (project id): a slug or PROJECT-XXXXXXXX.
	AgentID Field
	// Env is the default clientEnv: sandbox, pre-release or live.
	Env Field
	// BuildKey and RuntimeKey are ${env:NAME} references, never literals.
	BuildKey   Field
	RuntimeKey Field
	// CallToken is the X-<Brand>-Auth-Token of outbound calling and SMS
	// (probes), an ${env:NAME} reference like the keys. Unset means the
	// runtime key.
	CallToken Field
	// WebhookListen and WebhookURL start a webhook receiver in `run`
	// (--webhook-listen, --webhook-url): the address to listen on and the
	// public URL the platform delivers to.
	WebhookListen Field
	WebhookURL    Field
	// AllowLive allows runs against the live environment (--allow-live);
	// nil means not set.
	AllowLive    *bool
	AllowLivePos diag.Pos
	// ProbeNumbers are the only numbers probes may call or text on this
	// target (live safety); nil means none is allowed.
	ProbeNumbers    []Field
	ProbeNumbersPos diag.Pos
	// SMSConnectorID is the X-TOKEN-ID of SMS probes (the connector id of
	// the project).
	SMSConnectorID Field
	// SMSConnectorIDs are the X-TOKEN-IDs of the SMS probes of named
	// agents, as connectors: writes them (agent -> id for the target's
	// env, or agent -> env -> id), in place of SMSConnectorID for them:
	// a connector id is one project's.
	SMSConnectorIDs []ConnectorDef
	// AllowHTTP accepts plain http:// URLs to hosts that are not
	// loopback (keys then travel in clear text); nil means not set.
	AllowHTTP    *bool
	AllowHTTPPos diag.Pos
	// MaxReplyBytes raises (or lowers) the size limit of a debug-chat
	// reply, in bytes.
	MaxReplyBytes Field
	// Rate caps the requests per second sent with each key (--rate);
	// RateWait is how long a case may wait on rate limits in all
	// (--rate-wait).
	Rate     Field
	RateWait Field
}

// RunDefaults are the `run:` section: defaults for `agenttest run` flags.
// A nil pointer or empty string means "not set in the file".
type RunDefaults struct {
	Pos         diag.Pos
	Parallel    *int
	Retries     *int
	TurnTimeout *time.Duration
	// ConfirmTimeout is the wait for what a confirmation or a probe
	// reads (--confirm-timeout).
	ConfirmTimeout *time.Duration
	// JUnit, JSON and HTML are report paths, relative to the working
	// directory.
	JUnit string
	JSON  string
	HTML  string
	// GateAlerts ends every run with the alert gate (--gate-alerts).
	GateAlerts *bool
}

var (
	topKeys    = []string{"default_target", "targets", "run"}
	targetKeys = []string{"build_url", "runtime_url", "messaging_url", "messaging_host", "brand", "account_id", "agent_id", "env", "build_key", "runtime_key", "call_token",
		"connector_token", "connectors", "webhook_listen", "webhook_url", "allow_live", "probe_numbers", "sms_connector_id", "sms_connector_ids", "allow_http", "max_reply_bytes",
		"rate", "rate_wait", "messaging_quiet"}
	runKeys = []string{"parallel", "retries", "turn_timeout", "confirm_timeout", "junit", "json", "html", "gate_alerts"}

	envRefRe = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)
	keyRefRe = regexp.MustCompile(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)
	// shellRefRe is a variable written as a shell writes it, $NAME or
	// ${NAME}, which the file does not expand.
	shellRefRe = regexp.MustCompile(`^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})$`)
	targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// Load decodes agenttest.yaml. path is used only for positions. Every
// problem of the file is returned; the File is usable only when the
// diagnostics hold no error.
func Load(path string, src []byte) (*File, diag.Diagnostics) {
	f := &File{Path: path}
	var root yaml.Node
	var diags diag.Diagnostics
	if err := yaml.Unmarshal(src, &root); err != nil {
		// No node tree to mask from: mask by the lines' keys, and the
		// values masked there in what the parser's message quotes.
		var values []string
		f.masked, values = maskSecretLines(src)
		d := yamlerr.Diagnostic(path, src, err)
		for _, v := range values {
			d.Message = strings.ReplaceAll(d.Message, v, "[REDACTED]")
			d.Hint = strings.ReplaceAll(d.Hint, v, "[REDACTED]")
		}
		return f, diags.Append(d)
	}
	f.masked = maskSecrets(src, &root)
	if root.Kind == 0 || len(root.Content) == 0 {
		return f, nil // an empty file configures nothing
	}
	top := root.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return f, nil
	}
	if top.Kind != yaml.MappingNode {
		return f, diags.Errorf(pos(path, top), "agenttest.yaml must be a mapping with keys %s", strings.Join(topKeys, ", "))
	}
	diags = forEachKey(path, top, keySet{allowed: topKeys, what: "top-level key", extensions: true}, diags, func(k, v *yaml.Node) diag.Diagnostics {
		var ds diag.Diagnostics
		switch k.Value {
		case "default_target":
			f.DefaultTarget, ds = scalar(path, v, k.Value, ds)
			f.DefaultTargetPos = pos(path, v)
		case "targets":
			ds = f.loadTargets(path, v, ds)
		case "run":
			ds = f.loadRun(path, v, ds)
		}
		return ds
	})
	if f.DefaultTarget != "" && f.Target(f.DefaultTarget) == nil {
		d := diag.Diagnostic{Pos: f.DefaultTargetPos, Message: fmt.Sprintf("default_target %q is not a target of this file", f.DefaultTarget)}
		if s := diag.Suggest(f.DefaultTarget, f.TargetNames()); s != "" {
			d.Hint = fmt.Sprintf("did you mean %q?", s)
		} else if len(f.Targets) > 0 {
			d.Hint = "targets: " + strings.Join(f.TargetNames(), ", ")
		}
		diags = diags.Append(d)
	}
	return f, diags
}

func (f *File) loadTargets(path string, n *yaml.Node, diags diag.Diagnostics) diag.Diagnostics {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return diags.Errorf(pos(path, n), "targets must be a mapping of target name to target")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if seen[name] {
			diags = diags.Errorf(pos(path, k), "target %q is defined twice", name)
			continue
		}
		seen[name] = true
		if !targetName.MatchString(name) {
			diags = diags.Errorf(pos(path, k), "target name %q must start with a letter or digit and hold only letters, digits, '.', '_' and '-'", name)
		}
		t := &TargetDef{Name: name, Pos: pos(path, k)}
		v = resolveAlias(v)
		if v.Kind != yaml.MappingNode {
			diags = diags.Errorf(pos(path, v), "target %q must be a mapping with keys %s", name, strings.Join(targetKeys, ", "))
			continue
		}
		diags = forEachKey(path, v, keySet{allowed: targetKeys, what: "target key"}, diags, func(k, v *yaml.Node) diag.Diagnostics {
			var ds diag.Diagnostics
			switch k.Value {
			case "probe_numbers":
				return t.loadProbeNumbers(path, v, ds)
			case "connectors":
				return t.loadConnectors(path, v, ds)
			case "sms_connector_ids":
				return t.loadSMSConnectors(path, v, ds)
			}
			fld := Field{Pos: pos(path, v)}
			fld.Value, ds = scalar(path, v, k.Value, ds)
			switch k.Value {
			case "build_url":
				t.BuildURL = fld
			case "runtime_url":
				t.RuntimeURL = fld
			case "messaging_url":
				t.MessagingURL = fld
			case "messaging_host":
				t.MessagingHost = fld
			case "messaging_quiet":
				t.MessagingQuiet = fld
			case "brand":
				t.Brand = fld
			case "account_id":
				t.AccountID = fld
			case "agent_id":
				t.AgentID = fld
			case "env":
				t.Env = fld
			case "webhook_listen":
				t.WebhookListen = fld
			case "webhook_url":
				t.WebhookURL = fld
			case "sms_connector_id":
				t.SMSConnectorID = fld
			case "allow_live", "allow_http":
				b, err := strconv.ParseBool(fld.Value)
				if err != nil || ds.HasErrors() {
					return ds.Errorf(fld.Pos, "%s must be true or false, not %q", k.Value, fld.Value)
				}
				if k.Value == "allow_live" {
					t.AllowLive, t.AllowLivePos = &b, fld.Pos
				} else {
					t.AllowHTTP, t.AllowHTTPPos = &b, fld.Pos
				}
			case "max_reply_bytes":
				t.MaxReplyBytes = fld
			case "rate":
				t.Rate = fld
			case "rate_wait":
				t.RateWait = fld
			case "build_key", "runtime_key", "call_token", "connector_token":
				// Never echo the value: it may be the very secret that must
				// not be in the file.
				if ds.HasErrors() {
					return ds
				}
				ds = checkKeyRef(k.Value, keyEnv(k.Value), fld, ds)
				switch k.Value {
				case "build_key":
					t.BuildKey = fld
				case "runtime_key":
					t.RuntimeKey = fld
				case "call_token":
					t.CallToken = fld
				default:
					t.ConnectorToken = fld
				}
			}
			if !isKeySetting(k.Value) && !ds.HasErrors() {
				ds = checkFieldSyntax(k.Value, fld, ds)
			}
			return ds
		})
		f.Targets = append(f.Targets, t)
	}
	return diags
}

// keySettings are the target settings that hold a secret: ${env:NAME}
// references only, never echoed, redacted everywhere, at least
// secret.MinLen characters once resolved. connectors: holds more of them,
// one per agent (and environment).
var keySettings = []string{"build_key", "runtime_key", "call_token", "connector_token"}

func isKeySetting(k string) bool { return slices.Contains(keySettings, k) }

// checkKeyRef refuses a secret written as a literal: keys and tokens are
// ${env:NAME} references only. envName is the variable the hint proposes.
func checkKeyRef(key, envName string, fld Field, diags diag.Diagnostics) diag.Diagnostics {
	if keyRefRe.MatchString(fld.Value) {
		return diags
	}
	if d, ok := shellRef(key, fld); ok {
		return diags.Append(d)
	}
	return diags.Append(diag.Diagnostic{Pos: fld.Pos,
		Message: fmt.Sprintf("%s must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file", key),
		Hint:    fmt.Sprintf("write %s: ${env:%s} and set that variable", key, envName)})
}

// shellRef is the problem of a value written as a shell variable, which
// the file does not expand, in any setting. The value is not echoed: a
// key setting's never is, and the name is the user's to read in the file.
func shellRef(key string, fld Field) (diag.Diagnostic, bool) {
	if !shellRefRe.MatchString(fld.Value) {
		return diag.Diagnostic{}, false
	}
	return diag.Diagnostic{Pos: fld.Pos,
		Message: fmt.Sprintf("%s is written as a shell variable ($NAME or ${NAME}), which agenttest does not expand: a variable is an ${env:NAME} reference", key),
		Hint:    fmt.Sprintf("write %s: ${env:NAME}, NAME the variable you wrote", key)}, true
}

// checkFieldSyntax validates a literal field value at load time; values
// with ${env:...} references are checked after expansion by Resolve.
func checkFieldSyntax(key string, fld Field, diags diag.Diagnostics) diag.Diagnostics {
	if fld.Value == "" || envRefRe.MatchString(fld.Value) {
		return diags
	}
	if d, ok := shellRef(key, fld); ok {
		return diags.Append(d)
	}
	msg := validateValue(key, fld.Value)
	if msg == "" {
		msg = queryProblem(key, fld.Value)
	}
	if msg != "" {
		diags = diags.Errorf(fld.Pos, "%s", msg)
	}
	return diags
}

// queryProblem refuses a query or fragment in a URL setting without
// showing it: the client refuses them too, but only once it is built,
// and a run with nothing to call would print the URL on the console and
// in every report, with an api_key= written there. Resolve checks it
// after keysInSettings, whose message names the key setting when the
// query holds one of the target's keys.
func queryProblem(key, v string) string {
	var ue *platform.URLError
	if errors.As(urlForm(key, v), &ue) && ue.Query {
		return key + " " + ue.Error()
	}
	return ""
}

// urlForm is the platform's check of a URL setting's form (nil for the
// other settings): config refuses at its place in agenttest.yaml what
// the client would refuse once built.
func urlForm(key, v string) error {
	switch key {
	case "build_url", "runtime_url":
		return platform.CheckBaseURL(v)
	case "messaging_url":
		return platform.CheckMessagingURL(v)
	}
	return nil
}

func (f *File) loadRun(path string, n *yaml.Node, diags diag.Diagnostics) diag.Diagnostics {
	n = resolveAlias(n)
	f.Run.Pos = pos(path, n)
	if n.Kind != yaml.MappingNode {
		return diags.Errorf(pos(path, n), "run must be a mapping with keys %s", strings.Join(runKeys, ", "))
	}
	return forEachKey(path, n, keySet{allowed: runKeys, what: "run key"}, diags, func(k, v *yaml.Node) diag.Diagnostics {
		var ds diag.Diagnostics
		s, ds := scalar(path, v, k.Value, ds)
		if ds.HasErrors() {
			return ds
		}
		p := pos(path, v)
		switch k.Value {
		case "parallel", "retries":
			i, err := strconv.Atoi(s)
			min := 1
			if k.Value == "retries" {
				min = 0
			}
			if err != nil || i < min {
				return ds.Errorf(p, "%s must be an integer of at least %d, not %q", k.Value, min, s)
			}
			if k.Value == "parallel" {
				f.Run.Parallel = &i
			} else {
				f.Run.Retries = &i
			}
		case "turn_timeout", "confirm_timeout":
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return ds.Errorf(p, "%s must be a positive duration such as 30s or 2m, not %q", k.Value, s)
			}
			if k.Value == "turn_timeout" {
				f.Run.TurnTimeout = &d
			} else {
				f.Run.ConfirmTimeout = &d
			}
		case "gate_alerts":
			b, err := strconv.ParseBool(s)
			if err != nil {
				return ds.Errorf(p, "gate_alerts must be true or false, not %q", s)
			}
			f.Run.GateAlerts = &b
		case "junit":
			f.Run.JUnit = s
		case "json":
			f.Run.JSON = s
		case "html":
			f.Run.HTML = s
		}
		if s == "" {
			ds = ds.Errorf(p, "%s must not be empty", k.Value)
		}
		return ds
	})
}

// keySet is what forEachKey accepts in one mapping: the allowed keys,
// what they are called in messages, and whether keys starting with "x-"
// pass unread (a place for YAML anchors, as in suites).
type keySet struct {
	allowed    []string
	what       string
	extensions bool
}

// forEachKey walks a mapping, diagnosing unknown and duplicate keys (with a
// "did you mean") and calling fn for every known one. YAML merge keys
// (<<: *anchor, or a list of anchors) bring in the keys of the mappings
// they name, as in suites: keys written in the mapping win over merged
// ones, so targets can share their hosts and override env.
func forEachKey(path string, m *yaml.Node, ks keySet, diags diag.Diagnostics, fn func(k, v *yaml.Node) diag.Diagnostics) diag.Diagnostics {
	seen := map[string]diag.Pos{}
	var merged []*yaml.Node // key, value, key, value, ...
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Tag == "!!merge" {
			var ds diag.Diagnostics
			merged, ds = mergeEntries(path, v, merged, 0)
			diags = append(diags, ds...)
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			diags = diags.Errorf(pos(path, k), "%q is given twice (first at line %d)", k.Value, prev.Line)
			continue
		}
		seen[k.Value] = pos(path, k)
		diags = eachKnown(path, k, v, ks, diags, fn)
	}
	for i := 0; i+1 < len(merged); i += 2 {
		k, v := merged[i], merged[i+1]
		if _, own := seen[k.Value]; own {
			continue // written in the mapping, or merged earlier
		}
		seen[k.Value] = pos(path, k)
		diags = eachKnown(path, k, v, ks, diags, fn)
	}
	return diags
}

// eachKnown calls fn for a key of ks, and diagnoses any other.
func eachKnown(path string, k, v *yaml.Node, ks keySet, diags diag.Diagnostics, fn func(k, v *yaml.Node) diag.Diagnostics) diag.Diagnostics {
	if ks.extensions && strings.HasPrefix(k.Value, "x-") {
		return diags
	}
	if !slices.Contains(ks.allowed, k.Value) {
		d := diag.Diagnostic{Pos: pos(path, k), Message: fmt.Sprintf("unknown %s %q", ks.what, k.Value)}
		if s := diag.Suggest(k.Value, ks.allowed); s != "" {
			d.Hint = fmt.Sprintf("did you mean %q?", s)
		} else {
			d.Hint = "known keys: " + strings.Join(ks.allowed, ", ")
		}
		return diags.Append(d)
	}
	return append(diags, fn(k, v)...)
}

// maxMergeDepth bounds merges of merges: an anchor that merges itself
// would otherwise never end.
const maxMergeDepth = 16

// mergeEntries appends to out the entries the value of a << key brings in:
// a mapping's, or those of each mapping of a list, earlier ones first, each
// with its own merges applied.
func mergeEntries(path string, v *yaml.Node, out []*yaml.Node, depth int) ([]*yaml.Node, diag.Diagnostics) {
	var diags diag.Diagnostics
	v = resolveAlias(v)
	if depth > maxMergeDepth {
		return out, diags.Errorf(pos(path, v), "<< merges are nested more than %d deep (does an anchor merge itself?)", maxMergeDepth)
	}
	switch v.Kind {
	case yaml.SequenceNode:
		for _, item := range v.Content {
			var ds diag.Diagnostics
			out, ds = mergeEntries(path, item, out, depth+1)
			diags = append(diags, ds...)
		}
		return out, diags
	case yaml.MappingNode:
		var own, inner []*yaml.Node
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Tag == "!!merge" {
				var ds diag.Diagnostics
				inner, ds = mergeEntries(path, v.Content[i+1], inner, depth+1)
				diags = append(diags, ds...)
				continue
			}
			own = append(own, v.Content[i], v.Content[i+1])
		}
		return append(append(out, own...), inner...), diags
	}
	return out, diags.Errorf(pos(path, v), "<< must merge a mapping (<<: *anchor) or a list of them, not a %s", kindName(v.Kind))
}

// resolveAlias follows an alias (*anchor) to the node it names.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// scalar reads a scalar value as text; null reads as "".
func scalar(path string, n *yaml.Node, key string, diags diag.Diagnostics) (string, diag.Diagnostics) {
	n = resolveAlias(n)
	if n.Kind != yaml.ScalarNode {
		return "", diags.Errorf(pos(path, n), "%s must be a single value, not a %s", key, kindName(n.Kind))
	}
	if n.Tag == "!!null" {
		return "", diags
	}
	return n.Value, diags
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "value"
	}
}

func pos(path string, n *yaml.Node) diag.Pos {
	return diag.Pos{File: path, Line: n.Line, Col: n.Column}
}

// isSecretKey says whether a mapping key names a secret whose value must
// never be echoed: connectors: holds connector tokens under agent names.
func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"key", "secret", "token", "password", "connector"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// maskSecrets returns src with the value of every secret-looking key
// replaced, from the value's column to the end of its line, and any further
// lines of a multi-line value blanked.
func maskSecrets(src []byte, root *yaml.Node) []byte {
	lines := bytes.SplitAfter(src, []byte("\n"))
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			maskUserinfo(lines, n)
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if isSecretKey(k.Value) {
					maskAll(lines, k, v)
					continue
				}
				walk(v)
			}
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	return bytes.Join(lines, nil)
}

// maskUserinfo masks the credentials of a URL written in any value
// (build_url: https://apikey:KEY@host) and its query and fragment (an
// api_key= there), as the diagnostics that refuse them do: the value's
// text on its line with them masked, or, when the line does not hold it
// as written (quoted, escaped, folded), the whole value.
func maskUserinfo(lines [][]byte, v *yaml.Node) {
	masked := platform.RedactURL(v.Value)
	if u, err := url.Parse(v.Value); err == nil && u.Host != "" && (u.RawQuery != "" || u.Fragment != "" || u.ForceQuery) {
		masked = platform.WithoutQuery(u) + "?xxxxx"
	}
	if masked == v.Value {
		return
	}
	first, col := v.Line-1, v.Column-1
	if first < 0 || first >= len(lines) || col < 0 || col > len(lines[first]) {
		return
	}
	line := lines[first]
	if bytes.HasPrefix(line[col:], []byte(v.Value)) {
		lines[first] = append(append(append([]byte{}, line[:col]...), masked...), line[col+len(v.Value):]...)
		return
	}
	maskValue(lines, &yaml.Node{Column: v.Column}, v)
}

// secretLineRe is a line of a block mapping: its indent (and a list
// item's dash), its key, plain or quoted, and where its value starts.
var secretLineRe = regexp.MustCompile(`^([ \t]*(?:-[ \t]+)?)(?:"([^"]*)"|'([^']*)'|([^\s"'#:][^:#]*?))[ \t]*:(?:[ \t]+|[\r\n]|$)`)

// maskSecretLines masks src by its text, for a file that does not parse:
// the rest of every line whose key looks secret (isSecretKey), and the
// lines after it indented deeper (a block scalar, connectors: by agent).
// It returns the values it masked, longest first, as written and without
// their quotes, for masking the parser's message too.
func maskSecretLines(src []byte) ([]byte, []string) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	var values []string
	keep := func(v string) {
		v = strings.TrimSpace(strings.TrimSuffix(v, "\r"))
		// Quoted, the parser may quote it without its quotes; read as an
		// alias (*KEY), it names the anchor without the *, and as &KEY
		// in its hint.
		for _, s := range []string{v, strings.Trim(v, `"'`), strings.TrimPrefix(v, "*")} {
			if s != "" {
				values = append(values, s)
			}
		}
	}
	for i := 0; i < len(lines); i++ {
		line := string(lines[i])
		m := secretLineRe.FindStringSubmatch(line)
		if m == nil || !isSecretKey(m[2]+m[3]+m[4]) {
			continue
		}
		indent := len(m[1])
		eol := line[len(strings.TrimRight(line, "\r\n")):]
		start := min(len(m[0]), len(line)-len(eol))
		if rest := line[start : len(line)-len(eol)]; strings.TrimSpace(rest) != "" && !refsOnly(rest) {
			keep(rest)
			lines[i] = []byte(line[:start] + "[REDACTED]" + eol)
		}
		for ; i+1 < len(lines); i++ {
			next := string(lines[i+1])
			trimmed := strings.TrimLeft(next, " \t")
			if strings.TrimSpace(trimmed) != "" && len(next)-len(trimmed) <= indent {
				break
			}
			if refsOnly(trimmed) {
				// connectors: by agent, as a parsed file shows them: the
				// line a syntax error is on is the one to see.
				continue
			}
			if strings.TrimSpace(trimmed) != "" {
				keep(trimmed)
				// A line of connectors: by agent: the parser's hint may
				// quote its value alone.
				if m := secretLineRe.FindStringSubmatch(next); m != nil {
					keep(next[len(m[0]):])
				}
				lines[i+1] = []byte("\n")
			}
		}
	}
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	return bytes.Join(lines, nil), values
}

// refTokenRe splits the text of a secret's line into what refsOnly
// accepts: an ${env:NAME} reference (quoted or not), a key (a name and
// its colon), YAML's flow punctuation and blanks.
var refTokenRe = regexp.MustCompile(`^(?:(\$\{env:[A-Za-z_][A-Za-z0-9_]*\}|'\$\{env:[A-Za-z_][A-Za-z0-9_]*\}'|"\$\{env:[A-Za-z_][A-Za-z0-9_]*\}")|([A-Za-z0-9_.-]+:)|([{}\[\],])|([ \t]+))`)

// refsOnly says whether the text of a secret's line, as written, holds
// nothing but ${env:NAME} references, the keys they are written under
// (clinic:, live:) and YAML's punctuation, so that a file that does not
// parse can show it as a parsed one shows a reference (envRefOnly). A
// key must be followed by a reference, a { or the line's end: anything
// else there (a literal token, a comment) is masked with the line.
func refsOnly(text string) bool {
	text = strings.TrimRight(text, "\r\n")
	refs, afterKey := 0, false
	for text != "" {
		m := refTokenRe.FindStringSubmatch(text)
		if m == nil {
			return false
		}
		text = text[len(m[0]):]
		switch {
		case m[1] != "":
			refs++
			afterKey = false
		case m[2] != "":
			if afterKey {
				return false // a key's value that reads as a key
			}
			afterKey = true
		case m[3] != "":
			if afterKey && m[3] != "{" {
				return false
			}
			afterKey = false
		}
	}
	return refs > 0
}

// maskAll masks every value under the secret key k. A block mapping
// (connectors: with one agent per line) keeps its keys, so a diagnostic at
// connectors.clinic still shows the line it points at; anything else (a
// scalar, a sequence, a flow collection) is masked whole.
func maskAll(lines [][]byte, k, v *yaml.Node) {
	if ref := envRefOnly(v); ref != "" {
		// The reference is no secret, and the one thing a diagnostic
		// at it needs shown (which variable?); what follows it on the
		// line, a comment that may quote an old key, stays masked.
		replaceValue(lines, k, v, ref)
		return
	}
	if v.Kind != yaml.MappingNode || v.Style&yaml.FlowStyle != 0 {
		maskValue(lines, k, v)
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		maskAll(lines, v.Content[i], v.Content[i+1])
	}
}

// envRefOnly is v written back as it was, when it is a scalar holding one
// ${env:NAME} reference and nothing else, or "".
func envRefOnly(v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		return ""
	}
	if m := envRefRe.FindStringIndex(v.Value); m == nil || m[0] != 0 || m[1] != len(v.Value) {
		return ""
	}
	switch {
	case v.Style&yaml.DoubleQuotedStyle != 0:
		return `"` + v.Value + `"`
	case v.Style&yaml.SingleQuotedStyle != 0:
		return "'" + v.Value + "'"
	}
	return v.Value
}

func maskValue(lines [][]byte, k, v *yaml.Node) { replaceValue(lines, k, v, "[REDACTED]") }

// replaceValue writes text in place of the value v of key k, from its
// column to the end of its line, and blanks the lines it continues on.
func replaceValue(lines [][]byte, k, v *yaml.Node, text string) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return
	}
	first := v.Line - 1
	if first < 0 || first >= len(lines) {
		return
	}
	line := lines[first]
	col := v.Column - 1
	if col < 0 || col > len(line) {
		col = len(line)
	}
	eol := ""
	if bytes.HasSuffix(line, []byte("\n")) {
		eol = "\n"
	}
	lines[first] = append(append([]byte{}, line[:col]...), []byte(text+eol)...)
	// A block scalar or a nested value continues on lines indented deeper
	// than its key.
	for i := first + 1; i < len(lines); i++ {
		trimmed := bytes.TrimLeft(lines[i], " \t")
		if len(bytes.TrimSpace(trimmed)) == 0 {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		if indent < k.Column {
			break
		}
		lines[i] = []byte("\n")
	}
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// validateValue checks one target field and returns a message, or "".
func validateValue(key, v string) string {
	switch key {
	case "build_url", "runtime_url", "messaging_url":
		// A query is queryProblem's, reported after keysInSettings.
		var ue *platform.URLError
		if errors.As(urlForm(key, v), &ue) && !ue.Query {
			return key + " " + ue.Error()
		}
	case "account_id":
		return errText(platform.CheckAccountID(v))
	case "agent_id":
		return errText(platform.CheckAgentID(v))
	case "env":
		if !reply.ValidEnv(v) {
			return "env " + notAnEnv(v)
		}
	case "max_reply_bytes":
		if _, err := ParseReplyBytes(v); err != nil {
			return "max_reply_bytes: " + err.Error()
		}
	case "brand":
		return errText(brand.Validate(v))
	case "messaging_host":
		if strings.Contains(v, "://") || strings.ContainsAny(v, "/ \t?#@") {
			return fmt.Sprintf("messaging_host %q must be a domain or app namespace such as webchat.example.com, not a URL", v)
		}
	case "rate":
		if _, err := ParseRate(v); err != nil {
			return "rate: " + err.Error()
		}
	case "rate_wait":
		if _, err := ParseRateWait(v); err != nil {
			return "rate_wait: " + err.Error()
		}
	case "messaging_quiet":
		if _, err := ParseMessagingQuiet(v); err != nil {
			return "messaging_quiet: " + err.Error()
		}
	}
	return ""
}

// MinReplyBytes is the smallest reply limit accepted: below it, even an
// ordinary turn result would not fit.
const MinReplyBytes = 4 << 10

// ParseReplyBytes reads a reply size limit: a whole number of bytes of at
// least MinReplyBytes. The flag, its variable and the target key share it.
func ParseReplyBytes(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < MinReplyBytes {
		return 0, fmt.Errorf("%q is not a number of bytes of at least %d (1 MiB is 1048576)", s, MinReplyBytes)
	}
	return n, nil
}

// ParseRate reads a rate cap: requests per second, a positive number
// (0.5 is one request every two seconds), or 0 for none. The flag, its
// variable and the target key share it.
func ParseRate(s string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return 0, fmt.Errorf("%q is not a number of requests per second (such as 20 or 0.5; 0 for no cap)", s)
	}
	return r, nil
}

// ParseRateWait reads a rate-limit wait budget: a duration of 0 or more
// (0: no waiting, the first 429 errors the case). The flag, its variable
// and the target key share it.
func ParseRateWait(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration such as 15m or 90s", s)
	}
	return d, nil
}

// MaxMessagingQuiet bounds messaging_quiet. The quiet is spent within
// every web chat turn's timeout (turn_timeout, 30s by default), after
// the answer: a third of it leaves the agent the rest to answer, and an
// agent that pauses longer between the messages of one answer is
// better tested with a turn that waits for its second message.
const MaxMessagingQuiet = 10 * time.Second

// ParseMessagingQuiet reads messaging_quiet: a duration from 0 (the
// answer is complete when the typing indicator goes off) to
// MaxMessagingQuiet. The target key and its variable share it.
func ParseMessagingQuiet(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration such as 1s or 500ms (0 for none)", s)
	}
	if err := CheckMessagingQuiet(d); err != nil {
		return 0, fmt.Errorf("%q %w", s, err)
	}
	return d, nil
}

// CheckMessagingQuiet holds a messaging quiet to its bounds, 0 to
// MaxMessagingQuiet: the target key's, and godogsteps.Options'.
func CheckMessagingQuiet(d time.Duration) error {
	switch {
	case d < 0:
		return errors.New("is negative: 0 completes an answer when the typing indicator goes off")
	case d > MaxMessagingQuiet:
		return fmt.Errorf("is longer than %s: the quiet is waited within every web chat turn's timeout (turn_timeout, default 30s)", MaxMessagingQuiet)
	}
	return nil
}

// loadProbeNumbers reads `probe_numbers:`, a list of phone numbers (or a
// single one).
func (t *TargetDef) loadProbeNumbers(path string, v *yaml.Node, diags diag.Diagnostics) diag.Diagnostics {
	v = resolveAlias(v)
	t.ProbeNumbersPos = pos(path, v)
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	t.ProbeNumbers = []Field{}
	for _, it := range items {
		var s string
		s, diags = scalar(path, it, "probe_numbers item", diags)
		if s == "" {
			continue
		}
		if !envRefRe.MatchString(s) && !IsPhoneNumber(s) {
			diags = diags.Append(diag.Diagnostic{Pos: pos(path, it), Message: fmt.Sprintf("probe_numbers: %q is not a phone number", s),
				Hint: `write E.164 numbers such as "+447700900001", quoted`})
			continue
		}
		t.ProbeNumbers = append(t.ProbeNumbers, Field{Value: s, Pos: pos(path, it)})
	}
	return diags
}

// phoneRe is a phone number once separators are dropped: an optional +
// and 6 to 15 digits, as the scenario format accepts.
var phoneRe = regexp.MustCompile(`^\+?[0-9]{6,15}$`)

// IsPhoneNumber reports whether s is a phone number (phoneRe), written
// with separators or without.
func IsPhoneNumber(s string) bool { return phoneRe.MatchString(NormalizeNumber(s)) }

// dropSeparators drops the separators people write in numbers.
func dropSeparators(r rune) rune {
	switch r {
	case ' ', '-', '.', '(', ')':
		return -1
	}
	return r
}

// NormalizeNumber returns the digits of a phone number (with its leading
// +), so numbers written with separators compare equal.
func NormalizeNumber(s string) string {
	return strings.Map(dropSeparators, strings.TrimSpace(s))
}
