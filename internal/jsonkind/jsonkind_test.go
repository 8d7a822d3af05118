package jsonkind

import (
	"reflect"
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	t.Parallel()
	type record struct{ ID string }
	for _, tc := range []struct {
		t    reflect.Type
		want string
	}{
		{nil, "a value"},
		{reflect.TypeFor[string](), "a string"},
		{reflect.TypeFor[bool](), "a boolean"},
		{reflect.TypeFor[int](), "an integer"},
		{reflect.TypeFor[int64](), "an integer"},
		{reflect.TypeFor[int8](), "an integer"},
		{reflect.TypeFor[int16](), "an integer"},
		{reflect.TypeFor[int32](), "an integer"},
		{reflect.TypeFor[uint](), "an integer"},
		{reflect.TypeFor[uint8](), "an integer"},
		{reflect.TypeFor[uint16](), "an integer"},
		{reflect.TypeFor[uint32](), "an integer"},
		{reflect.TypeFor[uint64](), "an integer"},
		{reflect.TypeFor[float32](), "a number"},
		{reflect.TypeFor[float64](), "a number"},
		{reflect.TypeFor[record](), "an object"},
		{reflect.TypeFor[map[string]any](), "an object"},
		{reflect.TypeFor[[]string](), "an array"},
		{reflect.TypeFor[[2]int](), "an array"},
		{reflect.TypeFor[time.Time](), "an ISO 8601 date-time string"},
		{reflect.TypeFor[*time.Time](), "an ISO 8601 date-time string"},
		{reflect.TypeFor[*record](), "an object"},
		{reflect.TypeFor[**bool](), "a boolean"},
		{reflect.TypeFor[any](), "a value"},
		{reflect.TypeFor[func()](), "a value"},
	} {
		if got := Of(tc.t); got != tc.want {
			t.Errorf("Of(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
