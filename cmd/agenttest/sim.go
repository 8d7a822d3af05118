package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.agentsDir != "" {
		defs, err := loadSimAgents(st, o.agentsDir)
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
		return fmt.Errorf("sim: %w", err)
	}
	return printErr
}

func parseSimFlags(st *State, args []string) (*simOptions, error) {
	o := &simOptions{}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: agenttest sim [flags]\n\nServes the platform simulator until interrupted.\n\nFlags:")
		fs.PrintDefaults()
	}
	f := &o.opts.Faults
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address of the build host (both hosts with --single-host)")
	fs.StringVar(&o.runtimeListen, "runtime-listen", "", "address of the runtime host (default: the next free port after --listen)")
	fs.StringVar(&o.messagingListen, "messaging-listen", "", "address of the messaging host (default: the next free port after the runtime host)")
	fs.BoolVar(&o.singleHost, "single-host", false, "serve build, runtime and messaging endpoints on one host (self-serve region)")
	fs.BoolVar(&o.printEnv, "print-env", false, "print AGENTTEST_* environment lines instead of a JSON line")
	fs.StringVar(&o.agentsDir, "agents", "", "directory of agent definitions (default: the example agents built into the binary)")
	fs.StringVar(&o.keys, "keys", "", "pin the API keys: BUILD_KEY,RUNTIME_KEY")
	fs.StringVar(&o.account, "account", "", "pin the workspace id (ws-XXXXXXXX)")
	fs.Int64Var(&o.opts.Seed, "seed", 0, "seed of fault injection, agent phrasing, probabilistic replies and moves, deployment ids and seeded conversations")
	fs.DurationVar(&o.opts.ChatIdleTimeout, "idle-timeout", sim.DefaultChatIdleTimeout, "debug-chat session idle limit (then CHAT_TIMEOUT)")
	fs.IntVar(&o.opts.StoreCap, "store-cap", sim.DefaultStoreCap, "most conversations kept (the oldest ended go first) and live debug-chat sessions (beyond, the oldest idles out)")
	fs.Float64Var(&o.opts.RatePerKey, "rate", 0, "requests per second per API key, 0 for unlimited (beyond: 429)")
	fs.IntVar(&o.opts.SeedConversations, "seed-conversations", 0, "synthetic conversations to fill the store with")
	fs.DurationVar(&f.Latency, "latency", 0, "latency added to every request")
	fs.DurationVar(&f.Jitter, "jitter", 0, "random extra latency, uniform in [0, jitter)")
	fs.Float64Var(&f.Error500, "error-500", 0, "fraction of requests answered 500")
	fs.Float64Var(&f.Error429, "error-429", 0, "fraction of requests answered 429 with Retry-After")
	fs.DurationVar(&f.RetryAfter, "retry-after", sim.DefaultRetryAfter, "Retry-After of injected 429s")
	fs.Float64Var(&f.ChatTimeout, "chat-timeout", 0, "fraction of debug-chat turns answered CHAT_TIMEOUT")
	fs.Float64Var(&f.Drop, "drop", 0, "fraction of requests whose connection is closed without a response")
	out, wh := &o.opts.Outbound, &o.opts.Webhooks
	fs.StringVar(&o.opts.Brand, "brand", "Vendor", "brand word of X-<Brand>-Auth-Token and X-<Brand>-Signature")
	fs.DurationVar(&out.Queued, "call-queued", sim.DefaultCallQueued, "how long an outbound call stays queued")
	fs.DurationVar(&out.Calling, "call-calling", sim.DefaultCallCalling, "how long an outbound call stays calling before success or failure")
	fs.DurationVar(&out.Retention, "call-retention", sim.DefaultCallRetention, "how long a finished call's status stays readable (then 404)")
	fs.StringVar(&o.unreachable, "unreachable", "", "comma-separated numbers whose outbound calls fail")
	fs.Float64Var(&o.opts.SMSRate, "sms-rate", 0, "outbound SMS per second per project, 0 for unlimited (beyond: 429)")
	fs.DurationVar(&o.opts.SMSSessionTimeout, "sms-session-timeout", sim.DefaultSMSSessionTimeout, "idle time after which an SMS conversation ends")
	fs.IntVar(&wh.MaxAttempts, "webhook-attempts", sim.DefaultWebhookAttempts, "attempts per webhook delivery, the first included")
	fs.DurationVar(&wh.Backoff, "webhook-backoff", sim.DefaultWebhookBackoff, "wait before the first webhook retry; doubles per retry")
	fs.DurationVar(&wh.MaxBackoff, "webhook-max-backoff", sim.DefaultWebhookMaxBackoff, "longest wait between webhook attempts")
	fs.BoolVar(&wh.AllowInsecure, "allow-http-webhooks", false, "accept http:// webhook URLs on loopback (test receivers)")
	fs.DurationVar(&o.opts.TickInterval, "tick", sim.DefaultTickInterval, "period of outbound-call progress, alert evaluation and messaging expiry")
	msg := &o.opts.Messaging
	fs.DurationVar(&msg.SessionExpiry, "session-expiry", sim.DefaultSessionExpiry, "messaging session inactivity limit (then SESSION_END)")
	fs.BoolVar(&msg.LiveAgent.Absent, "no-live-agent", false, "messaging handoffs find no live agent")
	fs.BoolVar(&msg.Unlimited, "messaging-unlimited", false, "turn off the per-session messaging rate limits")
	fs.Float64Var(&f.SocketDrop, "socket-drop", 0, "fraction of messaging joins and messages during which the WebSocket drops")
	fs.Float64Var(&f.Overload, "overload", 0, "fraction of messaging joins and messages answered with the high-load system message")
	fs.Float64Var(&f.ReplyFailure, "reply-failure", 0, "fraction of messaging replies that fail (streamed: cut off)")
	fs.Float64Var(&f.JoinFailure, "join-failure", 0, "fraction of messaging join requests that fail to start a conversation")
	fs.StringVar(&o.opts.CallToken, "call-token", "", "the only X-<Brand>-Auth-Token outbound calling and SMS accept (default: the runtime key)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageErrorf("sim: %v", err)
	}
	if fs.NArg() > 0 {
		return nil, usageErrorf("sim: unexpected arguments %q", fs.Args())
	}
	if o.keys != "" {
		build, runtime, ok := strings.Cut(o.keys, ",")
		if !ok || build == "" || runtime == "" {
			return nil, usageErrorf("sim: --keys wants BUILD_KEY,RUNTIME_KEY, got %q", o.keys)
		}
		o.opts.BuildKey, o.opts.RuntimeKey = build, runtime
	}
	o.opts.AccountID = o.account
	for _, n := range strings.Split(o.unreachable, ",") {
		if n = strings.TrimSpace(n); n != "" {
			o.opts.Outbound.Unreachable = append(o.opts.Outbound.Unreachable, n)
		}
	}
	if o.opts.StoreCap < o.opts.SeedConversations {
		o.opts.StoreCap = o.opts.SeedConversations
	}
	if err := o.opts.Validate(); err != nil {
		return nil, usageErrorf("sim: %v", err)
	}
	return o, nil
}

