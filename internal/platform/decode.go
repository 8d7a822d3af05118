package platform

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/reply"
)

// The j* types decode one JSON value tolerantly, the way the reference and
// other implementations of it differ: null where a string belongs, numbers
// sent as strings, a single string where an array of strings belongs. A
// value of a truly wrong type (an object where a string belongs) is still an
// error. Set records that the member was present, null included, so
// required members can be checked after decoding; Null that it was null,
// which a required member may not be (nullRequired).

type jString struct {
	V    string
	Set  bool
	Null bool
}

func (s *jString) UnmarshalJSON(b []byte) error {
	s.Set = true
	s.Null = b[0] == 'n'
	switch b[0] {
	case 'n':
		s.V = ""
	case '"':
		v, err := unquote(b)
		if err != nil {
			return err
		}
		s.V = v
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// An id sent as a number by another implementation.
		s.V = string(b)
	default:
		return typeError(b, reflect.TypeFor[string]())
	}
	return nil
}

// unquote decodes a JSON string literal, copying without the reflection
// of json.Unmarshal when it holds no escapes (the common case on the turn
// hot path).
func unquote(b []byte) (string, error) {
	inner := b[1 : len(b)-1]
	if strings.IndexByte(string(inner), '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

type jBool struct {
	V    bool
	Set  bool
	Null bool
}

func (v *jBool) UnmarshalJSON(b []byte) error {
	v.Set = true
	v.Null = b[0] == 'n'
	switch s := string(b); s {
	case "true", `"true"`, "1":
		v.V = true
	case "false", `"false"`, "0", "null", `""`:
		v.V = false
	default:
		return typeError(b, reflect.TypeFor[bool]())
	}
	return nil
}

type jInt struct {
	V   int
	Set bool
}

func (v *jInt) UnmarshalJSON(b []byte) error {
	v.Set = true
	s := string(b)
	switch {
	case s == "null":
		v.V = 0
		return nil
	case b[0] == '"':
		s = strings.TrimSpace(s[1 : len(s)-1])
		if s == "" {
			v.V = 0
			return nil
		}
	}
	if n, err := strconv.Atoi(s); err == nil {
		v.V = n
		return nil
	}
	// A whole number written as 12.0, or seconds with a fraction where
	// the reference says integer: keep the whole part.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > math.MaxInt32 {
		return typeError(b, reflect.TypeFor[int]())
	}
	v.V = int(f)
	return nil
}

type jFloat struct {
	V   float64
	Set bool
}

func (v *jFloat) UnmarshalJSON(b []byte) error {
	v.Set = true
	s := string(b)
	switch {
	case s == "null":
		v.V = 0
		return nil
	case b[0] == '"':
		s = strings.TrimSpace(s[1 : len(s)-1])
		if s == "" {
			v.V = 0
			return nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return typeError(b, reflect.TypeFor[float64]())
	}
	v.V = f
	return nil
}

// jTime reads an ISO 8601 date-time. The reference promises ISO 8601; the
// layouts below are the forms ISO 8601 producers actually emit (with or
// without zone, 'T' or space, a zone of hours only as PostgreSQL writes
// it, a decimal comma, no seconds). A number (or a string of one) is read
// as Unix time, in seconds or, when it is too large for seconds, in
// milliseconds: where the reference shows no format (the records of
// deployments, alerts, webhooks, calls), epoch times are as plausible as
// ISO 8601 ones.
type jTime struct {
	V    time.Time
	Set  bool
	Null bool
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
}

func (v *jTime) UnmarshalJSON(b []byte) error {
	v.Set = true
	v.Null = b[0] == 'n'
	switch b[0] {
	case 'n':
		v.V = time.Time{}
		return nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		t, err := parseEpoch(string(b))
		if err != nil {
			return err
		}
		v.V = t
		return nil
	case '"':
	default:
		return typeError(b, reflect.TypeFor[time.Time]())
	}
	s, err := unquote(b)
	if err != nil {
		return err
	}
	if s == "" {
		v.V = time.Time{}
		return nil
	}
	t, err := parseTime(s)
	if err != nil {
		return err
	}
	v.V = t
	return nil
}

// jWhen is jTime for a member that only informs (a deployment's creation
// time, which the reference does not show): a value it cannot read is no
// time rather than an error, so an unexpected format never fails the call
// that carries it.
type jWhen struct {
	V time.Time
}

func (v *jWhen) UnmarshalJSON(b []byte) error {
	var t jTime
	if t.UnmarshalJSON(b) == nil {
		v.V = t.V
	}
	return nil
}

// parseTime reads an ISO 8601 date-time (timeLayouts), or Unix time
// written as a string.
func parseTime(s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if t, err := parseEpoch(s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date-time", s)
}

// maxEpochSeconds is the largest number read as Unix seconds (the year
// 5138); larger ones are milliseconds, which reach it only in 1973.
const maxEpochSeconds = 1e11

// parseEpoch reads Unix time: seconds (with a fraction or not), or
// milliseconds when the number is too large for seconds.
func parseEpoch(s string) (time.Time, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if t, ok := epochTime(f); err == nil && ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date-time", s)
}

// epochTime is the Unix time f: seconds, or milliseconds when too large
// for seconds; false for a number that is neither (negative, NaN, Inf,
// too large).
func epochTime(f float64) (time.Time, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f >= maxEpochSeconds*1000 {
		return time.Time{}, false
	}
	if f >= maxEpochSeconds {
		f /= 1000
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), true
}

// jStrings reads an array of strings, or a single string as a one-element
// array (metric values are a string or an array of at least 2 strings).
type jStrings struct {
	V   []string
	Set bool
}

func (v *jStrings) UnmarshalJSON(b []byte) error {
	v.Set = true
	switch b[0] {
	case 'n':
		v.V = nil
		return nil
	case '[':
		var items []jString
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		v.V = make([]string, len(items))
		for i, it := range items {
			v.V[i] = it.V
		}
		return nil
	default:
		var s jString
		if err := s.UnmarshalJSON(b); err != nil {
			return typeError(b, reflect.TypeFor[jStrings]())
		}
		v.V = []string{s.V}
		return nil
	}
}

// jObject reads an object of arbitrary JSON values; null and an empty
// array (emptyArray) are nil.
type jObject struct {
	V   map[string]any
	Set bool
}

func (v *jObject) UnmarshalJSON(b []byte) error {
	v.Set = true
	switch {
	case b[0] == 'n' || emptyArray(b):
		v.V = nil
		return nil
	case b[0] == '{':
		v.V = nil
		return json.Unmarshal(b, &v.V)
	default:
		return typeError(b, reflect.TypeFor[map[string]any]())
	}
}

// jMetrics reads a record's metrics: metric name to a string or an array
// of strings; an empty array (emptyArray) is none.
type jMetrics map[string]jStrings

func (m *jMetrics) UnmarshalJSON(b []byte) error {
	if emptyArray(b) {
		*m = nil
		return nil
	}
	return json.Unmarshal(b, (*map[string]jStrings)(m))
}

// emptyArray reports whether b is an empty JSON array: an empty map as
// PHP's json_encode writes one, which an implementation of the
// reference's "metrics is empty" may send where an object belongs.
func emptyArray(b []byte) bool {
	return b[0] == '[' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// typeError reports a value of the wrong JSON type. encoding/json fills in
// the field path of an *UnmarshalTypeError, which describeDecodeError then
// renders.
func typeError(b []byte, t reflect.Type) error {
	return &json.UnmarshalTypeError{Value: jsonKind(b), Type: t}
}

func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// kindName says in JSON terms what a Go type expects (jsonkind.Of); a
// jStrings takes a string or an array of strings.
func kindName(t reflect.Type) string {
	if t == reflect.TypeFor[jStrings]() {
		return "a string or an array of strings"
	}
	return jsonkind.Of(t)
}

// describeDecodeError turns encoding/json errors into messages about the
// body rather than about Go types: `field "conversations.channel": expected
// a string, got object`.
func describeDecodeError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		field := te.Field
		if field == "" {
			return fmt.Errorf("expected %s, got %s", kindName(te.Type), te.Value)
		}
		return fmt.Errorf("field %q: expected %s, got %s", field, kindName(te.Type), te.Value)
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		if strings.Contains(se.Error(), "unexpected end") {
			return errors.New("truncated JSON")
		}
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return err
}

// sentTwice reports a member of the object body sent more than once with
// different values, under one of names or a spelling encoding/json takes
// for it (it matches keys case-insensitively). Decoding keeps the last,
// so a reply that says "response": "Hello" and then "response": "Bye"
// would be judged on one of two answers the platform gave at once:
// a contradictory reply is the platform's error, never a verdict on the
// agent. The same value twice says one thing, and is read. The reference
// is silent on duplicate members (JSON leaves them to the reader):
// docs/reliability.md, "Hostile platforms", says what agenttest does.
func sentTwice(body []byte, names []string) error {
	return membersTwice(body, "", func(key string) string {
		if i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, key) }); i >= 0 {
			return names[i]
		}
		return ""
	})
}

