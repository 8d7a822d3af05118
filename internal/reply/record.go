package reply

import "time"

// Conversation is the reference's Conversation summary, returned by the
// list and by-id endpoints. Each field is the member of the same name
// (ID is id, NumOOD is num_ood, ...). Optional members the server left out
// are zero.
type Conversation struct {
	ID          string
	AccountID   string
	ProjectID   string
	VariantID   string
	VariantName string
	// Environment is usually live, sandbox or pre-release.
	Environment string
	StartedAt   time.Time
	// Channel is usually VOICE-SIP or WEBCHAT; CHAT also occurs.
	Channel    string
	FromNumber string
	ToNumber   string
	// InProgress true means the other members may still change.
	InProgress bool
	// NumTurns counts turns even when Turns is empty (transcripts off).
	NumTurns int
	// TotalDuration and VendorDuration are in seconds (whole call, and
	// the part handled by the agent).
	TotalDuration  int
	VendorDuration int
	Handoff        bool
	HandoffReason  string
	// HandoffDestination says which destination when several exist.
	HandoffDestination string
	NumSilences        int
	NumOOD             int
	// Metrics maps a custom metric name to its values: one value for a
	// metric written once, several when it was written more than once.
	// The reference sends a string or an array of at least two strings;
	// both become a slice here so checks need not care.
	Metrics map[string][]string
	// State holds the dialogue state: built-in keys (from_, to, call_sid)
	// and custom ones.
	State map[string]any
	// Turns is the transcript in order; empty when transcript access is
	// off for the project.
	Turns []ConversationTurn
}

// ConversationTurn is the reference's Turn; fields are named after its
// members, except the two date-times (user_input_datetime is UserInputAt,
// agent_response_datetime is AgentResponseAt).
type ConversationTurn struct {
	UserInput     string
	UserInputDTMF string
	// UserInputAt is when the agent received the input (for speech, when
	// ASR finished).
	UserInputAt   time.Time
	AgentResponse string
	// AgentResponseAt is when the agent responded (for speech, when it
	// began speaking).
	AgentResponseAt time.Time
	// Latency is the agent latency of the turn in seconds (with
	// include_latency).
	Latency              float64
	TranslatedUserInput  string
	EnglishAgentResponse string
	Intents              []string
	// Entities holds one map per entity occurrence, from entity name to
	// its values (a single string becomes a one-element slice).
	Entities  []map[string][]string
	IsOOD     bool
	IsSilence bool
	// BargeIn is true when the user interrupted the agent (prose
	// reference only).
	BargeIn bool
}

// HandoffState is the context an agent stored at handoff.
type HandoffState struct {
	// ID is the conversation id.
	ID string
	// SharedID is the integrator-defined id, if one was stored.
	SharedID string
	// Data is the free-form handoff metadata written by the agent.
	Data map[string]any
}
