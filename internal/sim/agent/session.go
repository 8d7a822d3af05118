package agent

import (
	"encoding/hex"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The reference leaves these values open; each is the simulator's choice,
// kept here so there is one place to change it (docs/agent-definition.md).
const (
	// DefaultChannel is the channel of a session whose create call names none.
	DefaultChannel = "WEBCHAT"
	// DefaultEnv is the environment of a session created without clientEnv.
	DefaultEnv = "sandbox"
	// DefaultCallerNumber is the built-in from_ state of voice and SMS
	// sessions whose integration attributes give no from_number.
	DefaultCallerNumber = "+15555550100"
	// DefaultAgentNumber is the built-in to state of voice and SMS sessions
	// of an agent with no provisioned numbers.
	DefaultAgentNumber = "+15555550199"
	// DefaultAudioBaseURL prefixes agentResponseAudioUrl of VOICE-SIP turns:
	// BASE/CONVERSATION_ID/TURN.wav.
	DefaultAudioBaseURL = "https://audio.simulator.invalid/debug-chat"
	// SilenceReply and FallbackReply are said when a definition names no
	// silence or fallback node.
	SilenceReply  = "Sorry, I didn't catch that."
	FallbackReply = "Sorry, I didn't understand that."
	// maxHops bounds the nodes one turn may visit, so that a conditional
	// loop in a definition ends the turn instead of hanging the server.
	maxHops = 64
)

// epoch is the clock of sessions created without SessionOptions.Now; no
// package under internal/ reads the wall clock (STYLE.md 2).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Session is one conversation with an agent. It is not safe for concurrent
// use; the server serialises the turns of a session.
//
// The maps a Reply carries (state, metrics) are snapshots: the session
// copies before writing, so a caller may keep and encode earlier replies
// while later turns run. Callers must not modify them.
type Session struct {
	def     *Definition
	opts    SessionOptions
	rand    *rand.Rand
	channel string
	env     string
	asr     string
	tts     string
	voice   bool
	variant int // index into def.variants, -1 for none

	state        map[string]any
	stateShared  bool
	metrics      map[string]any
	metricShared bool

	current *node
	pending *node // delayed node whose real reply the next turn gives
	// heard is what the turn that delayed pending understood: the
	// delayed reply answers that message, not the next one.
	heard   heard
	started bool
	ended   bool
	turn    int
}

// NewSession starts a conversation; call Start for the greeting.
func (d *Definition) NewSession(opts SessionOptions) *Session {
	s := &Session{def: d, opts: opts, variant: -1}
	s.channel = opts.Channel
	if s.channel == "" {
		s.channel = DefaultChannel
	}
	s.env = opts.Env
	if s.env == "" {
		s.env = DefaultEnv
	}
	s.asr, s.tts = d.ASRLang, d.TTSLang
	if opts.ASRLang != "" {
		s.asr = opts.ASRLang
	}
	if opts.TTSLang != "" {
		s.tts = opts.TTSLang
	}
	s.voice = s.channel == "VOICE-SIP"
	s.rand = opts.Rand
	if s.rand == nil {
		h := fnv.New64a()
		h.Write([]byte(opts.ConversationID))
		s.rand = rand.New(rand.NewPCG(h.Sum64(), 0))
	}
	for i, v := range d.variants {
		if v.id == opts.VariantID {
			s.variant = i
		}
	}
	s.state = s.builtinState()
	s.metrics = map[string]any{}
	return s
}

// builtinState is the state a conversation starts with. The reference names
// from_, to and call_sid; the rest is the simulator's choice.
func (s *Session) builtinState() map[string]any {
	st := map[string]any{
		"conversation_id": s.opts.ConversationID,
		"channel":         s.channel,
		"environment":     s.env,
	}
	if s.opts.VariantID != "" {
		st["variant_id"] = s.opts.VariantID
	}
	if s.channel == "VOICE-SIP" || s.channel == "SMS" {
		from := DefaultCallerNumber
		for _, k := range []string{"from_number", "from_", "from"} {
			if v, ok := s.opts.IntegrationAttributes[k].(string); ok && v != "" {
				from = v
				break
			}
		}
		to := DefaultAgentNumber
		if len(s.def.numbers) > 0 {
			to = s.def.numbers[0]
		}
		st["from_"], st["to"] = from, to
	}
	if s.voice {
		// A Twilio-style call id, derived from the conversation id so that
		// it is stable across runs without consuming Rand.
		h := fnv.New128a()
		h.Write([]byte(s.opts.ConversationID))
		st["call_sid"] = "CA" + hex.EncodeToString(h.Sum(nil))
	}
	return st
}

// Ended reports whether the conversation is over.
func (s *Session) Ended() bool { return s.ended }

// State returns the current dialogue state (a snapshot; do not modify).
func (s *Session) State() map[string]any {
	s.stateShared = true
	return s.state
}

// Metrics returns the custom metrics written so far (a snapshot; do not
// modify): each value is a string, or a []string once written twice.
func (s *Session) Metrics() map[string]any {
	s.metricShared = true
	return s.metrics
}

// CurrentNode is the node that will read the next user message.
func (s *Session) CurrentNode() string {
	if s.current == nil {
		return ""
	}
	return s.current.name
}

// heard is a message and what was understood from it.
type heard struct {
	msg      string
	intents  []string
	entities []string
}

// turnCtx is the scratch of one turn.
type turnCtx struct {
	msg      string
	lower    string
	ascii    bool
	input    map[string]any
	intents  []string
	entities []string
	topics   []*topic
	kbDone   bool
	text     strings.Builder
	trace    []string
	reply    Reply
	// splits are where the text breaks into the messages of a split
	// answer: a node with pauseMs that spoke after the turn had spoken.
	splits []split
}

// split is the start of a message of a split answer in the turn's text
// (after the space that joins it) and the pause before it.
type split struct {
	at    int
	pause time.Duration
}

func (t *turnCtx) say(text string) {
	if text == "" {
		return
	}
	if t.text.Len() > 0 {
		t.text.WriteByte(' ')
	}
	t.text.WriteString(text)
}

// Start plays the start node and returns the greeting. Calling it again
// returns an empty reply with the current metadata.
func (s *Session) Start() Reply {
	t := &turnCtx{trace: make([]string, 0, 4)}
	if s.started {
		return s.finish(t)
	}
	s.started = true
	s.enter(t, s.def.start, false)
	return s.finish(t)
}

// Turn plays one user message; an empty (or blank) message is silence. The
// metadata is the user input metadata of the debug-chat call, readable in
// templates as ${input.KEY}. A Turn on an ended conversation returns an
// empty reply with Ended set.
func (s *Session) Turn(message string, metadata map[string]any) Reply {
	t := &turnCtx{msg: message, input: metadata, trace: make([]string, 0, 4)}
	s.started = true
	if s.ended {
		return s.finish(t)
	}
	s.turn++
	t.reply.IsSilence = strings.TrimSpace(message) == ""
	if n := s.pending; n != nil {
		// The delayed reply arrives whatever the user says meanwhile; the
		// message is not interpreted, and the node's retrieve and
		// conditions read the message it was delayed on.
		s.pending = nil
		t.msg, t.intents, t.entities = s.heard.msg, s.heard.intents, s.heard.entities
		s.enter(t, n, true)
		return s.finish(t)
	}
	if t.reply.IsSilence {
		s.detour(t, s.def.silence, SilenceReply)
		return s.finish(t)
	}
	t.lower, t.ascii = strings.ToLower(message), isASCII(message)
	s.understand(t)
	var target *node
	if s.current != nil {
		target = s.route(t, s.current.next)
	}
	if target == nil {
		target = s.route(t, s.def.routes)
	}
	if target == nil {
		t.reply.IsOOD = true
		s.detour(t, s.def.fallback, FallbackReply)
		return s.finish(t)
	}
	s.enter(t, target, false)
	return s.finish(t)
}

// understand extracts entities (into state) and intents from the message.
func (s *Session) understand(t *turnCtx) {
	for _, e := range s.def.entities {
		v, ok := e.extract(t.msg, t.lower, t.ascii)
		if !ok {
			continue
		}
		t.entities = append(t.entities, e.name)
		t.reply.Entities = append(t.reply.Entities, map[string]any{e.name: v})
		s.setState(e.stateKey, v)
	}
	for _, in := range s.def.intents {
		if in.hits(t.msg, t.lower, t.ascii) > 0 {
			t.intents = append(t.intents, in.name)
		}
	}
	t.reply.Intents = t.intents
}

func (s *Session) route(t *turnCtx, rules []*rule) *node {
	for _, r := range rules {
		if s.holds(t, &r.cond) {
			return s.follow(r)
		}
	}
	return nil
}

// detour plays a silence or fallback handler and, unless the handler moved
// the conversation on, returns to the interrupted node with its reprompt.
func (s *Session) detour(t *turnCtx, handler *node, builtin string) {
	back := s.current
	if handler == nil {
		t.say(builtin)
	} else {
		s.enter(t, handler, false)
	}
	if s.ended || s.pending != nil || back == nil || (handler != nil && s.current != handler) {
		return
	}
	s.current = back
	t.trace = append(t.trace, back.name)
	if !back.reprompt.empty() {
		sc := scope{s: s, input: t.input}
		t.say(s.pick(back.reprompt).render(&sc))
	}
}

// enter plays n and every node it moves on to within this turn. resume is
// set when n is a delayed node whose real reply is due now.
func (s *Session) enter(t *turnCtx, n *node, resume bool) {
	for hops := 0; n != nil && hops < maxHops; hops++ {
		t.trace = append(t.trace, n.name)
		s.current = n
		if !n.delay.empty() && !resume {
			sc := scope{s: s, input: t.input}
			t.say(s.pick(n.delay).render(&sc))
			t.reply.Delayed = true
			s.pending = n
			s.heard = heard{msg: t.msg, intents: t.intents, entities: t.entities}
			return
		}
		resume = false
		n = s.play(t, n)
	}
}

// play runs a node's actions in a fixed order (set, call, metrics,
// retrieve, say, llm, handoff, end) and returns the node to move on to.
func (s *Session) play(t *turnCtx, n *node) *node {
	sc := scope{s: s, input: t.input}
	for _, a := range n.sets {
		// An empty value clears the key, so copying an integration
		// attribute that was not sent leaves no empty key behind.
		if v := a.val.eval(&sc); v != "" {
			s.setState(a.key, v)
		} else if _, ok := s.state[a.key]; ok {
			s.deleteState(a.key)
		}
	}
	for _, c := range n.calls {
		if !s.call(t, c, &sc) && c.onError != nil {
			return c.onError
		}
	}
	for _, m := range n.metrics {
		s.writeMetric(m.name, m.val.render(&sc))
	}
	if n.retrieve {
		if topics := t.knowledge(s.def); len(topics) > 0 {
			sc.kb = topics[0]
			md := &t.reply.Metadata
			md.CitedTopic = topics[0].name
			for _, tp := range topics {
				md.RetrievedTopics = append(md.RetrievedTopics, tp.name)
				for _, src := range tp.sources {
					if !slices.Contains(md.RetrievedSources, src) {
						md.RetrievedSources = append(md.RetrievedSources, src)
					}
				}
			}
		}
	}
	t.reply.Latency += n.latency
	ph := n.say
	if s.variant >= 0 && n.variantSay != nil && !n.variantSay[s.variant].empty() {
		ph = n.variantSay[s.variant]
	}
	text := ""
	if !ph.empty() {
		text = s.pick(ph).render(&sc)
		if n.pause > 0 && text != "" && t.text.Len() > 0 {
			t.splits = append(t.splits, split{at: t.text.Len() + 1, pause: n.pause})
		}
		t.say(text)
	}
	if n.llm != nil {
		t.reply.Metadata.LLMRequests = append(t.reply.Metadata.LLMRequests, map[string]any{
			"model":             n.llm.model,
			"prompt_tokens":     n.llm.promptTokens + tokens(t.msg),
			"completion_tokens": tokens(text),
		})
	}
	if h := n.handoff; h != nil {
		ho := &Handoff{Destination: h.destination}
		if h.reason != nil {
			ho.Reason = h.reason.render(&sc)
		}
		if h.sharedID != nil {
			ho.SharedID = h.sharedID.render(&sc)
		}
		if h.data != nil {
			ho.Data = h.data.evalMap(&sc)
		}
		t.reply.Handoff = ho
		t.reply.Metadata.HandoffDestination = h.destination
	}
	if n.end {
		s.ended = true
		return nil
	}
	for _, r := range n.then {
		if s.holds(t, &r.cond) {
			return s.follow(r)
		}
	}
	return nil
}

// follow returns where a rule that holds leads: its node, or one of its
// weighted targets drawn from the session's Rand.
func (s *Session) follow(r *rule) *node {
	if r.alts == nil {
		return r.to
	}
	return r.alts[r.cum.pick(s.rand, len(r.alts))]
}

// tokens estimates an LLM token count as 4/3 of the word count, the usual
// rule of thumb for English.
func tokens(text string) int {
	words := len(strings.Fields(text))
	return (words*4 + 2) / 3
}

// call runs one simulated function and records its event; it reports
// whether the function succeeded.
func (s *Session) call(t *turnCtx, c *call, sc *scope) bool {
	f := c.fn
	var args map[string]any
	if c.args != nil {
		args = c.args.evalMap(sc)
	}
	fsc := scope{s: s, args: args, input: sc.input, kb: sc.kb}
	ev := FunctionEvent{Name: f.name, Arguments: args, LatencyMS: f.latencyMS, Status: "success"}
	failed := f.fails
	for _, kv := range f.failWhen {
		if stringOf(args[kv.key]) != kv.value {
			failed = false
			break
		}
	}
	if failed {
		ev.Status = "error"
		ev.Error = "function " + f.name + " failed"
		if f.failReason != nil {
			ev.Error = f.failReason.render(&fsc)
		}
		t.reply.FunctionErrors++
	} else if f.result != nil {
		ev.Result = f.result.eval(&fsc)
		if c.saveAs != "" {
			s.setState(c.saveAs, ev.Result)
		}
	}
	t.reply.Metadata.FunctionEvents = append(t.reply.Metadata.FunctionEvents, ev)
	return !failed
}

func (s *Session) holds(t *turnCtx, c *cond) bool {
	if len(c.intents) > 0 {
		found := false
		for _, want := range c.intents {
			if slices.Contains(t.intents, want) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, e := range c.entities {
		if !slices.Contains(t.entities, e) {
			return false
		}
	}
	for _, k := range c.set {
		if stringOf(s.lookupState(k)) == "" {
			return false
		}
	}
	for _, k := range c.unset {
		if stringOf(s.lookupState(k)) != "" {
			return false
		}
	}
	for _, kv := range c.equals {
		if stringOf(s.lookupState(kv.key)) != kv.value {
			return false
		}
	}
	for _, kn := range c.atLeast {
		v, err := strconv.ParseFloat(stringOf(s.lookupState(kn.key)), 64)
		if err != nil || v < kn.value {
			return false
		}
	}
	for _, kn := range c.below {
		v, err := strconv.ParseFloat(stringOf(s.lookupState(kn.key)), 64)
		if err != nil || v >= kn.value {
			return false
		}
	}
	if c.match != nil && !c.match.MatchString(t.msg) {
		return false
	}
	if c.knowledge != nil && (len(t.knowledge(s.def)) > 0) != *c.knowledge {
		return false
	}
	return true
}

// lookupState reads a state key; a dotted key reads into nested maps
// (a function result saved with saveAs).
func (s *Session) lookupState(key string) any {
	if v, ok := s.state[key]; ok || !strings.Contains(key, ".") {
		return v
	}
	return lookup(s.state, strings.Split(key, "."))
}

// knowledge returns the topics the message is about, best first (most
// pattern and keyword hits, then file order). It is computed once a turn.
func (t *turnCtx) knowledge(d *Definition) []*topic {
	if t.kbDone {
		return t.topics
	}
	t.kbDone = true
	if t.msg == "" {
		return nil
	}
	if t.lower == "" {
		t.lower, t.ascii = strings.ToLower(t.msg), isASCII(t.msg)
	}
	var scores []int
	for _, tp := range d.topics {
		h := tp.matcher.hits(t.msg, t.lower, t.ascii)
		if h == 0 {
			continue
		}
		// Insertion keeps the order stable for equal scores.
		i := len(t.topics)
		for i > 0 && scores[i-1] < h {
			i--
		}
		t.topics = append(t.topics, nil)
		scores = append(scores, 0)
		copy(t.topics[i+1:], t.topics[i:])
		copy(scores[i+1:], scores[i:])
		t.topics[i], scores[i] = tp, h
	}
	return t.topics
}

// setState writes a state key, copying the map first if an earlier reply
// holds it.
func (s *Session) setState(key string, v any) {
	if s.stateShared {
		cp := make(map[string]any, len(s.state)+1)
		maps.Copy(cp, s.state)
		s.state, s.stateShared = cp, false
	}
	s.state[key] = v
}

func (s *Session) deleteState(key string) {
	s.setState(key, nil)
	delete(s.state, key)
}

// writeMetric records a custom metric: the first write is a string, later
// writes of the same name make it an array of strings (the reference's
// Conversation summary rule).
func (s *Session) writeMetric(name, v string) {
	if s.metricShared {
		cp := make(map[string]any, len(s.metrics)+1)
		maps.Copy(cp, s.metrics)
		s.metrics, s.metricShared = cp, false
	}
	switch old := s.metrics[name].(type) {
	case nil:
		s.metrics[name] = v
	case string:
		s.metrics[name] = []string{old, v}
	case []string:
		// A fresh slice: the old one may be held by an earlier snapshot.
		next := make([]string, len(old), len(old)+1)
		copy(next, old)
		s.metrics[name] = append(next, v)
	}
}

func (s *Session) pick(ph phrasing) *template {
	return ph.alts[ph.cum.pick(s.rand, len(ph.alts))]
}

func (s *Session) randomString(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.rand.IntN(len(alphabet))]
	}
	return string(b)
}

// parts cuts a turn's text into the messages of a split answer, or nil
// when it has no split.
func parts(text string, splits []split) []Part {
	if len(splits) == 0 {
		return nil
	}
	out := make([]Part, 0, len(splits)+1)
	from, pause := 0, time.Duration(0)
	for _, sp := range splits {
		out = append(out, Part{Text: text[from : sp.at-1], Pause: pause})
		from, pause = sp.at, sp.pause
	}
	return append(out, Part{Text: text[from:], Pause: pause})
}

func (s *Session) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return epoch
}

// finish fills the metadata every reply carries and hands the state and
// metrics snapshots out.
func (s *Session) finish(t *turnCtx) Reply {
	r := t.reply
	r.Response = t.text.String()
	r.Parts = parts(r.Response, t.splits)
	r.Ended = s.ended
	md := &r.Metadata
	md.ASRLangCode, md.TTSLangCode = s.asr, s.tts
	if s.voice {
		base := s.opts.AudioBaseURL
		if base == "" {
			base = DefaultAudioBaseURL
		}
		md.AgentResponseAudioURL = base + "/" + s.opts.ConversationID + "/" + strconv.Itoa(s.turn) + ".wav"
	}
	md.State = s.state
	s.stateShared = true
	if len(s.metrics) > 0 {
		md.Metrics = s.metrics
		s.metricShared = true
	}
	md.NodeTrace = t.trace
	if n := s.current; n != nil {
		md.CurrentNode = n.name
		md.InFlow, md.InStep = n.flow, n.step
	}
	return r
}
