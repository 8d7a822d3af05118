package sim

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/sim/agent"
)

// Deployments. Each agent has an active deployment in each environment
// (sandbox, pre-release, live): an id and the version of the agent it
// serves. At start every environment serves the version its definition
// names (`environments:` in the agent file, else the definition's own).
// Publishing deploys a version to sandbox; promoting copies the version
// active in one environment into the next as a new deployment; rolling
// back reactivates an environment's previous deployment. Every change
// makes a new active id, except a rollback, which brings back the old one.
//
// New conversations run on the version their environment serves when they
// are created; a conversation keeps its version to the end.

// Deployment is one deployment of an agent version to an environment.
type Deployment struct {
	// ID is "dep-" and 16 hex digits, reproducible under Options.Seed.
	ID          string
	AgentID     string
	Environment string
	// Version is the label of the agent version it serves.
	Version   string
	CreatedAt time.Time
	// PromotedFrom is the id of the deployment it was promoted from;
	// empty for a publish and for the deployments present at start.
	PromotedFrom string
}

// deploymentJSON is the one shape of a deployment on the wire, for
// deployments/active and the admin endpoints (docs/simulator.md). The
// reference shows none; these are the members a client most plausibly
// reads, and `status` says it is the active one.
type deploymentJSON struct {
	ID           string `json:"id"`
	AgentID      string `json:"agent_id"`
	Environment  string `json:"environment"`
	Version      string `json:"version"`
	Status       string `json:"status"`
	CreatedAt    string `json:"created_at"`
	PromotedFrom string `json:"promoted_from,omitempty"`
}

func (d Deployment) wire() deploymentJSON {
	return deploymentJSON{
		ID:           d.ID,
		AgentID:      d.AgentID,
		Environment:  d.Environment,
		Version:      d.Version,
		Status:       "active",
		CreatedAt:    formatTime(d.CreatedAt),
		PromotedFrom: d.PromotedFrom,
	}
}

// deployments holds every environment's history of deployments; the last
// of each is the active one.
type deployments struct {
	mu   sync.Mutex
	seq  uint64
	seed uint64
	envs map[string]map[string][]Deployment // agent id → environment → history
}

// deploySalt keeps deployment ids apart from the other streams of the seed.
const deploySalt = 0xde9105ed

// newID makes the next deployment id of the agent whose definition has
// digest (agent.Definition.Digest); d.mu is held. The digest makes the
// ids of an edited definition new under the same seed.
func (d *deployments) newID(digest uint64) string {
	d.seq++
	return fmt.Sprintf("%s%016x", deploymentIDPrefix, splitmix64(d.seed^splitmix64(d.seq)^deploySalt^digest))
}

// initDeployments makes the deployments present at start, in agent then
// environment order, so their ids are reproducible under the seed.
func (s *Server) initDeployments() {
	d := &s.deploys
	d.seed = uint64(s.opts.Seed)
	d.envs = make(map[string]map[string][]Deployment, len(s.agentIDs))
	for _, id := range s.agentIDs {
		def := s.agents[id]
		d.envs[id] = make(map[string][]Deployment, len(agent.Environments))
		for _, env := range agent.Environments {
			d.envs[id][env] = []Deployment{{ID: d.newID(def.Digest), AgentID: id, Environment: env, Version: def.Deployed(env), CreatedAt: s.started}}
		}
	}
}

// adminError is a refused deployment change: its status and message.
type adminError struct {
	status int
	msg    string
}

func (e *adminError) Error() string { return e.msg }

func adminErrorf(status int, format string, args ...any) error {
	return &adminError{status: status, msg: fmt.Sprintf(format, args...)}
}

// agentID resolves an agent id or its PROJECT- alias.
func (s *Server) agentID(id string) (string, error) {
	if a, ok := s.aliases[id]; ok {
		id = a
	}
	if _, ok := s.agents[id]; !ok {
		return "", adminErrorf(http.StatusNotFound, "agent %q not found", id)
	}
	return id, nil
}

// agentEnv resolves an agent and checks an environment name.
func (s *Server) agentEnv(agentID, env string) (string, error) {
	id, err := s.agentID(agentID)
	if err == nil && !validEnv(env) {
		err = adminErrorf(http.StatusBadRequest, "environment %q is not one of %s", env, strings.Join(agent.Environments, ", "))
	}
	return id, err
}

// ActiveDeployment returns the deployment env serves for agentID now.
func (s *Server) ActiveDeployment(agentID, env string) (Deployment, error) {
	id, err := s.agentEnv(agentID, env)
	if err != nil {
		return Deployment{}, err
	}
	s.deploys.mu.Lock()
	defer s.deploys.mu.Unlock()
	h := s.deploys.envs[id][env]
	return h[len(h)-1], nil
}