// metadataSentTwice is sentTwice's rule for a turn result's metadata
// object raw: a member the checks and reports read (reply.AcceptOf, the
// typed members, under the spelling received: Metadata reads keys as
// sent, so currentNode and current_node are two members, read in
// order) sent twice with different values, or a key of its state, is
// the platform's error: two currentNodes would pass or fail a node
// check on one of them, two keys of state a state check.
func metadataSentTwice(raw []byte) error {
	if err := membersTwice(raw, "metadata.", func(key string) string {
		if _, typed := reply.AcceptOf(key); typed {
			return key
		}
		return ""
	}); err != nil {
		return err
	}
	// Its state members, if any, say one thing by now; a state that
	// is no object has no members (a string holding one is left as
	// reply reads it).
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return membersTwice(m["state"], "metadata.state.", func(key string) string { return key })
}

// membersTwice is the rule of sentTwice over the members of the object
// body that name calls read ("" for one that is not), named in the error
// after prefix. body has been decoded already, as an object: its reading
// cannot fail, and were it to, More ends the loop.
func membersTwice(body []byte, prefix string, name func(key string) string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	_, _ = dec.Token() // {
	seen := map[string][]byte{}
	for dec.More() {
		t, _ := dec.Token()
		key, _ := t.(string)
		var v json.RawMessage
		_ = dec.Decode(&v)
		n := name(key)
		if n == "" {
			continue
		}
		// The same value in other white space says the same.
		var compact bytes.Buffer
		_ = json.Compact(&compact, v)
		if first, ok := seen[n]; ok && !bytes.Equal(first, compact.Bytes()) {
			return fmt.Errorf("field %q is sent twice, with different values", prefix+n)
		}
		seen[n] = compact.Bytes()
	}
	return nil
}

