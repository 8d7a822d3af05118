package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

// ConversationPage is one page of a conversations list.
type ConversationPage struct {
	Conversations []reply.Conversation
	// NextOffset is set when more results remain (offset pagination).
	NextOffset *int
	// Cursor is the v2/v3 cursor of the next page; "" at the end.
	Cursor string
	// Descriptions is the v1 description of the response keys.
	Descriptions map[string]any
}

// More reports whether another page exists.
func (p *ConversationPage) More() bool { return p.Cursor != "" || p.NextOffset != nil }

// Next returns q asking for the page after p, and false when p is the
// last. The cursor wins, as the reference has it when both are sent;
// without one, next_offset pages on: the reference gives v3 both, and a
// v3 list that pages by offset alone (as v2 does without streaming) would
// otherwise end at its first page. A next_offset that does not move past
// q's offset, or that follows an empty page, ends the list: a platform
// that sends one on its last page too would otherwise be read again and
// again. So does a cursor that is the one q sent: a platform whose cursor
// holds its place at the end of the list, as a stream's position does,
// rather than turning null, would otherwise be read again until the
// search's page bound and blamed for a list too long to search.
func (p *ConversationPage) Next(q ListQuery) (ListQuery, bool) {
	switch {
	case p.Cursor != "" && p.Cursor == q.Cursor:
		return q, false
	case p.Cursor != "":
		q.Cursor = p.Cursor
	case p.NextOffset != nil && *p.NextOffset > q.Offset && len(p.Conversations) > 0:
		q.Cursor, q.Offset = "", *p.NextOffset
	default:
		return q, false
	}
	return q, true
}

// ListQuery holds every query parameter of the conversations list. Zero
// values are left out of the request, so the server defaults apply.
type ListQuery struct {
	// Version selects the list endpoint: 3 (default) or 2, which share the
	// schema. v2 returns cursors only for a project with chunked streaming
	// (reference, Versioning); page it by Offset otherwise. Version 1 has
	// its own method, ListConversationsV1.
	Version int
	// QueryType is transcript or semantic; it needs Query, StartTime and
	// EndTime, and excludes Sample.
	QueryType string
	// Sample is random; it needs StartTime and EndTime.
	Sample string
	// Query is the search text of QueryType.
	Query string
	// TurnType is user or agent (transcript search only).
	TurnType string
	// Channels filters by channel; each is sent as its own channel
	// parameter.
	Channels []string
	// ClientEnv is sandbox, pre-release or live (server default live).
	ClientEnv string
	// StartTime and EndTime bound the conversations' start. They are
	// sent in whole seconds (queryTime), StartTime rounded down and
	// EndTime up, so the range sent holds the one asked for.
	StartTime time.Time
	EndTime   time.Time
	// Limit is 1 to 1000 (v2/v3) or 1 to 5000 (v1); 0 leaves the server
	// default.
	Limit int
	// Offset is the first result (offset pagination).
	Offset int
	// Cursor is the cursor returned by the previous page; it wins over
	// Offset on the server.
	Cursor      string
	VariantID   string
	VariantName string
	// InProgress nil lists all; false finished only; true in progress
	// only.
	InProgress *bool
	// IncludeLatency adds per-turn latency.
	IncludeLatency bool
	// IncludeTurnMetadata adds generative-AI metadata per turn.
	IncludeTurnMetadata bool
	// Extra carries parameters the reference names without a type (such
	// as include_context_state), sent as given.
	Extra url.Values
}

var (
	queryTypes = map[string]bool{"transcript": true, "semantic": true}
	turnTypes  = map[string]bool{"user": true, "agent": true}
)

