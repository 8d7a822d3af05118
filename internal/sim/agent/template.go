package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// refKind says where a ${...} reference takes its value from. References
// are resolved at load time into a kind and a path so rendering a reply does
// no parsing and no reflection.
type refKind uint8

const (
	refState refKind = iota
	refAttr
	refConvID
	refChannel
	refEnv
	refVariantID
	refVariantName
	refTurn
	refArgs
	refInput
	refKBAnswer
	refKBTopic
	refRandomCode
	refRandomDigits
	refNow
)

// segment is a literal run of text or one reference.
type segment struct {
	lit   string
	isRef bool
	kind  refKind
	path  []string
	n     int // length for random.code / random.digits
}

// template is a compiled string with ${...} references.
type template struct {
	src  string
	segs []segment
}

// templateScope says which namespaces a template may use: args only exist
// inside a function, so a node that names them is a mistake caught at load.
type templateScope uint8

const (
	scopeNode templateScope = iota
	scopeFunction
)

// refNames lists the fixed references, for error hints.
var refNames = []string{
	"state.KEY", "conv.integration_attributes.KEY", "conv.id", "conv.channel",
	"conv.environment", "conv.variant_id", "conv.variant_name", "conv.turn",
	"input.KEY", "kb.answer", "kb.topic", "random.code:N", "random.digits:N", "now",
}

// compileTemplate parses s (the value of node n) and reports bad references
// at n's position.
func (d *decoder) compileTemplate(n *yaml.Node, s string, scope templateScope) *template {
	t := &template{src: s}
	rest := s
	for rest != "" {
		i := strings.Index(rest, "${")
		if i < 0 {
			t.segs = append(t.segs, segment{lit: rest})
			break
		}
		if i > 0 {
			t.segs = append(t.segs, segment{lit: rest[:i]})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			d.errorf(n, "unclosed reference in %q: \"${\" without \"}\"", s)
			return t
		}
		expr := strings.TrimSpace(rest[i+2 : i+j])
		seg, err := parseRef(expr, scope)
		if err != "" {
			d.hintf(n, "references are "+strings.Join(refNames, ", "), "bad reference ${%s}: %s", expr, err)
		} else {
			t.segs = append(t.segs, seg)
		}
		rest = rest[i+j+1:]
	}
	return t
}

func parseRef(expr string, scope templateScope) (segment, string) {
	seg := segment{isRef: true}
	head, tail, _ := strings.Cut(expr, ".")
	path := func(ns string) ([]string, string) {
		if tail == "" {
			return nil, ns + " needs a key, e.g. ${" + ns + ".name}"
		}
		parts := strings.Split(tail, ".")
		if slices.Contains(parts, "") {
			return nil, "empty path element"
		}
		return parts, ""
	}
	var err string
	switch head {
	case "state":
		seg.kind = refState
		seg.path, err = path("state")
	case "input":
		seg.kind = refInput
		seg.path, err = path("input")
	case "args":
		if scope != scopeFunction {
			return seg, "args exist only in a function's result"
		}
		seg.kind = refArgs
		seg.path, err = path("args")
	case "conv":
		switch {
		case tail == "id":
			seg.kind = refConvID
		case tail == "channel":
			seg.kind = refChannel
		case tail == "environment":
			seg.kind = refEnv
		case tail == "variant_id":
			seg.kind = refVariantID
		case tail == "variant_name":
			seg.kind = refVariantName
		case tail == "turn":
			seg.kind = refTurn
		case strings.HasPrefix(tail, "integration_attributes."):
			seg.kind = refAttr
			tail = strings.TrimPrefix(tail, "integration_attributes.")
			seg.path, err = path("conv.integration_attributes")
		default:
			return seg, "unknown conv member " + strconv.Quote(tail)
		}
	case "kb":
		switch tail {
		case "answer":
			seg.kind = refKBAnswer
		case "topic":
			seg.kind = refKBTopic
		default:
			return seg, "unknown kb member " + strconv.Quote(tail)
		}
	case "random":
		kind, num, ok := strings.Cut(tail, ":")
		switch kind {
		case "code":
			seg.kind = refRandomCode
		case "digits":
			seg.kind = refRandomDigits
		default:
			return seg, "unknown random member " + strconv.Quote(kind)
		}
		seg.n = 6
		if ok {
			v, e := strconv.Atoi(num)
			if e != nil || v < 1 || v > 64 {
				return seg, "length must be an integer from 1 to 64"
			}
			seg.n = v
		}
	case "now":
		if tail != "" {
			return seg, "now has no members"
		}
		seg.kind = refNow
	default:
		return seg, "unknown namespace " + strconv.Quote(head)
	}
	return seg, err
}

// single reports whether the template is exactly one reference, in which
// case value() keeps the referenced value's type (a map stays a map).
func (t *template) single() bool {
	return len(t.segs) == 1 && t.segs[0].isRef
}

