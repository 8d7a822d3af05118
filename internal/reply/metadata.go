package reply

// This file holds the tolerant readers of the debug-chat metadata object.
//
// The reference lists the metadata members (asrLangCode, state, nodeTrace,
// metrics, functionEvents, ...) but not every shape: it never shows a
// function event, and other implementations of the platform (older
// deployments, proxies, recordings made by hand) send the same members in
// slightly different forms. Every such decision is made here, once, so the
// checks, the reports and the runner all read metadata the same way:
//
//   - a member is looked up by its reference name first, then by its
//     snake_case spelling (nodeTrace, node_trace), see metadataAliases;
//   - null and a missing member read as "absent" (the zero value);
//   - a member whose JSON type none of these tolerances accepts (state as
//     an array, nodeTrace as an object) makes the reply malformed (Check):
//     reading it as absent would blame the agent for what the platform
//     sent;
//   - strings may arrive as numbers or booleans and are rendered as text;
//   - lists of names (nodeTrace, retrievedTopics) may hold strings or objects
//     with a name, and a single string stands for a list of one;
//   - a JSON object sent as a string (state: "{\"a\":1}") is decoded.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// metadataAliases maps each reference member name to the other spellings
// accepted for it, in the order they are tried.
var metadataAliases = map[string][]string{
	"asrLangCode":           {"asr_lang_code"},
	"ttsLangCode":           {"tts_lang_code"},
	"agentResponseAudioUrl": {"agent_response_audio_url", "agentResponseAudioURL"},
	"currentNode":           {"current_node"},
	"nodeTrace":             {"node_trace"},
	"functionEvents":        {"function_events"},
	"handoffDestination":    {"handoff_destination"},
	"retrievedTopics":       {"retrieved_topics"},
	"retrievedSources":      {"retrieved_sources"},
	"citedTopic":            {"cited_topic"},
	"inFlow":                {"in_flow"},
	"inStep":                {"in_step"},
	"llmRequests":           {"llm_requests"},
}

// metadataSpellings are the spellings of each typed member, by reference
// name: its name, then its aliases. A member decoded alone (TurnResult's
// accessors) is decoded under all of them, so that member reads it as it
// reads the whole metadata.
var metadataSpellings = func() map[string][]string {
	out := make(map[string][]string, len(metadataOrder))
	for _, name := range metadataOrder {
		out[name] = append([]string{name}, metadataAliases[name]...)
	}
	return out
}()

// mdNameKeys are the members read, in order, when an object stands where a
// name is expected (a node in nodeTrace, a topic in retrievedTopics).
var mdNameKeys = []string{"name", "title", "node", "topic", "id"}

// member returns the value of a reference member, trying its aliases; a
// JSON null counts as absent.
func (m Metadata) member(name string) (any, bool) {
	if s := m.spelling(name); s != "" {
		return m[s], true
	}
	return nil, false
}

// spelling returns the spelling a reference member is read under: its
// name, else the first alias holding a value; "" when none holds one.
func (m Metadata) spelling(name string) string {
	if m[name] != nil {
		return name
	}
	for _, alias := range metadataAliases[name] {
		if m[alias] != nil {
			return alias
		}
	}
	return ""
}

// text reads a member that should be a string.
func (m Metadata) text(name string) string {
	v, _ := m.member(name)
	return mdScalarText(v)
}

// mdScalarText renders a scalar as text; objects with a name give the name,
// anything else gives "".
func mdScalarText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case map[string]any:
		return mdNameOf(v)
	case []any:
		return ""
	default:
		return Render(v)
	}
}