// Publish deploys a version of agentID to sandbox, as a merge or publish on
// the platform does: a new sandbox deployment id. An empty version
// republishes the version sandbox serves now.
func (s *Server) Publish(agentID, version string) (Deployment, error) {
	id, err := s.agentID(agentID)
	if err != nil {
		return Deployment{}, err
	}
	def := s.agents[id]
	d := &s.deploys
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.envs[id]["sandbox"]
	if version == "" {
		version = h[len(h)-1].Version
	}
	if _, ok := def.AtVersion(version); !ok {
		return Deployment{}, adminErrorf(http.StatusBadRequest, "agent %q has no version %q; versions are %s", id, version, strings.Join(def.Versions(), ", "))
	}
	dep := Deployment{ID: d.newID(s.agents[id].Digest), AgentID: id, Environment: "sandbox", Version: version, CreatedAt: s.opts.Now().UTC()}
	d.envs[id]["sandbox"] = append(h, dep)
	return dep, nil
}

// Promote creates a deployment in env (pre-release or live) of the version
// active in the environment before it (sandbox or pre-release). When
// fromID is set it must be that active deployment's id, as on the
// platform, where a promotion names the deployment it promotes: otherwise
// the promotion is refused (409), so a test can prove a stale id is caught.
func (s *Server) Promote(agentID, env, fromID string) (Deployment, error) {
	id, err := s.agentEnv(agentID, env)
	if err != nil {
		return Deployment{}, err
	}
	i := 0
	for agent.Environments[i] != env {
		i++
	}
	if i == 0 {
		return Deployment{}, adminErrorf(http.StatusBadRequest, "nothing is promoted to %s: publish to it instead", env)
	}
	from := agent.Environments[i-1]
	d := &s.deploys
	d.mu.Lock()
	defer d.mu.Unlock()
	src := d.envs[id][from]
	active := src[len(src)-1]
	if fromID != "" && fromID != active.ID {
		return Deployment{}, adminErrorf(http.StatusConflict, "deployment %q is not the active %s deployment of %q (active: %s)", fromID, from, id, active.ID)
	}
	dep := Deployment{ID: d.newID(s.agents[id].Digest), AgentID: id, Environment: env, Version: active.Version, CreatedAt: s.opts.Now().UTC(), PromotedFrom: active.ID}
	d.envs[id][env] = append(d.envs[id][env], dep)
	return dep, nil
}

// Rollback reactivates the deployment env had before its current one; the
// reference does not say which environment a rollback targets, so the
// caller names it. An environment with no earlier deployment refuses (409).
func (s *Server) Rollback(agentID, env string) (Deployment, error) {
	id, err := s.agentEnv(agentID, env)
	if err != nil {
		return Deployment{}, err
	}
	d := &s.deploys
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.envs[id][env]
	if len(h) < 2 {
		return Deployment{}, adminErrorf(http.StatusConflict, "%s of %q has no earlier deployment to roll back to", env, id)
	}
	d.envs[id][env] = h[:len(h)-1]
	return h[len(h)-2], nil
}

// served returns the definition of the version env serves for agentID
// now. env must be valid and agentID resolved.
func (s *Server) served(agentID, env string) *agent.Definition {
	def := s.agents[agentID]
	s.deploys.mu.Lock()
	h := s.deploys.envs[agentID][env]
	s.deploys.mu.Unlock()
	if len(h) == 0 {
		return def
	}
	if v, ok := def.AtVersion(h[len(h)-1].Version); ok {
		return v
	}
	return def
}

// newSession starts a conversation on def, the version its environment
// serves (served). Its randomness (phrasings, weighted replies and moves,
// random codes) comes from a source seeded by the simulator's seed and the
// conversation id alone, so a conversation replays exactly under the same
// seed whatever else runs concurrently.
func (s *Server) newSession(def *agent.Definition, o agent.SessionOptions) *agent.Session {
	o.Rand = rand.New(rand.NewPCG(uint64(s.opts.Seed), hashString(o.ConversationID)))
	return def.NewSession(o)
}

// think waits for the agent's simulated think time of a turn (node
// latencyMs). It returns early when the client has gone; the turn is
// recorded all the same, as the platform would have processed it.
func (s *Server) think(ctx context.Context, d time.Duration) {
	if d > 0 {
		s.opts.Sleep(ctx, d)
	}
}

// sleep is the default Options.Sleep: a timer that stops when ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// afterFunc is the default Options.AfterFunc: a real timer.
func afterFunc(d time.Duration, f func()) (stop func() bool) {
	return time.AfterFunc(d, f).Stop
}

