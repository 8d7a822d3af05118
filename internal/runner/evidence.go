package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// This file is the run's deployment evidence: what a run tested, tied to
// what a pipeline is about to promote. For each agent and environment of
// the plan the runner reads the active deployment before the first case
// starts and again when the last case of that agent and environment has
// its verdict (Result.Deployments). A deployment that changed in between
// errors the run (result.RunStatus): a designer's merge publishes to
// sandbox automatically, and a run that straddles it tested two agents.
//
// Reads follow the run's rules: a refused key or an unreachable build host
// stops the run like any other call (stop.go). A platform that does not
// serve the endpoint (404) or answers about another environment is noted
// once and the run goes on without evidence, as it does after any other
// failed read; `agenttest gate` refuses a report without evidence.

// Deployments reads the active deployment of an agent in an environment
// (*platform.Client satisfies it).
type Deployments interface {
	ActiveDeployment(ctx context.Context, agentID, env string) (*platform.Deployment, error)
}

var _ Deployments = (*platform.Client)(nil)

// maxDeploymentReads bounds the reads made at once before the run.
const maxDeploymentReads = 8

// NoteNotServed is the Deployment.Note of a platform that answered 404 on
// deployments/active: it does not serve the endpoint, or does not know the
// agent (the reference gives no error code that tells the two apart; the
// first case then stops the run for an unknown agent), and the run has no
// evidence of what it tested. A note says why there is none; the reports
// say that there is none.
const NoteNotServed = "the platform answered 404 to GET /v1/agents/{agentId}/deployments/active (it does not serve the endpoint, or does not know the agent)"

// depEvidence is the deployment evidence of one agent and environment while
// the run goes on.
type depEvidence struct {
	d *result.Deployment
	// left counts the cases of the pair that have no verdict yet; the
	// one that brings it to zero reads the deployment again.
	left atomic.Int64
}

// evidences are the pairs of a run, in the order the plan first meets
// them.
type evidences struct {
	list []*depEvidence
	// mu guards the Deployment values between the reads after the last
	// cases, which run on the workers' goroutines.
	mu sync.Mutex
}

// planEvidence ties each job that will run to the evidence of its agent
// and environment. Skipped scenarios and cases without an agent talk to
// no deployment.
func planEvidence(jobs []*job) *evidences {
	ev := &evidences{}
	index := map[[2]string]*depEvidence{}
	for _, j := range jobs {
		if j.sc.Skip != "" || j.c.Agent == "" {
			continue
		}
		k := [2]string{j.c.Agent, j.c.Env}
		e := index[k]
		if e == nil {
			e = &depEvidence{d: &result.Deployment{Agent: j.c.Agent, Env: j.c.Env}}
			index[k] = e
			ev.list = append(ev.list, e)
		}
		e.left.Add(1)
		j.ev = e
	}
	return ev
}

// deployments returns the evidence of the run for its Result.
func (ev *evidences) deployments() []*result.Deployment {
	if len(ev.list) == 0 {
		return nil
	}
	out := make([]*result.Deployment, len(ev.list))
	for i, e := range ev.list {
		out[i] = e.d
	}
	return out
}

// readBefore reads every pair's deployment before the first case, a few at
// a time.
func (r *runner) readBefore(ctx context.Context, ev *evidences) {
	var g errgroup.Group
	g.SetLimit(maxDeploymentReads)
	for _, e := range ev.list {
		g.Go(func() error {
			dep, note := r.readDeployment(ctx, e.d)
			ev.mu.Lock()
			defer ev.mu.Unlock()
			e.d.ReadAt = r.opts.Now()
			if dep != nil {
				e.d.ID, e.d.Version = dep.ID, dep.Version
			}
			e.d.Note = note
			return nil
		})
	}
	_ = g.Wait() // the reads return nil; a failure is a note or a stop
}

// caseDone counts a case of j's pair as having its verdict; after the
// pair's last one it reads the deployment again. Cases the run never
// reached (interrupted, stopped) leave the second read undone, with a
// note: a platform that cannot be used would refuse it too.
func (r *runner) caseDone(ctx context.Context, ev *evidences, j *job) {
	e := j.ev
	if e == nil || e.left.Add(-1) != 0 {
		return
	}
	ev.mu.Lock()
	before := e.d.ID
	ev.mu.Unlock()
	if before == "" {
		return // no evidence to confirm
	}
	var dep *platform.Deployment
	note := ""
	switch {
	case r.outer.Err() != nil:
		note = noteNotReadAgain + "the run was interrupted"
	case r.platformStopped():
		note = noteNotReadAgain + "the run stopped"
	default:
		dep, note = r.readDeployment(ctx, e.d)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if dep != nil {
		e.d.After, e.d.AfterVersion, e.d.AfterReadAt = dep.ID, dep.Version, r.opts.Now()
		return
	}
	if note != "" {
		e.d.Note = note
	}
}

// readDeployment reads the deployment of d's agent in its environment.
// It returns it, or the note that says why there is none; a failure that
// shows the platform cannot be used stops the run (stop.go).
func (r *runner) readDeployment(ctx context.Context, d *result.Deployment) (*platform.Deployment, string) {
	if ctx.Err() != nil {
		return nil, r.cutNote()
	}
	// The read waits on rate limits as a case's calls do: a Retry-After
	// longer than the turn timeout left it unread (and the report one
	// the promotion gate refuses).
	rctx, acct := withAccount(ctx)
	rctx, cancel := withTimeout(rctx, r.opts.TurnTimeout, &r.opts)
	defer cancel()
	dep, err := r.opts.Deployments.ActiveDeployment(rctx, d.Agent, d.Env)
	err = namedBound(ctx, rctx, r.opts.TurnTimeout, err)
	r.pacing.addRun(acct.Usage(r.opts.Now()))
	if err == nil {
		return dep, ""
	}
	msg := r.opts.Redactor.String(err.Error())
	var mismatch *platform.EnvironmentMismatchError
	switch {
	case ctx.Err() != nil:
		return nil, r.cutNote()
	case platform.IsNotFound(err):
		return nil, NoteNotServed
	case errors.As(err, &mismatch):
		return nil, msg
	}
	var reached []string
	if h := answeredBy(err); h != "" {
		reached = []string{h}
	}
	if r.stops.after(reached, platformStop(err, false, d.Agent, d.Env, "read the active deployment: "+msg)) {
		return nil, result.NoteRunStopped
	}
	return nil, fmt.Sprintf("read failed: %s", msg)
}

// noteNotReadAgain starts the note of evidence not read after its last
// case. The reports say "not confirmed after its last case: " before the
// note, so it does not say when again.
const noteNotReadAgain = "not read again: "

// cutNote is the note of a deployment left unread because the cases'
// context was cut: by an interruption of the run (the caller's context),
// or else by a stop.
func (r *runner) cutNote() string {
	if r.outer.Err() != nil {
		return result.NoteRunInterrupted
	}
	return result.NoteRunStopped
}
