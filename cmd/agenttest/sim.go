package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// simOptions are the flags of `agenttest sim`.
type simOptions struct {
	listen, runtimeListen string
	messagingListen       string
	singleHost, printEnv  bool
	agentsDir             string
	keys, account         string
	unreachable           string
	opts                  sim.Options
}

// runSim serves the platform simulator until ctx is cancelled (main wires
// SIGINT/SIGTERM to ctx), after printing how to reach it.
func runSim(ctx context.Context, st *State, args []string) error {
	o, err := parseSimFlags(st, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.agentsDir != "" {
		defs, err := loadSimAgents(st, "sim", o.agentsDir)
		if err != nil {
			return err
		}
		o.opts.Agents = defs
	}
	if st.Now != nil {
		o.opts.Now = st.Now
	}
	srv, err := sim.New(o.opts)
	if err != nil {
		return usageErrorf("sim: %v", err)
	}
	defer srv.Close()
	var printErr error
	ready := func(info sim.Info) { printErr = printSimInfo(st, info, o.printEnv) }
	addrs := sim.Addrs{Build: o.listen, Runtime: o.runtimeListen, Messaging: o.messagingListen}
	if err := srv.ListenAndServeAddrs(ctx, addrs, o.singleHost, ready); err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "listen" {
			// The address is the user's choice: a busy port is a usage
			// problem, not an internal error. It is named as the host
			// that failed was given it (ListenError): the net package
			// leaves it out of an address that does not parse, and a
			// bad --messaging-listen was said as --listen's.
			addr := o.listen
			if op.Addr != nil {
				addr = op.Addr.String()
			} else if le, ok := errors.AsType[*sim.ListenError](err); ok {
				addr = le.Addr
			}
			return usageErrorf("sim: %s", listenProblem(addr, err))
		}
		return fmt.Errorf("sim: %w", err)
	}
	return printErr
}

const simUsage = `Usage: agenttest sim [flags]

Serves the platform simulator until interrupted: the build, runtime and
messaging hosts on loopback (or where --listen says), with the example
agents built into the binary (or those of --agents). Once it listens it
prints one JSON line with its URLs, ids and keys (or, with --print-env,
AGENTTEST_* lines for an env file). It keeps serving after that line, so
start it in the background and read the file once it is written, not
with eval "$(...)", which would wait for it to stop:

  agenttest sim --print-env > sim.env &
  until [ -s sim.env ]; do sleep 0.1; done
  set -a; . ./sim.env; set +a

A port already in use is a usage error (exit 2). See docs/simulator.md.
`

