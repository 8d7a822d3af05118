package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/webhook"
)

const webhooksUsage = `Usage: agenttest webhooks listen [flags]

Runs a webhook receiver alone, for debugging an integration: it listens on
--listen, registers an endpoint for --url on the target (or reuses the one
registered for that URL when --secret gives its signing secret), verifies
the signature of every delivery, and prints one line per event until
interrupted; what came with a rejected delivery is printed quoted:

  2026-03-01T12:00:00Z conversation.completed conversation=c1 env=sandbox {"num_turns":4,...}
  2026-03-01T12:00:01Z REJECTED "signature mismatch: ..." (type="handoff.created" conversation="c2", unverified)

The target is resolved as for 'agenttest run' (--target, AGENTTEST_*,
agenttest.yaml). The platform requires an https:// URL: put the receiver
behind a tunnel or proxy and give its public URL. Without --url a loopback
--listen address is registered as http://ADDR/, which only a local
simulator started with --allow-http-webhooks accepts. An endpoint this
command registered is deleted when it stops.
`

// webhooksOptions are the flags of `agenttest webhooks listen`.
type webhooksOptions struct {
	listen, url, events, secret string
	target, config, brand       string
	// flags are the command's, to name the variable that set a value.
	flags *flags
}

func cmdWebhooks(ctx context.Context, st *State, args []string) error {
	if len(args) == 0 {
		// As go mod and git remote do: the subcommands in a line, not
		// the whole help of each.
		return usageProblems("webhooks", "no subcommand given (subcommands: listen, which receives, verifies and prints the platform's webhook events)")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		_, err := parseWebhooksOptions(st, []string{"--help"})
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if args[0] != "listen" {
		if strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
			// agenttest webhooks --listen :0: a flag of listen written
			// before it, not a misspelt subcommand.
			name, _, _ := strings.Cut(args[0], "=")
			return usageProblems("webhooks", fmt.Sprintf("%s comes before the subcommand: flags follow it (agenttest webhooks listen %s ...)", name, args[0]))
		}
		msg := fmt.Sprintf("unknown subcommand %q (want listen)", args[0])
		if s := diag.Suggest(args[0], []string{"listen"}); s != "" {
			msg = fmt.Sprintf("unknown subcommand %q (did you mean %s?)", args[0], s)
		}
		return usageProblems("webhooks", msg)
	}
	return webhooksListen(ctx, st, args[1:])
}

// webhooksFlags registers the flags of webhooks listen on a new flag
// set, parsing nothing (see commandFlags).
func webhooksFlags(st *State, o *webhooksOptions) *flags {
	f := newFlags(st, "webhooks", webhooksUsage)
	f.stringVar(&o.listen, "listen", config.EnvWebhookListen, "127.0.0.1:8787", "listen on `ADDR` for deliveries")
	f.stringVar(&o.url, "url", config.EnvWebhookURL, "", "public `URL` the platform delivers to (default: http://ADDR/ for a loopback --listen)")
	f.stringVar(&o.events, "events", "AGENTTEST_WEBHOOK_EVENTS", strings.Join(webhook.DefaultEvents, ","), "comma-separated `EVENTS` to subscribe to")
	f.secretVar(&o.secret, "secret", config.EnvWebhookSecret, "signing `SECRET` of an endpoint already registered for --url, to reuse it")
	f.stringVar(&o.target, "target", "AGENTTEST_TARGET", "", "target `NAME` from the config file (default: its default_target)")
	f.fileVar(&o.config, "config", "AGENTTEST_CONFIG", "config `FILE` (default: ./agenttest.yaml when present)", withoutConfig)
	f.stringVar(&o.brand, "brand", config.EnvBrand, "", "brand `WORD` of the X-<Brand>-Signature header (default: the target's brand:, else "+platform.DefaultBrand+")")
	return f
}

func parseWebhooksOptions(st *State, args []string) (*webhooksOptions, error) {
	o := &webhooksOptions{}
	f := webhooksFlags(st, o)
	o.flags = f
	pos, err := f.parse(args)
	if err != nil {
		return nil, err
	}
	problems := append([]string(nil), f.problems...)
	if len(pos) > 0 {
		problems = append(problems, fmt.Sprintf("unexpected arguments %s", strings.Join(pos, " ")))
	}
	if o.url != "" {
		if u, err := url.Parse(o.url); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			problems = append(problems, fmt.Sprintf("--url %q must be an absolute http(s) URL", platform.RedactURL(o.url)))
		}
	}
	for _, e := range o.eventList() {
		if !slices.Contains(reply.WebhookEvents, e) {
			problems = append(problems, fmt.Sprintf("--events: unknown event %q (known: %s)", e, strings.Join(reply.WebhookEvents, ", ")))
		}
	}
	if len(o.eventList()) == 0 {
		problems = append(problems, "--events names no event")
	}
	problems = append(problems, checkWebhookSecret("--secret", o.secret)...)
	if len(problems) > 0 {
		return nil, usageProblems("webhooks listen", problems...)
	}
	return o, nil
}

