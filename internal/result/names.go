package result

// Kinds of Error, for reports (JUnit error type, JSON kind).
const (
	// KindNetwork: the platform could not be reached or the connection
	// broke.
	KindNetwork = "network"
	// KindTimeout: a turn, the scenario or the platform's chat session
	// (CHAT_TIMEOUT) ran out of time.
	KindTimeout = "timeout"
	// KindHTTP: the platform answered with an error status, or with an
	// answer the case cannot be judged on: malformed (a required member
	// missing or null), without a metadata member a check reads, or a
	// probe's call that did not end as the scenario expects (its
	// connection is the platform's and the line's, not the agent's).
	KindHTTP = "http"
	// KindConfig: the scenario cannot be run as written (no agent, an
	// unresolved ${...}, a wait past the wait budget at the pace of the
	// run's own rate, the platform having refused nothing); retrying
	// cannot help.
	KindConfig = "config"
	// KindMessaging: a Messaging session broke without a transport
	// error: an error system message no check expected, an agent that
	// never joined, a session the platform ended.
	KindMessaging = "messaging"
	// KindInternal: agenttest itself broke (a recovered panic).
	KindInternal = "internal"
	// KindInterrupted: the run was cancelled while the attempt ran.
	KindInterrupted = "interrupted"
	// KindRateLimited: the platform's rate limit would have made the
	// case wait past the run's wait budget per case (--rate-wait).
	KindRateLimited = "rate_limited"
)

// Skip reasons of cases the run did not reach; reports show them verbatim.
const (
	// ReasonInterrupted marks cases cut off or never started because the
	// run's context was cancelled.
	ReasonInterrupted = "not run: run interrupted"
	// ReasonFailFast marks cases not started after the first failure under
	// --fail-fast.
	ReasonFailFast = "not run: --fail-fast"
	// ReasonUnreachable marks cases not run because the platform could
	// not be reached at all (StopUnreachable).
	ReasonUnreachable = "not run: platform unreachable"
	// ReasonCredentials marks cases not run because the platform refused
	// a credential (StopCredentials).
	ReasonCredentials = "not run: credentials refused"
	// ReasonUnknownAgent marks cases not run because the platform does
	// not know an agent of the run (StopUnknownAgent).
	ReasonUnknownAgent = "not run: unknown agent"
	// ReasonNoMessagingAPI marks cases not run because no Messaging API
	// answers at the messaging host (StopNoMessagingAPI).
	ReasonNoMessagingAPI = "not run: no Messaging API at messaging_url"
	// ReasonInterruptedRuns marks a repeated case that made some of its
	// runs before the run was interrupted: it ran, but has no verdict
	// (Repeat.Decision DecisionInterrupted; Repeat counts the runs made).
	ReasonInterruptedRuns = "interrupted before a verdict"
	// ReasonStoppedRuns marks a repeated case that made some of its runs
	// before a stop (Result.Stop) cut it off.
	ReasonStoppedRuns = "stopped before a verdict"
)

// IsStopReason reports whether reason is the skip reason a run's stop
// (Result.Stop) gives the cases it left unrun, as the runner's stops
// write them: not an interruption's (the cases stay Pending), nor a
// scenario's own skip:.
func IsStopReason(reason string) bool {
	switch reason {
	case ReasonFailFast, ReasonUnreachable, ReasonCredentials, ReasonUnknownAgent, ReasonNoMessagingAPI, ReasonStoppedRuns:
		return true
	}
	return false
}

// AlertGateName is the name of the run-level check the alert gate adds to
// Result.Checks; reports show it like a case.
const AlertGateName = "alert gate"

// ConfirmAlerts is the Confirmation kind of the alert gate's read.
const ConfirmAlerts = "alerts"

// Procedures of a repeated case (Repeat.Procedure).
const (
	// ProcedureFixed: `repeat: N` without a confidence, N runs and a share.
	ProcedureFixed = "fixed"
	// ProcedureSPRT: Wald's sequential probability ratio test (package
	// stats), deciding as the runs come in.
	ProcedureSPRT = "sprt"
)

// Decisions of a repeated case (Repeat.Decision).
const (
	DecisionPassed = "passed"
	DecisionFailed = "failed"
	// DecisionInconclusive: the sequential test reached its limit
	// undecided. The case is Failed: it fails the gate, without evidence
	// that the agent is broken.
	DecisionInconclusive = "inconclusive"
	// DecisionErrored: more than a third of the runs errored (a
	// sequential test) and, had each passed, the test could have passed;
	// or errored runs alone kept the share of passing runs from the pass
	// rate (the fixed rule).
	DecisionErrored = "errored"
	// DecisionInterrupted: the run was interrupted or stopped after some
	// runs of the case, before a verdict. The case is Pending (an
	// interruption) or Skipped (a stop); Runs counts the runs made.
	DecisionInterrupted = "interrupted"
)
