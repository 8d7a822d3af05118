package assert

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// Confirm is the `confirm:` block of a scenario: checks on what the
// platform recorded, read after the session ends (or after a probe). A nil
// field is not checked.
type Confirm struct {
	// Pos is the `confirm:` key.
	Pos diag.Pos
	// Conversation checks the Conversation summary (Conversations v3 by
	// id).
	Conversation *ConversationChecks
	// HandoffState checks the handoff state record.
	HandoffState *HandoffStateCheck
	// Webhooks lists the events that must arrive, signed, for the
	// conversation.
	Webhooks []WebhookCheck
	// Recording checks whether the conversation has a recording (the
	// audio endpoint of Conversations v3).
	Recording *RecordingCheck
}

// RecordingCheck expects the conversation to have a recording, or none.
// Only voice conversations (VOICE-SIP) have one; the platform answers a
// chat conversation's audio with 404.
type RecordingCheck struct {
	Pos diag.Pos
	// Want is true for a recording, false for none.
	Want bool
}

// ConversationChecks checks the fields of a Conversation summary, each by
// its reference name.
type ConversationChecks struct {
	// Pos is the `conversation:` key.
	Pos diag.Pos
	// Fields are the scalar fields, in the order written.
	Fields []FieldCheck
	// Metrics checks the custom metrics (the same forms as expect:
	// metrics).
	Metrics []MetricCheck
	// State checks the dialogue state, key by key (dotted keys reach into
	// objects).
	State []StateCheck
	// Turns checks the transcript.
	Turns *TurnsCheck
}

// InProgress returns the expected in_progress value, or nil when the
// checks do not mention it. A probe's confirmation waits for the
// conversation to end only when it asks for in_progress: false.
func (c *ConversationChecks) InProgress() *bool {
	if c == nil {
		return nil
	}
	for _, f := range c.Fields {
		if f.Field == "in_progress" && f.Bool != nil {
			v := f.Bool.Value
			return &v
		}
	}
	return nil
}

// FieldCheck checks one scalar field of the summary. Exactly one of Text,
// Number and Bool is set, as the field's kind says.
type FieldCheck struct {
	Pos diag.Pos
	// Field is the reference name: num_turns, handoff_reason, ...
	Field  string
	Text   *Text
	Number *Number
	Bool   *Bool
}

// TurnsCheck checks the turns of the record.
type TurnsCheck struct {
	Pos diag.Pos
	// Count bounds the number of turns in the transcript.
	Count *Number
	// Intents checks the intents found across all turns.
	Intents *IntentsCheck
	// Responses matches the agent's recorded responses, one per line in
	// turn order (turns without one left out): what a call or an SMS
	// probe said, which no debug-chat reply shows.
	Responses *Text
}

// IntentsCheck checks the union of the turns' intents.
type IntentsCheck struct {
	Pos diag.Pos
	// Includes: each intent was found in some turn.
	Includes []string
	// Excludes: no turn found the intent.
	Excludes []string
}

// HandoffStateCheck checks the handoff state record, read by conversation
// id, or by SharedID when set.
type HandoffStateCheck struct {
	Pos diag.Pos
	// SharedID, when set, looks the record up by the integrator's id
	// instead of the conversation id (it may use ${...}).
	SharedID string
	// Data checks members of data, key by key (dotted keys reach into
	// objects); no Data checks only that the record exists.
	Data []StateCheck
}

// WebhookCheck expects one event for the conversation, verified.
type WebhookCheck struct {
	Pos   diag.Pos
	Event string
}

// FieldKind says how a Conversation summary field is checked.
type FieldKind int

// The kinds of Conversation summary fields.
const (
	// TextField takes any matcher.
	TextField FieldKind = iota
	// NumberField takes a value or {min, max}.
	NumberField
	// BoolField takes true or false.
	BoolField
	// MetricsField, StateField and TurnsField have their own forms.
	MetricsField
	StateField
	TurnsField
)

// ConversationField is one field of the reference's Conversation summary.
type ConversationField struct {
	Name string
	Kind FieldKind
}

