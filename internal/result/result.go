// Package result is the data model of a run: what every case, attempt and
// turn learnt, as plain data. It is a leaf: the runner (internal/runner)
// fills a *Result, and the renderers (internal/report) are pure functions
// of one; neither the renderers nor anything else that reads a Result
// depends on the runner, the platform client or the step vocabulary.
//
//	res, err := runner.Run(ctx, suites, opts) // *result.Result
//	for _, c := range res.Scenarios() {
//		fmt.Println(c.Pos, c.Name, c.Status) // suites/a.yaml:4:5 books a table passed
//	}
//
// A Status is ordered (Pending < Skipped < Passed < Flaky < Failed <
// Errored) so that outcomes combine with Merge, the worse one winning. The
// verdict of a whole run is a RunStatus (passed, failed, errored,
// interrupted, empty), derived once by Result.RunStatus: a failure wins
// over an error there, since it is a claim about the agent.
// Failed (an expectation about the agent was false) and Errored (the
// harness, the network or the platform broke) stay apart all the way to
// the exit code.
package result

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// Status is the outcome of a case, an attempt or a whole run. Statuses are
// ordered so that combining outcomes is a fold with Merge: the worse one
// wins.
type Status int

const (
	// Pending: not run (yet). An interrupted run leaves unfinished cases
	// pending.
	Pending Status = iota
	// Skipped: not run on purpose (skip:, filtered by a fail-fast stop).
	Skipped
	// Passed: every expectation held.
	Passed
	// Flaky: passed, but only after a failed or errored attempt.
	Flaky
	// Failed: an expectation about the agent was false.
	Failed
	// Errored: the harness, the network or the platform broke; nothing
	// was learnt about the agent.
	Errored
)

var statusNames = [...]string{"pending", "skipped", "passed", "flaky", "failed", "errored"}

func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("Status(%d)", int(s))
	}
	return statusNames[s]
}

// MarshalText renders the status by name in JSON and YAML.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status name.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown status %q", b)
}

// Ran reports whether a case of this status ran: it passed, was flaky,
// failed or errored. A case skipped or never started talked to no agent.
func (s Status) Ran() bool { return s >= Passed }

// Merge returns the worse of two statuses.
func (s Status) Merge(next Status) Status {
	if next > s {
		return next
	}
	return s
}

// Result is everything a run learnt, in file and case order. Reports are pure
// functions of a Result.
type Result struct {
	// Started is when the run began; Duration its wall time.
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	// Target describes what was tested, without secrets.
	Target Target `json:"target"`
	// Files holds one entry per suite file (YAML suite or feature file),
	// in the order the files were found.
	Files []*File `json:"files"`
	// Interrupted is true when the run was cancelled (SIGINT, SIGTERM, a
	// deadline) before every case finished; unfinished cases are Pending.
	Interrupted bool `json:"interrupted,omitempty"`
	// Stop, when set, says why the run stopped starting cases before the
	// end of its plan (--fail-fast, a platform that cannot be used); the
	// cases it left unrun are Skipped with its Reason.
	Stop *Stop `json:"stop,omitempty"`
	// Checks holds run-level checks that are not scenarios (the alert gate
	// of a later issue); they count like cases.
	Checks []*Case `json:"checks,omitempty"`
	// Pacing is what the platform's rate limits cost the run; nil when
	// no call was refused with a 429 or had to wait for its turn.
	Pacing *Pacing `json:"pacing,omitempty"`
	// Deployments are the evidence of what was tested: for each agent and
	// environment of the run, the deployment active before its first case
	// and after its last, in the order the run first met them.
	Deployments []*Deployment `json:"deployments,omitempty"`
	// Shard is set when the run ran one share of its selection (--shard
	// K/N), so that the shards' reports can be merged and checked to be
	// of one selection.
	Shard *Shard `json:"shard,omitempty"`
	// Rerun is set when the run ran again the failed and errored cases
	// of an earlier report, and those its run left unrun
	// (--rerun-failed): it tested those cases, not the selection, and
	// cannot vouch for the whole.
	Rerun *Rerun `json:"rerun,omitempty"`
	// ForcedMerge lists, for a run merged with `agenttest merge --force`,
	// what made its reports other than the complete shards of one
	// selection on one target (a shard of another selection or target, a
	// shard given twice or missing, a report that is no shard's): the
	// merged run is of no one selection, and cannot vouch for one.
	ForcedMerge []string `json:"forced_merge,omitempty"`
	// Filter is set when --tags, --name or FILE:LINE arguments narrowed
	// the run to some of the scenarios of the files it loaded: it tested
	// that subset, and `agenttest gate` refuses it unless the gate is
	// told the same filter is the one the pipeline intends.
	Filter *Filter `json:"filter,omitempty"`
	// Paths are the suite paths the run was given on the command line,
	// cleaned and as given (relative when given relative; "." when none
	// was given; the report's files when --rerun-failed named them), so
	// that a reader, and `agenttest gate`'s header, can tell a run of
	// suites/restaurant.yaml from a run of suites. Empty in a report
	// written before runs recorded them.
	Paths []string `json:"paths,omitempty"`
}