// Validate checks the rules the reference states for the parameters, so a
// bad query fails before the network with a message naming the parameter.
// v1 is true for the legacy list, which has no retrieval modes or cursor.
func (q ListQuery) validate(v1 bool) error {
	var errs []error
	if v1 {
		if q.QueryType != "" || q.Sample != "" || q.Query != "" || q.TurnType != "" || q.Cursor != "" ||
			len(q.Channels) > 0 || q.IncludeLatency || q.IncludeTurnMetadata {
			errs = append(errs, errors.New("the v1 list takes only client_env, start_time, end_time, limit, offset, variant_id, variant_name and in_progress"))
		}
	} else {
		if q.Version != 0 && q.Version != 2 && q.Version != 3 {
			errs = append(errs, fmt.Errorf("version %d: the list has versions 2 and 3 here; use ListConversationsV1 for v1", q.Version))
		}
		if q.QueryType != "" && !queryTypes[q.QueryType] {
			errs = append(errs, fmt.Errorf("query_type %q: must be transcript or semantic", q.QueryType))
		}
		if q.Sample != "" && q.Sample != "random" {
			errs = append(errs, fmt.Errorf("sample %q: must be random", q.Sample))
		}
		if q.QueryType != "" && q.Sample != "" {
			errs = append(errs, errors.New("query_type and sample are mutually exclusive"))
		}
		if q.QueryType != "" && q.Query == "" {
			errs = append(errs, errors.New("query_type needs query"))
		}
		if q.Sample != "" && q.Query != "" {
			errs = append(errs, errors.New("sample takes no query"))
		}
		if (q.QueryType != "" || q.Sample != "") && (q.StartTime.IsZero() || q.EndTime.IsZero()) {
			errs = append(errs, errors.New("query_type and sample need start_time and end_time"))
		}
		if q.TurnType != "" && !turnTypes[q.TurnType] {
			errs = append(errs, fmt.Errorf("turn_type %q: must be user or agent", q.TurnType))
		}
	}
	if q.ClientEnv != "" && !reply.ValidEnv(q.ClientEnv) {
		errs = append(errs, fmt.Errorf("client_env %q: must be sandbox, pre-release or live", q.ClientEnv))
	}
	maxLimit := 1000
	if v1 {
		maxLimit = 5000
	}
	if q.Limit < 0 || q.Limit > maxLimit {
		errs = append(errs, fmt.Errorf("limit %d: must be 1 to %d", q.Limit, maxLimit))
	}
	if q.Offset < 0 {
		errs = append(errs, fmt.Errorf("offset %d: must not be negative", q.Offset))
	}
	if q.VariantID != "" && q.VariantName != "" {
		errs = append(errs, errors.New("variant_id and variant_name are mutually exclusive"))
	}
	return errors.Join(errs...)
}

// values renders the query. url.Values encodes spaces as '+', which
// servers read as a space in a query, like the %20 the reference mentions.
func (q ListQuery) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("query_type", q.QueryType)
	set("sample", q.Sample)
	set("query", q.Query)
	set("turn_type", q.TurnType)
	for _, ch := range q.Channels {
		v.Add("channel", ch)
	}
	set("client_env", q.ClientEnv)
	if !q.StartTime.IsZero() {
		v.Set("start_time", queryTime(q.StartTime))
	}
	if !q.EndTime.IsZero() {
		end := q.EndTime.Truncate(time.Second)
		if end.Before(q.EndTime) {
			end = end.Add(time.Second)
		}
		v.Set("end_time", queryTime(end))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	set("cursor", q.Cursor)
	set("variant_id", q.VariantID)
	set("variant_name", q.VariantName)
	if q.InProgress != nil {
		v.Set("in_progress", strconv.FormatBool(*q.InProgress))
	}
	if q.IncludeLatency {
		v.Set("include_latency", "true")
	}
	if q.IncludeTurnMetadata {
		v.Set("include_turn_metadata", "true")
	}
	for k, vals := range q.Extra {
		for _, s := range vals {
			v.Add(k, s)
		}
	}
	return v
}

