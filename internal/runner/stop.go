package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// This file is the scheduler's stop rule: when a run stops starting cases
// before the end of its plan, and why. The rule has two halves:
//
//   - --fail-fast: after the first failed or errored case; the cases in
//     flight finish.
//   - A platform that cannot be used at all: a call refused at the
//     connection level (refused, DNS, TLS, connect timeout) by a host no
//     call of the run has reached yet, credentials the platform refuses
//     (401, 403), an agent it does not know (404 on debug-chat session
//     creation), or a messaging host that is not the Messaging API (404
//     on its access-token or session step). Hosts count apart: the build host answering says nothing
//     of a messaging_url or runtime_url that points nowhere, and every
//     case that needs that host would meet the same wall.
//     Every other case would meet the same wall, after its own retries and
//     with its own copy of the same error, so the run stops at the first
//     such case and cuts off the ones in flight; all of them are reported
//     as not run, with the reason, and the cause is said once (Result.Stop).
//
// A connection failure of a host that answered once is a glitch of a
// working platform: those cases error (and retry) as usual. So is a 404
// of debug-chat session creation for an agent the platform opened a
// session of earlier in the run (it knew the agent), and a 404 of the
// Messaging API's first steps at a host where it opened a session (it
// answered there): stopper.served.

// stopper holds the stop decision of one run. Its zero value is not
// ready: use newStopper.
type stopper struct {
	// cut cancels the context the cases run in, cutting off the calls in
	// flight when the platform cannot be used.
	cut context.CancelFunc
	// set is set with stop, for a lock-free check in the hot path.
	set atomic.Bool
	mu  sync.Mutex
	// reached are the hosts that answered a call of the run.
	reached map[string]bool
	// serving holds what the conversations the platform opened show it
	// serves (servedBy).
	serving map[servedThing]bool
	stop    *result.Stop
}

func newStopper(cut context.CancelFunc) *stopper { return &stopper{cut: cut} }

// stopped returns the stop decided so far, or nil.
func (s *stopper) stopped() *result.Stop {
	if !s.set.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop
}

// decide records a stop; the first one wins. A platform stop also cuts
// off the cases in flight.
func (s *stopper) decide(st *result.Stop) {
	s.mu.Lock()
	first := s.stop == nil
	if first {
		s.stop = st
		s.set.Store(true)
	}
	s.mu.Unlock()
	if first && st.Kind != result.StopFailFast {
		s.cut()
	}
}

// servedBy is what a conversation the platform opened shows it serves: a
// debug chat, that its build host knows the agent; a session over
// Messaging, that the Messaging API answers at its host (it says nothing
// of the build host, which may be another region's).
func servedBy(greeting *platform.Exchange, agent string) servedThing {
	if greeting.Messaging != nil {
		return servedThing{messaging: true, name: greeting.Host}
	}
	return servedThing{name: agent}
}

// servedThing is what a conversation shows the platform serves: an agent
// its build host knows, or a host where the Messaging API answers. A key
// of two fields, not one string made of them: every attempt records one.
type servedThing struct {
	messaging bool
	name      string
}

// open records what a conversation the platform opened shows it serves
// (servedBy).
func (s *stopper) open(what servedThing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving == nil {
		s.serving = map[servedThing]bool{}
	}
	s.serving[what] = true
}