// Filter records what narrowed a run's selection (--tags, --name,
// FILE:LINE arguments) and how many scenarios of its files it left out.
type Filter struct {
	// Tags and Name are the flags as given (repeated --tags combined).
	Tags string `json:"tags,omitempty"`
	Name string `json:"name,omitempty"`
	// At lists the FILE:LINE arguments.
	At []string `json:"at,omitempty"`
	// LeftOut is the number of scenarios of the loaded files the filter
	// did not select: they ran nowhere in this run.
	LeftOut int `json:"left_out"`
}

// String says the filter as the command line gave it: "--tags '@smoke'
// --name 'refund' suites/a.yaml:12".
func (f *Filter) String() string {
	var parts []string
	if f.Tags != "" {
		parts = append(parts, fmt.Sprintf("--tags %q", f.Tags))
	}
	if f.Name != "" {
		parts = append(parts, fmt.Sprintf("--name %q", f.Name))
	}
	parts = append(parts, f.At...)
	return strings.Join(parts, " ")
}

// Same reports whether g, a filter or nil (none), narrows a selection as
// f does: the same --tags, --name and FILE:LINE arguments.
func (f *Filter) Same(g *Filter) bool {
	return g != nil && f.Tags == g.Tags && f.Name == g.Name && slices.Equal(f.At, g.At)
}

// Rerun records the report a --rerun-failed run ran the failures of.
type Rerun struct {
	// Of is the report as given on the command line; Failed the number
	// of its failed and errored cases.
	Of     string `json:"of"`
	Failed int    `json:"failed"`
	// Unrun is the number of its cases that its run left without a
	// verdict, interrupted or stopped (--fail-fast, a platform that
	// could not be used) before them: a rerun runs them too. A report
	// written before the member existed reads as 0.
	Unrun int `json:"unrun"`
}

// Cases names the cases the rerun ran, for messages: "the 2 failed or
// errored cases of first.json", then " and the 5 cases its run left
// unrun" when there are such; "the 5 cases the run of first.json left
// unrun" when none failed. of is Of as the message writes it (escaped
// for a terminal, say).
func (r *Rerun) Cases(of string) string {
	cases := func(n int) string {
		if n == 1 {
			return "1 case"
		}
		return fmt.Sprintf("%d cases", n)
	}
	switch {
	case r.Unrun == 0:
		return fmt.Sprintf("the %s that failed or errored in %s", cases(r.Failed), of)
	case r.Failed == 0:
		return fmt.Sprintf("the %s the run of %s left unrun", cases(r.Unrun), of)
	}
	return fmt.Sprintf("the %s that failed or errored in %s and the %s its run left unrun", cases(r.Failed), of, cases(r.Unrun))
}

// Shard records which share of a selection a run ran (--shard K/N).
type Shard struct {
	// Index is K (1-based), Total N.
	Index int `json:"index"`
	Total int `json:"total"`
	// Selection identifies the whole selection the shard was dealt from
	// (scenario.Fingerprint): every shard of one run carries the same.
	Selection string `json:"selection"`
	// Selected is the number of scenarios of the whole selection.
	Selected int `json:"selected"`
}

// Check says what makes s a share no run deals (--shard K/N): fewer than
// one shard, a K outside 1..N, or fewer than no scenarios. field is the
// member of the report's "shard" at fault (total, index or selected),
// for a reader to place the problem; "" and nil when s is a share.
// scenario.ParseShard holds a --shard flag to the same rule.
func (s Shard) Check() (field string, err error) {
	switch {
	case s.Total < 1:
		return "total", fmt.Errorf("%d shards: a selection is dealt into 1 or more", s.Total)
	case s.Index < 1 || s.Index > s.Total:
		return "index", fmt.Errorf("shard %d of %d: want 1 <= index <= total", s.Index, s.Total)
	case s.Selected < 0:
		return "selected", fmt.Errorf("%d scenarios selected", s.Selected)
	}
	return "", nil
}