// missing builds the error for absent required members.
func missing(where string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	noun := "field"
	if len(names) > 1 {
		noun = "fields"
	}
	if where != "" {
		where += ": "
	}
	return fmt.Errorf("%smissing required %s %s", where, noun, strings.Join(quoted, ", "))
}

// member is a member of a body by name, with whether it was sent and
// whether it was null, for the checks of required members.
type member struct {
	name      string
	set, null bool
}

// required checks the members the reference requires: each must be
// present (missing) and, unless nullable, hold a value. A required
// member sent as null gives no value to judge: read as the empty value,
// a conversationEnded: null would fail the agent's "ended" check, a
// metadata: null its "node" check, a record's in_progress: null would
// read as settled. So it is the platform's malformed answer, named.
func required(where string, ms []member) error {
	var absent, null []string
	for _, m := range ms {
		switch {
		case !m.set:
			absent = append(absent, m.name)
		case m.null:
			null = append(null, m.name)
		}
	}
	if err := missing(where, absent); err != nil || len(null) == 0 {
		return err
	}
	quoted := make([]string, len(null))
	for i, n := range null {
		quoted[i] = strconv.Quote(n)
	}
	noun, verb := "field", "is"
	if len(null) > 1 {
		noun, verb = "fields", "are"
	}
	if where != "" {
		where += ": "
	}
	return fmt.Errorf("%srequired %s %s %s null, where the reference promises a value", where, noun, strings.Join(quoted, ", "), verb)
}

