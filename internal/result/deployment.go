package result

import (
	"cmp"
	"encoding/json"
	"errors"
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
//
// Its JSON form (MarshalJSON) is the one every file agenttest writes uses,
// the run report's "deployments" and the comparison's sides alike:
//
//	{agent, env, id, version, read_at, after_id, after_version,
//	 after_read_at, changed, verified, note}
//
// with empty strings and unknown times left out, and changed and verified
// as Changed and Verified say.
type Deployment struct {
	// Agent and Env are the agent id and environment (clientEnv) read.
	Agent string
	Env   string
	// ID is the deployment active before the agent's first case; Version
	// its version, when the platform said. Empty when it could not be
	// read (Note).
	ID      string
	Version string
	ReadAt  time.Time
	// After is the deployment active after the agent's last case, and
	// AfterVersion its version; empty when it was not read (Note says
	// why: the run was interrupted or stopped, or the read failed).
	After        string
	AfterVersion string
	AfterReadAt  time.Time
	// Note says why evidence is missing or incomplete: the platform does
	// not serve the endpoint, answered about another environment, or a
	// read failed. Empty when both reads succeeded.
	Note string
}

// The notes of a deployment left unread because the run was already
// stopping: unlike the others, the run does not go on after them. Each
// names one cause, so that the deployments a stop left unread all say
// the same, whether the stop came during their read or before it.
const (
	// NoteRunStopped: the run stopped (a platform it cannot use,
	// --fail-fast; Result.Stop says why).
	NoteRunStopped = "not read: the run stopped"
	// NoteRunInterrupted: the run was interrupted (SIGINT, SIGTERM).
	NoteRunInterrupted = "not read: the run was interrupted"
)

// deploymentJSON is the JSON form of a Deployment.
type deploymentJSON struct {
	Agent        string `json:"agent"`
	Env          string `json:"env"`
	ID           string `json:"id,omitempty"`
	Version      string `json:"version,omitempty"`
	ReadAt       string `json:"read_at,omitempty"`
	AfterID      string `json:"after_id,omitempty"`
	AfterVersion string `json:"after_version,omitempty"`
	AfterReadAt  string `json:"after_read_at,omitempty"`
	Changed      bool   `json:"changed"`
	Verified     bool   `json:"verified"`
	Note         string `json:"note,omitempty"`
}

// MarshalJSON writes the form documented on Deployment.
func (d *Deployment) MarshalJSON() ([]byte, error) {
	return json.Marshal(deploymentJSON{Agent: d.Agent, Env: d.Env, ID: d.ID, Version: d.Version, ReadAt: timeText(d.ReadAt),
		AfterID: d.After, AfterVersion: d.AfterVersion, AfterReadAt: timeText(d.AfterReadAt),
		Changed: d.Changed(), Verified: d.Verified(), Note: d.Note})
}

// UnmarshalJSON reads the form documented on Deployment; changed and
// verified are derived, so they are not read back.
func (d *Deployment) UnmarshalJSON(b []byte) error {
	var w deploymentJSON
	if err := json.Unmarshal(b, &w); err != nil {
		// Its offset is in b, not in the document: say what is wrong,
		// for the reader to say where (report.ReadJSON, compare.ReadJSON).
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ) && typ.Field != "":
			return fmt.Errorf("%s is a JSON %s, where a deployment has a %s", typ.Field, typ.Value, typ.Type)
		case errors.As(err, &typ):
			return fmt.Errorf("a JSON %s, where a deployment is an object", typ.Value)
		}
		return err
	}
	read, err := parseTime(w.ReadAt)
	if err != nil {
		return fmt.Errorf("deployment of %q: read_at: %w", w.Agent, err)
	}
	after, err := parseTime(w.AfterReadAt)
	if err != nil {
		return fmt.Errorf("deployment of %q: after_read_at: %w", w.Agent, err)
	}
	*d = Deployment{Agent: w.Agent, Env: w.Env, ID: w.ID, Version: w.Version, ReadAt: read,
		After: w.AfterID, AfterVersion: w.AfterVersion, AfterReadAt: after, Note: w.Note}
	return nil
}

// timeText is t in RFC 3339 with nanoseconds, or "" when unknown.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
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

// UnconfirmedMessage says, in the words every report uses, why the run's
// verdicts are not tied to this deployment although it did not change:
// it was never read ("no deployment evidence of clinic in sandbox: read
// failed: ..."), or not read again after the agent's last case
// ("deployment of clinic in sandbox not confirmed after its last case:
// not read again: the run stopped"). "" when it was read before and after,
// or changed (ChangeMessage).
func (d *Deployment) UnconfirmedMessage() string {
	note := cmp.Or(d.Note, "not read again")
	switch {
	case d.Verified() || d.Changed():
		return ""
	case d.ID == "":
		return fmt.Sprintf("no deployment evidence of %s in %s: %s", d.Agent, d.Env, note)
	}
	return fmt.Sprintf("deployment of %s in %s not confirmed after its last case: %s", d.Agent, d.Env, note)
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
	return DeploymentIn(r.Deployments, agent, env)
}

// DeploymentIn returns the deployment of an agent in an environment
// among ds (a result's, or a comparison side's), or nil.
func DeploymentIn(ds []*Deployment, agent, env string) *Deployment {
	for _, d := range ds {
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