// Pacing sums what rate limits cost a run: the client paces each key to
// the rate the platform accepts (a 429 pauses the key for its
// Retry-After and lowers the rate; --rate caps it), so a limited platform
// slows the run down instead of failing it.
type Pacing struct {
	// Limited counts the 429 answers received.
	Limited int `json:"limited"`
	// Accepted counts the other answers: the requests the platform took.
	Accepted int `json:"accepted"`
	// Waited sums the time the cases waited on rate limits, and
	// MaxWaited is the longest any one case waited (what the wait
	// budget per case bounds).
	Waited    time.Duration `json:"waited_ns"`
	MaxWaited time.Duration `json:"max_waited_ns"`
}

// AcceptedRate is the requests the platform took per second of the run:
// the pace it allowed.
func (p *Pacing) AcceptedRate(run time.Duration) float64 {
	if p == nil || run <= 0 {
		return 0
	}
	return float64(p.Accepted) / run.Seconds()
}

// Target describes the platform a run talked to. It never holds keys.
type Target struct {
	// Name is the configured target name, or "sim" for the embedded
	// simulator.
	Name       string `json:"name"`
	BuildURL   string `json:"build_url,omitempty"`
	RuntimeURL string `json:"runtime_url,omitempty"`
	AccountID  string `json:"account_id,omitempty"`
	Env        string `json:"env,omitempty"`
	Embedded   bool   `json:"embedded,omitempty"`
	// Seed is the embedded simulator's --seed: every draw of its
	// agents (phrasings, weighted replies) comes from it, so the same
	// seed replays a run (docs/simulator.md). Only with Embedded.
	Seed int64 `json:"seed,omitempty"`
	// Envs are the environments the run's cases run in, with how many
	// run in each (CountEnvs): a suite's env: wins over Env, so the
	// target's environment need not be the one tested. Empty when no
	// case runs.
	Envs []EnvCount `json:"envs,omitempty"`
}

// Diff says how other differs from t as a target, "" when they are one:
// its name, account, environment, and platform (the build and runtime
// URLs). The embedded simulator listens on a new port in every process,
// so its URLs do not count. Envs, what the cases ran in, is the run's,
// not the target's. Shards of one run must be of one target (merge), and
// a history of reports of more than one says so.
func (t Target) Diff(other Target) string {
	var diffs []string
	field := func(name, x, y string) {
		if x != y {
			diffs = append(diffs, fmt.Sprintf("%s %q, not %q", name, y, x))
		}
	}
	field("name", t.Name, other.Name)
	field("account", t.AccountID, other.AccountID)
	field("env", t.Env, other.Env)
	if t.Embedded != other.Embedded {
		diffs = append(diffs, "one ran on the embedded simulator")
	} else if !t.Embedded {
		if !SameURL(t.BuildURL, other.BuildURL) {
			field("build_url", t.BuildURL, other.BuildURL)
		}
		if !SameURL(t.RuntimeURL, other.RuntimeURL) {
			field("runtime_url", t.RuntimeURL, other.RuntimeURL)
		}
	}
	return strings.Join(diffs, ", ")
}

// SameURL says whether a and b name one platform host as the client
// calls it: it trims the trailing slashes of a configured URL
// (internal/platform), so "https://b.example.com/" and
// "https://b.example.com" are one, and so are a scheme or a host
// written in capitals.
func SameURL(a, b string) bool {
	a, b = strings.TrimRight(a, "/"), strings.TrimRight(b, "/")
	if a == b {
		return true
	}
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	ua.Host, ub.Host = strings.ToLower(ua.Host), strings.ToLower(ub.Host)
	return ua.String() == ub.String()
}

// EnvCount is one environment of a run and the number of its cases.
type EnvCount struct {
	Env   string `json:"env"`
	Cases int    `json:"cases"`
}

