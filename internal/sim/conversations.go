package sim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// listQuery is a parsed and validated list request.
type listQuery struct {
	version      int
	queryType    string // "", "transcript", "semantic"
	sample       string // "", "random"
	query        string
	turnType     string // "", "user", "agent"
	channels     []string
	env          string
	start, end   time.Time
	limit        int
	offset       int
	cursor       *cursor
	variantID    string
	variantName  string
	inProgress   *bool
	latency      bool
	turnMetadata bool
}

// cursor is the decoded form of the opaque cursor: a keyset position in
// time order (T, ID) or an offset into a ranking (O).
type cursor struct {
	T  *int64 `json:"t,omitempty"`
	ID string `json:"id,omitempty"`
	O  *int   `json:"o,omitempty"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("malformed cursor %q", s)
	}
	var c cursor
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("malformed cursor %q", s)
	}
	keyset := c.T != nil && c.ID != ""
	ranked := c.O != nil && *c.O >= 0
	if keyset == ranked || (c.O != nil && c.T != nil) {
		return nil, fmt.Errorf("malformed cursor %q", s)
	}
	return &c, nil
}

// queryError is a 400 with its message.
type queryError struct {
	status int
	msg    string
}

func badQuery(format string, args ...any) *queryError {
	return &queryError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// parseList validates the query string of a list request. v1 takes only
// its own parameters and ignores the v3-only ones, as an older pipeline would.
func parseList(version int, v url.Values) (*listQuery, *queryError) {
	q := &listQuery{version: version, env: "live", limit: v3DefaultLimit}
	maxLimit := v3MaxLimit
	if version == 1 {
		q.limit, maxLimit = v1DefaultLimit, v1MaxLimit
	}
	one := func(name string) (string, bool, *queryError) {
		vals, ok := v[name]
		if !ok {
			return "", false, nil
		}
		if len(vals) > 1 {
			return "", false, badQuery("parameter %s given %d times; it takes one value", name, len(vals))
		}
		return vals[0], true, nil
	}
	var qe *queryError
	str := func(name string) string {
		s, _, err := one(name)
		if err != nil && qe == nil {
			qe = err
		}
		return s
	}
	boolean := func(name string) *bool {
		s, ok, err := one(name)
		if err != nil {
			qe = cmpErr(qe, err)
			return nil
		}
		if !ok {
			return nil
		}
		b, perr := strconv.ParseBool(s)
		if perr != nil {
			qe = cmpErr(qe, badQuery("parameter %s=%q is not a boolean", name, s))
			return nil
		}
		return &b
	}
	integer := func(name string, min, max int, def int) int {
		s, ok, err := one(name)
		if err != nil {
			qe = cmpErr(qe, err)
			return def
		}
		if !ok {
			return def
		}
		n, perr := strconv.Atoi(s)
		if perr != nil || n < min || n > max {
			if max == int(^uint(0)>>1) {
				qe = cmpErr(qe, badQuery("parameter %s=%q must be an integer of at least %d", name, s, min))
			} else {
				qe = cmpErr(qe, badQuery("parameter %s=%q must be an integer from %d to %d", name, s, min, max))
			}
			return def
		}
		return n
	}
	timeParam := func(name string) time.Time {
		s := str(name)
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			qe = cmpErr(qe, badQuery("parameter %s=%q is not an ISO 8601 date-time", name, s))
		}
		return t
	}

	if env := str("client_env"); env != "" {
		if !validEnv(env) {
			qe = cmpErr(qe, badQuery("client_env %q is not one of %s", env, strings.Join(clientEnvs, ", ")))
		}
		q.env = env
	}
	q.start, q.end = timeParam("start_time"), timeParam("end_time")
	q.limit = integer("limit", 1, maxLimit, q.limit)
	q.offset = integer("offset", 0, int(^uint(0)>>1), 0)
	q.variantID, q.variantName = str("variant_id"), str("variant_name")
	if q.variantID != "" && q.variantName != "" {
		qe = cmpErr(qe, &queryError{statusConflictingParams, "variant_id and variant_name are mutually exclusive"})
	}
	q.inProgress = boolean("in_progress")
	if version == 1 {
		return q, qe
	}

	q.channels = v["channel"]
	if b := boolean("include_latency"); b != nil {
		q.latency = *b
	}
	if b := boolean("include_turn_metadata"); b != nil {
		q.turnMetadata = *b
	}
	if c := str("cursor"); c != "" {
		cur, err := decodeCursor(c)
		if err != nil {
			qe = cmpErr(qe, badQuery("%v", err))
		}
		q.cursor = cur
	}
	q.queryType, q.sample, q.query, q.turnType = str("query_type"), str("sample"), str("query"), str("turn_type")
	switch q.queryType {
	case "", "transcript", "semantic":
	default:
		qe = cmpErr(qe, badQuery("query_type %q is not one of transcript, semantic", q.queryType))
	}
	switch q.sample {
	case "", "random":
	default:
		qe = cmpErr(qe, badQuery("sample %q is not random", q.sample))
	}
	switch q.turnType {
	case "", "user", "agent":
	default:
		qe = cmpErr(qe, badQuery("turn_type %q is not one of user, agent", q.turnType))
	}
	switch {
	case q.queryType != "" && q.sample != "":
		qe = cmpErr(qe, &queryError{statusConflictingParams, "query_type and sample are mutually exclusive: one retrieval mode per request"})
	case q.queryType != "" && q.query == "":
		qe = cmpErr(qe, &queryError{statusConflictingParams, "query_type requires query"})
	case q.sample != "" && q.query != "":
		qe = cmpErr(qe, &queryError{statusConflictingParams, "sample does not take query"})
	case q.query != "" && q.queryType == "":
		qe = cmpErr(qe, &queryError{statusConflictingParams, "query requires query_type (transcript or semantic)"})
	}
	if q.turnType != "" && q.queryType != "transcript" {
		qe = cmpErr(qe, &queryError{statusConflictingParams, "turn_type applies to query_type=transcript only"})
	}
	if (q.queryType != "" || q.sample != "") && (q.start.IsZero() || q.end.IsZero()) {
		qe = cmpErr(qe, badQuery("start_time and end_time are required with query_type or sample"))
	}
	if q.cursor != nil {
		ranked := q.queryType == "semantic" || q.sample != ""
		if ranked != (q.cursor.O != nil) {
			qe = cmpErr(qe, badQuery("malformed cursor: it was not issued for this retrieval mode"))
		}
	}
	return q, qe
}

// cmpErr keeps the first error.
func cmpErr(first, next *queryError) *queryError {
	if first != nil {
		return first
	}
	return next
}

// keep filters on the immutable fields of a conversation.
func (q *listQuery) keep(c *Conversation) bool {
	if c.Environment != q.env {
		return false
	}
	if len(q.channels) > 0 && !slices.Contains(q.channels, c.Channel) {
		return false
	}
	if q.variantID != "" && c.VariantID != q.variantID {
		return false
	}
	if q.variantName != "" && c.VariantName != q.variantName {
		return false
	}
	if !q.start.IsZero() && c.StartedAt.Before(q.start) {
		return false
	}
	if !q.end.IsZero() && !c.StartedAt.Before(q.end) {
		return false
	}
	return true
}

// listEnvelope is the v2/v3 list response.
type listEnvelope struct {
	Conversations []conversationJSON `json:"conversations"`
	NextOffset    *int               `json:"next_offset,omitempty"`
	Cursor        *string            `json:"cursor"`
}

// v2OffsetEnvelope is the v2 list response of a project without chunked
// streaming: the reference's v2 supports cursors only with streaming (and
// its envelope table has cursor as "v3 only"), so it pages by offset.
type v2OffsetEnvelope struct {
	Conversations []conversationJSON `json:"conversations"`
	NextOffset    *int               `json:"next_offset,omitempty"`
}

// v1Envelope is the v1 list response.
type v1Envelope struct {
	Conversations []any          `json:"conversations"`
	Descriptions  map[string]any `json:"descriptions"`
	NextOffset    *int           `json:"next_offset,omitempty"`
}

func parseVersion(s string) (int, bool) {
	switch s {
	case "v1":
		return 1, true
	case "v2":
		return 2, true
	case "v3":
		return 3, true
	}
	return 0, false
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, k keyScope) {
	version, ok := parseVersion(r.PathValue("version"))
	if !ok {
		failStatus(w, http.StatusNotFound, fmt.Sprintf("unknown API version %q: want v1, v2 or v3", r.PathValue("version")))
		return
	}
	def, agentID := s.runtimeProject(w, r, k)
	if def == nil {
		return
	}
	q, qe := parseList(version, r.URL.Query())
	if qe != nil {
		failStatus(w, qe.status, qe.msg)
		return
	}
	project := s.opts.Projects[agentID]
	// v2 pages by cursor only when the project streams (reference,
	// Versioning 3); a cursor sent to it otherwise is refused rather
	// than ignored, which would answer the first page again.
	v2Offset := version == 2 && !project.Streaming
	if v2Offset && q.cursor != nil {
		failStatus(w, http.StatusBadRequest, "parameter cursor: v2 supports cursors only when chunked streaming is enabled for the project; page with offset and next_offset, or use v3")
		return
	}
	list := s.store.Select(agentID, q.keep)
	if q.inProgress != nil {
		want := *q.inProgress
		list = slices.DeleteFunc(list, func(c *Conversation) bool { return c.InProgress() != want })
	}

	if version == 1 {
		s.writeV1(w, list, q, project)
		return
	}

	var page []*Conversation
	var next *int
	var nextCursor *string
	switch {
	case q.queryType == "semantic":
		list = rankSemantic(list, q.query)
		page, next, nextCursor = pageRanked(list, q)
	case q.sample == "random":
		seed := hashString(r.URL.Query().Get("start_time") + "\x00" + r.URL.Query().Get("end_time") + "\x00" + agentID + "\x00" + q.env)
		rng := rand.New(rand.NewPCG(uint64(s.opts.Seed), seed))
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		page, next, nextCursor = pageRanked(list, q)
	default:
		if q.queryType == "transcript" {
			list = slices.DeleteFunc(list, func(c *Conversation) bool { return !transcriptMatch(c, q.query, q.turnType) })
		}
		sortDesc(list)
		page, next, nextCursor = pageByTime(list, q)
	}
	ro := renderOptions{latency: q.latency, turnMetadata: q.turnMetadata, project: project}
	env := listEnvelope{Conversations: make([]conversationJSON, len(page)), NextOffset: next, Cursor: nextCursor}
	for i, c := range page {
		env.Conversations[i] = render(c, ro)
	}
	if project.Streaming {
		writeChunked(w, env)
		return
	}
	if v2Offset {
		writeJSON(w, http.StatusOK, v2OffsetEnvelope{Conversations: env.Conversations, NextOffset: env.NextOffset})
		return
	}
	writeJSON(w, http.StatusOK, env)
}

// pageByTime pages a newest-first list by keyset cursor or offset; a
// cursor wins over offset.
func pageByTime(list []*Conversation, q *listQuery) ([]*Conversation, *int, *string) {
	start := min(q.offset, len(list))
	if c := q.cursor; c != nil {
		t := time.Unix(0, *c.T)
		pos := &Conversation{ID: c.ID, StartedAt: t}
		// list is descending: the first element strictly older than the
		// cursor position comes next.
		start = sortSearch(len(list), func(i int) bool { return list[i].less(pos) })
	}
	end := min(start+q.limit, len(list))
	page := list[start:end]
	if end >= len(list) {
		return page, nil, nil
	}
	last := page[len(page)-1]
	ns := last.StartedAt.UnixNano()
	cur := encodeCursor(cursor{T: &ns, ID: last.ID})
	return page, &end, &cur
}

// pageRanked pages a ranked list by offset (from the cursor or offset).
func pageRanked(list []*Conversation, q *listQuery) ([]*Conversation, *int, *string) {
	start := q.offset
	if q.cursor != nil {
		start = *q.cursor.O
	}
	start = min(start, len(list))
	end := min(start+q.limit, len(list))
	if end >= len(list) {
		return list[start:end], nil, nil
	}
	cur := encodeCursor(cursor{O: &end})
	return list[start:end], &end, &cur
}

func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if !f(h) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// v1Descriptions describes the response keys, as v1 does.
var v1Descriptions = map[string]any{
	"conversations": map[string]string{
		"id":                  "conversation id",
		"account_id":          "workspace id",
		"project_id":          "project (agent) id",
		"variant_id":          "variant id",
		"variant_name":        "variant name",
		"environment":         "live, sandbox or pre-release",
		"started_at":          "ISO 8601 start time",
		"channel":             "VOICE-SIP, WEBCHAT or CHAT",
		"from_number":         "caller number",
		"to_number":           "number of the agent",
		"in_progress":         "true while properties may still change",
		"num_turns":           "number of turns",
		"total_duration":      "seconds, whole call",
		"vendor_duration":     "seconds handled by the agent",
		"handoff":             "agent handed the call off",
		"handoff_reason":      "reason of the handoff",
		"handoff_destination": "destination of the handoff",
		"num_silences":        "turns without discernible input",
		"num_ood":             "turns with input the agent could not understand",
		"metrics":             "custom metric name to value",
		"state":               "dialogue state key to value",
		"turns":               "ordered turns",
	},
}

func (s *Server) writeV1(w http.ResponseWriter, list []*Conversation, q *listQuery, project ProjectOptions) {
	start := min(q.offset, len(list))
	end := min(start+q.limit, len(list))
	out := v1Envelope{Conversations: make([]any, 0, end-start), Descriptions: v1Descriptions}
	for _, c := range list[start:end] {
		if project.V1Whitelist {
			out.Conversations = append(out.Conversations, whitelisted(c))
		} else {
			out.Conversations = append(out.Conversations, render(c, renderOptions{project: project}))
		}
	}
	if end < len(list) {
		out.NextOffset = &end
	}
	writeJSON(w, http.StatusOK, out)
}

// writeChunked sends the list with chunked transfer encoding, flushing as
// it goes, for projects with response streaming enabled.
func writeChunked(w http.ResponseWriter, env listEnvelope) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_, _ = w.Write([]byte(`{"conversations":[`))
	for i, c := range env.Conversations {
		if i > 0 {
			_, _ = w.Write([]byte{','})
		}
		b, _ := json.Marshal(c)
		_, _ = w.Write(b)
		if i%100 == 99 {
			_ = rc.Flush()
		}
	}
	_, _ = w.Write([]byte{']'})
	if env.NextOffset != nil {
		fmt.Fprintf(w, `,"next_offset":%d`, *env.NextOffset)
	}
	b, _ := json.Marshal(env.Cursor)
	fmt.Fprintf(w, `,"cursor":%s}`+"\n", b)
	_ = rc.Flush()
}

// conversation resolves the conversation of a by-id path, writing 404 when
// it is unknown or belongs to another project.
func (s *Server) conversation(w http.ResponseWriter, r *http.Request, k keyScope) (*Conversation, ProjectOptions) {
	if _, ok := parseVersion(r.PathValue("version")); !ok {
		failStatus(w, http.StatusNotFound, fmt.Sprintf("unknown API version %q: want v1, v2 or v3", r.PathValue("version")))
		return nil, ProjectOptions{}
	}
	def, agentID := s.runtimeProject(w, r, k)
	if def == nil {
		return nil, ProjectOptions{}
	}
	id := r.PathValue("conversationId")
	c, ok := s.store.Get(id)
	if !ok || c.ProjectID != agentID {
		failStatus(w, http.StatusNotFound, fmt.Sprintf("conversation %q not found in project %q", id, agentID))
		return nil, ProjectOptions{}
	}
	return c, s.opts.Projects[agentID]
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, k keyScope) {
	c, project := s.conversation(w, r, k)
	if c == nil {
		return
	}
	v := r.URL.Query()
	ro := renderOptions{project: project}
	for name, dst := range map[string]*bool{"include_latency": &ro.latency, "include_turn_metadata": &ro.turnMetadata} {
		if s := v.Get(name); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				failStatus(w, http.StatusBadRequest, fmt.Sprintf("parameter %s=%q is not a boolean", name, s))
				return
			}
			*dst = b
		}
	}
	writeJSON(w, http.StatusOK, render(c, ro))
}

func (s *Server) handleAudio(w http.ResponseWriter, r *http.Request, k keyScope) {
	c, _ := s.conversation(w, r, k)
	if c == nil {
		return
	}
	if !isVoice(c.Channel) {
		failStatus(w, http.StatusNotFound, fmt.Sprintf("conversation %q has no recording: channel %s is not a voice channel", c.ID, c.Channel))
		return
	}
	wav := synthWAV(c)
	w.Header().Set("Content-Type", audioContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(wav)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(wav)
}

// handoffStateJSON is the reference's Handoff state record.
type handoffStateJSON struct {
	ID       string         `json:"id"`
	SharedID string         `json:"shared_id"`
	Data     map[string]any `json:"data"`
}

func (s *Server) handleHandoffState(w http.ResponseWriter, r *http.Request, k keyScope) {
	def, agentID := s.runtimeProject(w, r, k)
	if def == nil {
		return
	}
	v := r.URL.Query()
	id, sharedID := v.Get("id"), v.Get("shared_id")
	var c *Conversation
	var ok bool
	switch {
	case sharedID != "": // shared_id wins when both are sent
		c, ok = s.store.BySharedID(agentID, sharedID)
		if !ok {
			failStatus(w, http.StatusNotFound, fmt.Sprintf("no handoff state with shared_id %q", sharedID))
			return
		}
	case id != "":
		c, ok = s.store.Get(id)
		if !ok || c.ProjectID != agentID {
			failStatus(w, http.StatusNotFound, fmt.Sprintf("conversation %q not found in project %q", id, agentID))
			return
		}
	default:
		failStatus(w, http.StatusBadRequest, "one of id or shared_id is required")
		return
	}
	h := c.handoffSnapshot()
	if h == nil {
		failStatus(w, http.StatusNotFound, fmt.Sprintf("conversation %q has no handoff state", c.ID))
		return
	}
	data := h.Data
	if data == nil {
		data = map[string]any{}
	}
	writeJSON(w, http.StatusOK, handoffStateJSON{ID: c.ID, SharedID: h.SharedID, Data: data})
}