// queryTime writes a date-time parameter as RFC 3339 in UTC, in whole
// seconds (the fraction cut off: rounded down). The reference says only "date-time", which RFC 3339 lets carry
// any number of digits of fraction; the servers of other implementations
// do not all read them: pydantic (FastAPI) refuses more than 6 (422,
// "second fraction value is more than 6 digits long"), and a strptime
// pattern without %f any at all. The wall clock's nanoseconds, sent as
// the probes' search bound, got such a platform's 422 and errored every
// probe whose conversation it did not name.
func queryTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// ListConversations reads one page of conversations of projectID (v3, or
// v2 with q.Version 2).
func (c *Client) ListConversations(ctx context.Context, projectID string, q ListQuery) (*ConversationPage, error) {
	ep, version := epListV3, "v3"
	if q.Version == 2 {
		ep, version = epListV2, "v2"
	}
	if err := q.validate(false); err != nil {
		return nil, fmt.Errorf("list conversations of %s: %w", projectID, err)
	}
	return c.list(ctx, ep, version, projectID, q, false)
}

// ListConversationsV1 reads one page of the legacy v1 list (offset
// pagination; possibly only id, started_at, account_id and project_id when
// field whitelisting is on).
func (c *Client) ListConversationsV1(ctx context.Context, projectID string, q ListQuery) (*ConversationPage, error) {
	if err := q.validate(true); err != nil {
		return nil, fmt.Errorf("list v1 conversations of %s: %w", projectID, err)
	}
	return c.list(ctx, epListV1, "v1", projectID, q, true)
}

func (c *Client) runtimePath(projectID string, rest ...string) (string, error) {
	if c.cfg.AccountID == "" {
		return "", errors.New("the account id is not configured")
	}
	if projectID == "" {
		return "", errors.New("project id is empty")
	}
	return buildPath(append([]string{c.cfg.AccountID, projectID}, rest...)...), nil
}

func (c *Client) list(ctx context.Context, ep endpoint, version, projectID string, q ListQuery, v1 bool) (*ConversationPage, error) {
	p, err := c.runtimePath(projectID, "conversations")
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	rq := &call{ep: ep, path: "/" + version + p, query: q.values()}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	var w wireList
	if err := json.Unmarshal(resp.body(), &w); err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), describeDecodeError(err))
	}
	if !w.Conversations.Set {
		return nil, c.responseError(rq, resp.status, resp.body(), missing("", []string{"conversations"}))
	}
	page := &ConversationPage{
		Conversations: make([]reply.Conversation, len(w.Conversations.V)),
		Cursor:        w.Cursor.V,
		Descriptions:  w.Descriptions.V,
	}
	if w.NextOffset.Set && w.NextOffset.V > 0 {
		n := w.NextOffset.V
		page.NextOffset = &n
	}
	for i := range w.Conversations.V {
		conv, err := w.Conversations.V[i].convert(v1)
		if err != nil {
			return nil, c.responseError(rq, resp.status, resp.body(), fmt.Errorf("conversations[%d]: %w", i, err))
		}
		page.Conversations[i] = conv
	}
	return page, nil
}

// GetConversation reads one conversation, with its turns.
func (c *Client) GetConversation(ctx context.Context, projectID, conversationID string) (*reply.Conversation, error) {
	if conversationID == "" {
		return nil, errors.New("get conversation: conversation id is empty")
	}
	p, err := c.runtimePath(projectID, "conversations", conversationID)
	if err != nil {
		return nil, fmt.Errorf("get conversation %s: %w", conversationID, err)
	}
	rq := &call{ep: epConv, path: "/v3" + p}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	var w wireConversation
	if err := json.Unmarshal(resp.body(), &w); err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), describeDecodeError(err))
	}
	conv, err := w.convert(false)
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	if conv.ID != conversationID {
		// Checked, it would pass or fail a case on someone else's
		// conversation (as a debug-chat result would, chat.go).
		return nil, c.responseError(rq, resp.status, resp.body(), aboutAnother("id", conv.ID, "conversation", conversationID))
	}
	return &conv, nil
}