// CountEnvs counts the cases per environment, the most first (then by
// name); cases without an environment are not counted.
func CountEnvs(cases []*Case) []EnvCount {
	n := map[string]int{}
	var out []EnvCount
	for _, c := range cases {
		if c == nil || c.Env == "" {
			continue
		}
		if n[c.Env] == 0 {
			out = append(out, EnvCount{Env: c.Env})
		}
		n[c.Env]++
	}
	for i := range out {
		out[i].Cases = n[out[i].Env]
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Cases != out[j].Cases {
			return out[i].Cases > out[j].Cases
		}
		return out[i].Env < out[j].Env
	})
	return out
}

// File is the result of one suite file.
type File struct {
	// Path is the file path as given on the command line (slash-separated,
	// relative when the argument was).
	Path string `json:"path"`
	// Suite is the suite name (the `suite:` key, the Feature title, or the
	// file name).
	Suite string  `json:"suite"`
	Cases []*Case `json:"cases"`
}

// Status folds the statuses of the file's cases as they gate the run
// (Case.Gate: a quarantined case counts as passed). A file none of whose
// cases ran is Pending when the run left any of them Pending (it was
// interrupted before they started), Skipped only when every one was
// skipped on purpose: it says what happened, where Merge alone would
// rank the skip above the interruption. A file with no cases is
// Pending.
func (f *File) Status() Status {
	s, pending := Pending, false
	for _, c := range f.Cases {
		g := c.Gate()
		pending = pending || g == Pending
		s = s.Merge(g)
	}
	if s == Skipped && pending {
		return Pending
	}
	return s
}

// Case is the result of one scenario (one expanded example row).
type Case struct {
	// Name is the scenario name, with the example row appended when the
	// scenario was expanded from examples.
	Name string `json:"name"`
	// Pos is where the scenario is written.
	Pos  diag.Pos `json:"pos"`
	Tags []string `json:"tags,omitempty"`
	// Status is the verdict.
	Status Status `json:"status"`
	// Duration is the wall time of all attempts.
	Duration time.Duration `json:"duration_ns"`
	// Agent, Env and Variant are the session parameters used.
	Agent   string `json:"agent,omitempty"`
	Env     string `json:"env,omitempty"`
	Variant string `json:"variant,omitempty"`
	// Via is the channel of the conversation when it is not debug chat:
	// "messaging".
	Via string `json:"via,omitempty"`
	// Streaming says the conversation over messaging asked for streamed
	// replies (streaming_enabled).
	Streaming bool `json:"streaming,omitempty"`
	// SkipReason says why a skipped or pending case did not run.
	SkipReason string `json:"skip_reason,omitempty"`
	// Attempts are the tries of this case, in order. The verdict comes from
	// the last one (or from the repeat rule when Repeat is set).
	Attempts []*Attempt `json:"attempts,omitempty"`
	// Repeat is set for scenarios run several times with a pass rate.
	Repeat *Repeat `json:"repeat,omitempty"`
	// Quarantine is set for a quarantined scenario: its Status is its real
	// outcome, but while the quarantine holds it does not gate the run.
	Quarantine *Quarantine `json:"quarantine,omitempty"`
	// RateLimited counts the 429 answers the case's calls received, and
	// RateWaited is the time they waited on rate limits (Retry-After
	// pauses and their turn at the key's pace). Waiting is what a rate
	// limit asks for: it never makes a case flaky, and only a wait past
	// the run's budget per case errors it (KindRateLimited).
	RateLimited int           `json:"rate_limited,omitempty"`
	RateWaited  time.Duration `json:"rate_waited_ns,omitempty"`
	// Unchecked is true when the scenario checks nothing of the agent (no
	// check, capture, probe or confirmation: the lint warning "the
	// scenario checks nothing"): it passes whenever the agent answers,
	// and a gate must not take its pass for a test of the agent.
	Unchecked bool `json:"unchecked,omitempty"`
}

// Quarantined reports whether the case is under a quarantine that holds:
// it ran and is reported, but never changes the run's verdict.
func (c *Case) Quarantined() bool { return c.Quarantine != nil && !c.Quarantine.Lapsed }

// QuarantineHeld reports whether the case ran under a quarantine that
// holds: whatever its outcome, it gates the run as passed (Gate) and the
// summaries count it as quarantined, not by its Status.
func (c *Case) QuarantineHeld() bool { return c.Quarantined() && c.Status.Ran() }

// Gate is the status the case contributes to the run's verdict and exit
// code: its Status, except that a quarantined case that ran counts as
// passed.
func (c *Case) Gate() Status {
	if c.QuarantineHeld() {
		return Passed
	}
	return c.Status
}