// The fast path of the debug-chat turn result.
//
// decodeTurn's general path decodes a body with encoding/json twice over:
// once into wireTurn (validating and skipping the metadata object) and again
// into the metadata map, four scans of the largest part of every reply, plus
// reflection. fastTurn reads the common shape (the reference's six members,
// metadata an object or null) in one pass without reflection, and gives up
// on anything else: an envelope, an error body, a member of the wrong type,
// a duplicate, invalid JSON. decodeTurn then takes the general path, so
// every tolerance and every error message stays exactly as that path has
// them; fastTurn only has to agree with it on the bodies it accepts.

// maxFastDepth bounds the nesting fastTurn follows, below encoding/json's
// own limit of 10000, so a pathological body falls back to encoding/json's
// error rather than deep recursion.
const maxFastDepth = 1000

// turnMembers are the wireTurn members fastTurn reads, by their exact names.
const (
	tmConversationID = iota
	tmUserInput
	tmResponse
	tmMetadata
	tmConversationEnded
	tmDelayedResponse
	tmCount
)

var turnMemberNames = [tmCount]string{"conversationId", "userInput", "response", "metadata", "conversationEnded", "delayedResponse"}

// turnMember returns the member of turnMemberNames named key, or -1,
// comparing key with the names of its length alone: fastTurn looks up
// every member of every reply.
func turnMember(key string) int {
	if len(key) < len(turnMembersByLen) {
		for _, m := range turnMembersByLen[len(key)] {
			if turnMemberNames[m] == key {
				return m
			}
		}
	}
	return -1
}

// turnMembersByLen are the members of turnMemberNames by the length of
// their names.
var turnMembersByLen = func() (byLen [18][]int) {
	for m, name := range turnMemberNames {
		byLen[len(name)] = append(byLen[len(name)], m)
	}
	return byLen
}()

// wireTurnNames are every member name wireTurn declares: a key that matches
// one of them only case-insensitively, or that fastTurn does not read
// (success, data, ...), sends the body to the general path.
var wireTurnNames = []string{
	"conversationId", "userInput", "response", "metadata", "conversationEnded", "delayedResponse",
	"success", "error_code", "error_message", "error", "data",
}

