package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/reply"
)

// Deployments. The reference names one call of the agent build API:
// GET {build_url}/v1/agents/{agentId}/deployments/active, which "returns
// the active sandbox deployment, whose id is used to promote". It shows
// neither the reply nor a way to ask for another environment. What this
// client assumes, in one place (docs/promoting.md, "What agenttest
// assumes of the platform"):
//
//   - The reply is an object holding the deployment, either at the top
//     level or nested under "deployment" or "data". Its id is the first
//     non-empty of "id", "deployment_id" and "deploymentId" (a string, or
//     a number as another implementation may send it); "version",
//     "environment" (or "env"), "status" and "created_at" (or
//     "createdAt": ISO 8601, or Unix seconds or milliseconds; a time in
//     another form is left unread, never an error) are read when
//     present. A reply without an id, or with an id or a version that
//     cannot be one (control characters, longer than maxDeploymentID
//     bytes), is the platform's error (ResponseError), never evidence:
//     the id is printed on the console, in the gate's verdict and in
//     every report, and names what is promoted, and the version is
//     printed beside it. So is one that sends a member it is read by
//     twice with different values (deploymentNames): it names two
//     deployments at once.
//   - The environment is asked for with the query parameter
//     DeploymentEnvParam (?environment=pre-release); sandbox is asked for
//     without it, exactly as the reference describes the call. A platform
//     may ignore the parameter and answer with its sandbox deployment:
//     when the reply names an environment other than the one asked for,
//     ActiveDeployment returns an *EnvironmentMismatchError rather than
//     another environment's id as if it were the one asked for. A reply
//     that names no environment is taken to be the one asked for, and
//     one that names it in another letter case or with another separator
//     (SANDBOX, PRE_RELEASE, preRelease) names it.

// DeploymentEnvParam is the query parameter that asks deployments/active
// for an environment other than sandbox.
const DeploymentEnvParam = "environment"

// Deployment is the active deployment of an agent in an environment.
type Deployment struct {
	// ID is the deployment id: what a promotion names.
	ID string
	// Environment is the environment the platform says the deployment
	// is in; the one asked for when the reply does not say.
	Environment string
	// Version, Status and CreatedAt are read when the reply has them.
	Version   string
	Status    string
	CreatedAt time.Time
}

// EnvironmentMismatchError is an answer of deployments/active about
// another environment than the one asked for: a platform that ignores
// DeploymentEnvParam.
type EnvironmentMismatchError struct {
	// Asked and Answered are the environments.
	Asked, Answered string
	// ID is the id of the deployment the platform answered with.
	ID string
}

func (e *EnvironmentMismatchError) Error() string {
	return fmt.Sprintf("asked for the active %s deployment, the platform answered with its %s deployment %s (it may not support ?%s=)",
		e.Asked, oneLine(e.Answered), e.ID, DeploymentEnvParam)
}

// wireDeployment is a deployment as sent, in every spelling accepted.
type wireDeployment struct {
	ID           jString `json:"id"`
	DeploymentID jString `json:"deployment_id"`
	DeploymentId jString `json:"deploymentId"` //nolint:revive // the wire spelling
	Version      jString `json:"version"`
	Environment  jString `json:"environment"`
	Env          jString `json:"env"`
	Status       jString `json:"status"`
	CreatedAt    jWhen   `json:"created_at"`
	CreatedAtAlt jWhen   `json:"createdAt"`
}

func (w *wireDeployment) id() string {
	for _, s := range []jString{w.ID, w.DeploymentID, w.DeploymentId} {
		if s.V != "" {
			return s.V
		}
	}
	return ""
}