// ConversationFields are the Conversation summary fields of the reference,
// in its order: the names `confirm: conversation:` accepts.
var ConversationFields = []ConversationField{
	{"id", TextField},
	{"account_id", TextField},
	{"project_id", TextField},
	{"variant_id", TextField},
	{"variant_name", TextField},
	{"environment", TextField},
	{"started_at", TextField},
	{"channel", TextField},
	{"from_number", TextField},
	{"to_number", TextField},
	{"in_progress", BoolField},
	{"num_turns", NumberField},
	{"total_duration", NumberField},
	{"vendor_duration", NumberField},
	{"handoff", BoolField},
	{"handoff_reason", TextField},
	{"handoff_destination", TextField},
	{"num_silences", NumberField},
	{"num_ood", NumberField},
	{"metrics", MetricsField},
	{"state", StateField},
	{"turns", TurnsField},
}

// ConversationFieldKind returns the kind of a field, and false for a name
// the reference does not list.
func ConversationFieldKind(name string) (FieldKind, bool) {
	for _, f := range ConversationFields {
		if f.Name == name {
			return f.Kind, true
		}
	}
	return 0, false
}

// conversationText, conversationNumber and conversationBool read a field by
// its reference name. started_at renders as ISO 8601 UTC with
// milliseconds, the reference's form.
func conversationText(conv *reply.Conversation, name string) string {
	switch name {
	case "id":
		return conv.ID
	case "account_id":
		return conv.AccountID
	case "project_id":
		return conv.ProjectID
	case "variant_id":
		return conv.VariantID
	case "variant_name":
		return conv.VariantName
	case "environment":
		return conv.Environment
	case "started_at":
		if conv.StartedAt.IsZero() {
			return ""
		}
		return conv.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	case "channel":
		return conv.Channel
	case "from_number":
		return conv.FromNumber
	case "to_number":
		return conv.ToNumber
	case "handoff_reason":
		return conv.HandoffReason
	case "handoff_destination":
		return conv.HandoffDestination
	}
	return ""
}

func conversationNumber(conv *reply.Conversation, name string) int {
	switch name {
	case "num_turns":
		return conv.NumTurns
	case "total_duration":
		return conv.TotalDuration
	case "vendor_duration":
		return conv.VendorDuration
	case "num_silences":
		return conv.NumSilences
	case "num_ood":
		return conv.NumOOD
	}
	return 0
}

func conversationBool(conv *reply.Conversation, name string) bool {
	switch name {
	case "in_progress":
		return conv.InProgress
	case "handoff":
		return conv.Handoff
	}
	return false
}

// Key prefixes of confirmation failures.
const (
	keyConversation = "confirm.conversation"
	keyHandoffState = "confirm.handoff_state"
	keyWebhooks     = "confirm.webhooks"
	keyRecording    = "confirm.recording"
)

// Recording is what the audio endpoint answered for a conversation:
// Found is false for a 404 (no recording), Size the bytes of the
// recording and ContentType its type as sent.
type Recording struct {
	Found bool
	// Size is the recording's length in bytes, as it arrived.
	Size        int64
	ContentType string
}

// CheckRecording evaluates a recording check for conversation convID,
// whose recorded channel (empty when unknown) explains a missing
// recording. A recording of no bytes is none: there is nothing to hear.
func CheckRecording(rc *RecordingCheck, convID, channel string, got Recording) []Failure {
	if rc == nil {
		return nil
	}
	has := got.Found && got.Size > 0
	if has == rc.Want {
		return nil
	}
	f := Failure{Pos: rc.Pos, Key: keyRecording}
	switch {
	case has:
		f.Message = fmt.Sprintf("conversation %s has a recording", convID)
		f.Expected, f.Actual = "no recording", got.String()
	case got.Found:
		f.Message = fmt.Sprintf("conversation %s has an empty recording: the audio endpoint answered with no bytes", convID)
		f.Expected, f.Actual = "a recording", "0 bytes"
	default:
		f.Message = fmt.Sprintf("conversation %s has no recording (the audio endpoint answered 404)", convID)
		if channel != "" && !IsVoiceChannel(channel) {
			f.Message += fmt.Sprintf(": only voice conversations (VOICE-SIP) have recordings, and its channel is %s", channel)
		}
		f.Expected, f.Actual = "a recording", "none"
	}
	return []Failure{f}
}

// String is the recording in one phrase: its size and type, or none.
func (r Recording) String() string {
	if !r.Found {
		return "none"
	}
	s := fmt.Sprintf("%d bytes", r.Size)
	if r.ContentType != "" {
		s += " of " + r.ContentType
	}
	return s
}

