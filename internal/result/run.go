package result

import "fmt"

// RunStatus is the verdict of a whole run, derived once from its Result
// by Result.RunStatus. The console's last line, the JSON report's
// run.status, the JUnit report's testsuites-level "status" property and
// the exit code of `agenttest run` all come from it, so they cannot
// disagree.
type RunStatus string

// The run statuses, with the exit code each maps to (cmd/agenttest
// runExit).
const (
	// RunPassed: every selected scenario that ran passed (flaky counts as
	// passed), and at least one ran. Exit 0.
	RunPassed RunStatus = "passed"
	// RunFailed: at least one check failed, in a case or a run-level
	// check: the agent broke an expectation. Errors may be present too.
	// Exit 1.
	RunFailed RunStatus = "failed"
	// RunErrored: no check failed, but at least one case errored: the
	// platform, the network or the harness kept the run from telling
	// whether the agent is fine, or the case's scenario cannot be run as
	// written (Case.ErroredByConfig); or the deployment of an agent changed
	// during the run, whatever the checks said. Exit 4 (2 when the run
	// stopped on a configuration problem, Stop.Config).
	RunErrored RunStatus = "errored"
	// RunInterrupted: the run was cancelled (SIGINT, SIGTERM) before
	// every case finished. Exit 130.
	RunInterrupted RunStatus = "interrupted"
	// RunEmpty: nothing was tested: no scenario was selected, or every
	// selected one was skipped. Exit 5 (0 with --allow-empty).
	RunEmpty RunStatus = "empty"
)

// Known says whether s is one of the run statuses above.
func (s RunStatus) Known() bool {
	switch s {
	case RunPassed, RunFailed, RunErrored, RunInterrupted, RunEmpty:
		return true
	}
	return false
}

// RunStatus derives the verdict of the run from what each case gates
// (Case.Gate): interrupted when it was cancelled; else errored when the
// deployment of an agent changed during the run (Deployment.Changed), even
// if a check failed; else failed when any
// case or check failed (an inconclusive statistical case is failed);
// else errored when any errored; else passed when any case ran; else
// empty. A stop on a platform that cannot be used (Stop) makes the run at
// least errored. A case under a quarantine that holds ran, so it makes a run
// tested, but its failure or error never changes the verdict: a run
// whose every case is quarantined passed, it is not empty.
func (r *Result) RunStatus() RunStatus {
	if r.Interrupted {
		return RunInterrupted
	}
	if len(r.DeploymentChanges()) > 0 {
		// The verdicts are about two deployments, and no one can say
		// which case tested which: a failure is no claim about either.
		return RunErrored
	}
	var failed, errored, ran bool
	for f, c := range r.Cases() {
		switch c.Gate() {
		case Failed:
			failed = true
		case Errored:
			errored = true
		case Passed, Flaky:
			// A run-level check (the alert gate, f nil) can fail or
			// error a run, but cannot make a run that tested no
			// scenario a pass.
			ran = ran || f != nil
		}
	}
	// A platform that could not be used left cases unrun: the run cannot
	// pass, even when the case that met it is quarantined.
	if r.Stop != nil && r.Stop.Kind != StopFailFast {
		errored = true
	}
	switch {
	case failed:
		return RunFailed
	case errored:
		return RunErrored
	case ran:
		return RunPassed
	}
	return RunEmpty
}

// Stop says why a run stopped starting cases before the end of its plan:
// the first failure under --fail-fast, or a platform that cannot be used
// at all. The cases it left unrun are Skipped with Reason.
type Stop struct {
	// Kind is one of the Stop* constants.
	Kind string `json:"kind"`
	// Reason is the skip reason of the cases the stop left unrun.
	Reason string `json:"reason"`
	// Cause is the error that decided the stop, one line, without keys
	// (empty for --fail-fast).
	Cause string `json:"cause,omitempty"`
	// Host is the host:port that could not be used, when the cause is a
	// call.
	Host string `json:"host,omitempty"`
	// Credential names the credential the platform refused ("build
	// key", "runtime key", "call token", ...), for StopCredentials.
	Credential string `json:"credential,omitempty"`
	// Endpoint is the path template of the refused call, for
	// StopCredentials: an endpoint sent more than the credential (the SMS
	// endpoint's connector id) has more to check.
	Endpoint string `json:"endpoint,omitempty"`
	// Agent is the agent id the platform does not know, for
	// StopUnknownAgent; for a refused Messaging connector token, the agent
	// and Env of the connector, so that the stop can name its setting.
	Agent string `json:"agent,omitempty"`
	Env   string `json:"env,omitempty"`
	// Config is true when the cause is a configuration problem (refused
	// credentials, an unknown agent, a messaging_url that is not the
	// Messaging API's): the run exits 2, as for any other
	// configuration problem, rather than 4.
	Config bool `json:"config,omitempty"`
}

// Left reports whether a case skipped with reason was left unrun by the
// stop s (nil when the run did not stop), not skipped by its scenario:
// the stop's own reason, or another stop's, which the other shards' cases
// of a merged report keep beside the one stop it records.
func (s *Stop) Left(reason string) bool {
	return s != nil && (reason == s.Reason || IsStopReason(reason))
}

// CausedBy reports whether e is the error that decided the stop (Cause):
// the error of the case that met the wall first, which is what the stop
// says it is (a configuration problem when Config), whatever its Kind
// says of errors of its kind elsewhere. A merged report keeps one stop;
// the case of another shard that met the same wall has the same message.
func (s *Stop) CausedBy(e *Error) bool {
	return s != nil && e != nil && s.Cause != "" && e.Message == s.Cause
}

// Why says why the run stopped early, in the words every report uses:
// "the platform at build.example.com refused the build key".
func (s *Stop) Why() string {
	at := ""
	if s.Host != "" {
		at = " at " + s.Host
	}
	switch s.Kind {
	case StopFailFast:
		return "--fail-fast after the first failed or errored case"
	case StopUnreachable:
		return "the platform is unreachable" + at
	case StopCredentials:
		what := s.Credential
		if what == "" {
			what = "credentials"
		}
		return "the platform" + at + " refused the " + what
	case StopUnknownAgent:
		return fmt.Sprintf("the platform%s does not know agent %q", at, s.Agent)
	case StopNoMessagingAPI:
		return "no Messaging API answers" + at
	}
	return s.Reason
}

// Kinds of Stop.
const (
	// StopFailFast: --fail-fast, after the first case that gates the run
	// as failed or errored.
	StopFailFast = "fail-fast"
	// StopUnreachable: a call failed at the connection level (refused,
	// DNS, TLS, connect timeout) to a host (Host) that no call of the run
	// had reached.
	StopUnreachable = "unreachable"
	// StopCredentials: the platform refused a credential (401, 403; over
	// Messaging, a 401 of the access-token step: the connector token).
	StopCredentials = "credentials"
	// StopUnknownAgent: the platform does not know the agent (404 on
	// debug-chat session creation).
	StopUnknownAgent = "unknown-agent"
	// StopNoMessagingAPI: the messaging host (Host) answered the first
	// Messaging step (the access token, or the session) 404, which the
	// reference gives neither: it is not the Messaging API's address.
	StopNoMessagingAPI = "no-messaging-api"
)