// ActiveDeployment reads the deployment env serves for agentID now (env
// "" is sandbox). See the comment at the top of this file for the reply
// shapes accepted and the environment parameter.
func (c *Client) ActiveDeployment(ctx context.Context, agentID, env string) (*Deployment, error) {
	if agentID == "" {
		return nil, errors.New("get active deployment: agent id is empty")
	}
	if env == "" {
		env = "sandbox"
	}
	rq := &call{ep: epActiveDep, path: buildPath("v1", "agents", agentID, "deployments", "active")}
	if env != "sandbox" {
		rq.query = url.Values{DeploymentEnvParam: {env}}
	}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	d, err := decodeDeployment(resp.body())
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	if d.Environment == "" || reply.EnvSpelled(d.Environment) == env {
		d.Environment = env
	} else {
		return nil, &EnvironmentMismatchError{Asked: env, Answered: d.Environment, ID: d.ID}
	}
	return d, nil
}

// decodeDeployment reads a deployments/active reply: the deployment at the
// top level, or under "deployment" or "data".
func decodeDeployment(body []byte) (*Deployment, error) {
	// Two decodings, not one of a struct embedding wireDeployment: the
	// error of an embedded field names the Go type (field
	// "wireDeployment.id"), which says nothing to whoever reads it.
	var w wireDeployment
	if err := decodeDeploymentIn(body, &w); err != nil {
		return nil, err
	}
	if w.id() == "" {
		var top struct {
			Deployment json.RawMessage `json:"deployment"`
			Data       json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(body, &top) // it decoded above, and cannot fail here
		for _, nested := range []struct {
			name string
			raw  json.RawMessage
		}{{"deployment", top.Deployment}, {"data", top.Data}} {
			if len(nested.raw) == 0 || nested.raw[0] != '{' {
				continue
			}
			var inner wireDeployment
			if err := decodeDeploymentIn(nested.raw, &inner); err != nil {
				return nil, fmt.Errorf("%s: %w", nested.name, err)
			}
			if inner.id() != "" {
				w = inner
				break
			}
		}
	}
	id := w.id()
	if id == "" {
		return nil, errors.New(`no deployment id: none of "id", "deployment_id" and "deploymentId" is set, at the top level or under "deployment" or "data"`)
	}
	// The version is printed beside the id (console, HTML and GitHub
	// reports), so it is held to the same bounds.
	if err := checkDeploymentText("id", id); err != nil {
		return nil, err
	}
	if err := checkDeploymentText("version", w.Version.V); err != nil {
		return nil, err
	}
	d := &Deployment{ID: id, Version: w.Version.V, Status: w.Status.V, Environment: w.Environment.V, CreatedAt: w.CreatedAt.V}
	if d.Environment == "" {
		d.Environment = w.Env.V
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = w.CreatedAtAlt.V
	}
	return d, nil
}

// deploymentNames are the members of a deployment a reply is read by.
var deploymentNames = []string{"id", "deployment_id", "deploymentId", "version", "environment", "env"}

// decodeDeploymentIn decodes one object holding a deployment into w. A
// member of it sent twice with different values names two deployments
// (or environments) at once, and which one the run tested is unknown.
func decodeDeploymentIn(body []byte, w *wireDeployment) error {
	if err := json.Unmarshal(body, w); err != nil {
		return describeDecodeError(err)
	}
	return sentTwice(body, deploymentNames)
}

// maxDeploymentID bounds a deployment id and its version. The reference
// shows neither; they are short tokens, and a longer one is a platform
// echoing something else.
const maxDeploymentID = 256

// checkDeploymentText refuses an id (or version, what names which) no
// platform would issue: one that could drive a terminal (an escape
// sequence), break a report's lines, or flood every output. Its quoted
// start says which. (Invalid UTF-8 cannot reach here: the JSON decoder
// makes it U+FFFD.)
func checkDeploymentText(what, s string) error {
	why := ""
	switch {
	case len(s) > maxDeploymentID:
		why = fmt.Sprintf("it is %d bytes long, and no %s is longer than %d", len(s), what, maxDeploymentID)
	case strings.ContainsFunc(s, unicode.IsControl):
		why = "it holds control characters"
	default:
		return nil
	}
	shown := fmt.Sprintf("%.40q", s)
	if utf8.RuneCountInString(s) > 40 {
		shown += "..."
	}
	return fmt.Errorf("deployment %s %s refused: %s", what, shown, why)
}