// ConversationAudio reads the recording of a voice conversation and its
// content type (not shown by the reference; whatever the server sends).
// Chat conversations have no recording: the platform answers 404
// (IsNotFound).
func (c *Client) ConversationAudio(ctx context.Context, projectID, conversationID string) ([]byte, string, error) {
	rq, err := c.audioCall(conversationID, projectID)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, "", err
	}
	audio := make([]byte, len(resp.body()))
	copy(audio, resp.body())
	resp.release()
	return audio, c.audioType(resp), nil
}

// audioType is a recording's content type as reports show it: server
// text like any other, which may echo a key (masked before it is cut,
// so no piece of one is left) and be as long as a header may be (cut to
// one line, its controls escaped).
func (c *Client) audioType(resp response) string {
	return oneLine(c.red.String(resp.header.Get("Content-Type")))
}

// ConversationAudioSize reads the recording of a voice conversation as
// ConversationAudio does, keeping only its length in bytes and its
// content type: a check that a recording exists needs no more, and a
// recording of up to the client's limit for recordings then costs no
// memory. The length is what arrived, never the Content-Length the
// server announced. The reference shows GET alone for recordings, so it
// is not asked with HEAD or a Range.
func (c *Client) ConversationAudioSize(ctx context.Context, projectID, conversationID string) (int64, string, error) {
	rq, err := c.audioCall(conversationID, projectID)
	if err != nil {
		return 0, "", err
	}
	rq.count = true
	resp, err := c.do(ctx, rq)
	if err != nil {
		return 0, "", err
	}
	return resp.size, c.audioType(resp), nil
}

// audioCall is the call that reads a conversation's recording.
func (c *Client) audioCall(conversationID, projectID string) (*call, error) {
	if conversationID == "" {
		return nil, errors.New("get conversation audio: conversation id is empty")
	}
	p, err := c.runtimePath(projectID, "conversations", conversationID, "audio")
	if err != nil {
		return nil, fmt.Errorf("get audio of %s: %w", conversationID, err)
	}
	return &call{ep: epAudio, path: "/v3" + p, accept: "*/*", limit: c.cfg.MaxAudioBytes, binary: true}, nil
}

// HandoffState reads the handoff context of a conversation, by conversation
// id or by the integrator's shared id (the server prefers shared_id when
// both are given).
func (c *Client) HandoffState(ctx context.Context, projectID, conversationID, sharedID string) (*reply.HandoffState, error) {
	if conversationID == "" && sharedID == "" {
		return nil, errors.New("get handoff state: a conversation id or a shared id is required")
	}
	p, err := c.runtimePath(projectID, "handoff_state")
	if err != nil {
		return nil, fmt.Errorf("get handoff state: %w", err)
	}
	q := url.Values{}
	if conversationID != "" {
		q.Set("id", conversationID)
	}
	if sharedID != "" {
		q.Set("shared_id", sharedID)
	}
	rq := &call{ep: epHandoff, path: "/v1" + p, query: q}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	var w struct {
		ID       jString `json:"id"`
		SharedID jString `json:"shared_id"`
		Data     jObject `json:"data"`
	}
	if err := json.Unmarshal(resp.body(), &w); err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), describeDecodeError(err))
	}
	if !w.ID.Set && !w.SharedID.Set && !w.Data.Set {
		return nil, c.responseError(rq, resp.status, resp.body(), missing("", []string{"id", "data"}))
	}
	// A record that names another conversation (or shared id) than the
	// one asked for is someone else's handoff; one that names none is
	// taken to be the one asked for.
	switch {
	case sharedID != "" && w.SharedID.V != "" && w.SharedID.V != sharedID:
		return nil, c.responseError(rq, resp.status, resp.body(), aboutAnother("shared_id", w.SharedID.V, "shared id", sharedID))
	case sharedID == "" && w.ID.V != "" && w.ID.V != conversationID:
		return nil, c.responseError(rq, resp.status, resp.body(), aboutAnother("id", w.ID.V, "conversation", conversationID))
	}
	return &reply.HandoffState{ID: w.ID.V, SharedID: w.SharedID.V, Data: w.Data.V}, nil
}