// Inconclusive reports whether the case is a sequential test that reached
// its limit undecided: a gate failure (Status Failed) that says nothing
// against the agent.
func (c *Case) Inconclusive() bool {
	return c.Repeat != nil && c.Repeat.Decision == DecisionInconclusive
}

// FlakyNote says on which attempt a flaky case passed and what the
// attempts before met: "passed on attempt 2 of 2 after a failed check"
// (the agent answered wrong, then right: it varies) or "... after a
// platform error (500)" (the platform broke: nothing is known against the
// agent). Both count as flaky (Flaky); this says which it was.
func (c *Case) FlakyNote() string {
	last := c.Last()
	if last == nil {
		return ""
	}
	var what []string
	seen := map[string]bool{}
	for _, a := range c.Attempts[:len(c.Attempts)-1] {
		w := ""
		switch {
		case a == nil:
		case a.Status == Failed:
			w = "a failed check"
		case a.Status == Errored:
			w = errorWhat(a.Error)
		}
		if w != "" && !seen[w] {
			seen[w] = true
			what = append(what, w)
		}
	}
	note := fmt.Sprintf("passed on attempt %d of %d", last.Number, len(c.Attempts))
	if len(what) > 0 {
		note += " after " + strings.Join(what, " and ")
	}
	return note
}

// errorWhat names the kind of an attempt's error for FlakyNote.
func errorWhat(e *Error) string {
	if e == nil {
		return "an error"
	}
	switch e.Kind {
	case KindHTTP:
		if e.Status > 0 {
			return fmt.Sprintf("a platform error (%d)", e.Status)
		}
		return "a platform error"
	case KindTimeout:
		return "a timeout"
	case KindNetwork:
		return "a network error"
	case KindRateLimited:
		return "a rate limit"
	case KindMessaging:
		return "a Messaging error"
	case KindConfig:
		return "a configuration error"
	}
	return "an error (" + e.Kind + ")"
}

// Quarantine is the quarantine of a case, as the run found it.
type Quarantine struct {
	// Reason says why; Owner who is on it.
	Reason string `json:"reason"`
	Owner  string `json:"owner,omitempty"`
	// Until is the quarantine's last day, 2006-01-02.
	Until string `json:"until"`
	// Lapsed is true when the run started after Until: the case gates
	// again, and reports say so.
	Lapsed bool `json:"lapsed,omitempty"`
}

// ConversationID returns the conversation of the last attempt, if any.
func (c *Case) ConversationID() string {
	if a := c.Last(); a != nil {
		return a.ConversationID
	}
	return ""
}

// Last returns the last attempt, or nil when the case never ran.
func (c *Case) Last() *Attempt {
	if len(c.Attempts) == 0 {
		return nil
	}
	return c.Attempts[len(c.Attempts)-1]
}

// Deciding returns the attempt that explains a non-passing case: the last
// one of the case's own status (for a repeat, the last failing run), else
// the last one that did not pass, else the last. A case failed by an
// assertion whose retry then errored is failed: it is explained by the
// broken expectation, not by the platform's error after it; and an
// errored repeat by an error, not by a failed run it counted as a
// possible pass. Every report and comparison that says why a case did not
// pass asks it, so they name the same cause.
func (c *Case) Deciding() *Attempt {
	var other *Attempt
	for _, a := range slices.Backward(c.Attempts) {
		if a == nil || a.Status != Failed && a.Status != Errored {
			continue
		}
		if a.Status == c.Status {
			return a
		}
		if other == nil {
			other = a
		}
	}
	if other != nil {
		return other
	}
	return c.Last()
}

