package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The j* types decode one JSON value tolerantly, the way the reference and
// other implementations of it differ: null where a string belongs, numbers
// sent as strings, a single string where an array of strings belongs. A
// value of a truly wrong type (an object where a string belongs) is still an
// error. Set records that the member was present, null included, so
// required members can be checked after decoding.

type jString struct {
	V   string
	Set bool
}

func (s *jString) UnmarshalJSON(b []byte) error {
	s.Set = true
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
	V   bool
	Set bool
}

func (v *jBool) UnmarshalJSON(b []byte) error {
	v.Set = true
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
// without zone, 'T' or space).
type jTime struct {
	V   time.Time
	Set bool
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z0700",
}

func (v *jTime) UnmarshalJSON(b []byte) error {
	v.Set = true
	if b[0] == 'n' {
		v.V = time.Time{}
		return nil
	}
	if b[0] != '"' {
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

func parseTime(s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date-time", s)
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
			return typeError(b, reflect.TypeFor[[]string]())
		}
		v.V = []string{s.V}
		return nil
	}
}

// jObject reads an object of arbitrary JSON values; null is nil.
type jObject struct {
	V   map[string]any
	Set bool
}

func (v *jObject) UnmarshalJSON(b []byte) error {
	v.Set = true
	switch b[0] {
	case 'n':
		v.V = nil
		return nil
	case '{':
		v.V = nil
		return json.Unmarshal(b, &v.V)
	default:
		return typeError(b, reflect.TypeFor[map[string]any]())
	}
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

// kindNames says in JSON terms what a Go type expects.
func kindName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t {
	case reflect.TypeFor[time.Time]():
		return "an ISO 8601 date-time string"
	case reflect.TypeFor[[]string]():
		return "a string or an array of strings"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return t.String()
}

// describeDecodeError turns encoding/json errors into messages about the
// body rather than about Go types: `field "conversations.channel": expected
// a string, got object`.
func describeDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return fmt.Errorf("expected %s, got %s", kindName(te.Type), te.Value)
		}
		return fmt.Errorf("field %q: expected %s, got %s", field, kindName(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if strings.Contains(se.Error(), "unexpected end") {
			return errors.New("truncated JSON")
		}
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return err
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