// mdNameOf reads the name of an object standing for a node or a topic.
func mdNameOf(obj map[string]any) string {
	for _, k := range mdNameKeys {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// names reads a member that should be an array of strings.
func (m Metadata) names(name string) []string {
	v, _ := m.member(name)
	return mdNamesOf(v)
}

// mdNamesOf reads a list of names: an array of strings (or of objects with a
// name, or of numbers), or a single string meaning a list of one. Empty
// entries are dropped because an empty node or topic name says nothing.
func mdNamesOf(v any) []string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return nil
		}
		return []string{v}
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			if s := mdScalarText(item); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// NodeTrace returns metadata.nodeTrace: the nodes the agent went through on
// this turn, in order.
func (m Metadata) NodeTrace() []string { return m.names("nodeTrace") }

// CurrentNode returns metadata.currentNode. It is not derived from the node
// trace when absent: a check on the current node should fail when the
// platform does not report it.
func (m Metadata) CurrentNode() string { return m.text("currentNode") }

// InFlow returns metadata.inFlow.
func (m Metadata) InFlow() string { return m.text("inFlow") }

// InStep returns metadata.inStep.
func (m Metadata) InStep() string { return m.text("inStep") }

// HandoffDestination returns metadata.handoffDestination; "" means the agent
// did not hand off on this turn.
func (m Metadata) HandoffDestination() string { return m.text("handoffDestination") }

// CitedTopic returns metadata.citedTopic.
func (m Metadata) CitedTopic() string { return m.text("citedTopic") }

// ASRLang returns metadata.asrLangCode.
func (m Metadata) ASRLang() string { return m.text("asrLangCode") }

// TTSLang returns metadata.ttsLangCode.
func (m Metadata) TTSLang() string { return m.text("ttsLangCode") }

// AudioURL returns metadata.agentResponseAudioUrl.
func (m Metadata) AudioURL() string { return m.text("agentResponseAudioUrl") }

// RetrievedTopics returns metadata.retrievedTopics.
func (m Metadata) RetrievedTopics() []string { return m.names("retrievedTopics") }

// RetrievedSources returns metadata.retrievedSources.
func (m Metadata) RetrievedSources() []string { return m.names("retrievedSources") }

// State returns metadata.state, the dialogue state after the turn. A state
// sent as a JSON-encoded string is decoded; anything else that is not an
// object gives nil. The map is the decoded metadata itself: do not modify it.
func (m Metadata) State() map[string]any {
	v, _ := m.member("state")
	return mdObjectOf(v)
}

// mdObjectOf reads an object, decoding it when it was sent as a JSON string.
func mdObjectOf(v any) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		return v
	case string:
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err == nil {
			return obj
		}
	}
	return nil
}

// Metrics returns metadata.metrics as metric name to the values written.
//
// Per the reference a value is a string, or an array of at least two strings
// when the metric was written more than once; so one string gives a list of
// one. Numbers and booleans are rendered as text; a null value gives an
// empty list (the name exists but nothing usable was written). Some
// platforms send metrics as an array of {name, value} objects instead of an
// object; those are accepted too, repeated names accumulating.
func (m Metadata) Metrics() map[string][]string {
	v, _ := m.member("metrics")
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string][]string, len(v))
		for name, val := range v {
			out[name] = mdMetricValues(val)
		}
		return out
	case []any:
		out := make(map[string][]string, len(v))
		for _, item := range v {
			obj, ok := item.(map[string]any)
			if !ok {
				continue
			}
			name := mdScalarText(obj["name"])
			if name == "" {
				name = mdScalarText(obj["metric"])
			}
			if name == "" {
				continue
			}
			out[name] = append(out[name], mdMetricValues(obj["value"])...)
		}
		return out
	}
	return nil
}

// mdMetricValues reads the value of one metric as the list of values written.
func mdMetricValues(v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{}
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			out = append(out, Render(item))
		}
		return out
	case []string:
		return v
	default:
		return []string{Render(v)}
	}
}

// FunctionEvent is one function call reported in metadata.functionEvents.
type FunctionEvent struct {
	// Name is the function's name ("" when the event names none).
	Name string
	// Failed reports whether the call failed (see FunctionEvents).
	Failed bool
	// Error is the error text of a failed call, when one was given.
	Error string
	// Raw is the event as received, for reports and metadata paths.
	Raw map[string]any
}

// FunctionEvents returns metadata.functionEvents.
//
// The reference does not show the shape of a function event, so it is read
// tolerantly. The name comes from `name`, `function`, `functionName` or
// `function_name`, or from `function.name` when `function` is an object. An
// event failed when it has a non-empty `error` (a string, or an object, whose
// `message` is then the error text), a `status` of error, failed or failure
// (any case), or `success: false`. A single event object instead of an array
// is read as a list of one; entries that are not objects are skipped.
func (m Metadata) FunctionEvents() []FunctionEvent {
	v, _ := m.member("functionEvents")
	var items []any
	switch v := v.(type) {
	case []any:
		items = v
	case map[string]any:
		items = []any{v}
	default:
		return nil
	}
	out := make([]FunctionEvent, 0, len(items))
	for _, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, mdFunctionEvent(obj))
	}
	return out
}