// simFlags registers sim's flags on a new flag set, parsing nothing
// (see commandFlags).
func simFlags(st *State, o *simOptions) *flags {
	fl := newFlags(st, "sim", simUsage)
	f := &o.opts.Faults
	fl.stringVar(&o.listen, "listen", "", "127.0.0.1:0", "address `ADDR` of the build host (of all three with --single-host)")
	fl.stringVar(&o.runtimeListen, "runtime-listen", "", "", "address `ADDR` of the runtime host (default: the next free port after --listen)")
	fl.stringVar(&o.messagingListen, "messaging-listen", "", "", "address `ADDR` of the messaging host (default: the next free port after the runtime host)")
	fl.boolVar(&o.singleHost, "single-host", "", "serve build, runtime and messaging endpoints on one host (self-serve region)")
	fl.boolVar(&o.printEnv, "print-env", "", "print AGENTTEST_* environment lines instead of a JSON line")
	fl.fileVar(&o.agentsDir, "agents", "", "agent definitions: a directory `PATH` of them or one file (default: the example agents built into the binary)", withoutAgents)
	fl.stringVar(&o.keys, "keys", "", "", "pin the API keys: `BUILD_KEY,RUNTIME_KEY`")
	fl.stringVar(&o.account, "account", "", "", "pin the workspace `ID` (ws-XXXXXXXX)")
	fl.stringVar(&o.opts.CallToken, "call-token", "", "", "the only X-<Brand>-Auth-Token `TOKEN` outbound calling and SMS accept (default: the runtime key)")
	fl.stringVar(&o.opts.Brand, "brand", "", "Vendor", "brand `WORD` of X-<Brand>-Auth-Token and X-<Brand>-Signature")
	fl.int64Var(&o.opts.Seed, "seed", "", 0, "seed `N` of fault injection, agent phrasing, probabilistic replies and moves, deployment ids and seeded conversations")
	fl.durationVar(&o.opts.ChatIdleTimeout, "idle-timeout", "", sim.DefaultChatIdleTimeout, "end an idle debug-chat session after `DURATION` (then CHAT_TIMEOUT)")
	fl.intVar(&o.opts.StoreCap, "store-cap", "", sim.DefaultStoreCap, "keep at most `N` conversations (the oldest ended go first) and live debug-chat sessions (beyond, the oldest idles out)")
	fl.float64Var(&o.opts.RatePerKey, "rate", "", 0, "allow `R` requests per second per API key, 0 for unlimited (beyond: 429)")
	fl.intVar(&o.opts.SeedConversations, "seed-conversations", "", 0, "fill the store with `N` synthetic conversations")
	fl.durationVar(&f.Latency, "latency", "", 0, "add `DURATION` of latency to every request")
	fl.durationVar(&f.Jitter, "jitter", "", 0, "add random latency, uniform in [0, `DURATION`)")
	fl.float64Var(&f.Error500, "error-500", "", 0, "answer a fraction `F` of requests with 500")
	fl.float64Var(&f.Error429, "error-429", "", 0, "answer a fraction `F` of requests with 429 and Retry-After")
	fl.durationVar(&f.RetryAfter, "retry-after", "", sim.DefaultRetryAfter, "Retry-After `DURATION` of injected 429s")
	fl.float64Var(&f.ChatTimeout, "chat-timeout", "", 0, "answer a fraction `F` of debug-chat turns with CHAT_TIMEOUT")
	fl.float64Var(&f.Drop, "drop", "", 0, "close the connection of a fraction `F` of requests without a response")
	out, wh := &o.opts.Outbound, &o.opts.Webhooks
	fl.durationVar(&out.Queued, "call-queued", "", sim.DefaultCallQueued, "keep outbound calls queued for `DURATION`")
	fl.durationVar(&out.Calling, "call-calling", "", sim.DefaultCallCalling, "keep outbound calls calling for `DURATION` before success or failure")
	fl.durationVar(&out.Retention, "call-retention", "", sim.DefaultCallRetention, "keep a finished call's status readable for `DURATION` (then 404)")
	fl.stringVar(&o.unreachable, "unreachable", "", "", "comma-separated `NUMBERS` whose outbound calls fail")
	fl.float64Var(&o.opts.SMSRate, "sms-rate", "", 0, "allow `R` outbound SMS per second per project, 0 for unlimited (beyond: 429)")
	fl.durationVar(&o.opts.SMSSessionTimeout, "sms-session-timeout", "", sim.DefaultSMSSessionTimeout, "end an SMS conversation idle for `DURATION`")
	fl.intVar(&wh.MaxAttempts, "webhook-attempts", "", sim.DefaultWebhookAttempts, "make `N` attempts per webhook delivery, the first included")
	fl.durationVar(&wh.Backoff, "webhook-backoff", "", sim.DefaultWebhookBackoff, "wait `DURATION` before the first webhook retry; doubles per retry")
	fl.durationVar(&wh.MaxBackoff, "webhook-max-backoff", "", sim.DefaultWebhookMaxBackoff, "wait at most `DURATION` between webhook attempts")
	fl.boolVar(&wh.AllowInsecure, "allow-http-webhooks", "", "accept http:// webhook URLs on loopback (test receivers)")
	fl.durationVar(&o.opts.TickInterval, "tick", "", sim.DefaultTickInterval, "advance outbound calls, SMS and messaging expiry and alerts every `DURATION`")
	msg := &o.opts.Messaging
	fl.durationVar(&msg.SessionExpiry, "session-expiry", "", sim.DefaultSessionExpiry, "end a messaging session inactive for `DURATION` (then SESSION_END)")
	fl.boolVar(&msg.LiveAgent.Absent, "no-live-agent", "", "messaging handoffs find no live agent")
	fl.boolVar(&msg.Unlimited, "messaging-unlimited", "", "turn off the per-session messaging rate limits")
	fl.float64Var(&f.SocketDrop, "socket-drop", "", 0, "drop the WebSocket during a fraction `F` of messaging joins and messages")
	fl.float64Var(&f.Overload, "overload", "", 0, "answer a fraction `F` of messaging joins and messages with the high-load system message")
	fl.float64Var(&f.ReplyFailure, "reply-failure", "", 0, "fail a fraction `F` of messaging replies (streamed: cut off)")
	fl.float64Var(&f.JoinFailure, "join-failure", "", 0, "fail a fraction `F` of messaging join requests to start a conversation")
	fl.float64Var(&f.LookupFailure, "lookup-failure", "", 0, "answer a fraction `F` of messaging joins and messages with the transient session-lookup error")
	fl.float64Var(&f.EarlyExpiry, "early-expiry", "", 0, "expire the session right after a fraction `F` of messaging joins and messages is answered (then SESSION_END expired)")
	return fl
}

