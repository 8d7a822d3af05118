package sim

import (
	"fmt"
	"maps"
	"math"
	"time"
)

// isoLayout renders timestamps: ISO 8601 in UTC with milliseconds.
const isoLayout = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(isoLayout) }

// conversationJSON is the reference's Conversation summary. Optional text
// fields are empty strings rather than absent or null, as v3 promises.
type conversationJSON struct {
	ID                 string         `json:"id"`
	AccountID          string         `json:"account_id"`
	ProjectID          string         `json:"project_id"`
	VariantID          string         `json:"variant_id"`
	VariantName        string         `json:"variant_name"`
	Environment        string         `json:"environment"`
	StartedAt          string         `json:"started_at"`
	Channel            string         `json:"channel"`
	FromNumber         string         `json:"from_number"`
	ToNumber           string         `json:"to_number"`
	InProgress         bool           `json:"in_progress"`
	NumTurns           int            `json:"num_turns"`
	TotalDuration      int            `json:"total_duration"`
	VendorDuration     int            `json:"vendor_duration"`
	Handoff            bool           `json:"handoff"`
	HandoffReason      string         `json:"handoff_reason"`
	HandoffDestination string         `json:"handoff_destination"`
	NumSilences        int            `json:"num_silences"`
	NumOOD             int            `json:"num_ood"`
	Metrics            map[string]any `json:"metrics"`
	State              map[string]any `json:"state"`
	Turns              []turnJSON     `json:"turns"`
}

// turnJSON is the reference's Turn.
type turnJSON struct {
	UserInput             string           `json:"user_input"`
	UserInputDTMF         string           `json:"user_input_dtmf"`
	UserInputDatetime     string           `json:"user_input_datetime"`
	AgentResponse         string           `json:"agent_response"`
	AgentResponseDatetime string           `json:"agent_response_datetime"`
	Latency               *float64         `json:"latency,omitempty"`
	TranslatedUserInput   string           `json:"translated_user_input"`
	EnglishAgentResponse  string           `json:"english_agent_response"`
	Intents               []string         `json:"intents"`
	Entities              []map[string]any `json:"entities"`
	IsOOD                 bool             `json:"is_ood"`
	IsSilence             bool             `json:"is_silence"`
	BargeIn               bool             `json:"barge_in"`
	Metadata              any              `json:"metadata,omitempty"`
}

// renderOptions are the per-request and per-project switches of rendering.
type renderOptions struct {
	latency      bool // include_latency
	turnMetadata bool // include_turn_metadata
	project      ProjectOptions
}

// render builds the summary of a conversation.
func render(c *Conversation, ro renderOptions) conversationJSON {
	sn := c.snapshot()
	out := conversationJSON{
		ID:          c.ID,
		AccountID:   c.AccountID,
		ProjectID:   c.ProjectID,
		VariantID:   c.VariantID,
		VariantName: c.VariantName,
		Environment: c.Environment,
		StartedAt:   formatTime(c.StartedAt),
		Channel:     c.Channel,
		FromNumber:  c.FromNumber,
		ToNumber:    c.ToNumber,
		InProgress:  sn.inProgress,
		NumTurns:    len(sn.turns),
		NumSilences: sn.numSilences,
		NumOOD:      sn.numOOD,
		State:       stateOf(c, sn),
		Metrics:     map[string]any{},
		Turns:       []turnJSON{},
	}
	secs := int(math.Round(sn.lastActivity.Sub(c.StartedAt).Seconds()))
	out.TotalDuration, out.VendorDuration = secs, secs
	if h := sn.handoff; h != nil {
		out.Handoff = true
		out.HandoffReason = h.Reason
		out.HandoffDestination = h.Destination
	}
	if !ro.project.HideMetrics {
		out.Metrics = metricsOf(c, sn)
	}
	if !ro.project.HideTranscripts {
		out.Turns = make([]turnJSON, len(sn.turns))
		for i := range sn.turns {
			out.Turns[i] = renderTurn(&sn.turns[i], ro)
		}
	}
	return out
}

func renderTurn(t *Turn, ro renderOptions) turnJSON {
	tj := turnJSON{
		UserInput:             t.UserInput,
		UserInputDTMF:         t.UserInputDTMF,
		UserInputDatetime:     formatTime(t.UserInputAt),
		AgentResponse:         t.AgentResponse,
		AgentResponseDatetime: formatTime(t.AgentResponseAt),
		Intents:               t.Intents,
		Entities:              t.Entities,
		IsOOD:                 t.IsOOD,
		IsSilence:             t.IsSilence,
		BargeIn:               t.BargeIn,
	}
	if tj.Intents == nil {
		tj.Intents = []string{}
	}
	if tj.Entities == nil {
		tj.Entities = []map[string]any{}
	}
	if ro.latency {
		l := math.Round(t.Latency.Seconds()*1000) / 1000
		tj.Latency = &l
	}
	if ro.turnMetadata {
		md := t.GenAI
		if md == nil {
			md = map[string]any{}
		}
		// An interface holding an empty map survives omitempty.
		tj.Metadata = md
	}
	return tj
}

// stateOf is the agent's state plus the built-in keys the reference names,
// filled in when the agent did not write them.
func stateOf(c *Conversation, sn snapshot) map[string]any {
	st := make(map[string]any, len(sn.state)+3)
	maps.Copy(st, sn.state)
	for k, v := range map[string]string{"from_": c.FromNumber, "to": c.ToNumber, "call_sid": c.ID} {
		if _, ok := st[k]; !ok {
			st[k] = v
		}
	}
	return st
}

// metricsOf renders metrics as the reference shapes them: each value a
// string, or an array of at least two strings for a metric written more
// than once. CALL_DURATION and CALL_TURN are the platform's own.
func metricsOf(c *Conversation, sn snapshot) map[string]any {
	m := make(map[string]any, len(sn.metrics)+2)
	for k, v := range sn.metrics {
		m[k] = metricValue(v)
	}
	m["CALL_DURATION"] = fmt.Sprint(int(math.Round(sn.lastActivity.Sub(c.StartedAt).Seconds())))
	turns := make([]string, len(sn.turns))
	for i := range sn.turns {
		turns[i] = formatTime(sn.turns[i].UserInputAt)
	}
	switch len(turns) {
	case 0:
	case 1:
		m["CALL_TURN"] = turns[0]
	default:
		m["CALL_TURN"] = turns
	}
	return m
}

func metricValue(v any) any {
	var list []string
	switch x := v.(type) {
	case string:
		return x
	case []string:
		list = x
	case []any:
		for _, e := range x {
			list = append(list, scalarString(e))
		}
	default:
		return scalarString(v)
	}
	if len(list) == 1 {
		return list[0]
	}
	if len(list) == 0 {
		return ""
	}
	return list
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		return formatTime(x)
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// whitelisted is the v1 field-whitelisting form of a summary.
func whitelisted(c *Conversation) map[string]any {
	return map[string]any{
		"id":         c.ID,
		"started_at": formatTime(c.StartedAt),
		"account_id": c.AccountID,
		"project_id": c.ProjectID,
	}
}

// sortDesc reverses an ascending list in place into newest-first order.
func sortDesc(list []*Conversation) {
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
}