// Repeat records a scenario run several times from fresh sessions, and
// the grounds of its verdict. With ProcedureFixed (`repeat: N` without a
// confidence) all N runs are made and the case passes when the share of
// passing runs reaches PassRate. With ProcedureSPRT the runs are decided
// one by one, in the order they started, by the sequential test of
// package stats, up to Limit runs that count as evidence.
type Repeat struct {
	// Procedure is ProcedureFixed or ProcedureSPRT.
	Procedure string `json:"procedure"`
	// Runs counts the runs the verdict rests on, errored ones included;
	// Passed, Failed and Errored split them. An errored run is not
	// evidence: under ProcedureSPRT it counts neither way.
	Runs    int `json:"runs"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	// Discarded counts runs started in parallel after the runs the
	// verdict rests on: stopped, or finished too late, they are not
	// counted (the verdict is decided on runs in the order they started).
	Discarded int `json:"discarded,omitempty"`
	// Limit is the most runs: `repeat:` (ProcedureFixed: exactly that
	// many; ProcedureSPRT: the most that count as evidence).
	Limit int `json:"limit"`
	// Needed is the limit the sequential test's guarantee needs (0 for
	// ProcedureFixed): a Limit below it ends inconclusive more often.
	// 100001 (stats.MaxRuns+1) says that even 100000 runs are not enough.
	Needed int `json:"needed,omitempty"`
	// PassRate is the rate required (p1); Margin and Confidence complete
	// the sequential design (0 for ProcedureFixed).
	PassRate   float64 `json:"pass_rate"`
	Margin     float64 `json:"margin,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// Lower and Upper bound the true pass rate, each at Level (one-sided):
	// anytime-valid bounds for ProcedureSPRT, Clopper–Pearson for
	// ProcedureFixed.
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	Level float64 `json:"level"`
	// Decision is one of the Decision* names once the case has its
	// verdict.
	Decision string `json:"decision,omitempty"`
}

// Counted is the number of runs that are evidence (not errored).
func (r *Repeat) Counted() int { return r.Passed + r.Failed }

// Attempt is one try of a case, from a fresh session.
type Attempt struct {
	Number int `json:"number"`
	// Run is the run the attempt belongs to (1-based) when the case is
	// repeated; a run retries only its errored attempts.
	Run            int           `json:"run,omitempty"`
	Status         Status        `json:"status"`
	ConversationID string        `json:"conversation_id,omitempty"`
	Started        time.Time     `json:"started"`
	Duration       time.Duration `json:"duration_ns"`
	// Turns is the transcript, starting with the greeting (Index 0).
	Turns []*Turn `json:"turns"`
	// Failures are the broken expectations (Status Failed).
	Failures []assert.Failure `json:"failures,omitempty"`
	// Error is the infrastructure problem that ended the attempt (Status
	// Errored).
	Error *Error `json:"error,omitempty"`
	// Confirmations are what was read back from the platform after the
	// session (confirm:) or by a probe, in order, so a report shows what
	// was confirmed and not only what failed.
	Confirmations []*Confirmation `json:"confirmations,omitempty"`
	// NotRun are the steps of the scenario's program after the one that
	// ended the attempt (a failure, an error, an interruption), in order:
	// what the attempt left untested, a confirm: block included. A YAML
	// scenario and a feature are one step program, so both list them
	// alike. Empty for an attempt that ran every step.
	NotRun []*Step `json:"not_run,omitempty"`
}

// Step is a step of a scenario's program, as reports name it: an attempt
// lists those it did not run (Attempt.NotRun).
type Step struct {
	// Pos is where the step is written: a feature step's keyword, or the
	// YAML key or list item it comes from.
	Pos diag.Pos `json:"pos"`
	// Kind is what the step does: one of the Step* constants.
	Kind string `json:"kind"`
	// Turn is the turn a say step sends, or the one whose reply a check
	// or a capture reads (0: the greeting); 0 for the other kinds.
	Turn int `json:"turn,omitempty"`
	// Text is the step in one line, as Gherkin reads it: a feature step
	// as written, a YAML one as the Cucumber report names it ("When the
	// user says \"thanks\"").
	Text string `json:"text"`
	// Confirms are what a confirm step reads, named as the keys of
	// confirm: are: one or more of "conversation", "handoff_state",
	// "recording" and "webhooks", in that order.
	Confirms []string `json:"confirms,omitempty"`
}

// Kinds of Step: the kinds of the step program (internal/steps).
const (
	StepSetup      = "setup"
	StepOpen       = "open"
	StepSay        = "say"
	StepCheck      = "check"
	StepCapture    = "capture"
	StepProbe      = "probe"
	StepCallStatus = "call_status"
	StepConfirm    = "confirm"
)

// Kinds of Confirmation.
const (
	ConfirmConversation = "conversation"
	ConfirmHandoffState = "handoff_state"
	ConfirmWebhook      = "webhook"
	ConfirmRecording    = "recording"
	ConfirmCall         = "call"
	ConfirmSMS          = "sms"
)