func parseSimFlags(st *State, args []string) (*simOptions, error) {
	o := &simOptions{}
	fl := simFlags(st, o)
	pos, err := fl.parse(args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, fl.usageError(fmt.Sprintf("unexpected arguments %s", strings.Join(pos, " ")))
	}
	if o.keys != "" {
		build, runtime, ok := strings.Cut(o.keys, ",")
		if !ok || build == "" || runtime == "" {
			return nil, fl.usageError(fmt.Sprintf("--keys wants BUILD_KEY,RUNTIME_KEY, got %q", o.keys))
		}
		o.opts.BuildKey, o.opts.RuntimeKey = build, runtime
	}
	// The keys a client will send: refused here as `agenttest run`
	// refuses them, rather than by the first run against this simulator.
	for _, k := range []struct{ what, key string }{
		{"--keys BUILD_KEY", o.opts.BuildKey}, {"--keys RUNTIME_KEY", o.opts.RuntimeKey}, {"--call-token", o.opts.CallToken},
	} {
		if k.key == "" {
			continue
		}
		if err := secret.CheckKey(k.what, k.key); err != nil {
			return nil, fl.usageError(err.Error())
		}
	}
	o.opts.AccountID = o.account
	for n := range strings.SplitSeq(o.unreachable, ",") {
		if n = strings.TrimSpace(n); n != "" {
			o.opts.Outbound.Unreachable = append(o.opts.Outbound.Unreachable, n)
		}
	}
	// The default cap makes room for the seeded conversations; one
	// given is the user's, checked as given (a negative one, or one the
	// seeds exceed, is refused where it was raised to fit in silence).
	if !fl.isSet("store-cap") && o.opts.StoreCap < o.opts.SeedConversations {
		o.opts.StoreCap = o.opts.SeedConversations
	}
	if err := o.opts.Validate(); err != nil {
		return nil, fl.usageError(strings.Split(err.Error(), "\n")...)
	}
	return o, nil
}

// loadSimAgents loads the agent definitions of a directory or of one
// file, by its command-line path (relative to the working directory, or
// absolute). A problem is a usage error that starts with what, the
// command and, for run, the setting that gave the path.
func loadSimAgents(st *State, what, path string) ([]*agent.Definition, error) {
	fsys := st.FS
	if fsys == nil {
		fsys = pathFS(st.Dir)
	}
	defs, diags := agent.LoadPath(fsys, argPath(path))
	if diags.HasErrors() {
		// As lint prints a suite's problems: each with its source line.
		report.WriteDiagnostics(st.Stderr, config.RedactDiags(diags, knownKeys(st, nil)), nil, false)
		return nil, usageErrorf("%s: invalid agent definitions in %s", what, path)
	}
	if len(defs) == 0 {
		return nil, usageErrorf("%s: no agent definitions (*.yaml) in %s", what, path)
	}
	return defs, nil
}

// printSimInfo prints the facts a client needs, as one JSON line or as
// AGENTTEST_* lines for `eval` or an env file.
func printSimInfo(st *State, info sim.Info, env bool) error {
	if env {
		first := ""
		if len(info.AgentIDs) > 0 {
			first = info.AgentIDs[0]
		}
		lines := fmt.Sprintf("AGENTTEST_BUILD_URL=%s\nAGENTTEST_RUNTIME_URL=%s\nAGENTTEST_ACCOUNT_ID=%s\nAGENTTEST_AGENT_ID=%s\nAGENTTEST_BUILD_KEY=%s\nAGENTTEST_RUNTIME_KEY=%s\n"+
			"AGENTTEST_MESSAGING_URL=%s\nAGENTTEST_MESSAGING_HOST=%s\nAGENTTEST_CONNECTOR_TOKEN=%s\n",
			info.BuildURL, info.RuntimeURL, info.AccountID, first, info.BuildKey, info.RuntimeKey,
			info.MessagingURL, info.MessagingHost, info.MessagingConnectors[first]["sandbox"])
		if info.CallToken != "" {
			lines += fmt.Sprintf("AGENTTEST_CALL_TOKEN=%s\n", info.CallToken)
		}
		if info.Brand != brand.Default {
			// A run on these lines speaks the simulator's brand.
			lines += fmt.Sprintf("%s=%s\n", config.EnvBrand, info.Brand)
		}
		// One write, as the JSON line is: a reader that sees output sees
		// all of it.
		_, err := io.WriteString(st.Stdout, lines)
		return err
	}
	line, err := json.Marshal(struct {
		BuildURL           string                       `json:"build_url"`
		RuntimeURL         string                       `json:"runtime_url"`
		AccountID          string                       `json:"account_id"`
		AgentIDs           []string                     `json:"agent_ids"`
		BuildKey           string                       `json:"build_api_key"`
		RuntimeKey         string                       `json:"runtime_api_key"`
		Brand              string                       `json:"brand"`
		AuthTokenHeader    string                       `json:"auth_token_header"`
		SignatureHeader    string                       `json:"signature_header"`
		ConnectorIDs       map[string]map[string]string `json:"connector_ids"`
		Numbers            map[string][]string          `json:"numbers"`
		EnvNumbers         map[string]map[string]string `json:"env_numbers"`
		UnreachableNumbers []string                     `json:"unreachable_numbers"`
		CallToken          string                       `json:"call_token,omitempty"`
		MessagingURL       string                       `json:"messaging_url"`
		MessagingHost      string                       `json:"messaging_host"`
		MessagingTokens    map[string]map[string]string `json:"messaging_connectors"`
	}{info.BuildURL, info.RuntimeURL, info.AccountID, info.AgentIDs, info.BuildKey, info.RuntimeKey,
		info.Brand, info.AuthTokenHeader, info.SignatureHeader, info.ConnectorIDs, info.Numbers, info.EnvNumbers, info.UnreachableNumbers,
		info.CallToken, info.MessagingURL, info.MessagingHost, info.MessagingConnectors})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(st.Stdout, "%s\n", line)
	return err
}