// IsVoiceChannel reports whether a channel carries audio, and so may have
// a recording: VOICE-SIP, and any other VOICE channel a platform names.
func IsVoiceChannel(channel string) bool {
	return strings.HasPrefix(strings.ToUpper(channel), "VOICE")
}

// UncountedTurns returns the num_turns check of cc that conv cannot
// judge, or nil: a record that holds turns but counts none (num_turns 0,
// or left out) contradicts itself, since num_turns counts every turn, even
// those the transcript hides. Judged on it, a num_turns check would blame
// the agent for the platform's record; the caller errors instead, and
// CheckConversation leaves the check out.
func UncountedTurns(cc *ConversationChecks, conv *reply.Conversation) *FieldCheck {
	if cc == nil || conv == nil || conv.NumTurns != 0 || len(conv.Turns) == 0 {
		return nil
	}
	for i := range cc.Fields {
		if f := &cc.Fields[i]; f.Field == "num_turns" && f.Number != nil {
			return f
		}
	}
	return nil
}

// CheckConversation evaluates the conversation checks against a record and
// returns the broken ones in the order written. Keys read
// "confirm.conversation.num_turns", "confirm.conversation.metrics.BOOKED",
// "confirm.conversation.state.booking_code",
// "confirm.conversation.turns.intents.includes". A nil checks nothing; a
// nil conv is one failure. A num_turns check the record cannot judge
// (UncountedTurns) is left out.
func CheckConversation(cc *ConversationChecks, conv *reply.Conversation, expand Expander) []Failure {
	if cc == nil {
		return nil
	}
	if conv == nil {
		return []Failure{{Pos: cc.Pos, Key: keyConversation, Message: "no conversation record to check"}}
	}
	c := checker{pos: cc.Pos, expand: expand}
	uncounted := UncountedTurns(cc, conv)
	for i := range cc.Fields {
		if f := &cc.Fields[i]; f != uncounted {
			c.field(f, conv)
		}
	}
	if len(cc.Metrics) > 0 {
		n := len(c.fails)
		for i := range cc.Metrics {
			c.metric(&cc.Metrics[i], conv.Metrics)
		}
		prefix(c.fails[n:], keyConversation)
	}
	for i := range cc.State {
		c.keyIn(&cc.State[i], conv.State, label{key: keyConversation + ".state", subject: "state", name: cc.State[i].Key, quote: true},
			"conversation state has no key %q", "conversation state has key %q")
	}
	if cc.Turns != nil {
		c.turns(cc.Turns, conv)
	}
	sortFailures(c.fails)
	return c.fails
}

// CheckHandoffState evaluates the handoff state checks against a record.
// Keys read "confirm.handoff_state.data.reason". A nil record is one
// failure (the caller turns a 404 into it).
func CheckHandoffState(hc *HandoffStateCheck, hs *reply.HandoffState, expand Expander) []Failure {
	if hc == nil {
		return nil
	}
	if hs == nil {
		msg := "no handoff state was stored for the conversation"
		if hc.SharedID != "" {
			msg = "no handoff state was stored under shared id " + strconv.Quote(hc.SharedID)
		}
		return []Failure{{Pos: hc.Pos, Key: keyHandoffState, Message: msg, Expected: "a handoff state record", Actual: "none"}}
	}
	c := checker{pos: hc.Pos, expand: expand}
	for i := range hc.Data {
		c.keyIn(&hc.Data[i], hs.Data, label{key: keyHandoffState + ".data", subject: "handoff data", name: hc.Data[i].Key, quote: true},
			"handoff data has no key %q", "handoff data has key %q")
	}
	sortFailures(c.fails)
	return c.fails
}

// WebhookFailure is the failure of an expected event that did not arrive
// verified: err is the receiver's explanation (which carries the reasons of
// rejected deliveries, such as a signature mismatch).
func WebhookFailure(w WebhookCheck, err error) Failure {
	msg := fmt.Sprintf("webhook %s did not arrive", w.Event)
	if err != nil {
		msg = err.Error()
	}
	return Failure{Pos: w.Pos, Key: keyWebhooks + "." + w.Event, Message: msg, Expected: w.Event + " event, signed", Actual: "none verified"}
}

