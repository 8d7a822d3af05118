package result

import (
	"fmt"
	"time"
)

// Deployment is the evidence of what a run tested of one agent in one
// environment: the platform's active deployment, read before the agent's
// first case and again after its last. A run whose deployment changed in
// between cannot say which deployment its verdicts are about: it is
// errored (RunStatus), whatever its cases say.
//
// A run that could not read the deployment goes on without evidence and
// Note says why; `agenttest gate` refuses such a report, since it cannot
// tie it to what is about to be promoted.
type Deployment struct {
	// Agent and Env are the agent id and environment (clientEnv) read.
	Agent string `json:"agent"`
	Env   string `json:"env"`
	// ID is the deployment active before the agent's first case; Version
	// its version, when the platform said. Empty when it could not be
	// read (Note).
	ID      string    `json:"id,omitempty"`
	Version string    `json:"version,omitempty"`
	ReadAt  time.Time `json:"read_at"`
	// After is the deployment active after the agent's last case, and
	// AfterVersion its version; empty when it was not read (Note says
	// why: the run was interrupted or stopped, or the read failed).
	After        string    `json:"after,omitempty"`
	AfterVersion string    `json:"after_version,omitempty"`
	AfterReadAt  time.Time `json:"after_read_at"`
	// Note says why evidence is missing or incomplete: the platform does
	// not serve the endpoint, answered about another environment, or a
	// read failed. Empty when both reads succeeded.
	Note string `json:"note,omitempty"`
}

// Changed reports whether another deployment was active after the agent's
// last case than before its first.
func (d *Deployment) Changed() bool { return d.ID != "" && d.After != "" && d.After != d.ID }

// Verified reports whether the deployment was read before and after and
// stayed the same: the run's verdicts are about it.
func (d *Deployment) Verified() bool { return d.ID != "" && d.After == d.ID }

// ChangeMessage says what changed, in the words every report uses:
// "deployment of restaurant changed during the run: dep-1 → dep-2".
func (d *Deployment) ChangeMessage() string {
	return fmt.Sprintf("deployment of %s changed during the run: %s → %s", d.Agent, d.ID, d.After)
}

// DeploymentChanges lists the deployments that changed during the run, in
// order.
func (r *Result) DeploymentChanges() []*Deployment {
	var out []*Deployment
	for _, d := range r.Deployments {
		if d != nil && d.Changed() {
			out = append(out, d)
		}
	}
	return out
}

// DeploymentOf returns the evidence of agent in env, or nil.
func (r *Result) DeploymentOf(agent, env string) *Deployment {
	for _, d := range r.Deployments {
		if d != nil && d.Agent == agent && d.Env == env {
			return d
		}
	}
	return nil
}

// DeploymentObserver is an Observer that also wants the deployments read
// before the first case: the runner calls DeploymentsRead once, after
// RunStarted and before any case starts, when it read any. The console
// prints them among the run's first lines.
type DeploymentObserver interface {
	Observer
	DeploymentsRead(ds []*Deployment)
}