// handleActiveDeployment serves GET /v1/agents/{agentId}/deployments/active.
// The reference says it returns the active sandbox deployment; the query
// parameter deploymentEnvParam asks for another environment.
func (s *Server) handleActiveDeployment(w http.ResponseWriter, r *http.Request, k keyScope) {
	def, agentID := s.resolveAgent(w, familyConversations, k, r.PathValue("agentId"))
	if def == nil {
		return
	}
	env := r.URL.Query().Get(deploymentEnvParam)
	if env == "" {
		env = "sandbox"
	}
	dep, err := s.ActiveDeployment(agentID, env)
	if err != nil {
		s.failAdmin(w, err)
		return
	}
	writeJSON(w, http.StatusOK, dep.wire())
}

// Admin endpoints: the simulator's own controls, outside the platform's
// API, under adminPrefix on the build host, with the build key.
var adminRoutes = []struct {
	pattern string
	handle  func(s *Server, w http.ResponseWriter, r *http.Request, agentID string)
}{
	{"GET " + adminPrefix + "/agents/{agentId}/deployments", (*Server).handleAdminList},
	{"POST " + adminPrefix + "/agents/{agentId}/publish", (*Server).handleAdminPublish},
	{"POST " + adminPrefix + "/agents/{agentId}/promote", (*Server).handleAdminPromote},
	{"POST " + adminPrefix + "/agents/{agentId}/rollback", (*Server).handleAdminRollback},
}

// registerAdmin adds the admin endpoints to a build-host mux. They meet no
// injected fault and no rate limit and count as no traffic: a test that
// changes a deployment mid-run must not be refused by the drill it runs.
func (s *Server) registerAdmin(mux *http.ServeMux) {
	for _, rt := range adminRoutes {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("x-api-key")
			if subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.BuildKey)) != 1 {
				failStatus(w, http.StatusUnauthorized, "the simulator's admin endpoints need the build key in x-api-key")
				return
			}
			id, err := s.agentID(r.PathValue("agentId"))
			if err != nil {
				s.failAdmin(w, err)
				return
			}
			rt.handle(s, w, r, id)
		})
	}
}

// failAdmin writes a refused change, or a 500 for anything else.
func (s *Server) failAdmin(w http.ResponseWriter, err error) {
	if ae, ok := errors.AsType[*adminError](err); ok {
		failStatus(w, ae.status, ae.msg)
		return
	}
	failStatus(w, http.StatusInternalServerError, err.Error())
}

// adminDeployments is the reply of the admin list: the versions an agent
// has and the active deployment of each environment, in promotion order.
type adminDeployments struct {
	AgentID     string           `json:"agent_id"`
	Versions    []string         `json:"versions"`
	Deployments []deploymentJSON `json:"deployments"`
}

func (s *Server) handleAdminList(w http.ResponseWriter, r *http.Request, agentID string) {
	out := adminDeployments{AgentID: agentID, Versions: s.agents[agentID].Versions()}
	for _, env := range agent.Environments {
		dep, err := s.ActiveDeployment(agentID, env)
		if err != nil {
			s.failAdmin(w, err)
			return
		}
		out.Deployments = append(out.Deployments, dep.wire())
	}
	writeJSON(w, http.StatusOK, out)
}

// adminRequest is the body of the admin changes; each uses its own members.
type adminRequest struct {
	Version      string `json:"version"`       // publish
	To           string `json:"to"`            // promote
	DeploymentID string `json:"deployment_id"` // promote
	Environment  string `json:"environment"`   // rollback
}

func (s *Server) adminChange(w http.ResponseWriter, r *http.Request, change func(req adminRequest) (Deployment, error)) {
	var req adminRequest
	if err := decodeBody(r, &req); err != nil {
		failStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	dep, err := change(req)
	if err != nil {
		s.failAdmin(w, err)
		return
	}
	writeJSON(w, http.StatusOK, dep.wire())
}

func (s *Server) handleAdminPublish(w http.ResponseWriter, r *http.Request, agentID string) {
	s.adminChange(w, r, func(req adminRequest) (Deployment, error) { return s.Publish(agentID, req.Version) })
}

func (s *Server) handleAdminPromote(w http.ResponseWriter, r *http.Request, agentID string) {
	s.adminChange(w, r, func(req adminRequest) (Deployment, error) {
		if req.To == "" {
			return Deployment{}, adminErrorf(http.StatusBadRequest, "promote needs \"to\": pre-release or live")
		}
		return s.Promote(agentID, req.To, req.DeploymentID)
	})
}

func (s *Server) handleAdminRollback(w http.ResponseWriter, r *http.Request, agentID string) {
	s.adminChange(w, r, func(req adminRequest) (Deployment, error) {
		if req.Environment == "" {
			return Deployment{}, adminErrorf(http.StatusBadRequest, "rollback needs \"environment\": sandbox, pre-release or live")
		}
		return s.Rollback(agentID, req.Environment)
	})
}