// wireList is the list envelope as sent.
type wireList struct {
	Conversations wireConversations `json:"conversations"`
	NextOffset    jInt              `json:"next_offset"`
	Cursor        jString           `json:"cursor"`
	Descriptions  jObject           `json:"descriptions"`
}

type wireConversations struct {
	V   []wireConversation
	Set bool
}

func (w *wireConversations) UnmarshalJSON(b []byte) error {
	w.Set = true
	if b[0] == 'n' {
		w.V = nil
		return nil
	}
	return json.Unmarshal(b, &w.V)
}

// wireConversation is the Conversation summary as sent.
type wireConversation struct {
	ID                 jString        `json:"id"`
	AccountID          jString        `json:"account_id"`
	ProjectID          jString        `json:"project_id"`
	VariantID          jString        `json:"variant_id"`
	VariantName        jString        `json:"variant_name"`
	Environment        jString        `json:"environment"`
	StartedAt          jTime          `json:"started_at"`
	Channel            jString        `json:"channel"`
	FromNumber         jString        `json:"from_number"`
	ToNumber           jString        `json:"to_number"`
	InProgress         jBool          `json:"in_progress"`
	NumTurns           jInt           `json:"num_turns"`
	TotalDuration      jInt           `json:"total_duration"`
	VendorDuration     jInt           `json:"vendor_duration"`
	Handoff            jBool          `json:"handoff"`
	HandoffReason      jString        `json:"handoff_reason"`
	HandoffDestination jString        `json:"handoff_destination"`
	NumSilences        jInt           `json:"num_silences"`
	NumOOD             jInt           `json:"num_ood"`
	Metrics            jMetrics       `json:"metrics"`
	State              jObject        `json:"state"`
	Turns              []wireConvTurn `json:"turns"`
}

// whitelisted reports whether the record holds exactly the members v1's
// field whitelisting keeps (id, started_at, account_id, project_id).
func (w *wireConversation) whitelisted() bool {
	kept := w.ID.Set && w.AccountID.Set && w.ProjectID.Set && w.StartedAt.Set
	other := w.VariantID.Set || w.VariantName.Set || w.Environment.Set || w.Channel.Set || w.FromNumber.Set || w.ToNumber.Set ||
		w.InProgress.Set || w.NumTurns.Set || w.TotalDuration.Set || w.VendorDuration.Set || w.Handoff.Set || w.HandoffReason.Set ||
		w.HandoffDestination.Set || w.NumSilences.Set || w.NumOOD.Set || w.Metrics != nil || w.State.Set || w.Turns != nil
	return kept && !other
}

type wireConvTurn struct {
	UserInput            jString               `json:"user_input"`
	UserInputDTMF        jString               `json:"user_input_dtmf"`
	UserInputAt          jTime                 `json:"user_input_datetime"`
	AgentResponse        jString               `json:"agent_response"`
	AgentResponseAt      jTime                 `json:"agent_response_datetime"`
	Latency              jFloat                `json:"latency"`
	TranslatedUserInput  jString               `json:"translated_user_input"`
	EnglishAgentResponse jString               `json:"english_agent_response"`
	Intents              jStrings              `json:"intents"`
	Entities             []map[string]jStrings `json:"entities"`
	IsOOD                jBool                 `json:"is_ood"`
	IsSilence            jBool                 `json:"is_silence"`
	BargeIn              jBool                 `json:"barge_in"`
}