// static reports whether the template has no references.
func (t *template) static() bool {
	return len(t.segs) == 0 || (len(t.segs) == 1 && !t.segs[0].isRef)
}

// scope carries what a template can read while one turn is played.
type scope struct {
	s     *Session
	args  map[string]any
	input map[string]any
	kb    *topic
}

// render produces the template's text.
func (t *template) render(sc *scope) string {
	if t.static() {
		if len(t.segs) == 0 {
			return ""
		}
		return t.segs[0].lit
	}
	var b strings.Builder
	b.Grow(len(t.src) + 16)
	for i := range t.segs {
		seg := &t.segs[i]
		if !seg.isRef {
			b.WriteString(seg.lit)
			continue
		}
		writeValue(&b, seg.resolve(sc))
	}
	return b.String()
}

// value renders the template, except that a template made of one reference
// yields the referenced value itself.
func (t *template) value(sc *scope) any {
	if t.single() {
		v := t.segs[0].resolve(sc)
		if v == nil {
			return ""
		}
		return v
	}
	return t.render(sc)
}

func (seg *segment) resolve(sc *scope) any {
	s := sc.s
	switch seg.kind {
	case refState:
		return lookup(s.state, seg.path)
	case refAttr:
		return lookup(s.opts.IntegrationAttributes, seg.path)
	case refArgs:
		return lookup(sc.args, seg.path)
	case refInput:
		return lookup(sc.input, seg.path)
	case refConvID:
		return s.opts.ConversationID
	case refChannel:
		return s.channel
	case refEnv:
		return s.env
	case refVariantID:
		if s.variant < 0 {
			return ""
		}
		return s.def.variants[s.variant].id
	case refVariantName:
		if s.variant < 0 {
			return ""
		}
		return s.def.variants[s.variant].name
	case refTurn:
		return strconv.Itoa(s.turn)
	case refKBAnswer:
		if sc.kb == nil {
			return ""
		}
		return sc.kb.answer
	case refKBTopic:
		if sc.kb == nil {
			return ""
		}
		return sc.kb.name
	case refRandomCode:
		return s.randomString(codeAlphabet, seg.n)
	case refRandomDigits:
		return s.randomString(digitAlphabet, seg.n)
	case refNow:
		return s.now().UTC().Format(time.RFC3339)
	}
	return nil
}

const (
	codeAlphabet  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	digitAlphabet = "0123456789"
)

// lookup follows a dotted path through nested maps; a missing key is nil.
func lookup(m map[string]any, path []string) any {
	var cur any = m
	for _, p := range path {
		switch mm := cur.(type) {
		case map[string]any:
			cur = mm[p]
		case map[string]string:
			v, ok := mm[p]
			if !ok {
				return nil
			}
			cur = v
		default:
			return nil
		}
	}
	return cur
}

// writeValue renders a state or attribute value the way a designer expects
// to read it in a reply: strings as is, numbers without exponent noise.
func writeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
	case string:
		b.WriteString(x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
	case []string:
		b.WriteString(strings.Join(x, ", "))
	default:
		fmt.Fprint(b, x)
	}
}

// stringOf renders a value for conditions and comparisons.
func stringOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

// valueTemplate is a templated YAML value: a scalar template, a mapping or a
// list of them (handoff data, function results and arguments).
type valueTemplate struct {
	scalar *template
	keys   []string
	fields []*valueTemplate
	items  []*valueTemplate
	isList bool
}

func (d *decoder) compileValue(n *yaml.Node, scope templateScope) *valueTemplate {
	switch n.Kind {
	case yaml.ScalarNode:
		return &valueTemplate{scalar: d.compileTemplate(n, n.Value, scope)}
	case yaml.MappingNode:
		v := &valueTemplate{}
		d.pairs(n, "key", func(k, val *yaml.Node) {
			v.keys = append(v.keys, k.Value)
			v.fields = append(v.fields, d.compileValue(val, scope))
		})
		return v
	case yaml.SequenceNode:
		v := &valueTemplate{isList: true}
		for _, c := range n.Content {
			v.items = append(v.items, d.compileValue(c, scope))
		}
		return v
	}
	d.errorf(n, "value must be a string, a mapping or a list, got %s", kindName(n))
	return &valueTemplate{scalar: &template{}}
}

func (v *valueTemplate) eval(sc *scope) any {
	switch {
	case v.scalar != nil:
		return v.scalar.value(sc)
	case v.isList:
		out := make([]any, len(v.items))
		for i, it := range v.items {
			out[i] = it.eval(sc)
		}
		return out
	}
	return v.evalMap(sc)
}

func (v *valueTemplate) evalMap(sc *scope) map[string]any {
	out := make(map[string]any, len(v.keys))
	for i, k := range v.keys {
		out[k] = v.fields[i].eval(sc)
	}
	return out
}
