package runner

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/secret"
)

// msgNoStreaming is the error of a scenario that asks for streamed
// replies on a run whose Messaging channel is not runner.Messaging.
const msgNoStreaming = "the scenario asks for streamed replies (streaming), but the run's Messaging channel cannot ask for them: use runner.Messaging"

// hintAgentID and hintMessagingURL end the errors of an agent the
// platform does not know and of a messaging_url where no Messaging API
// answers, unless the run was served them already (stopper.served).
const (
	hintAgentID      = " (check the agent id and the build host's region)"
	hintMessagingURL = " (no Messaging API answers at this address: check the messaging_url)"
)

// errNoResult stands for a reply the client accepted but could not decode
// into a turn result; it should not happen with a working client.
var errNoResult = errors.New("platform returned no turn result")

// cutError wraps the error of a call cut off by the run's cancellation.
type cutError struct{ err error }

func (e *cutError) Error() string { return "run interrupted: " + e.err.Error() }
func (e *cutError) Unwrap() error { return e.err }

// timeoutError wraps the error of a call that ran out of the turn or the
// scenario time, naming which limit it was.
type timeoutError struct {
	what string
	err  error
}

// Error names the limit, and the call it cut short when the client
// says which: the platform's slow endpoint, for whoever looks into it.
// A Messaging turn cut short on its socket also says what it was still
// waiting for (platform.MessagingAwaited): its events alone do not tell
// an answer whose typing indicator stayed on from a complete one.
func (e *timeoutError) Error() string {
	var ne *platform.NetworkError
	if !errors.As(e.err, &ne) || ne.Method == "" || ne.Path == "" {
		return e.what + " exceeded"
	}
	call := ne.Method + " " + ne.Path
	if awaited := platform.MessagingAwaited(e.err); awaited != "" {
		call += ": " + awaited
	}
	return e.what + " exceeded (" + call + ")"
}
func (e *timeoutError) Unwrap() error { return e.err }

// classify turns a failed call into the Error recorded on the attempt and
// says whether a fresh attempt could succeed. It returns nil when the run
// was interrupted: that is no verdict at all.
//
// Bad credentials and an unknown agent are not retried: every attempt would
// fail the same way and only slow the run down. A 404 on a turn (the session
// vanished) is retried, since a fresh session may work.
func classify(err error, starting bool) (e *result.Error, retry bool) {
	e, retry = classifyCall(err, starting)
	// The status travels with every platform error that has one, those
	// given a hint included: a flaky case's note and the JSON report
	// tell a 404 or a 401 from a 500 by it, and a CHAT_TIMEOUT (408) or
	// a rate limit (429) from a timeout of the client's own, as the
	// message does.
	api, isAPI := errors.AsType[*platform.APIError](err)
	switch {
	case e == nil:
	case isAPI && (e.Kind == result.KindHTTP || e.Kind == result.KindTimeout):
		e.Status = api.Status
	case e.Kind == result.KindRateLimited:
		e.Status = http.StatusTooManyRequests
	}
	return e, retry
}

// classifyCall is classify without the answer's status.
func classifyCall(err error, starting bool) (e *result.Error, retry bool) {
	var (
		cut *cutError
		to  *timeoutError
		rl  *platform.RateLimitError
		api *platform.APIError
		bad *platform.ResponseError
		net *platform.NetworkError
		msg *messagingError
	)
	// The Messaging client's own turn timer, and the limit it had.
	msgTimeout, isMsgTimeout := platform.MessagingTurnTimeout(err)
	switch {
	case errors.As(err, &cut):
		return nil, false
	case errors.As(err, &msg) && msg.config:
		return &result.Error{Kind: result.KindConfig, Message: msg.msg}, msg.retry
	case errors.As(err, &msg):
		return &result.Error{Kind: result.KindMessaging, Message: msg.msg}, msg.retry
	case errors.As(err, &to):
		return &result.Error{Kind: result.KindTimeout, Message: to.Error()}, true
	case isMsgTimeout:
		// The Messaging client's own turn timer fired before the
		// runner's (MessagingOptions.TurnTimeout shorter, or the
		// runner's moved out by rate-limit waits): the same timeout as
		// a debug-chat turn's, not a network error.
		return &result.Error{Kind: result.KindTimeout, Message: (&timeoutError{what: fmt.Sprintf("turn timeout of %s", msgTimeout), err: err}).Error()}, true
	case errors.As(err, &rl) && rl.SelfPaced():
		// The platform refused nothing: the run's own rate, wait
		// budget and parallelism held the call, a configuration that
		// errors every run the same way. Before, it read as the
		// platform's rate limit and blamed the platform.
		return &result.Error{Kind: result.KindConfig, Message: err.Error()}, false
	case errors.As(err, &rl):
		// The case's wait budget is spent: another attempt would only
		// wait more.
		return &result.Error{Kind: result.KindRateLimited, Message: err.Error()}, false
	case platform.IsChatTimeout(err):
		return &result.Error{Kind: result.KindTimeout, Message: err.Error()}, true
	case platform.IsAuth(err) && errors.As(err, &api) && api.Credential == platform.CredentialAccessToken:
		// The platform refused the short-lived token it had just
		// issued: its error; a fresh session gets a fresh token.
		return &result.Error{Kind: result.KindHTTP, Message: err.Error() + " (the platform refused the access token it had just issued)"}, true
	case platform.IsAuth(err) && platform.IsMessaging(err):
		return &result.Error{Kind: result.KindHTTP, Message: err.Error() + " (check the connector token, and that the messaging host is the domain it is registered to)"}, false
	case platform.IsAuth(err):
		return &result.Error{Kind: result.KindHTTP, Message: err.Error() + " (check the API key and its rights on this agent)"}, false
	case starting && platform.IsNotFound(err) && !platform.IsMessaging(err):
		return &result.Error{Kind: result.KindHTTP, Message: err.Error() + hintAgentID}, false
	case platform.IsMessagingMisrouted(err):
		return &result.Error{Kind: result.KindHTTP, Message: err.Error() + hintMessagingURL}, false
	case platform.IsNotFound(err) && platform.IsMessaging(err):
		// The handshake of a session the platform no longer knows: it
		// expired (or was never created); a fresh session may do.
		return &result.Error{Kind: result.KindHTTP, Message: err.Error() + " (the Messaging session expired, or the platform does not know it)"}, true
	case platform.IsUnprovisioned(err):
		// The scenario's agent_number, refused as written: a retry
		// sends it again.
		return &result.Error{Kind: result.KindConfig, Message: err.Error()}, false
	case errors.As(err, &api):
		return &result.Error{Kind: result.KindHTTP, Message: err.Error()}, true
	case errors.As(err, &bad), errors.Is(err, errNoResult), errors.As(err, new(*pagesError)):
		return &result.Error{Kind: result.KindHTTP, Message: err.Error()}, true
	case errors.As(err, &net):
		return &result.Error{Kind: result.KindNetwork, Message: err.Error()}, true
	default:
		// The client checks a call before sending it (agent id, clientEnv
		// enum); what it refuses would be refused on every attempt.
		return &result.Error{Kind: result.KindConfig, Message: err.Error()}, false
	}
}