func (c *checker) field(f *FieldCheck, conv *reply.Conversation) {
	pos := c.at(f.Pos)
	key := keyConversation + "." + f.Field
	switch {
	case f.Text != nil:
		c.textAt(pos, f.Text, label{key: keyConversation, subject: "conversation", name: f.Field}, "value", conversationText(conv, f.Field))
	case f.Number != nil:
		got := conversationNumber(conv, f.Field)
		if !f.Number.Match(float64(got)) {
			msg := fmt.Sprintf("conversation %s is %d, expected %s", f.Field, got, strings.TrimPrefix(f.Number.Describe(), "is "))
			c.fail(Failure{Pos: pos, Key: key, Message: msg, Expected: f.Number.Describe(), Actual: strconv.Itoa(got)})
		}
	case f.Bool != nil:
		got := conversationBool(conv, f.Field)
		if got != f.Bool.Value {
			c.fail(Failure{Pos: pos, Key: key, Message: fmt.Sprintf("conversation %s is %t, expected %t", f.Field, got, f.Bool.Value),
				Expected: strconv.FormatBool(f.Bool.Value), Actual: strconv.FormatBool(got)})
		}
	}
}

// keyIn checks one key of an object (conversation state, handoff data), as
// expect: state does for a reply's state.
func (c *checker) keyIn(s *StateCheck, obj map[string]any, l label, missing, unexpected string) {
	pos := c.at(s.Pos)
	v, found := obj[s.Key]
	if !found {
		v, found = reply.LookupPath(obj, s.Key)
	}
	if !c.presence(pos, l, s.Present, found, missing, unexpected, v, nil) {
		return
	}
	if s.Match != nil {
		c.textAt(pos, s.Match, l, "value", reply.Render(v))
	}
}

func (c *checker) turns(t *TurnsCheck, conv *reply.Conversation) {
	pos := c.at(t.Pos)
	if t.Count != nil && !t.Count.Match(float64(len(conv.Turns))) {
		msg := fmt.Sprintf("conversation has %d turns, expected %s", len(conv.Turns), strings.TrimPrefix(t.Count.Describe(), "is "))
		if len(conv.Turns) == 0 && conv.NumTurns > 0 {
			msg += fmt.Sprintf(" (num_turns is %d: transcript access may be off for the project)", conv.NumTurns)
		}
		c.fail(Failure{Pos: pos, Key: keyConversation + ".turns.count", Message: msg, Expected: t.Count.Describe(), Actual: strconv.Itoa(len(conv.Turns))})
	}
	if t.Responses != nil {
		var said []string
		for _, turn := range conv.Turns {
			if turn.AgentResponse != "" {
				said = append(said, turn.AgentResponse)
			}
		}
		c.textAt(pos, t.Responses, label{key: keyConversation + ".turns.responses", subject: "the recorded agent text"}, "text", strings.Join(said, "\n"))
	}
	if t.Intents == nil {
		return
	}
	// An intents check without a position of its own fails at the
	// turns check's, not at the conversation's.
	ipos := cmp.Or(t.Intents.Pos, pos)
	includes := c.names(whole(ipos), keyConversation+".turns.intents.includes", "", t.Intents.Includes)
	excludes := c.names(whole(ipos), keyConversation+".turns.intents.excludes", "", t.Intents.Excludes)
	found := map[string]bool{}
	var all []string
	for _, turn := range conv.Turns {
		for _, in := range turn.Intents {
			if !found[in] {
				found[in] = true
				all = append(all, in)
			}
		}
	}
	for _, in := range includes {
		if !found[in] {
			c.fail(Failure{Pos: ipos, Key: keyConversation + ".turns.intents.includes", Message: fmt.Sprintf("intent %q was found in no turn", in),
				Expected: "includes " + in, Actual: joinList(all)})
		}
	}
	for _, in := range excludes {
		if found[in] {
			c.fail(Failure{Pos: ipos, Key: keyConversation + ".turns.intents.excludes", Message: fmt.Sprintf("excluded intent %q was found in a turn", in),
				Expected: "excludes " + in, Actual: joinList(all)})
		}
	}
}

// prefix puts the confirmation prefix before keys made by the reply
// checks (metrics.X becomes confirm.conversation.metrics.X).
func prefix(fails []Failure, p string) {
	for i := range fails {
		fails[i].Key = p + "." + fails[i].Key
	}
}

func sortFailures(fails []Failure) {
	if len(fails) > 1 {
		sort.SliceStable(fails, func(i, j int) bool { return fails[i].Pos.Before(fails[j].Pos) })
	}
}