// Confirmation is one read of what the platform recorded: the conversation
// record, the handoff state, a webhook event, a probe's call or SMS. It is
// kept small (one summary line) because a nightly run holds hundreds.
type Confirmation struct {
	// Pos is the confirm:, probe: or step that asked for it.
	Pos diag.Pos `json:"pos"`
	// Kind is one of the Confirm* constants.
	Kind string `json:"kind"`
	// Subject is what was read: a conversation id, a shared id, an event
	// name, a call sid, a number.
	Subject string `json:"subject"`
	// Found is false when the platform had nothing (no record in time,
	// no event, a call that never reached a final status).
	Found bool `json:"found"`
	// Held is true when what was asked of the platform held: what was
	// read passed its checks (the record's fields, the call's final
	// status), or nothing was found where nothing was expected (no
	// recording of a chat). A failed check, nothing found where
	// something was expected, and a read that errored leave it false:
	// the reports mark the line ✓ or ✗ by it, not by Found, so a call
	// that ended in failure when success was expected reads ✗.
	Held bool `json:"held"`
	// Summary is one line of what was found, e.g. "channel=WEBCHAT
	// in_progress=false num_turns=2 handoff=true".
	Summary string `json:"summary,omitempty"`
	// Reads counts the platform reads it took (polling with backoff).
	Reads int `json:"reads,omitempty"`
	// Duration is the time spent reading and waiting.
	Duration time.Duration `json:"duration_ns"`
	// Seen is what a probe did and saw, in order, for a reader to tell
	// a call that never connected from an agent that answered wrong: the
	// call placed and each status it went through, the SMS sent and the
	// platform's answer, the search for the conversation; and on the
	// record of a probe's conversation, its turns as the platform
	// recorded them (what the agent said on the call or by SMS, and what
	// it was told). Empty for the other reads: a debug chat's turns are
	// its transcript.
	Seen []Seen `json:"seen,omitempty"`
}

