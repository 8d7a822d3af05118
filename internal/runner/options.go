package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
)

// Defaults applied by Run and Plan to zero Options fields.
const (
	// DefaultParallel is the number of scenarios run at once when
	// Options.Parallel is zero.
	DefaultParallel = 8
	// DefaultTurnTimeout bounds one platform call when Options.TurnTimeout
	// is zero.
	DefaultTurnTimeout = 30 * time.Second
	// DefaultEnv is the clientEnv when neither the suite nor the options
	// name one: tests belong in the sandbox, never in live by accident.
	DefaultEnv = "sandbox"
	// DefaultRetryDelay is the pause before retrying an errored attempt when
	// Options.RetryDelay is zero. The platform client already retried the
	// call itself; this spaces out fresh sessions so a platform that is
	// briefly overloaded is not hammered.
	DefaultRetryDelay = 250 * time.Millisecond
	// maxRetryDelay caps the exponential backoff between attempts.
	maxRetryDelay = 5 * time.Second
)

// Options configure a run. The zero value of each field means its default.
type Options struct {
	// Channel carries the conversations (DebugChat over the platform
	// client). Required by Run; Plan ignores it.
	Channel Channel
	// Messaging carries the conversations of scenarios over the
	// Messaging API (`via: messaging`; Messaging over the platform
	// client). Nil errors those scenarios with a config error.
	Messaging Channel
	// Parallel is the maximum number of scenarios running at once
	// (default DefaultParallel).
	Parallel int
	// Retries is the number of extra attempts of a scenario that sets no
	// `retries:` of its own.
	Retries int
	// TurnTimeout bounds each platform call (default DefaultTurnTimeout).
	TurnTimeout time.Duration
	// RetryDelay is the base of the exponential backoff before retrying an
	// errored attempt (default DefaultRetryDelay; negative means no pause).
	// A failed attempt is retried at once: the platform is fine, the agent
	// answered.
	RetryDelay time.Duration
	// FailFast stops starting cases after the first Failed or Errored one;
	// the rest are Skipped with ReasonFailFast. The cases in flight
	// finish, retries and repeats included.
	FailFast bool
	// DefaultAgent is the target's agent, for suites and scenarios that
	// name none.
	DefaultAgent string
	// DefaultEnv is the clientEnv for suites that name none (from the flag
	// or the target); empty means DefaultEnv.
	DefaultEnv string
	// Select chooses the scenarios to run; the zero value runs them all.
	Select scenario.Selection
	// Stats are the statistical settings of scenarios that set none of
	// their own (--repeat, --pass-rate, --confidence, --margin): a nightly
	// run can make every scenario statistical.
	Stats scenario.Stats
	// Observer receives progress; nil means NoopObserver.
	Observer result.Observer
	// Getenv resolves ${env:NAME}; nil means an empty environment.
	Getenv func(string) (string, bool)
	// Now is the clock for start times and durations, and for the bounds
	// of the reads of a record or a call status (ConfirmTimeout, a
	// probe's within:), which the pauses of Sleep move on a fake clock;
	// nil means time.Now. Turn latencies are measured by the platform
	// client, not with Now.
	Now func() time.Time
	// AfterFunc, when set, runs the runner's timers on Now: it calls f
	// once d has passed on Now, and stop cancels the call and reports
	// whether it did (fakeclock.Clock.AfterFunc). Every bound the runner
	// applies (the turn and scenario timeouts, the confirmation bound, a
	// probe's within:, the reads of deployments and alerts) is then
	// decided by Now: a test that moves a fake clock past a bound cuts
	// what it bounds at once, in the order the bounds fall due, instead
	// of waiting for it. Nil means real timers (time.AfterFunc), which
	// keep those bounds on the real clock whatever Now is.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Sleep waits between attempts and between reads of a record: for d,
	// or until ctx is done, then returning ctx's error (the signature of
	// platform.RetryPolicy.Sleep). Nil means a real timer; tests pass a
	// fake clock's.
	Sleep func(ctx context.Context, d time.Duration) error
	// Seed drives the jitter of retry backoff, so runs are reproducible.
	Seed int64
	// Target is copied into Result.Target.
	Target result.Target
	// Records reads what the platform recorded and places probes; it is
	// needed by scenarios with confirm: or probe: (*platform.Client
	// satisfies it). Nil errors those scenarios with a config error.
	Records Records
	// Webhooks is the receiver that confirm: webhooks waits on; nil errors
	// the scenarios that expect webhooks.
	Webhooks Webhooks
	// Settings names the settings a configuration error of a scenario asks
	// for, in the caller's terms.
	Settings Settings
	// NoWebhooks, when Webhooks is nil, says why the run has no receiver
	// and what to do, in the error of a scenario that expects webhooks
	// (the command's own flags, or that a comparison starts none).
	NoWebhooks string
	// Setup is the account of the calls the command made for the run
	// before it started, outside any case (the registration of its
	// webhook endpoint): their answers count in Result.Pacing as the
	// run's own calls do. Nil counts none.
	Setup *platform.RateAccount
	// Deployments, when set, makes the run read the active deployment of
	// each agent and environment before the first case and after the
	// last (evidence.go, Result.Deployments). Nil reads none.
	Deployments Deployments
	// Alerts, when set, makes the run end with the alert gate: a firing
	// rule for an agent of the run (or an account-wide one) is a failed
	// run-level check in Result.Checks.
	Alerts Alerts
	// ConfirmTimeout bounds the wait for a conversation record to exist
	// (and end), and for each webhook event (default
	// DefaultConfirmTimeout).
	ConfirmTimeout time.Duration
	// ConfirmPoll is the first pause of the backoff between reads of a
	// record or a call status (default DefaultConfirmPoll).
	ConfirmPoll time.Duration
	// Connector returns the SMS connector id (X-TOKEN-ID) of an agent in
	// an environment; nil or "" errors SMS probes with a config error.
	Connector func(agent, env string) string
	// AllowNumber, when set, says whether a probe may call or text a
	// number (live safety: the target's probe_numbers); a refused number
	// errors the case with a config error at the probe. Nil allows all.
	AllowNumber func(number string) bool
	// Redactor masks API keys in what the runner records from user files
	// and expansions (failure texts, error messages, the user's turns);
	// the platform client already redacted what the platform sent. Nil
	// records text as it is.
	Redactor *secret.Redactor
	// ConversationIDs, when set, names each conversation the run creates
	// whose scenario sets no conversation_id, for the attempt a: its
	// Number, and its Run for a run of a repeated scenario (whose runs
	// number their attempts from 1 each until they are merged into the
	// case). A Messaging conversation always takes its name from here
	// (a scenario's conversation_id is not sent over messaging), as the
	// conversation_id of the session call, which only the simulator
	// takes (platform.MessagingStart.ConversationID). Nil lets the
	// platform name them. `agenttest compare` sets it on the embedded
	// simulator, whose random draws (a booking code) are seeded by the
	// conversation id, so that the same scenario draws the same values on
	// both sides whatever the order its conversations start in.
	ConversationIDs func(c *result.Case, a *result.Attempt) string
	// LeanAbove is the number of cases above which a run keeps only the
	// bodies of the replies of passing cases, dropping what was decoded
	// from them when the case finishes (result.Turn.Release; Turn.Reply
	// decodes it again for reports). Failing, errored and flaky cases
	// always keep everything. Zero, the default, is every run: decoded
	// metadata is about 1 KB of small objects per reply, which every
	// collection of the run would otherwise mark again until the reports
	// (about 6% of the runner's instructions per turn, BENCHMARKS.md section 1);
	// negative means never.
	LeanAbove int
	// VerdictsOnly is for a caller that reads nothing of a passing case
	// but its verdict once the Observer has seen it finish (a run that
	// writes no report): a passing case then drops the turns of its
	// attempts after CaseFinished, so that a large run's memory does not
	// grow with transcripts nothing will show. Every other case keeps
	// everything.
	VerdictsOnly bool

	// lines are the numbers the run's probes take turns on and the
	// conversations they claimed (probeline.go). Run makes them when nil
	// (tests give some with a hook); a session outside a run has those
	// of WithProbeLines, or none.
	lines *probeLines
}