// functionEvent reads one event object.
func mdFunctionEvent(obj map[string]any) FunctionEvent {
	ev := FunctionEvent{Raw: obj}
	for _, k := range []string{"name", "function", "functionName", "function_name"} {
		switch v := obj[k].(type) {
		case string:
			ev.Name = v
		case map[string]any:
			ev.Name = mdScalarText(v["name"])
		}
		if ev.Name != "" {
			break
		}
	}
	switch e := obj["error"].(type) {
	case string:
		if e != "" {
			ev.Failed, ev.Error = true, e
		}
	case map[string]any:
		if len(e) > 0 {
			ev.Failed = true
			for _, k := range []string{"message", "error_message", "error"} {
				if s := mdScalarText(e[k]); s != "" {
					ev.Error = s
					break
				}
			}
			if ev.Error == "" {
				ev.Error = Render(e)
			}
		}
	case bool:
		ev.Failed = ev.Failed || e
	}
	if s, ok := obj["status"].(string); ok {
		s = strings.TrimSpace(s)
		if strings.EqualFold(s, "error") || strings.EqualFold(s, "failed") || strings.EqualFold(s, "failure") {
			ev.Failed = true
		}
	}
	if ok, isBool := obj["success"].(bool); isBool && !ok {
		ev.Failed = true
	}
	if ev.Failed && ev.Error == "" {
		ev.Error = mdScalarText(obj["error_message"])
	}
	return ev
}

// Lookup follows a dotted path into the metadata: "state.booking.code",
// "llmRequests.0.model". A segment indexes an array when it is a number
// (negative numbers count from the end, so "llmRequests.-1" is the last
// request). Object keys that themselves contain dots are found too: at each
// object the longest run of segments naming a key wins. Reference member
// names fall back to their snake_case aliases at the top level, when the
// member is missing or null. A JSON null at the end of the path is found
// (ok is true, the value is nil).
func (m Metadata) Lookup(path string) (any, bool) {
	if path == "" {
		return map[string]any(m), m != nil
	}
	segs := strings.Split(path, ".")
	// The top level goes through member so aliases apply.
	for n := len(segs); n >= 1; n-- {
		key := strings.Join(segs[:n], ".")
		v, ok := m[key]
		if _, known := metadataAliases[key]; known && v == nil {
			// As member reads it: a null under the reference name is
			// absent when an alias holds a value, so the path and
			// CurrentNode, NodeTrace, ... agree.
			if alias, found := m.member(key); found {
				v, ok = alias, true
			}
		}
		if ok {
			if found, ok := mdLookupIn(v, segs[n:]); ok {
				return found, true
			}
		}
	}
	return nil, false
}

