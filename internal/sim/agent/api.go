// Package agent loads the simulator's agent definitions (YAML, see
// docs/agent-definition.md) and plays them: a Session turns user messages
// into replies with every metadata member the platform reference names.
//
// The package knows nothing about HTTP; internal/sim serves sessions over
// the platform API.
package agent

import (
	"math/rand/v2"
	"time"
)

// SessionOptions are the parameters of a debug-chat create call, plus the
// simulator's own sources of time and randomness.
type SessionOptions struct {
	ConversationID        string
	Env                   string // clientEnv
	Channel               string // default WEBCHAT
	VariantID             string
	ASRLang               string // default from the definition
	TTSLang               string // default from the definition
	IntegrationAttributes map[string]any
	// Rand drives LLM-like variance (several phrasings of a response). The
	// server seeds it per session from its own seed and the conversation
	// id, so runs are reproducible.
	Rand *rand.Rand
	// Now is the clock (built-in state keys, metric timestamps).
	Now func() time.Time
	// AudioBaseURL prefixes agentResponseAudioUrl of VOICE-SIP sessions
	// (BASE/CONVERSATION_ID/TURN.wav); empty means DefaultAudioBaseURL.
	AudioBaseURL string
}

// Reply is what the agent produced for one turn (or for the greeting).
type Reply struct {
	Response  string
	Ended     bool
	Delayed   bool
	Metadata  Metadata
	Intents   []string
	Entities  []map[string]any
	IsOOD     bool
	IsSilence bool
	// Handoff is set on the turn the agent hands off.
	Handoff *Handoff
	// FunctionErrors counts failed function events of this turn (for the
	// alert evaluator of a later issue).
	FunctionErrors int
	// Latency is the simulated time the agent takes for this turn: the sum
	// of latencyMs of the nodes it played. The server waits this long
	// before it answers, so clients measure it like real think time.
	Latency time.Duration
	// Parts are the messages of a split answer, whose Response joins
	// them: a node with pauseMs spoke after the turn had spoken. Nil
	// when the answer is one message. Over web chat each is a message
	// of its own, the typing indicator off for the pause before it;
	// debug chat answers Response.
	Parts []Part
}

// Part is one message of a split answer and the pause before it (0 for
// the first).
type Part struct {
	Text  string
	Pause time.Duration
}

// Metadata is the typed form of the debug-chat metadata object. JSON tags
// are the reference's member names.
type Metadata struct {
	ASRLangCode           string           `json:"asrLangCode,omitempty"`
	TTSLangCode           string           `json:"ttsLangCode,omitempty"`
	AgentResponseAudioURL string           `json:"agentResponseAudioUrl,omitempty"`
	State                 map[string]any   `json:"state"`
	CurrentNode           string           `json:"currentNode,omitempty"`
	NodeTrace             []string         `json:"nodeTrace"`
	Metrics               map[string]any   `json:"metrics,omitempty"`
	FunctionEvents        []FunctionEvent  `json:"functionEvents,omitempty"`
	HandoffDestination    string           `json:"handoffDestination,omitempty"`
	RetrievedTopics       []string         `json:"retrievedTopics,omitempty"`
	RetrievedSources      []string         `json:"retrievedSources,omitempty"`
	CitedTopic            string           `json:"citedTopic,omitempty"`
	InFlow                string           `json:"inFlow,omitempty"`
	InStep                string           `json:"inStep,omitempty"`
	LLMRequests           []map[string]any `json:"llmRequests,omitempty"`
}

// FunctionEvent is one function call of a turn. The reference does not show
// its shape; this is the simulator's choice (docs/simulator.md).
type FunctionEvent struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Status    string         `json:"status"` // "success" or "error"
	Result    any            `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
	LatencyMS int            `json:"latency_ms"`
}

// Handoff is the handoff a turn performed, with what the handoff_state
// endpoint returns for it.
type Handoff struct {
	Destination string
	Reason      string
	SharedID    string
	Data        map[string]any
}