// convert checks the required members and builds the Conversation. v1
// requires only the members v1 field whitelisting keeps.
func (w *wireConversation) convert(v1 bool) (reply.Conversation, error) {
	// v3 sends empty strings, never null (the reference's Versioning):
	// a required member sent as null is malformed, whatever its type.
	req := []member{
		{"id", w.ID.Set, w.ID.Null},
		{"account_id", w.AccountID.Set, w.AccountID.Null},
		{"project_id", w.ProjectID.Set, w.ProjectID.Null},
		{"started_at", w.StartedAt.Set, w.StartedAt.Null},
	}
	if !v1 {
		req = append(req,
			member{"environment", w.Environment.Set, w.Environment.Null},
			member{"channel", w.Channel.Set, w.Channel.Null},
			member{"in_progress", w.InProgress.Set, w.InProgress.Null})
	}
	where := ""
	if w.ID.V != "" {
		where = "conversation " + strconv.Quote(w.ID.V)
	}
	if err := required(where, req); err != nil {
		if !v1 && w.whitelisted() {
			// The record is what v1 sends with field whitelisting on:
			// the project's setting, not a record cut short at random.
			err = fmt.Errorf("%w: it holds only id, account_id, project_id and started_at, the fields the reference's v1 keeps when the project's field whitelisting is on, where a v3 record holds every required field (check the project's field whitelisting)", err)
		}
		return reply.Conversation{}, err
	}
	if w.ID.V == "" {
		return reply.Conversation{}, errors.New(`field "id" is empty`)
	}
	conv := reply.Conversation{
		ID:                 w.ID.V,
		AccountID:          w.AccountID.V,
		ProjectID:          w.ProjectID.V,
		VariantID:          w.VariantID.V,
		VariantName:        w.VariantName.V,
		Environment:        w.Environment.V,
		StartedAt:          w.StartedAt.V,
		Channel:            w.Channel.V,
		FromNumber:         w.FromNumber.V,
		ToNumber:           w.ToNumber.V,
		InProgress:         w.InProgress.V,
		NumTurns:           w.NumTurns.V,
		TotalDuration:      w.TotalDuration.V,
		VendorDuration:     w.VendorDuration.V,
		Handoff:            w.Handoff.V,
		HandoffReason:      w.HandoffReason.V,
		HandoffDestination: w.HandoffDestination.V,
		NumSilences:        w.NumSilences.V,
		NumOOD:             w.NumOOD.V,
		State:              w.State.V,
	}
	if len(w.Metrics) > 0 {
		conv.Metrics = make(map[string][]string, len(w.Metrics))
		for k, v := range w.Metrics {
			if v.V != nil {
				conv.Metrics[k] = v.V
			}
		}
	}
	if len(w.Turns) > 0 {
		conv.Turns = make([]reply.ConversationTurn, len(w.Turns))
		for i := range w.Turns {
			conv.Turns[i] = w.Turns[i].convert()
		}
	}
	return conv, nil
}

func (w *wireConvTurn) convert() reply.ConversationTurn {
	t := reply.ConversationTurn{
		UserInput:            w.UserInput.V,
		UserInputDTMF:        w.UserInputDTMF.V,
		UserInputAt:          w.UserInputAt.V,
		AgentResponse:        w.AgentResponse.V,
		AgentResponseAt:      w.AgentResponseAt.V,
		Latency:              w.Latency.V,
		TranslatedUserInput:  w.TranslatedUserInput.V,
		EnglishAgentResponse: w.EnglishAgentResponse.V,
		Intents:              w.Intents.V,
		IsOOD:                w.IsOOD.V,
		IsSilence:            w.IsSilence.V,
		BargeIn:              w.BargeIn.V,
	}
	if len(w.Entities) > 0 {
		t.Entities = make([]map[string][]string, 0, len(w.Entities))
		for _, e := range w.Entities {
			if e == nil {
				continue
			}
			m := make(map[string][]string, len(e))
			for k, v := range e {
				m[k] = v.V
			}
			t.Entities = append(t.Entities, m)
		}
	}
	return t
}