// Reported says whether v, found by Lookup at path, is a member the
// platform reported: a member of the reference at the top level (any of
// its spellings) written null or empty ("", [] or {}) was not, as one
// left out was not. The reference lets a reply leave any member out, and
// another implementation writes every member in every reply, empty where
// the turn has none, as a serializer of a typed struct does: a check that
// a topic was not cited (citedTopic: {present: false}) must hold for both.
// Below the top level (state.notes) a null or empty value is the agent's
// data, and reported.
func Reported(path string, v any) bool {
	if typedOf(path) == nil {
		return true
	}
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// LookupPath follows dotted path segments into any decoded JSON value, by
// the rules of Metadata.Lookup; it serves paths into state and similar
// members.
func LookupPath(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	return mdLookupIn(v, strings.Split(path, "."))
}

// ValidPath reports whether p is a path LookupPath can follow: dotted
// segments, none of them empty or blank. State keys, capture fields and
// metadata paths are checked with it when a scenario is loaded.
func ValidPath(p string) bool {
	if p == "" {
		return false
	}
	for seg := range strings.SplitSeq(p, ".") {
		if strings.TrimSpace(seg) == "" {
			return false
		}
	}
	return true
}

// mdLookupIn follows the remaining segments from v.
func mdLookupIn(v any, segs []string) (any, bool) {
	if len(segs) == 0 {
		return v, true
	}
	switch v := v.(type) {
	case map[string]any:
		for n := len(segs); n >= 1; n-- {
			if next, ok := v[strings.Join(segs[:n], ".")]; ok {
				if found, ok := mdLookupIn(next, segs[n:]); ok {
					return found, true
				}
			}
		}
	case []any:
		i, err := strconv.Atoi(segs[0])
		if err != nil {
			return nil, false
		}
		if i < 0 {
			i += len(v)
		}
		if i < 0 || i >= len(v) {
			return nil, false
		}
		return mdLookupIn(v[i], segs[1:])
	}
	return nil, false
}

// Render renders a decoded JSON value as the text checks compare against:
// strings as they are, integral numbers without a fraction ("4", not "4.0"
// or "4e+00"), other numbers in their shortest form, booleans as true/false,
// null as "", and objects and arrays as compact JSON with sorted keys and no
// HTML escaping.
func Render(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return mdRenderFloat(v, 64)
	case float32:
		return mdRenderFloat(float64(v), 32)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return mdRenderFloat(f, 64)
		}
		return v.String()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values that never come out of encoding/json decoding end up
		// here (channels, functions); a best effort keeps reports going.
		return strings.TrimSpace(buf.String())
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// mdRenderFloat writes integral values without a fraction or exponent, up to
// the range where float64 still holds every integer exactly. bits is the
// size of the value's own type: the shortest form of a float32 widened to
// float64 is not its own ("0.10000000149011612" for 0.1).
func mdRenderFloat(f float64, bits int) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// The types of the metadata members, checked once per reply.
//
// The readers above are tolerant of the forms other implementations send,
// but a member whose JSON type none of them accepts (state as an array,
// nodeTrace as an object) is a malformed reply: reading it as absent would
// blame the agent ("state has no key day") for what the platform sent.
// Check turns it into an error of the response instead.

// mdKind is the JSON type a member must have, with its tolerances.
type mdKind int

const (
	// mdText: a string; a number or boolean (rendered) or an object
	// with a name also reads as text.
	mdText mdKind = iota
	// mdNames: an array of strings (or of numbers, or of objects with a
	// name); a single string is a list of one.
	mdNames
	// mdObject: an object, or an object sent as a JSON string.
	mdObject
	// mdMetrics: an object of values, or an array of {name, value}
	// objects.
	mdMetrics
	// mdEvents: an array of objects, or a single object.
	mdEvents
	// mdObjects: an array of objects.
	mdObjects
)

// metadataKinds are the members the reference types, by reference name.
var metadataKinds = map[string]mdKind{
	"asrLangCode":           mdText,
	"ttsLangCode":           mdText,
	"agentResponseAudioUrl": mdText,
	"currentNode":           mdText,
	"handoffDestination":    mdText,
	"citedTopic":            mdText,
	"inFlow":                mdText,
	"inStep":                mdText,
	"nodeTrace":             mdNames,
	"retrievedTopics":       mdNames,
	"retrievedSources":      mdNames,
	"state":                 mdObject,
	"metrics":               mdMetrics,
	"functionEvents":        mdEvents,
	"llmRequests":           mdObjects,
}

// Check reports the first member (in reference order, by the spelling
// received) whose JSON type is unusable, as "metadata.state is an array,
// want an object". null is absent, never wrong, and so is a spelling the
// readers never read (an alias beside a reference name that has a
// value). It looks only at the members present: it runs on every reply.
func (m Metadata) Check() error {
	best, msg := len(metadataOrder), ""
	for spelling, v := range m {
		typed := typedOf(spelling)
		if typed == nil || v == nil || typed.order > best || m.spelling(typed.name) != spelling {
			continue
		}
		if path, got, want := mdCheck(typed.kind, v); want != "" {
			best = typed.order
			msg = fmt.Sprintf("metadata.%s%s is %s, want %s", spelling, path, got, want)
		}
	}
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}

// metadataOrder is the reference's order of the typed members.
var metadataOrder = []string{
	"asrLangCode", "ttsLangCode", "agentResponseAudioUrl", "state", "currentNode", "nodeTrace", "metrics",
	"functionEvents", "handoffDestination", "retrievedTopics", "retrievedSources", "citedTopic", "inFlow",
	"inStep", "llmRequests",
}

// mdTyped is a typed member's reference name, its kind, its place in
// metadataOrder and what Check accepts of it by type (acceptKinds).
type mdTyped struct {
	name   string // the reference name
	kind   mdKind
	order  int
	accept Accept
}

// metadataTyped maps every spelling of a typed member to its mdTyped.
var metadataTyped = func() map[string]mdTyped {
	out := map[string]mdTyped{}
	for i, name := range metadataOrder {
		k := metadataKinds[name]
		a := acceptKinds[k]
		a.member = uint8(i)
		for _, spelling := range metadataSpellings[name] {
			a.spelling = uint8(len(out))
			out[spelling] = mdTyped{name, k, i, a}
		}
	}
	return out
}()

// mdCheck checks one value against its kind; want is "" when it is fine,
// and path locates the offending item inside it ("[2]").
func mdCheck(k mdKind, v any) (path, got, want string) {
	switch k {
	case mdText:
		switch v := v.(type) {
		case string, float64, bool:
			return "", "", ""
		case map[string]any:
			if mdNameOf(v) != "" {
				return "", "", ""
			}
			return "", "an object without a name", "a string"
		}
		return "", mdTypeName(v), "a string"
	case mdNames:
		switch v := v.(type) {
		case string:
			return "", "", ""
		case []any:
			for i, item := range v {
				if item == nil {
					continue
				}
				if _, got, want := mdCheck(mdText, item); want != "" {
					return fmt.Sprintf("[%d]", i), got, want
				}
			}
			return "", "", ""
		}
		return "", mdTypeName(v), "an array of strings"
	case mdObject:
		switch v := v.(type) {
		case map[string]any:
			return "", "", ""
		case []any:
			// An empty map as PHP's json_encode writes one: no
			// members (mdObjectOf reads none).
			if len(v) == 0 {
				return "", "", ""
			}
		case string:
			if mdObjectOf(v) != nil {
				return "", "", ""
			}
			return "", "a string that is not a JSON object", "an object"
		}
		return "", mdTypeName(v), "an object"
	case mdMetrics:
		switch v := v.(type) {
		case map[string]any:
			return "", "", ""
		case []any:
			return mdCheckItems(v)
		}
		return "", mdTypeName(v), "an object"
	case mdEvents:
		switch v := v.(type) {
		case map[string]any:
			return "", "", ""
		case []any:
			return mdCheckItems(v)
		}
		return "", mdTypeName(v), "an array of objects"
	case mdObjects:
		if v, ok := v.([]any); ok {
			return mdCheckItems(v)
		}
		return "", mdTypeName(v), "an array of objects"
	}
	return "", "", ""
}

// mdCheckItems requires every non-null item of an array to be an object.
func mdCheckItems(items []any) (path, got, want string) {
	for i, item := range items {
		if _, ok := item.(map[string]any); !ok && item != nil {
			return fmt.Sprintf("[%d]", i), mdTypeName(item), "an object"
		}
	}
	return "", "", ""
}

// mdTypeName names the JSON type of a decoded value, with its article.
func mdTypeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}

