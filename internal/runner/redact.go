package runner

import (
	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
)

// scrub masks API keys in the text a case recorded from outside the
// platform client: failure texts (which hold the expectation as the suite
// wrote it, ${env:...} expanded), error messages, the user's turns after
// interpolation, confirmation summaries and skip reasons. The client
// already redacted what the platform sent (bodies, replies, its errors).
// It runs once per case, before the case is reported.
func (r *runner) scrub(c *result.Case) {
	red := r.opts.Redactor
	if red.Empty() {
		return
	}
	c.SkipReason = red.String(c.SkipReason)
	for _, a := range c.Attempts {
		if a == nil {
			continue
		}
		if a.Error != nil {
			a.Error.Message = red.String(a.Error.Message)
		}
		for i := range a.Failures {
			f := &a.Failures[i]
			exp, act := red.String(f.Expected), red.String(f.Actual)
			f.Message, f.Step = red.String(f.Message), red.String(f.Step)
			if f.Diff != "" && (exp != f.Expected || act != f.Actual) {
				// A diff may cut a key into pieces no redactor
				// recognises; diff the masked texts instead.
				f.Diff = assert.Diff(exp, act)
			}
			f.Expected, f.Actual, f.Diff = exp, act, red.String(f.Diff)
		}
		for _, t := range a.Turns {
			t.Say = red.String(t.Say)
		}
		for _, cf := range a.Confirmations {
			cf.Subject, cf.Summary = red.String(cf.Subject), red.String(cf.Summary)
		}
	}
}