// recordFailures adds broken expectations to an attempt, which is then
// Failed. Every failure the runner records passes here: it is the one
// place to treat the text of failures (expected, actual, message) before
// it is kept. red masks the keys in them (redact.go).
func recordFailures(red *secret.Redactor, a *result.Attempt, fs ...assert.Failure) {
	for i := range fs {
		maskFailure(red, &fs[i])
	}
	a.Failures = append(a.Failures, fs...)
	a.Status = result.Failed
}

// recordScores keeps the similarity scores of the checks of turn t's
// reply, the texts they compared with masked as a failure's are (a
// ${env:...} in one may hold a key). t is never nil: every reply a check
// reads came from a call, which recorded its turn (Session.call).
func recordScores(red *secret.Redactor, t *result.Turn, scores []assert.Score) {
	for i := range scores {
		scores[i].To = red.String(scores[i].To)
	}
	t.Scores = append(t.Scores, scores...)
}

// recordError records what ended an attempt: an infrastructure problem
// makes it Errored; an interruption (KindInterrupted) leaves it Pending,
// since it is no verdict. Every error the runner records passes here: it
// is the one place to treat the text of errors before it is kept. red
// masks the keys in the message (redact.go).
func recordError(red *secret.Redactor, a *result.Attempt, e *result.Error) {
	e.Message = red.String(e.Message)
	a.Error = e
	if e.Kind != result.KindInterrupted {
		a.Status = result.Errored
	}
}

// noAgent is the error of a scenario that names no agent anywhere.
func (s Settings) noAgent() string {
	return "no agent to test: name one in the suite or scenario (agent:, @agent:NAME, Given the agent \"NAME\"), or " + cmp.Or(s.Agent, "give the target an agent_id (AGENTTEST_AGENT_ID)")
}

// noRuntime is the error of a confirmation or a probe without a client
// for the runtime host.
func (s Settings) noRuntime() string {
	return "no client for the runtime host (give " + cmp.Or(s.Runtime, "the target a runtime_url and runtime_key") + ")"
}

// notListed is the error of a probe to a number not listed.
func (s Settings) notListed(what, number string) string {
	return fmt.Sprintf("probe: %s %s is not listed in %s: a probe calls or texts only the numbers the config allows", what, number, cmp.Or(s.ProbeNumbers, "the target's probe_numbers"))
}

// noSMSConnector is the error of an SMS probe without a connector id.
func (s Settings) noSMSConnector(agent, env string) string {
	return fmt.Sprintf("probe: sms: no connector id (X-TOKEN-ID) for agent %s in %s: set %s", agent, env, s.smsConnector(agent))
}

// smsConnector names the setting of agent's SMS connector id.
func (s Settings) smsConnector(agent string) string {
	return cmp.Or(s.SMSConnector, "sms_connector_ids."+agent+" (or sms_connector_id) on the target")
}

// noMessaging is the error of a scenario over messaging on a run without
// the Messaging channel.
func (s Settings) noMessaging() string {
	return "the scenario runs over messaging (via: messaging), but the run has no Messaging channel: give " + cmp.Or(s.Messaging, "the target messaging_url, messaging_host and a connector token (docs/configuration.md)")
}
