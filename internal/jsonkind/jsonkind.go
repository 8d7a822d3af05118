// Package jsonkind names, in JSON's terms, the value a Go type is decoded
// from: a body or a file that does not decode is described by what it
// should hold ("expected an integer", "where an agenttest report has an
// object"), never by a Go type ("int64", "report.jsonRun"); a value that
// decodes but that the format does not allow is named by its path and
// found at its place in the document (ValueError, Offset). It is the one
// rule for that wording, shared by the platform client and the readers
// of agenttest's own reports, and imports the standard library only.
package jsonkind

import (
	"reflect"
	"time"
)

// Of names the JSON value t is decoded from, with its article: "an
// object", "an array", "a string", "a boolean", "an integer", "a
// number", "an ISO 8601 date-time string". A pointer is named by what it
// points to; a type it cannot name (nil, an interface) is "a value".
func Of(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "an ISO 8601 date-time string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return Of(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a value"
}