// fastTurn decodes body when it has the common shape; ok is false when the
// general path must decide. RawMetadata is a slice of body (capacity capped
// so appends cannot write into it), not a copy, and the conversation id,
// user input and reply text share body's memory when they need no
// unescaping: the body is kept with the result anyway, and is never
// written to (see Client.chat), so a large run holds one copy of each
// reply instead of two.
func fastTurn(body []byte) (res *reply.TurnResult, ok bool) {
	p := fastParser{b: body}
	p.ws()
	if !p.eat('{') {
		return nil, false
	}
	var (
		seen                        [tmCount]bool
		convID, userInput, response jString
		ended, delayed              jBool
		meta                        reply.Metadata
		rawMeta                     []byte
		deferred                    bool
		typedAt                     reply.TypedAt
		// plain stays true while every member has its own JSON type.
		plain = true
	)
	p.ws()
	if !p.eat('}') {
		for {
			p.ws()
			key, ok := p.key()
			if !ok {
				return nil, false
			}
			p.ws()
			if !p.eat(':') {
				return nil, false
			}
			p.ws()
			m := turnMember(key)
			if m < 0 {
				for _, n := range wireTurnNames {
					if strings.EqualFold(key, n) {
						return nil, false
					}
				}
			} else if seen[m] {
				return nil, false
			}
			start := p.i
			var text *jString
			switch m {
			case tmConversationID:
				text = &convID
			case tmUserInput:
				text = &userInput
			case tmResponse:
				text = &response
			}
			switch {
			case m == tmMetadata:
				switch {
				case p.peek('{'):
					// Checked in one scan, built when first read;
					// or else built now, for Check to decide.
					deferred = p.shallowMetadata(&typedAt)
					if !deferred {
						p.i = start
						v, ok := p.value(0)
						if !ok || p.again {
							// A key twice: metadataSentTwice,
							// on the general path, decides.
							return nil, false
						}
						meta = reply.Metadata(v.(map[string]any))
					}
					rawMeta = body[start:p.i:p.i]
				default:
					// null (required: the general path's
					// error), or another type.
					return nil, false
				}
			case text != nil && p.peek('"'):
				// One scan of the literal: a plain one shares the
				// body's memory, any other is read as
				// unmarshalShared reads it.
				end, slow, ok := p.stringEnd()
				if !ok {
					return nil, false
				}
				lit := body[start:end]
				p.i = end
				if !slow {
					*text = jString{V: plainString(lit), Set: true}
				} else if text.unmarshalShared(lit) != nil {
					return nil, false
				}
			case !p.skip(0):
				return nil, false
			case text != nil:
				// Another type, tolerated (a number as an id) or not.
				plain = false
				if text.UnmarshalJSON(body[start:p.i]) != nil {
					return nil, false
				}
			case m == tmConversationEnded || m == tmDelayedResponse:
				span := body[start:p.i]
				if span[0] == 'n' {
					return nil, false // required: the general path's error
				}
				plain = plain && (span[0] == 't' || span[0] == 'f')
				flag := &ended
				if m == tmDelayedResponse {
					flag = &delayed
				}
				if flag.UnmarshalJSON(span) != nil {
					return nil, false
				}
			}
			if m >= 0 {
				seen[m] = true
			}
			p.ws()
			if p.eat('}') {
				break
			}
			if !p.eat(',') {
				return nil, false
			}
		}
	}
	p.ws()
	if p.i != len(body) || seen != [tmCount]bool{true, true, true, true, true, true} || convID.V == "" {
		return nil, false
	}
	switch {
	case deferred:
		res = reply.Deferred(rawMeta, typedAt, decodeMetadata)
	case meta.Check() != nil:
		return nil, false // the general path's error
	default:
		res = (&reply.TurnResult{}).SetMetadata(meta)
	}
	res.ConversationID, res.UserInput, res.Response = convID.V, userInput.V, response.V
	res.ConversationEnded, res.DelayedResponse = ended.V, delayed.V
	res.RawMetadata, res.Plain = rawMeta, plain
	return res, true
}

// decodeMetadata builds the metadata object raw, which shallowMetadata
// accepted: every member, or with spellings only those received under
// one of them, read from the keys shallowMetadata met (at) when it could
// keep them all (reply.Deferred).
func decodeMetadata(raw []byte, spellings []string, at *reply.TypedAt) reply.Metadata {
	p := fastParser{b: raw}
	if spellings != nil {
		var buf [8]uint16
		if offs, ok := at.OffsetsOf(spellings[0], buf[:0]); ok {
			m, _ := p.members(offs)
			return reply.Metadata(m)
		}
	}
	m, _ := p.object(0, spellings)
	return reply.Metadata(m)
}

// shallowMetadata reads the metadata object at p.i as value would, without
// building it, and reports whether Check accepts it by the JSON types of
// its typed members alone (reply.AcceptOf): most turns' checks read only
// the reply's text, so the map need not be built for them. It records
// where each typed member's key starts in the object in at, for reading
// one member later without reading the others. On false, value and Check
// decide (p.i is then anywhere in the object), as for a typed member
// met twice under one spelling, or a key of state met twice or one that
// may be: value marks them (again), and the general path decides
// whether the platform said two things at once (metadataSentTwice).
func (p *fastParser) shallowMetadata(at *reply.TypedAt) bool {
	start := p.i
	p.i++ // {
	p.ws()
	if p.eat('}') {
		return true
	}
	var met uint64 // the typed spellings met (reply.Accept.Bit)
	for {
		p.ws()
		keyAt := p.i
		k, ok := p.key()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		a, typed := reply.AcceptOf(k)
		if typed {
			if met&a.Bit() != 0 {
				return false
			}
			met |= a.Bit()
			at.Add(keyAt-start, a)
			if k == "state" && p.peek('{') {
				if !p.distinctKeys() {
					return false
				}
			} else if !p.accepted(a.Value, a.Items, 1) {
				return false
			}
		} else if !p.skip(1) {
			return false
		}
		if done, ok := p.afterMember(); done || !ok {
			return done
		}
	}
}

