package platform

import "encoding/json"

// TurnResult is the reference's "Debug chat turn result": what both debug-chat
// endpoints return.
type TurnResult struct {
	ConversationID    string `json:"conversationId"`
	UserInput         string `json:"userInput"`
	Response          string `json:"response"`
	ConversationEnded bool   `json:"conversationEnded"`
	DelayedResponse   bool   `json:"delayedResponse"`
	// Metadata holds the metadata members as decoded JSON values
	// (map[string]any, []any, string, float64, bool, nil). Use the accessor
	// methods of Metadata rather than reading it directly: they accept every
	// plausible form of the members the reference leaves open.
	Metadata Metadata `json:"metadata"`
	// RawMetadata is the metadata object exactly as received, kept for
	// reports and the JSON output.
	RawMetadata json.RawMessage `json:"-"`
}

// Metadata is the metadata object of a debug-chat turn result.
type Metadata map[string]any
