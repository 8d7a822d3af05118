package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
)

// jsonReport is the part of a report.SchemaV1 document history reads.
type jsonReport struct {
	Schema string `json:"schema"`
	Run    struct {
		Started     string       `json:"started"`
		Status      string       `json:"status"`
		Interrupted bool         `json:"interrupted"`
		Stop        *result.Stop `json:"stop"`
	} `json:"run"`
	// Target and Shard, with the start, identify the run (Report.Run).
	Target struct {
		Name       string `json:"name"`
		BuildURL   string `json:"build_url"`
		RuntimeURL string `json:"runtime_url"`
		AccountID  string `json:"account_id"`
		Env        string `json:"env"`
		Embedded   bool   `json:"embedded"`
	} `json:"target"`
	Shard       *result.Shard `json:"shard"`
	Deployments []struct {
		Agent   string `json:"agent"`
		Env     string `json:"env"`
		ID      string `json:"id"`
		Version string `json:"version"`
		Changed bool   `json:"changed"`
	} `json:"deployments"`
	Counts *struct {
		Passed       int `json:"passed"`
		Flaky        int `json:"flaky"`
		Failed       int `json:"failed"`
		Errored      int `json:"errored"`
		Skipped      int `json:"skipped"`
		Pending      int `json:"pending"`
		Inconclusive int `json:"inconclusive"`
		Quarantined  int `json:"quarantined"`
	} `json:"counts"`
	Files []struct {
		Path  string     `json:"path"`
		Cases []jsonCase `json:"cases"`
	} `json:"files"`
	Checks []jsonCase `json:"checks"`
}

type jsonCase struct {
	Name       string `json:"name"`
	Agent      string `json:"agent"`
	Env        string `json:"env"`
	Status     string `json:"status"`
	SkipReason string `json:"skip_reason"`
	Repeat     *struct {
		Decision string `json:"decision"`
		Passed   int    `json:"passed"`
		Failed   *int   `json:"failed"`
		Errored  int    `json:"errored"`
		Runs     int    `json:"runs"`
		// Scores are the spreads of its similar matchers over the
		// runs: history reads their medians.
		Scores []struct {
			Pos    diag.Pos `json:"pos"`
			Key    string   `json:"key"`
			To     string   `json:"to"`
			Min    float64  `json:"min"`
			Not    bool     `json:"not"`
			Median float64  `json:"median"`
		} `json:"scores"`
	} `json:"repeat"`
	Quarantine *struct {
		Lapsed bool `json:"lapsed"`
	} `json:"quarantine"`
	Attempts []struct {
		Status string `json:"status"`
		// Turns are read for their scores alone: the rest of a
		// transcript is skipped.
		Turns []struct {
			Scores []assert.Score `json:"scores"`
		} `json:"turns"`
	} `json:"attempts"`
}

// checksFile is the file name run-level checks are listed under.
const checksFile = "(checks)"

// Read decodes one JSON report written by agenttest run. path names it in
// messages.
//
// It decodes only the members history needs, leaving transcripts
// undecoded (a night's report is mostly its turns, and history reads many
// nights), and checks them by the rules of every reader of reports
// (report.Values): a start that is no time, or a run's, case's or
// attempt's status no run writes, is refused at its place, as gate and
// merge refuse it, rather than read as a report without a start or a
// case that did not run.
func Read(path string, data []byte) (*Report, error) {
	var doc jsonReport
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a JSON report: %w", path, err)
	}
	if err := report.CheckSchema(doc.Schema); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := doc.check(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := doc.Target
	r := &Report{Path: path, Started: doc.Run.Started, Status: doc.Run.Status, Run: runID(doc, data),
		Target: result.Target{Name: t.Name, BuildURL: t.BuildURL, RuntimeURL: t.RuntimeURL, AccountID: t.AccountID, Env: t.Env, Embedded: t.Embedded}}
	for _, d := range doc.Deployments {
		if d.Env != "" && !slices.Contains(r.Envs, d.Env) {
			r.Envs = append(r.Envs, d.Env)
		}
		r.Deployments = append(r.Deployments, Deployment{Agent: d.Agent, Env: d.Env, ID: d.ID, Version: d.Version})
		if d.Changed {
			r.Changed = true
			r.Causes = append(r.Causes, "deployment of "+d.Agent+" changed during the run")
		}
	}
	if len(r.Envs) == 0 && doc.Target.Env != "" {
		r.Envs = []string{doc.Target.Env}
	}
	if st := doc.Run.Stop; st != nil && st.Reason != "" {
		// "not run: platform unreachable" at its host.
		cause := "stopped: " + strings.TrimPrefix(st.Reason, "not run: ")
		if st.Host != "" {
			cause += " at " + st.Host
		}
		r.Causes = append(r.Causes, cause)
	}
	if doc.Run.Interrupted {
		r.Causes = append(r.Causes, "interrupted")
	}
	if c := doc.Counts; c != nil {
		// The counts hold one skipped for the cases a stop left unrun
		// and those a suite skips; the stop's reason, which the former
		// carry as theirs, tells them apart as the console does.
		stopped := 0
		for _, cs := range doc.cases() {
			if cs.Status == result.Skipped.String() && doc.Run.Stop.Left(cs.SkipReason) {
				stopped++
			}
		}
		stopped = min(stopped, c.Skipped)
		r.Counts = Counts{Passed: c.Passed, Flaky: c.Flaky, Failed: c.Failed, Inconclusive: c.Inconclusive,
			Errored: c.Errored, NotRun: stopped + c.Pending, Skipped: c.Skipped - stopped, Quarantined: c.Quarantined}
	}
	for _, f := range doc.Files {
		for _, c := range f.Cases {
			r.Cases = append(r.Cases, c.read(f.Path))
		}
	}
	for _, c := range doc.Checks {
		r.Cases = append(r.Cases, c.read(checksFile))
	}
	return r, nil
}