func (o *webhooksOptions) eventList() []string {
	var out []string
	for e := range strings.SplitSeq(o.events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func webhooksListen(ctx context.Context, st *State, args []string) error {
	o, err := parseWebhooksOptions(st, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg, err := loadConfig(st, st.Stderr, o.flags, o.config, false)
	if err != nil {
		return err
	}
	tgt, diags := config.Resolve(cfg, config.Selection{Target: o.target, TargetFrom: o.flags.setBy("target"), Getenv: st.LookupEnv, Needs: config.Needs{Build: true}})
	if diags.HasErrors() {
		sources{st: st, cfg: cfg}.write(st.Stderr, diags, false)
		return reported(exitUsage)
	}
	if tgt.Embedded {
		// The embedded simulator lives for one command and nothing would
		// drive it: there is nothing to listen to.
		return usageErrorf("webhooks listen: no target configured; start 'agenttest sim --allow-http-webhooks' and set AGENTTEST_BUILD_URL and AGENTTEST_BUILD_KEY, or use --target")
	}
	red, err := commandRedactor(st, cfg, tgt, o.secret, o.url)
	if err != nil {
		return err
	}
	o.brand = cmp.Or(o.brand, tgt.Brand)
	transport := platform.NewTransport(platform.DefaultMaxPerHost)
	defer transport.CloseIdleConnections()
	client, err := platform.New(platform.Config{
		BuildURL: tgt.BuildURL, RuntimeURL: tgt.RuntimeURL, AccountID: tgt.AccountID,
		BuildKey: tgt.BuildKey.Reveal(), RuntimeKey: tgt.RuntimeKey.Reveal(), Redactor: red, Brand: o.brand, Now: st.Now, AfterFunc: st.AfterFunc,
		AllowHTTP:  tgt.AllowHTTP,
		Retry:      platform.RetryPolicy{Sleep: st.Sleep},
		HTTPClient: &http.Client{Transport: transport},
	})
	if err != nil {
		return usageErrorf("target %s: %s", tgt.Name, red.String(err.Error()))
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageErrorf("webhooks listen: --listen: %s", listenProblem(o.listen, err))
	}
	public := o.url
	if public == "" {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			ln.Close()
			return usageErrorf("webhooks listen: --url is required when --listen is not a loopback address: give the public https:// URL that reaches %s", ln.Addr())
		}
		public = "http://" + ln.Addr().String() + "/"
	}

	defer guardInGitHubActions(st)()
	out := &lineWriter{w: red.Writer(st.Stdout)}
	rcv := webhook.NewReceiver(webhook.Options{
		Brand:    o.brand,
		Now:      st.Now,
		OnEvent:  func(ev webhook.Event) { out.line(eventLine(ev)) },
		OnReject: func(r webhook.Rejection) { out.line(rejectionLine(r)) },
	})
	srv := webhook.Serve(ln, rcv, webhook.ServerOptions{ErrorLog: red.Writer(st.Stderr)})
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()

	// Each call bounded as run's registration is: a platform that takes
	// the request and never answers would hold the command before it
	// said it listens.
	reg := boundedRegistrar{Client: client, timeout: configTurnTimeout(cfg), now: st.Now, after: st.AfterFunc}
	ep, secret, err := webhook.Register(ctx, reg, public, o.eventList(), o.secret)
	if err != nil {
		msg := red.String(fmt.Sprintf("webhooks listen: register %s on target %s: %s", platform.RedactURL(public), tgt.Name, err))
		if fromPlatform(err) {
			// The platform's error, as for run: exit 4, not internal.
			return &exitError{code: exitErrored, msg: msg}
		}
		return errors.New(msg)
	}
	created := o.secret == "" || secret != o.secret
	if created {
		// Registered here, so removed here: a debugging session must not
		// leave endpoints behind on the platform.
		defer deleteEndpoint(st, client, ep.ID)
	}
	if err := learnSigningSecret(red, secret); err != nil {
		return &exitError{code: exitErrored, msg: red.String(fmt.Sprintf("webhooks listen: the endpoint registered for %s on target %s is of no use: %s", platform.RedactURL(public), tgt.Name, err))}
	}
	rcv.SetSecret(secret)
	verb := "registered"
	if !created {
		verb = "reusing"
	}
	out.line(fmt.Sprintf("agenttest: listening on %s; %s endpoint %s for %s (events: %s); interrupt to stop",
		ln.Addr(), verb, ep.ID, platform.RedactURL(public), strings.Join(o.eventList(), ", ")))

	<-ctx.Done()
	return nil
}

// lineWriter writes whole lines from concurrent deliveries, one at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, s+"\n")
}

// eventLine prints a verified event. Its fields are still server text:
// any that is not plain printable text is quoted, and its data has the
// characters that drive a terminal escaped.
func eventLine(ev webhook.Event) string {
	var b strings.Builder
	b.WriteString(ev.ReceivedAt.UTC().Format(time.RFC3339))
	b.WriteString(" " + plain(ev.Type))
	if ev.ConversationID != "" {
		b.WriteString(" conversation=" + plain(ev.ConversationID))
	}
	if ev.Environment != "" {
		b.WriteString(" env=" + plain(ev.Environment))
	}
	if data, err := json.Marshal(ev.Data); err == nil && len(ev.Data) > 0 {
		// JSON escapes the C0 controls only: a bidirectional override,
		// a C1 control or DEL in what a caller said would reach the
		// terminal raw.
		b.WriteString(" " + escape.Line(string(data)))
	}
	return b.String()
}

// rejectionLine prints a rejected delivery. Everything that came with it
// is quoted (%q): an unsigned body may hold terminal escapes, line breaks
// or a fake "verified" line.
func rejectionLine(r webhook.Rejection) string {
	s := r.ReceivedAt.UTC().Format(time.RFC3339) + " REJECTED " + strconv.Quote(r.Reason)
	var about []string
	if r.Type != "" {
		about = append(about, "type="+strconv.Quote(r.Type))
	}
	if r.ConversationID != "" {
		about = append(about, "conversation="+strconv.Quote(r.ConversationID))
	}
	if len(about) > 0 {
		s += " (" + strings.Join(about, " ") + ", unverified)"
	}
	return s
}

// plain returns s as it is when it is plain printable text without
// spaces, else quoted.
func plain(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
