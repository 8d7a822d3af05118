package result

// Kinds of Error, for reports (JUnit error type, JSON kind).
const (
	// KindNetwork: the platform could not be reached or the connection
	// broke.
	KindNetwork = "network"
	// KindTimeout: a turn, the scenario or the platform's chat session
	// (CHAT_TIMEOUT) ran out of time.
	KindTimeout = "timeout"
	// KindHTTP: the platform answered with an error status.
	KindHTTP = "http"
	// KindConfig: the scenario cannot be run as written (no agent, an
	// unresolved ${...}); retrying cannot help.
	KindConfig = "config"
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
)

// AlertGateName is the name of the run-level check the alert gate adds to
// Result.Checks; reports show it like a case.
const AlertGateName = "alert gate"

// ConfirmAlerts is the Confirmation kind of the alert gate's read.
const ConfirmAlerts = "alerts"
