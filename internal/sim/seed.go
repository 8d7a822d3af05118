package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/agenttest/agenttest/internal/sim/agent"
)

// seedExchange is one canned exchange of synthetic conversations.
type seedExchange struct {
	user, agent, intent string
	ood, silence        bool
	handoff             bool
}

// seedBank mixes the topics of the example agents (restaurant, billing,
// clinic) so transcript and semantic search have something to find.
var seedBank = []seedExchange{
	{user: "I'd like to book a table for four tonight", agent: "Sure, what time would you like the table?", intent: "book_table"},
	{user: "Can I reserve a table at 7pm", agent: "I have a table at 7pm. Shall I reserve it?", intent: "book_table"},
	{user: "What are your opening hours", agent: "We are open from noon to 11pm every day.", intent: "opening_hours"},
	{user: "Do you have vegetarian options on the menu", agent: "Yes, the menu has several vegetarian dishes.", intent: "menu"},
	{user: "Why is my electricity bill so high this month", agent: "Your bill rose because usage went up in the cold weeks.", intent: "bill_query"},
	{user: "I want to pay my bill", agent: "I can take a card payment for your bill now.", intent: "pay_bill"},
	{user: "There is a power outage on my street", agent: "I am sorry, there is a reported outage; crews are on the way.", intent: "report_outage"},
	{user: "I need to move my meter reading date", agent: "I have noted the new meter reading date.", intent: "meter_reading"},
	{user: "I need an appointment with a doctor", agent: "I can book an appointment. Which day suits you?", intent: "book_appointment"},
	{user: "Please cancel my appointment on Friday", agent: "Your Friday appointment is cancelled.", intent: "cancel_appointment"},
	{user: "Can I get a prescription refill", agent: "I have sent the refill request to your doctor.", intent: "prescription"},
	{user: "Where is the clinic located", agent: "The clinic is at 12 High Street, next to the pharmacy.", intent: "location"},
	{user: "I want to speak to a real person", agent: "Let me transfer you to a colleague.", intent: "handoff", handoff: true},
	{user: "blorf wibble zazz", agent: "Sorry, I did not understand that.", ood: true},
	{user: "", agent: "Are you still there?", silence: true},
}

var (
	seedChannels = []string{"VOICE-SIP", "WEBCHAT", "CHAT"}
	seedEnvs     = []string{"live", "live", "live", "sandbox", "pre-release"}
	seedDays     = 30
)

// seed fills the store with n synthetic, mostly finished conversations
// spread over agents, channels, environments, variants and the last
// seedDays days. It is deterministic under Options.Seed.
func (s *Server) seed(n int) error {
	rng := rand.New(rand.NewPCG(uint64(s.opts.Seed), 0x5eed))
	now := s.opts.Now().UTC().Truncate(time.Millisecond)
	convs := make([]*Conversation, n)
	open := make(map[*Conversation]bool)
	for i := range convs {
		def := s.agents[s.agentIDs[i%len(s.agentIDs)]]
		convs[i] = s.seedConversation(def, i, rng, now)
		if rng.IntN(100) < 3 { // a few stay in progress, for the in_progress filter
			open[convs[i]] = true
		}
	}
	// Adding in time order appends to the store's sorted lists instead of
	// inserting in the middle.
	sort.Slice(convs, func(i, j int) bool { return convs[i].less(convs[j]) })
	for _, c := range convs {
		if !s.store.Add(c) {
			return fmt.Errorf("seed conversation %s: id taken", c.ID)
		}
		if h := c.handoffSnapshot(); h != nil {
			s.store.IndexSharedID(c, h.SharedID)
		}
		if !open[c] {
			s.store.End(c, c.lastActivity, false)
		}
	}
	return nil
}

func (s *Server) seedConversation(def *agent.Definition, i int, rng *rand.Rand, now time.Time) *Conversation {
	// A synthetic conversation runs on one of the agent's own variants or
	// on none, so variant_id and variant_name filters see real values.
	var v agent.Variant
	if vs := def.Variants(); len(vs) > 0 {
		if k := rng.IntN(len(vs) + 1); k < len(vs) {
			v = vs[k]
		}
	}
	start := now.Add(-time.Duration(rng.Int64N(int64(seedDays) * int64(24*time.Hour)))).Truncate(time.Millisecond)
	c := &Conversation{
		ID:          fmt.Sprintf("conv-seed-%06d", i),
		AccountID:   s.opts.AccountID,
		ProjectID:   def.ID,
		VariantID:   v.ID,
		VariantName: v.Name,
		Environment: seedEnvs[rng.IntN(len(seedEnvs))],
		Channel:     seedChannels[rng.IntN(len(seedChannels))],
		StartedAt:   start,
	}
	if isVoice(c.Channel) {
		c.FromNumber = fmt.Sprintf("+1555%07d", rng.IntN(10_000_000))
		if nums := def.Numbers(); len(nums) > 0 {
			c.ToNumber = nums[0]
		} else {
			c.ToNumber = "+15550000000"
		}
	}
	at := start
	greeting := Turn{UserInputAt: at, AgentResponse: "Hello, how can I help you today?", AgentResponseAt: at.Add(300 * time.Millisecond), Latency: 300 * time.Millisecond}
	c.AppendTurn(greeting, TurnUpdate{})
	turns := 1 + rng.IntN(6)
	for j := range turns {
		ex := seedBank[rng.IntN(len(seedBank))]
		at = at.Add(time.Duration(3+rng.IntN(20)) * time.Second)
		lat := time.Duration(200+rng.IntN(1500)) * time.Millisecond
		t := Turn{
			UserInput:       ex.user,
			UserInputAt:     at,
			AgentResponse:   ex.agent,
			AgentResponseAt: at.Add(lat),
			Latency:         lat,
			IsOOD:           ex.ood,
			IsSilence:       ex.silence,
		}
		if ex.intent != "" {
			t.Intents = []string{ex.intent}
		}
		u := TurnUpdate{State: map[string]any{"last_intent": ex.intent, "turn": j + 1}}
		if ex.handoff {
			u.Handoff = &HandoffRecord{
				Destination: "agent_queue",
				Reason:      "caller asked for a person",
				SharedID:    fmt.Sprintf("shared-%06d", i),
				Data:        map[string]any{"conversation": c.ID, "topic": "seeded"},
			}
		}
		c.AppendTurn(t, u)
		at = t.AgentResponseAt
		if ex.handoff {
			break
		}
	}
	return c
}
