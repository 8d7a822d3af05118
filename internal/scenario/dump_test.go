package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/steps"
)

// dump renders a decoded value as an indented outline for golden files:
// zero values are left out (but nil and empty differ: a non-nil empty slice
// prints as []), positions print as @line:col, maps in key order.
func dump(v any) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(v), 0)
	return b.String()
}

var (
	posType      = reflect.TypeFor[diag.Pos]()
	durationType = reflect.TypeFor[time.Duration]()
	expanderType = reflect.TypeFor[steps.Expander]()
)

func dumpValue(b *strings.Builder, v reflect.Value, depth int) {
	indent := strings.Repeat("  ", depth)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil\n")
			return
		}
		dumpValue(b, v.Elem(), depth)
	case reflect.Struct:
		if v.Type() == posType {
			p := v.Interface().(diag.Pos)
			fmt.Fprintf(b, "@%d:%d\n", p.Line, p.Col)
			return
		}
		b.WriteString("\n")
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() || skipZero(f) {
				continue
			}
			fmt.Fprintf(b, "%s%s: ", indent+"  ", v.Type().Field(i).Name)
			dumpValue(b, f, depth+1)
		}
	case reflect.Slice:
		if parts, ok := reflect.TypeAssert[assert.Parts](v); ok {
			// Where the keys and their items were written, as Pos
			// fields show it.
			items := make([]string, len(parts))
			for i, p := range parts {
				key := p.Key
				if p.Item > 0 {
					// An item of the key's list: sequence[2].
					key = fmt.Sprintf("%s[%d]", p.Key, p.Item)
				}
				items[i] = fmt.Sprintf("%s=@%d:%d", key, p.Pos.Line, p.Pos.Col)
			}
			slices.Sort(items)
			fmt.Fprintf(b, "{%s}\n", strings.Join(items, " "))
			return
		}
		if v.Len() == 0 {
			b.WriteString("[]\n")
			return
		}
		if v.Type().Elem().Kind() == reflect.String {
			items := make([]string, v.Len())
			for i := range items {
				items[i] = fmt.Sprintf("%q", v.Index(i).String())
			}
			fmt.Fprintf(b, "[%s]\n", strings.Join(items, ", "))
			return
		}
		b.WriteString("\n")
		for i := 0; i < v.Len(); i++ {
			fmt.Fprintf(b, "%s  - ", indent)
			dumpValue(b, v.Index(i), depth+2)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = fmt.Sprintf("%s=%q", k.String(), v.MapIndex(k).String())
		}
		fmt.Fprintf(b, "{%s}\n", strings.Join(items, " "))
	case reflect.String:
		fmt.Fprintf(b, "%q\n", v.String())
	case reflect.Func:
		// A step's checks are built by a function of the session's
		// expander: dump what it builds from the references as written.
		t := v.Type()
		if t.NumIn() == 1 && t.In(0) == expanderType && t.NumOut() == 2 {
			dumpValue(b, v.Call([]reflect.Value{reflect.ValueOf(asWritten)})[0], depth)
			return
		}
		fmt.Fprintf(b, "func\n")
	default:
		if v.Type() == durationType {
			fmt.Fprintf(b, "%s\n", time.Duration(v.Int()))
			return
		}
		fmt.Fprintf(b, "%v\n", v.Interface())
	}
}

// skipZero leaves out unset fields; nil slices are unset, empty ones are not.
func skipZero(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.Slice, reflect.Map:
		return f.IsNil()
	}
	return f.IsZero()
}