// Accept says which values of a typed metadata member Check accepts by
// their JSON type alone, so a decoder can check a reply's metadata as it
// scans it, without building it (see AcceptOf). Types are named by the
// first byte of their values: '"' a string, '0' a number, 'b' a boolean,
// '{' an object, '[' an array (whose items Items names). A null is always
// accepted, as a value and as an item. A type missing here may still be
// accepted after a look inside the value (an object with a name, a string
// holding an object): the decoder then builds the metadata and calls
// Check.
type Accept struct {
	Value, Items string
	// member is the member's place in metadataOrder, which TypedAt
	// records; spelling the spelling's place among all (Bit).
	member, spelling uint8
}

// Bit is the spelling's bit in a set of the typed members' spellings (at
// most 64): a decoder that meets one twice may have been sent two values
// of a member Metadata reads. Two spellings of one member are two keys,
// read in order (Metadata.spelling), and have two bits.
func (a Accept) Bit() uint64 { return 1 << a.spelling }

// acceptKinds is Accept for each kind, as mdCheck decides it by type.
var acceptKinds = map[mdKind]Accept{
	mdText:    {Value: `"0b`},
	mdNames:   {Value: `"[`, Items: `"0b`},
	mdObject:  {Value: `{`},
	mdMetrics: {Value: `{[`, Items: `{`},
	mdEvents:  {Value: `{[`, Items: `{`},
	mdObjects: {Value: `[`, Items: `{`},
}

// AcceptOf returns what Check accepts by type of the member received as
// spelling; typed is false for a member Check does not look at.
func AcceptOf(spelling string) (a Accept, typed bool) {
	if t := typedOf(spelling); t != nil {
		return t.accept, true
	}
	return Accept{}, false
}

// typedOf is metadataTyped[spelling] (nil for none), found among the
// few spellings of its length: AcceptOf runs on every member of every reply as it
// arrives, and hashing the name cost several times the look-up.
func typedOf(spelling string) *mdTyped {
	if len(spelling) < len(typedByLen) {
		same := typedByLen[len(spelling)]
		for i := range same {
			if same[i].spelling == spelling {
				return &same[i].mdTyped
			}
		}
	}
	return nil
}

// typedByLen holds metadataTyped by the length of its spellings, none
// longer than 31.
var typedByLen = func() (byLen [32][]spelledTyped) {
	for spelling, t := range metadataTyped {
		byLen[len(spelling)] = append(byLen[len(spelling)], spelledTyped{spelling, t})
	}
	return byLen
}()

// spelledTyped is an entry of typedByLen.
type spelledTyped struct {
	spelling string
	mdTyped
}