// cases are the report's cases, its run-level checks last.
func (doc *jsonReport) cases() []jsonCase {
	var cs []jsonCase
	for _, f := range doc.Files {
		cs = append(cs, f.Cases...)
	}
	return append(cs, doc.Checks...)
}

// check refuses the values of doc, read from data, that no run writes
// (report.Values), in the order report.ReadJSON meets them.
func (doc *jsonReport) check(data []byte) error {
	var v report.Values
	v.Time([]any{"run", "started"}, doc.Run.Started)
	v.Shard([]any{"shard"}, doc.Shard)
	for i, f := range doc.Files {
		for j, c := range f.Cases {
			c.check(&v, []any{"files", i, "cases", j})
		}
	}
	for i, c := range doc.Checks {
		c.check(&v, []any{"checks", i})
	}
	v.RunStatus([]any{"run", "status"}, doc.Run.Status)
	return v.Err(data)
}

// check checks the statuses of the case at path and of its attempts.
func (c jsonCase) check(v *report.Values, path []any) {
	path = slices.Clip(path)
	v.Status(append(path, "status"), c.Status)
	for i, a := range c.Attempts {
		v.Status(append(path, "attempts", i, "status"), a.Status)
	}
}

func (c jsonCase) read(file string) Case {
	out := Case{File: file, Name: c.Name, Agent: c.Agent, Env: c.Env, Quarantined: c.Quarantine != nil && !c.Quarantine.Lapsed}
	switch v := Verdict(c.Status); v {
	case VerdictPassed, VerdictFlaky, VerdictFailed, VerdictErrored:
		// Verdicts are named as statuses; skipped and pending cases did
		// not run.
		out.Verdict = v
	}
	if rp := c.Repeat; rp != nil {
		if rp.Decision == string(VerdictInconclusive) {
			out.Verdict = VerdictInconclusive
		}
		var medians []assert.Score
		for _, sp := range rp.Scores {
			medians = append(medians, assert.Score{Pos: sp.Pos, Key: sp.Key, To: sp.To, Min: sp.Min, Not: sp.Not, Score: sp.Median})
		}
		out.MatcherKeys, out.Scores = caseScores(medians)
		out.Passed, out.Errored = rp.Passed, rp.Errored
		if rp.Failed != nil {
			out.Failed = *rp.Failed
		} else {
			// Reports from before failed was written: the fixed rule
			// counted every run that did not pass.
			out.Failed = rp.Runs - rp.Passed - rp.Errored
		}
		return out
	}
	if n := len(c.Attempts); n > 0 {
		// The last attempt decided the case: a retried one's scores
		// are not the run's.
		var scores []assert.Score
		for _, t := range c.Attempts[n-1].Turns {
			scores = append(scores, t.Scores...)
		}
		out.MatcherKeys, out.Scores = caseScores(scores)
	}
	for _, a := range c.Attempts {
		switch a.Status {
		case "passed", "flaky":
			out.Passed++
		case "failed":
			out.Failed++
		case "errored":
			out.Errored++
		}
	}
	return out
}

// runID identifies the run a report is of: its start (to the
// nanosecond), target and shard, which a copy of the report, or the
// report written again by agenttest merge, keeps; or, for a report that
// records no start, the file's content.
func runID(doc jsonReport, data []byte) string {
	if doc.Run.Started == "" {
		sum := sha256.Sum256(data)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	id, _ := json.Marshal(struct {
		Started string
		Target  any
		Shard   any
	}{doc.Run.Started, doc.Target, doc.Shard})
	return string(id)
}
