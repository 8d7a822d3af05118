package runner

import (
	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/secret"
)

// Keys are masked in what the runner records from user files and their
// expansions (Options.Redactor); the platform client already masked what
// the platform sent (bodies, replies, its errors). Masking happens as the
// text is recorded, not when the case is reported, so that whoever reads
// an attempt while it runs (godogsteps prints a step's failures to godog
// at once) never sees a key either. The texts and where they are masked:
//
//   - failures and errors: recordFailures and recordError (errors.go),
//     the only places either is recorded;
//   - the user's turn after interpolation: Session.call, which records the
//     transcript;
//   - confirmation subjects, summaries and what a probe saw: Session.End, once the
//     confirmations of the attempt are complete (a summary grows as reads
//     go on);
//   - the skip reason: the case gate (case.go).
//
// The alert gate's confirmation (gate.go) holds counts and agent ids the
// run was given, nothing expanded from a file.

// maskFailure masks a failure's texts. A diff may cut a key into pieces no
// redactor recognises, so when a key was in the expected or actual text
// the diff is made again from the masked texts.
func maskFailure(red *secret.Redactor, f *assert.Failure) {
	if red.Empty() {
		return
	}
	exp, near, act := red.String(f.Expected), red.String(f.Nearest), red.String(f.Actual)
	f.Message, f.Step = red.String(f.Message), red.String(f.Step)
	if f.Diff != "" && (exp != f.Expected || near != f.Nearest || act != f.Actual) {
		f.Expected, f.Nearest = exp, near
		f.Diff = assert.DiffTextFor(*f, f.DiffBase(), act, false)
	}
	f.Expected, f.Nearest, f.Actual, f.Diff = exp, near, act, red.String(f.Diff)
}

// maskConfirmations masks the subjects and summaries of an attempt's
// confirmations.
func maskConfirmations(red *secret.Redactor, a *result.Attempt) {
	if red.Empty() {
		return
	}
	for _, cf := range a.Confirmations {
		cf.Subject, cf.Summary = red.String(cf.Subject), red.String(cf.Summary)
		for i := range cf.Seen {
			cf.Seen[i].Text = red.String(cf.Seen[i].Text)
		}
	}
}