// afterMember reads what follows a member of an object: its end (done),
// or a comma before the next member (ok).
func (p *fastParser) afterMember() (done, ok bool) {
	p.ws()
	if p.eat('}') {
		return true, true
	}
	return false, p.eat(',')
}

// distinctKeys skips the object at p.i (state, in metadata) as skip
// does, and reports false when it holds a key twice, or one that may
// spell another (an escape, broken UTF-8), or is not one skip reads:
// shallowMetadata leaves them to value. A key is compared
// with the keys before it only when its bit in a set of their bits (a
// hash of the key) is taken: a state holds a few keys, read once.
func (p *fastParser) distinctKeys() bool {
	from := p.i
	p.i++ // {
	p.ws()
	if p.eat('}') {
		return true
	}
	var keys uint64
	for {
		p.ws()
		at := p.i
		if !p.peek('"') {
			return false
		}
		end, slow, ok := p.stringEnd()
		if !ok {
			return false
		}
		lit := p.b[at:end]
		// stringEnd refuses a control character.
		if slow && (bytes.IndexByte(lit, '\\') >= 0 || !utf8.Valid(lit)) {
			return false
		}
		// Its length and its first and last bytes (the quotes of "").
		bit := uint64(1) << ((uint(len(lit)) ^ uint(lit[1])*7 ^ uint(lit[len(lit)-2])*13) & 63)
		if keys&bit != 0 && keyBefore(p.b[:at], from, lit) {
			return false
		}
		keys |= bit
		p.i = end
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if !p.skip(2) {
			return false
		}
		if done, ok := p.afterMember(); done || !ok {
			return done
		}
	}
}

// keyBefore reports whether the object at from in b, whose members
// distinctKeys read up to the end of b, has the key literal lit.
func keyBefore(b []byte, from int, lit []byte) bool {
	q := fastParser{b: b, i: from + 1}
	for q.ws(); q.i < len(b); q.ws() {
		at := q.i
		end, _, _ := q.stringEnd()
		if bytes.Equal(b[at:end], lit) {
			return true
		}
		q.i = end
		q.ws()
		q.eat(':')
		q.ws()
		q.skip(2)
		q.ws()
		q.eat(',')
	}
	return false
}

