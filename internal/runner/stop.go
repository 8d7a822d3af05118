package runner

import (
	"context"
	"errors"
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
//     connection level (refused, DNS, TLS, connect timeout) before any call
//     of the run reached the platform, credentials the platform refuses
//     (401, 403), or an agent it does not know (404 on session creation).
//     Every other case would meet the same wall, after its own retries and
//     with its own copy of the same error, so the run stops at the first
//     such case and cuts off the ones in flight; all of them are reported
//     as not run, with the reason, and the cause is said once (Result.Stop).
//
// A connection failure after the platform answered once is a glitch of a
// working platform: those cases error (and retry) as usual.

// stopper holds the stop decision of one run. Its zero value is not
// ready: use newStopper.
type stopper struct {
	// cut cancels the context the cases run in, cutting off the calls in
	// flight when the platform cannot be used.
	cut context.CancelFunc
	// reached is set once any call of the run got an HTTP answer.
	reached atomic.Bool
	// set is set with stop, for a lock-free check in the hot path.
	set  atomic.Bool
	mu   sync.Mutex
	stop *result.Stop
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

// after weighs an attempt that just ended: its calls (answered, and the
// platform stop its failure calls for, if any). It reports whether the
// run is now stopped, in which case the case gets no further attempt.
func (s *stopper) after(answered bool, cause *result.Stop) bool {
	if answered {
		s.reached.Store(true)
	}
	if cause != nil {
		switch {
		case cause.Config:
			s.decide(cause)
		case !s.reached.Load():
			s.decide(cause)
		}
	}
	return s.set.Load()
}

// platformStop classifies a failed call: the stop it calls for when it
// shows the platform cannot be used at all, or nil. starting says the
// call created the session (a 404 then means an unknown agent). msg is
// the error as the attempt records it (already redacted).
func platformStop(err error, starting bool, agent, msg string) *result.Stop {
	var ae *platform.APIError
	var ne *platform.NetworkError
	switch {
	case platform.IsAuth(err) && errors.As(err, &ae):
		return &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Cause: msg,
			Host: ae.Host, Credential: ae.Credential, Config: true}
	case starting && platform.IsNotFound(err) && errors.As(err, &ae):
		return &result.Stop{Kind: result.StopUnknownAgent, Reason: result.ReasonUnknownAgent, Cause: msg,
			Host: ae.Host, Agent: agent, Config: true}
	case platform.IsUnreachable(err) && errors.As(err, &ne):
		return &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Cause: msg, Host: ne.Host}
	}
	return nil
}

// answered reports whether a failed call got an HTTP answer: the
// platform was reached, whatever it said.
func answered(err error) bool {
	var ae *platform.APIError
	var re *platform.ResponseError
	var rd *platform.RedirectError
	return errors.As(err, &ae) || errors.As(err, &re) || errors.As(err, &rd)
}