// served reports whether cause stops the run for something the platform
// served earlier in it: an unknown agent it opened a session of, no
// Messaging API where one opened a session. Then it is no stop but the
// platform's error of one case, and hint, the end of the case's error
// that blamed the configuration, is to be said instead as says.
func (s *stopper) served(cause *result.Stop) (hint, says string, ok bool) {
	var what servedThing
	switch {
	case cause == nil:
		return "", "", false
	case cause.Kind == result.StopUnknownAgent:
		what, hint = servedThing{name: cause.Agent}, hintAgentID
		says = fmt.Sprintf(" (the platform opened a session of agent %q earlier in the run: its error, not the agent id's)", cause.Agent)
	case cause.Kind == result.StopNoMessagingAPI:
		what, hint = servedThing{messaging: true, name: cause.Host}, hintMessagingURL
		says = " (the Messaging API opened a session at this address earlier in the run: its error, not the messaging_url's)"
	default:
		return "", "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return hint, says, s.serving[what]
}

// after weighs an attempt that just ended: the hosts that answered its
// calls, and the platform stop its failure calls for, if any. It reports
// whether the run is now stopped on a platform that cannot be used, in
// which case the case gets no further attempt: every one would meet the
// same wall. A --fail-fast stop is not one: the cases in flight finish,
// retries included, and a verdict is never read off an attempt the
// case's retry budget would have judged again.
func (s *stopper) after(reached []string, cause *result.Stop) bool {
	if len(reached) > 0 || cause != nil {
		s.mu.Lock()
		if s.reached == nil {
			s.reached = map[string]bool{}
		}
		for _, h := range reached {
			s.reached[h] = true
		}
		// A connection-level failure stops the run only while its host
		// never answered.
		stop := cause != nil && (cause.Config || !s.reached[cause.Host])
		s.mu.Unlock()
		if stop {
			s.decide(cause)
		}
	}
	st := s.stopped()
	return st != nil && st.Kind != result.StopFailFast
}

// PlatformStop is the stop a failed call that is not a run's own (the
// gate's read of a deployment) calls for, as a run's would: a refused
// key, an unreachable host, ... or nil. msg is the error as the caller
// says it (already redacted). A command says it as run says its stop.
func PlatformStop(err error, msg string) *result.Stop {
	return platformStop(err, false, "", "", msg)
}

// platformStop classifies a failed call: the stop it calls for when it
// shows the platform cannot be used at all, or nil. starting says the
// call opened the conversation (a 404 of debug-chat session creation then
// means an unknown agent). agent and env are the case's. msg is the error
// as the attempt records it (already redacted).
//
// Of the Messaging API, the access-token step is the one that checks a
// configured credential (the connector token, with the messaging host): a
// 401 there is a configuration problem. A 401 of the later steps refuses
// the short-lived token the platform just issued, and a 404 of the socket
// is a session it no longer knows: the platform's errors, not a stop. A
// 404 of the access-token or session step, which the reference gives
// neither, says the messaging_url is not the Messaging API's: a stop.
func platformStop(err error, starting bool, agent, env, msg string) *result.Stop {
	var ae *platform.APIError
	var ne *platform.NetworkError
	switch {
	case platform.IsAuth(err) && errors.As(err, &ae) && ae.Credential == platform.CredentialAccessToken:
		return nil
	case platform.IsAuth(err) && errors.As(err, &ae):
		st := &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Cause: msg,
			Host: ae.Host, Credential: ae.Credential, Endpoint: ae.Endpoint, Config: true}
		if ae.Credential == platform.CredentialConnectorToken {
			st.Agent, st.Env = agent, env
		}
		return st
	case starting && platform.IsNotFound(err) && !platform.IsMessaging(err) && errors.As(err, &ae):
		return &result.Stop{Kind: result.StopUnknownAgent, Reason: result.ReasonUnknownAgent, Cause: msg,
			Host: ae.Host, Agent: agent, Config: true}
	case platform.IsMessagingMisrouted(err) && errors.As(err, &ae):
		return &result.Stop{Kind: result.StopNoMessagingAPI, Reason: result.ReasonNoMessagingAPI, Cause: msg,
			Host: ae.Host, Endpoint: ae.Endpoint, Config: true}
	case platform.IsUnreachable(err) && errors.As(err, &ne):
		return &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Cause: msg, Host: ne.Host}
	}
	return nil
}

// answeredBy is the host that answered a failed call, whatever it said,
// or "" when no host answered (or the error does not say which).
func answeredBy(err error) string {
	var ae *platform.APIError
	var re *platform.ResponseError
	var rd *platform.RedirectError
	switch {
	case errors.As(err, &ae):
		return ae.Host
	case errors.As(err, &re):
		return re.Host
	case errors.As(err, &rd):
		return rd.Host
	}
	return ""
}