// accepted skips the value at p.i, reporting whether it is null or of one
// of types (reply.Accept), with every item of an array of one of items.
func (p *fastParser) accepted(types, items string, depth int) bool {
	if p.i >= len(p.b) {
		return false
	}
	t := byte('0')
	switch c := p.b[p.i]; c {
	case '"', '{', '[', 'n':
		t = c
	case 't', 'f':
		t = 'b'
	}
	switch {
	case t == 'n':
	case strings.IndexByte(types, t) < 0:
		return false
	case t == '[':
		p.i++
		p.ws()
		if p.eat(']') {
			return true
		}
		for {
			p.ws()
			if !p.accepted(items, "", depth+1) {
				return false
			}
			p.ws()
			if p.eat(']') {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	}
	return p.skip(depth)
}

// unmarshalShared is UnmarshalJSON for a string literal of a body that is
// never written to: a plain literal (no escape, no control character,
// valid UTF-8) becomes a string sharing the body's memory.
func (s *jString) unmarshalShared(b []byte) error {
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' {
		lit := b[1 : n-1]
		plain := utf8.Valid(lit)
		for _, c := range lit {
			if c == '\\' || c < 0x20 {
				plain = false
				break
			}
		}
		if plain {
			s.Set = true
			if len(lit) == 0 {
				s.V = ""
			} else {
				s.V = unsafe.String(&lit[0], len(lit))
			}
			return nil
		}
	}
	return s.UnmarshalJSON(b)
}

// fastParser reads JSON into the values encoding/json produces for an
// interface{} target (map[string]any, []any, string, float64, bool, nil).
// Each method reports false on anything it does not read exactly as
// encoding/json would, leaving the error to encoding/json.
// The strings it returns may share b's memory (str), so b must never be
// written to while they are in use.
type fastParser struct {
	b []byte
	i int
	// again says object met a key twice: fastTurn leaves such a
	// metadata to the general path (metadataSentTwice).
	again bool
}

func (p *fastParser) ws() {
	// Bodies are mostly written without white space: one test passes
	// over any byte that is not.
	if p.i < len(p.b) && p.b[p.i] > ' ' {
		return
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) peek(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }

func (p *fastParser) eat(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// lit consumes the literal s (true, false, null).
func (p *fastParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// strPlain marks the bytes a string literal holds as they are: neither
// its end nor an escape, a control character or part of a multi-byte
// character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Word-at-a-time constants of stringEnd: a byte of ones in each byte
// lane, and the high bit of each.
const (
	laneOnes = 0x0101010101010101
	laneHigh = 0x8080808080808080
)

// specialLanes returns the high bit of each lane (byte) of w, read little
// endian, that holds a byte strPlain does not mark ('"', '\\', below 0x20
// or from 0x80), and maybe of lanes above the first such: zero when all
// 8 are plain, else its lowest bit is in the first lane that is not. In
// every lane, v - 1 has the high bit set where v is 0 or from 0x81, and
// v - 0x20 where v is below 0x20 or from 0xa0; a borrow passes to the
// next lane only from a lane that had one of those. With v the lanes of
// w xor '"' or '\\' (0 where w holds one, from 0x80 only where w is), OR
// w, whose high bits are its lanes from 0x80, no lane below the first
// that is not plain has its high bit set, and that one has.
func specialLanes(w uint64) uint64 {
	return ((w ^ '"'*laneOnes - laneOnes) | (w ^ '\\'*laneOnes - laneOnes) | (w - 0x20*laneOnes) | w) & laneHigh
}

// stringEnd returns the index just past the closing quote of the string
// starting at p.i, and whether it needs unescaping or UTF-8 repair. It
// steps over plain bytes 8 at a time (specialLanes) to the next byte
// that is not, which it reads alone.
func (p *fastParser) stringEnd() (end int, slow bool, ok bool) {
	b := p.b
	for j := p.i + 1; j < len(b); j++ {
		for j+8 <= len(b) {
			if m := specialLanes(binary.LittleEndian.Uint64(b[j:])); m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
			j += 8
		}
		if j >= len(b) {
			break
		}
		// The quote first: the word loop stops at it far more often
		// than at anything else.
		switch c := b[j]; {
		case c == '"':
			return j + 1, slow, true
		case strPlain[c]:
		case c == '\\':
			slow = true
			j++ // the escaped byte cannot end the string
		case c < 0x20:
			return 0, false, false
		default:
			slow = true
		}
	}
	return 0, false, false
}

// str reads a string value. A plain one (no escape, ASCII) shares the
// body's memory, like the members unmarshalShared reads: fastTurn's body
// is never written to, and a reply's metadata lives no longer than its
// body, so a copy of each string would only be more to allocate and to
// collect on every turn.
func (p *fastParser) str() (string, bool) {
	end, slow, ok := p.stringEnd()
	if !ok {
		return "", false
	}
	lit := p.b[p.i:end]
	p.i = end
	if !slow {
		return plainString(lit), true
	}
	s, err := unquote(lit)
	return s, err == nil
}

// plainString is the value of a string literal without escapes or
// non-ASCII bytes, sharing the literal's memory.
func plainString(lit []byte) string {
	if len(lit) == 2 {
		return ""
	}
	return unsafe.String(&lit[1], len(lit)-2)
}

// key reads an object key. Like a string value, a plain key shares the
// body's memory, so the metadata's member names, repeated in every reply,
// cost no copy.
func (p *fastParser) key() (string, bool) {
	if !p.peek('"') {
		return "", false
	}
	return p.str()
}

// number consumes a number of the JSON grammar and returns its text.
func (p *fastParser) number() ([]byte, bool) {
	start := p.i
	p.eat('-')
	switch {
	case p.eat('0'):
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.eat('.') {
		if p.digits() == 0 {
			return nil, false
		}
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if p.digits() == 0 {
			return nil, false
		}
	}
	return p.b[start:p.i], true
}

func (p *fastParser) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// value reads any JSON value.
func (p *fastParser) value(depth int) (any, bool) {
	if p.i >= len(p.b) || depth > maxFastDepth {
		return nil, false
	}
	switch c := p.b[p.i]; c {
	case '{':
		return p.object(depth, nil)
	case '[':
		p.i++
		p.ws()
		if p.eat(']') {
			return make([]any, 0), true
		}
		// Collected on the stack, then copied once at their number:
		// arrays of metadata are short (a node trace, a few topics).
		var stack [8]any
		a := stack[:0]
		for {
			p.ws()
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
			p.ws()
			if p.eat(']') {
				return slices.Clone(a), true
			}
			if !p.eat(',') {
				return nil, false
			}
		}
	case '"':
		return p.str()
	case 't':
		return true, p.lit("true")
	case 'f':
		return false, p.lit("false")
	case 'n':
		return nil, p.lit("null")
	default:
		num, ok := p.number()
		if !ok {
			return nil, false
		}
		f, err := strconv.ParseFloat(string(num), 64)
		return f, err == nil
	}
}

// object reads the object at p.i; with only, it builds the members under
// those names alone and skips the others, so that one member of an object
// is read by the same reader as the whole.
func (p *fastParser) object(depth int, only []string) (map[string]any, bool) {
	if !p.eat('{') || depth > maxFastDepth {
		return nil, false
	}
	m := map[string]any{}
	p.ws()
	if p.eat('}') {
		return m, true
	}
	for {
		p.ws()
		k, ok := p.pairHead()
		if !ok {
			return nil, false
		}
		if only != nil && !slices.Contains(only, k) {
			if !p.skip(depth + 1) {
				return nil, false
			}
		} else {
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			n := len(m)
			m[k] = v // the last of duplicate keys wins, as in encoding/json
			p.again = p.again || len(m) == n
		}
		p.ws()
		if p.eat('}') {
			return m, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// members builds the members of the object in p.b whose keys start at
// offs, in order: the keys of one member, under any of its spellings, as
// shallowMetadata recorded them (reply.TypedAt.OffsetsOf).
func (p *fastParser) members(offs []uint16) (map[string]any, bool) {
	m := map[string]any{}
	for _, off := range offs {
		p.i = int(off)
		k, ok := p.pairHead()
		if !ok {
			return nil, false
		}
		v, ok := p.value(1)
		if !ok {
			return nil, false
		}
		m[k] = v // in order: the last of duplicate keys wins, as in object
	}
	return m, true
}

// pairHead reads the key of an object member at p.i and the colon after
// it, up to its value.
func (p *fastParser) pairHead() (string, bool) {
	k, ok := p.key()
	if !ok {
		return "", false
	}
	p.ws()
	if !p.eat(':') {
		return "", false
	}
	p.ws()
	return k, true
}

// skip consumes any JSON value without building it, checking its syntax.
func (p *fastParser) skip(depth int) bool {
	if p.i >= len(p.b) || depth > maxFastDepth {
		return false
	}
	switch c := p.b[p.i]; c {
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		p.ws()
		if p.eat(closer) {
			return true
		}
		for {
			p.ws()
			if c == '{' {
				// A key is a string, its escapes checked like a value's.
				if !p.peek('"') || !p.skip(depth+1) {
					return false
				}
				p.ws()
				if !p.eat(':') {
					return false
				}
				p.ws()
			}
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			if p.eat(closer) {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	case '"':
		end, slow, ok := p.stringEnd()
		if !ok {
			return false
		}
		if slow && !validLiteral(p.b[p.i:end]) {
			return false
		}
		p.i = end
		return true
	case 't':
		return p.lit("true")
	case 'f':
		return p.lit("false")
	case 'n':
		return p.lit("null")
	default:
		// A number out of float64's range is value's error too.
		num, ok := p.number()
		if !ok {
			return false
		}
		_, err := strconv.ParseFloat(string(num), 64)
		return err == nil
	}
}

// validLiteral reports whether a string literal with escapes is valid JSON
// (invalid escapes are an error; invalid UTF-8 is not, encoding/json
// replaces it).
func validLiteral(lit []byte) bool {
	return json.Valid(lit)
}
