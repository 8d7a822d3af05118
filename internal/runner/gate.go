package runner

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// Alerts is what the alert gate reads: the rules firing now
// (*platform.Client satisfies it).
type Alerts interface {
	FiringAlerts(ctx context.Context) ([]platform.Alert, error)
}

var _ Alerts = (*platform.Client)(nil)

// gateAlerts reads the firing alerts after the cases and returns the
// gate's check: Failed with one failure per firing rule that concerns an
// agent of the run (its project_id is one of them) or the whole account
// (no project_id); Errored when the alerts cannot be read; Pending when the
// run was interrupted (a partial run proves nothing about the platform).
func (r *runner) gateAlerts(ctx context.Context, res *result.Result) *result.Case {
	agents := runAgents(res, r.opts.DefaultAgent)
	c := &result.Case{Name: result.AlertGateName, Status: result.Pending, Agent: strings.Join(agents, ","), Env: r.opts.DefaultEnv}
	if ctx.Err() != nil {
		c.SkipReason = result.ReasonInterrupted
		return c
	}
	if stop := r.stops.stopped(); stop != nil && stop.Kind != result.StopFailFast {
		// The platform cannot be used: reading its alerts would fail
		// the same way.
		c.Status, c.SkipReason = result.Skipped, stop.Reason
		return c
	}
	started := r.opts.Now()
	a := newAttempt(c, started)
	defer func() {
		a.Duration = r.opts.Now().Sub(started)
		c.Duration = a.Duration
		c.Status = a.Status
	}()
	// The read waits on rate limits as a case's calls do, charged to an
	// account of the gate's own: a Retry-After longer than the turn
	// timeout errored the gate (a rate-limited platform failed the run),
	// and the run's pacing did not count its 429s.
	rctx, acct := withAccount(ctx)
	rctx, cancel := withTimeout(rctx, r.opts.TurnTimeout, &r.opts)
	defer cancel()
	firing, err := r.opts.Alerts.FiringAlerts(rctx)
	err = namedBound(ctx, rctx, r.opts.TurnTimeout, err)
	r.settleAccount(c, acct)
	if err != nil {
		if ctx.Err() != nil {
			recordError(r.opts.Redactor, a, &result.Error{Kind: result.KindInterrupted, Message: "alert gate: run interrupted"})
			c.SkipReason = result.ReasonInterrupted
			return c
		}
		e, _ := classify(err, false)
		if e == nil {
			e = &result.Error{Kind: result.KindInterrupted, Message: err.Error()}
		}
		e.Message = "alert gate: read firing alerts (GET /v1/alerts): " + e.Message
		recordError(r.opts.Redactor, a, e)
		return c
	}
	mine := map[string]bool{}
	for _, ag := range agents {
		mine[ag] = true
	}
	var hits []platform.Alert
	for _, al := range firing {
		if al.ProjectID == "" || mine[al.ProjectID] {
			hits = append(hits, al)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Describe() < hits[j].Describe() })
	rec := &result.Confirmation{Kind: result.ConfirmAlerts, Subject: "GET /v1/alerts", Found: true, Held: len(hits) == 0, Reads: 1,
		Summary: fmt.Sprintf("%d firing, %d for agents %s or account-wide", len(firing), len(hits), strings.Join(agents, ", "))}
	a.Confirmations = append(a.Confirmations, rec)
	if len(hits) == 0 {
		a.Status = result.Passed
		return c
	}
	fails := make([]assert.Failure, 0, len(hits))
	for _, al := range hits {
		scope := "account-wide"
		if al.ProjectID != "" {
			scope = "agent " + al.ProjectID
		}
		op := al.Operator
		if op == "" {
			op = ">="
		}
		actual := "firing"
		if al.Value != nil {
			actual = "firing at " + strconv.FormatFloat(*al.Value, 'f', -1, 64)
		}
		fails = append(fails, assert.Failure{
			Key:      "alerts." + al.Metric,
			Message:  fmt.Sprintf("alert firing (%s): %s", scope, al.Describe()),
			Expected: fmt.Sprintf("%s below %d (%s %s %d not reached)", al.Metric, al.ThresholdValue, al.Metric, op, al.ThresholdValue),
			Actual:   actual,
		})
	}
	recordFailures(r.opts.Redactor, a, fails...)
	return c
}

// runAgents lists the agents the run's cases talked to, sorted, with the
// default agent when no case named one.
func runAgents(res *result.Result, def string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range res.Files {
		for _, c := range f.Cases {
			if c.Agent != "" && !seen[c.Agent] {
				seen[c.Agent] = true
				out = append(out, c.Agent)
			}
		}
	}
	if len(out) == 0 && def != "" {
		out = append(out, def)
	}
	sort.Strings(out)
	return out
}

// addCheck appends a run-level check and reports it like a case, so the
// progress view prints its details before the summary.
func (r *runner) addCheck(res *result.Result, c *result.Case) {
	r.opts.Observer.CaseStarted(nil, c)
	res.Checks = append(res.Checks, c)
	if c.Status == result.Pending {
		r.interrupted.Store(true)
	}
	r.opts.Observer.CaseFinished(nil, c)
}