// loadSimAgents loads a directory of agent definitions, relative to the
// working directory unless absolute.
func loadSimAgents(st *State, dir string) ([]*agent.Definition, error) {
	var fsys fs.FS
	rel := dir
	switch {
	case filepath.IsAbs(dir):
		fsys, rel = os.DirFS(dir), "."
	case st.FS != nil:
		rel = filepath.ToSlash(filepath.Clean(dir))
		fsys = st.FS
	default:
		fsys, rel = os.DirFS(filepath.Join(st.Dir, dir)), "."
	}
	defs, diags := agent.LoadDir(fsys, rel)
	if diags.HasErrors() {
		fmt.Fprintln(st.Stderr, diags.Error())
		return nil, usageErrorf("sim: invalid agent definitions in %s", dir)
	}
	if len(defs) == 0 {
		return nil, usageErrorf("sim: no agent definitions (*.yaml) in %s", dir)
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
		_, err := fmt.Fprintf(st.Stdout, "AGENTTEST_BUILD_URL=%s\nAGENTTEST_RUNTIME_URL=%s\nAGENTTEST_ACCOUNT_ID=%s\nAGENTTEST_AGENT_ID=%s\nAGENTTEST_BUILD_KEY=%s\nAGENTTEST_RUNTIME_KEY=%s\n"+
			"AGENTTEST_MESSAGING_URL=%s\nAGENTTEST_MESSAGING_HOST=%s\nAGENTTEST_CONNECTOR_TOKEN=%s\n",
			info.BuildURL, info.RuntimeURL, info.AccountID, first, info.BuildKey, info.RuntimeKey,
			info.MessagingURL, info.MessagingHost, info.MessagingConnectors[first]["sandbox"])
		if err == nil && info.CallToken != "" {
			_, err = fmt.Fprintf(st.Stdout, "AGENTTEST_CALL_TOKEN=%s\n", info.CallToken)
		}
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