// Seen is one thing a probe did or saw.
type Seen struct {
	// At is when: agenttest's clock for what it sent and read, the
	// platform's for a turn of a record (zero when the record gives no
	// time).
	At time.Time `json:"at,omitzero"`
	// Who is one of the Seen* constants.
	Who string `json:"who"`
	// Text is what was sent or seen, in one line.
	Text string `json:"text"`
	// Reads counts the reads in a row that said it (a call's status,
	// read with backoff), Until is when the last of them was made; 0 and
	// zero for one read.
	Reads int       `json:"reads,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// Who of a Seen.
const (
	// SeenSent is what agenttest sent: a call placed, an SMS.
	SeenSent = "sent"
	// SeenPlatform is what the platform answered: a call's status, the
	// answer to an SMS, a search of its conversations.
	SeenPlatform = "platform"
	// SeenUser and SeenAgent are a turn of the record: what the user
	// (the one called or texted) said, and what the agent said.
	SeenUser  = "user"
	SeenAgent = "agent"
)

// Saw appends what was sent or seen at at; the platform saying the same
// again right after (a status read again) counts as a read more of its
// last entry.
func (c *Confirmation) Saw(at time.Time, who, text string) {
	if n := len(c.Seen); n > 0 && who == SeenPlatform && c.Seen[n-1].Who == who && c.Seen[n-1].Text == text {
		last := &c.Seen[n-1]
		last.Reads = max(last.Reads, 1) + 1
		last.Until = at
		return
	}
	c.Seen = append(c.Seen, Seen{At: at, Who: who, Text: text})
}

// Error is an infrastructure problem: where it happened and why.
type Error struct {
	// Pos is the turn or step at which it happened, when known.
	Pos diag.Pos `json:"pos"`
	// Message is the error text (never containing keys).
	Message string `json:"message"`
	// Kind classifies it for reports: "network", "timeout", "http",
	// "config", "internal", "interrupted", "rate_limited" (the Kind*
	// constants).
	Kind string `json:"kind"`
	// Status is the HTTP status of the platform's answer when it was an
	// error status: of Kind "http"; of Kind "timeout", a CHAT_TIMEOUT's
	// 408; of Kind "rate_limited", 429 (the scenario's, or that of
	// another call with the key whose pause held it). 0 otherwise: a
	// timeout of the client's own, a network error. What tells a 500
	// from a refused key, or the platform's timeout from the turn
	// timeout, at a glance.
	Status int `json:"status,omitempty"`
}

// Turn is one exchange of the transcript.
type Turn struct {
	// Index is 0 for the greeting (session creation), then 1, 2, ...
	Index int `json:"index"`
	// Pos is where the turn (or When step) is written.
	Pos diag.Pos `json:"pos"`
	// Say is the user's message after interpolation (empty for the
	// greeting and for silence).
	Say string `json:"say"`
	// Request is the JSON body sent.
	Request json.RawMessage `json:"request,omitempty"`
	// Result is the decoded reply; nil when the call failed. Read it
	// through Reply: a passing case releases it (Release).
	Result *reply.TurnResult `json:"-"`
	// Response is the reply body as received; over Messaging, the events
	// received, as a JSON array.
	Response json.RawMessage `json:"response,omitempty"`
	// Messaging is the turn's events and what they said, for a turn over
	// the Messaging channel; nil for debug chat.
	Messaging *reply.Messaging `json:"messaging,omitempty"`
	// Started is when the request was sent; Latency how long the reply
	// took, measured by the client.
	Started time.Time     `json:"started"`
	Latency time.Duration `json:"latency_ns"`
	// Scores are the similarities the similar matchers of the checks of
	// this reply measured, passing or failing, in the order evaluated:
	// how close a passing reply came to its threshold. Nil when no check
	// of the reply has a similar matcher.
	Scores []assert.Score `json:"scores,omitempty"`
}

// Observer receives progress while a run goes on; human and machine progress
// views implement it. Calls come from several goroutines, one case at a
// time per goroutine; implementations synchronise themselves. Nothing in
// runner prints: this is the only way progress leaves the package.
type Observer interface {
	// RunStarted is called once, before any case starts, with the number
	// of cases that will run (after filters).
	RunStarted(total int, target Target)
	// CaseStarted is called when a case's first attempt begins.
	CaseStarted(file *File, c *Case)
	// CaseFinished is called once per case with its final verdict,
	// including skipped cases and, on interruption, unfinished ones.
	CaseFinished(file *File, c *Case)
	// RunFinished is called once, after every case has finished or been
	// marked, before reports are written.
	RunFinished(r *Result)
}

// NoopObserver ignores every event; embed it to implement only some.
type NoopObserver struct{}

// RunStarted does nothing.
func (NoopObserver) RunStarted(int, Target) {}

// CaseStarted does nothing.
func (NoopObserver) CaseStarted(*File, *Case) {}

// CaseFinished does nothing.
func (NoopObserver) CaseFinished(*File, *Case) {}

// RunFinished does nothing.
func (NoopObserver) RunFinished(*Result) {}

var _ Observer = NoopObserver{}

// Reply returns the decoded reply of the turn, or nil when the call failed.
// Use it rather than reading Result directly: to keep runs lean, the
// runner releases the decoded replies of passing cases (see
// runner.Options.LeanAbove and Release), and Reply decodes them again
// from the body on demand. Read its metadata with Meta (the client may
// decode it on first use). It never modifies the turn, so reports may call
// it from several goroutines.
func (t *Turn) Reply() *reply.TurnResult {
	if t == nil || t.Result == nil {
		return nil
	}
	r := t.Result
	if r == released {
		var ok bool
		if r, ok = reply.ParseTurn(t.Response); !ok {
			return nil // Release checked it would not come to this
		}
	}
	if len(r.RawMetadata) == 0 || r.Meta() != nil {
		return r
	}
	out := *r
	var md reply.Metadata
	if err := json.Unmarshal(r.RawMetadata, &md); err != nil || md == nil {
		// RawMetadata was accepted by the client as an object; this is
		// only reachable with a hand-built Turn.
		md = reply.Metadata{}
	}
	out.SetMetadata(md)
	return &out
}

// released stands in Turn.Result for a reply Release dropped.
var released = &reply.TurnResult{}

// Released reports whether the decoded reply was released (Release): the
// body holds all of it, metadata included.
func (t *Turn) Released() bool { return t.Result == released }

// Release drops what the turn holds besides its body, for a run that must
// keep thousands of transcripts: the decoded reply when the body gives it
// back exactly (reply.TurnResult.Plain: reply.ParseTurn reads it again),
// else at least the decoded metadata, which RawMetadata gives back. Reply
// decodes them again on demand.
func (t *Turn) Release() {
	r := t.Result
	if r == nil || r == released {
		return
	}
	if r.Plain {
		t.Result = released
		return
	}
	if len(r.RawMetadata) > 0 {
		r.DropMetadata()
	}
}
