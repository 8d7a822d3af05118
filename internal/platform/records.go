package platform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The reference shows few of the shapes of the outbound, SMS, alerts and
// webhooks groups ("not shown" for most response bodies and for the alert
// records). Their answers are therefore read as loose records: each member
// is looked up under the name the reference (or the simulator) uses first,
// then under the alternatives other implementations plausibly send
// (camelCase, a shorter name). Every such choice is a names(...) list in
// the read* functions of outbound.go, sms.go, alerts.go and webhooks.go, so
// they are visible in one place per group and documented in
// docs/confirmations.md.

// record is one JSON object of an answer.
type record map[string]any

// raw returns the value of the first present name, and that name.
func (r record) raw(names ...string) (any, string, bool) {
	for _, n := range names {
		if v, ok := r[n]; ok && v != nil {
			return v, n, true
		}
	}
	return nil, "", false
}

// str reads a string; a number is accepted as its text (ids sent as
// numbers by another implementation).
func (r record) str(names ...string) string {
	v, _, ok := r.raw(names...)
	if !ok {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// boolean reads true/false, also written as a string or 0/1.
func (r record) boolean(names ...string) (bool, bool) {
	v, _, ok := r.raw(names...)
	if !ok {
		return false, false
	}
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	case float64:
		return x != 0, true
	}
	return false, false
}

// number reads a number, also written as a string.
func (r record) number(names ...string) (float64, bool) {
	v, _, ok := r.raw(names...)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// integer reads a whole number (a fraction is cut).
func (r record) integer(names ...string) (int, bool) {
	f, ok := r.number(names...)
	if !ok || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// when reads an ISO 8601 date-time, or Unix time in seconds or
// milliseconds (parseEpoch); anything else is no time.
func (r record) when(names ...string) time.Time {
	v, _, ok := r.raw(names...)
	if !ok {
		return time.Time{}
	}
	switch x := v.(type) {
	case string:
		if t, err := parseTime(x); err == nil {
			return t
		}
	case float64:
		if t, ok := epochTime(x); ok {
			return t
		}
	}
	return time.Time{}
}

// strs reads an array of strings, or one string as a list of one.
func (r record) strs(names ...string) []string {
	v, _, ok := r.raw(names...)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, it := range x {
			if s, ok := it.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// object reads a nested object.
func (r record) object(names ...string) map[string]any {
	v, _, _ := r.raw(names...)
	m, _ := v.(map[string]any)
	return m
}

// decodeRecord reads a 2xx body that is one object. Some implementations
// wrap it in {"data": {...}}, or in a member named after the resource
// ({"rule": {...}}: envelope lists the names); that wrapper is taken off
// when the object has nothing else but members about the answer itself
// (answerMembers).
func decodeRecord(body []byte, envelope ...string) (record, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, describeDecodeError(err)
	}
	return unwrapRecord(m, envelope...)
}

// decodeAnswer is decodeRecord keeping numbers as their text
// (json.Number): an id sent as a number too large for a float64 (past
// 2^53) is read as sent, as jString reads it, never rounded to another id.
func decodeAnswer(body []byte) (record, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	switch err := d.Decode(&m); {
	case errors.Is(err, io.EOF):
		return nil, errors.New("empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		// A Decoder says so where json.Unmarshal gives a SyntaxError.
		return nil, errors.New("truncated JSON")
	case err != nil:
		return nil, describeDecodeError(err)
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	return unwrapRecord(m)
}

// unwrapRecord takes the record out of its envelope (decodeRecord).
func unwrapRecord(m map[string]any, envelope ...string) (record, error) {
	if m == nil {
		return nil, errors.New("expected an object, got null")
	}
	others := len(m)
	for _, name := range answerMembers {
		if _, ok := m[name]; ok {
			others--
		}
	}
	if _, ok := m["success"].(bool); ok {
		others--
	}
	if others == 1 {
		for _, name := range append([]string{"data"}, envelope...) {
			if inner, ok := m[name].(map[string]any); ok {
				return record(inner), nil
			}
		}
	}
	return record(m), nil
}

// answerMembers are the members an envelope carries beside its record
// about the answer itself (JSON:API's meta and links, a request id), never
// a member of a record of the groups decodeRecord reads.
var answerMembers = []string{"meta", "links", "request_id", "requestId"}

// decodeRecords reads a 2xx list body: a bare array, or an object holding
// the array under the first of envelope that is present (then "data" and
// "items", the usual generic envelopes).
func decodeRecords(body []byte, envelope ...string) ([]record, error) {
	trimmed := strings.TrimSpace(string(body))
	var list []any
	switch {
	case trimmed == "":
		// An empty 200 is no list (a proxy that lost the body): read
		// as none, it would tell the alert gate that nothing fires.
		// A 204 is an empty list (decodeList).
		return nil, errors.New("empty body, want a list")
	case trimmed == "null":
		return nil, nil
	case trimmed[0] == '[':
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, describeDecodeError(err)
		}
	case trimmed[0] == '{':
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, describeDecodeError(err)
		}
		names := append(append([]string(nil), envelope...), "data", "items")
		v, name, ok := record(m).raw(names...)
		if !ok {
			if len(m) == 0 || nullList(m, names) {
				return nil, nil
			}
			return nil, missing("", envelope[:1])
		}
		l, isList := v.([]any)
		if !isList {
			return nil, fmt.Errorf("field %q: expected an array, got %s", name, jsonType(v))
		}
		list = l
	default:
		return nil, fmt.Errorf("expected an object or an array, got %s", jsonKind([]byte(trimmed)))
	}
	out := make([]record, 0, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d: expected an object, got %s", i, jsonType(it))
		}
		out = append(out, record(m))
	}
	return out, nil
}

// nullList reports whether m, which sets none of the list's names to
// anything but null (record.raw), writes one of them null: an empty
// list, as Go's encoding/json writes a nil slice.
func nullList(m map[string]any, names []string) bool {
	for _, n := range names {
		if _, ok := m[n]; ok {
			return true
		}
	}
	return false
}

// decodeList reads a list answer with decodeRecords; a 204 No Content is
// an empty list.
func decodeList(resp response, envelope ...string) ([]record, error) {
	if resp.status == http.StatusNoContent {
		return nil, nil
	}
	return decodeRecords(resp.body(), envelope...)
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}
