package sim

import (
	"fmt"
	"net/http"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// statusWriter remembers the status of a response. Unwrap lets
// http.ResponseController reach Flush and Hijack of the real writer, which
// streaming lists and dropped connections need.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countRequest feeds the alert evaluator. Requests to the alerts and
// webhooks groups are monitoring, not platform traffic, so they do not
// count as requests (they would keep every rule out of no_data), but their
// 5xx answers are API errors like any other.
func (s *Server) countRequest(rt route, w *statusWriter, r *http.Request) {
	now := s.opts.Now()
	project := r.PathValue("agentId")
	if project == "" {
		project = r.PathValue("projectId")
	}
	if a, ok := s.aliases[project]; ok {
		project = a
	}
	if _, ok := s.agents[project]; !ok {
		project = ""
	}
	if rt.fam != familyAlerts {
		s.traffic.request(project, now)
	}
	if w.status >= 500 {
		s.traffic.apiError(project, now)
	}
}

// storeHooks connects the store to the alert evaluator and the webhooks.
func (s *Server) storeHooks() *StoreHooks {
	return &StoreHooks{
		Added: func(c *Conversation) { s.traffic.call(c.ProjectID, c.StartedAt) },
		Turn: func(c *Conversation, t Turn) {
			s.traffic.turn(c.ProjectID, t.AgentResponseAt, t.Latency, t.FunctionErrors)
		},
		Handoff: func(c *Conversation, h *HandoffRecord) {
			s.webhooks.emit(EventHandoffCreated, map[string]any{
				"conversation_id":     c.ID,
				"environment":         c.Environment,
				"account_id":          c.AccountID,
				"project_id":          c.ProjectID,
				"channel":             c.Channel,
				"handoff_destination": h.Destination,
				"handoff_reason":      h.Reason,
				"shared_id":           h.SharedID,
			}, s.opts.Now())
		},
		Ended: func(c *Conversation, at time.Time, timedOut bool) {
			if timedOut {
				s.traffic.crash(c.ProjectID, at)
			}
			snap := c.snapshot()
			s.webhooks.emit(EventConversationCompleted, map[string]any{
				"conversation_id": c.ID,
				"environment":     c.Environment,
				"account_id":      c.AccountID,
				"project_id":      c.ProjectID,
				"channel":         c.Channel,
				"started_at":      formatTime(c.StartedAt),
				"ended_at":        formatTime(snap.lastActivity),
				"num_turns":       len(snap.turns),
				"handoff":         snap.handoff != nil,
				"timed_out":       timedOut,
			}, s.opts.Now())
		},
	}
}

// every calls f at each interval until the server closes. The server runs
// two such loops: the janitor (sweep) and the tick (Tick).
func (s *Server) every(interval time.Duration, f func()) {
	defer s.janitorWG.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
			f()
			s.changes.note()
		}
	}
}

// Tick runs one round of the background loop now, on the server clock: it
// advances outbound calls, ends idle SMS conversations and messaging
// sessions, drops expired call statuses and evaluates alert rules, so that
// conversations, webhooks and alert transitions happen even when nobody
// reads (reads do the same work on demand). Tests with a settable clock
// call it after moving the clock.
func (s *Server) Tick() {
	now := s.opts.Now().UTC()
	s.advanceCalls(now)
	s.expireSMS(now)
	s.expireMessaging(now)
	s.evaluateAlerts(now)
}

// fillMessagingInfo derives the SMS connector ids and the provisioned
// numbers of every agent and lists them, with the brand headers, in Info:
// what a client needs to call the outbound-calling and SMS groups.
func (s *Server) fillMessagingInfo() {
	s.sms.connectors = map[string]smsConnector{}
	s.info.Brand = s.opts.Brand
	s.info.AuthTokenHeader = brand.AuthTokenHeader(s.opts.Brand)
	s.info.SignatureHeader = brand.SignatureHeader(s.opts.Brand)
	s.info.ConnectorIDs = map[string]map[string]string{}
	s.info.Numbers = map[string][]string{}
	s.info.EnvNumbers = map[string]map[string]string{}
	for _, id := range s.agentIDs {
		nums := provisionedNumbers(s.agents[id])
		s.info.Numbers[id] = nums
		s.info.ConnectorIDs[id] = map[string]string{}
		s.info.EnvNumbers[id] = map[string]string{}
		for i, env := range clientEnvs {
			tok := connectorID(id, env)
			s.sms.connectors[tok] = smsConnector{agentID: id, env: env}
			s.info.ConnectorIDs[id][env] = tok
			s.info.EnvNumbers[id][env] = nums[i%len(nums)]
		}
	}
	for _, n := range s.opts.Outbound.Unreachable {
		norm, _ := normalizeNumber(n)
		s.info.UnreachableNumbers = append(s.info.UnreachableNumbers, norm)
	}
	if s.info.UnreachableNumbers == nil {
		s.info.UnreachableNumbers = []string{}
	}
}

// provisionedNumbers are the agent's numbers, or the agent package's
// default number for an agent that lists none (the number its voice and
// SMS sessions already use as "to").
func provisionedNumbers(def *agent.Definition) []string {
	nums := def.Numbers()
	if len(nums) == 0 {
		nums = []string{agent.DefaultAgentNumber}
	}
	return nums
}

// connectorID derives a stable X-TOKEN-ID for an agent and environment.
func connectorID(agentID, env string) string {
	return fmt.Sprintf("%s%08X", connectorIDPrefix, uint32(hashString(agentID+"\x00"+env)))
}

// newID makes a server-unique id of 16 hex digits after prefix,
// reproducible under the seed.
func (s *Server) newID(prefix string) string {
	n := s.idSeq.Add(1)
	return fmt.Sprintf("%s%016x", prefix, splitmix64(uint64(s.opts.Seed)^splitmix64(n^0x155e5)))
}