// WithProbeLines returns o with probe lines of its own (probeline.go),
// shared by every session made with the result (NewSession) as Run shares
// them between the cases of a run: their probes to one number of one
// agent in one environment take turns, and none takes a conversation
// another one made its own. A caller that makes sessions side by side
// from one Options (godogsteps, for godog's concurrent scenarios) calls it
// once and makes each session with what it returns.
func (o Options) WithProbeLines() Options {
	o.lines = newProbeLines()
	return o
}

// OnProbeWait makes f be told, for tests, of each probe of the sessions
// made with o that finds its number's line taken, before it waits; call
// it before the first session. It reports whether o has lines
// (WithProbeLines) whose waits it can tell of.
func (o Options) OnProbeWait(f func(line string)) bool {
	if o.lines == nil {
		return false
	}
	o.lines.onWait = f
	return true
}

// withDefaults returns o with every zero field replaced by its default, or
// an error for values no run can use.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if o.Parallel < 0 {
		errs = append(errs, fmt.Errorf("parallel must be at least 1, got %d", o.Parallel))
	}
	if o.Retries < 0 {
		errs = append(errs, fmt.Errorf("retries must not be negative, got %d", o.Retries))
	}
	if o.TurnTimeout < 0 {
		errs = append(errs, fmt.Errorf("turn timeout must not be negative, got %s", o.TurnTimeout))
	}
	for _, p := range o.Stats.Check(scenario.FlagNames) {
		if p.Severity == diag.Error {
			errs = append(errs, errors.New(p.Message))
		}
	}
	if len(errs) > 0 {
		return o, errors.Join(errs...)
	}
	if o.Parallel == 0 {
		o.Parallel = DefaultParallel
	}
	if o.TurnTimeout == 0 {
		o.TurnTimeout = DefaultTurnTimeout
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = DefaultConfirmTimeout
	}
	if o.ConfirmPoll <= 0 {
		o.ConfirmPoll = DefaultConfirmPoll
	}
	if o.DefaultEnv == "" {
		o.DefaultEnv = DefaultEnv
	}
	if o.Observer == nil {
		o.Observer = result.NoopObserver{}
	}
	if o.Getenv == nil {
		o.Getenv = func(string) (string, bool) { return "", false }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = platform.Sleep
	}
	return o, nil
}

// Settings names, in the caller's terms, the setting that gives what a
// scenario's configuration error lacks: agenttest run names the keys of
// an agenttest.yaml target and its flags, the godog steps their Options'
// fields. An empty field names agenttest run's.
type Settings struct {
	// Agent gives the agent of a scenario that names none.
	Agent string
	// Runtime gives the runtime host and its key, which confirmations
	// and probes need.
	Runtime string
	// ProbeNumbers lists the numbers probes may call or text.
	ProbeNumbers string
	// SMSConnector gives the connector id of SMS probes.
	SMSConnector string
	// Messaging gives the Messaging API and its connector tokens, which
	// scenarios over web chat need.
	Messaging string
}
