package agent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/diag"
)

// decoder walks a yaml.Node tree and collects every problem with its
// position. It never stops at the first error: a designer fixing a file wants
// the whole list (STYLE.md 7). Struct decoding with KnownFields is avoided on
// purpose: it loses columns and, inside UnmarshalYAML, the unknown-key check
// (go-yaml#460).
type decoder struct {
	file  string
	lines []string
	diags diag.Diagnostics
}

func newDecoder(file string, src []byte) *decoder {
	return &decoder{file: file, lines: strings.Split(string(src), "\n")}
}

func (d *decoder) pos(n *yaml.Node) diag.Pos {
	if n == nil {
		return diag.Pos{File: d.file}
	}
	return diag.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

// source is the line at p for the diagnostic's echo (Diagnostic.Source).
func (d *decoder) source(p diag.Pos) string {
	if p.Line < 1 || p.Line > len(d.lines) {
		return ""
	}
	return strings.TrimRight(d.lines[p.Line-1], "\r")
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.hintf(n, "", format, args...)
}

func (d *decoder) hintf(n *yaml.Node, hint, format string, args ...any) {
	if hint == "" && n != nil && (n.Kind == yaml.AliasNode || n.Tag == mergeTag) {
		hint = noAliases
	}
	d.errorAt(d.pos(n), hint, format, args...)
}

// mergeTag is the tag yaml.v3 gives a merge key (<<).
const mergeTag = "!!merge"

// noAliases is the hint of a problem at an alias or a merge key. The
// suites expand both in internal/scenario, the harness's code, which the
// simulator does not share (internal/layering); here a value stands
// where it is written.
const noAliases = "agent definitions do not expand YAML aliases or merge keys: write the value out"

// errorAt reports a problem at a position kept from an earlier node.
func (d *decoder) errorAt(p diag.Pos, hint, format string, args ...any) {
	dg := diag.Diagnostic{Severity: diag.Error, Pos: p, Message: fmt.Sprintf(format, args...), Hint: hint}
	dg.Source = d.source(p)
	d.diags = d.diags.Append(dg)
}

// field is one allowed key of a mapping and what to do with its value.
type field struct {
	key string
	fn  func(k, v *yaml.Node)
}

// mapping checks that n is a mapping, reports unknown and duplicate keys
// (with a "did you mean" hint) and calls each field's function in file
// order. It reports missing required keys at the mapping itself. It returns
// false when n is not a mapping.
func (d *decoder) mapping(n *yaml.Node, what string, fields []field, required ...string) bool {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, got %s", what, kindName(n))
		return false
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.errorf(k, "duplicate key %q in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		found := false
		for _, f := range fields {
			if f.key == k.Value {
				f.fn(k, v)
				found = true
				break
			}
		}
		if !found {
			keys := make([]string, len(fields))
			for i, f := range fields {
				keys[i] = f.key
			}
			d.hintf(k, diag.DidYouMean(k.Value, keys), "unknown key %q in %s", k.Value, what)
		}
	}
	for _, r := range required {
		if !seen[r] {
			d.errorf(n, "%s is missing required key %q", what, r)
		}
	}
	return true
}

// pairs checks that n is a mapping of user-chosen names (node names, intent
// names...) and calls fn for each, rejecting duplicates.
func (d *decoder) pairs(n *yaml.Node, what string, fn func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, got %s", what, kindName(n))
		return
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.errorf(k, "duplicate %s %q", what, k.Value)
			continue
		}
		seen[k.Value] = true
		fn(k, v)
	}
}

// str decodes a scalar as a string.
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, "%s must be a string, got %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

// strs decodes a scalar or a sequence of scalars as a list of strings.
func (d *decoder) strs(n *yaml.Node, what string) []string {
	return values(d.strItems(n, what))
}

// strItems is strs keeping each string's node, so that a later check (an
// unknown intent, an empty keyword) points at the item, not at its list.
func (d *decoder) strItems(n *yaml.Node, what string) []*yaml.Node {
	if n.Kind == yaml.ScalarNode {
		if _, ok := d.str(n, what); ok {
			return []*yaml.Node{n}
		}
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a string or a list of strings, got %s", what, kindName(n))
		return nil
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	for _, c := range n.Content {
		if _, ok := d.str(c, what+" item"); ok {
			out = append(out, c)
		}
	}
	return out
}

func values(items []*yaml.Node) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Value
	}
	return out
}

func (d *decoder) boolean(n *yaml.Node, what string) bool {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true":
			return true
		case "false":
			return false
		}
	}
	d.errorf(n, "%s must be true or false, got %s", what, describe(n))
	return false
}

func (d *decoder) integer(n *yaml.Node, what string, min int) int {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.Atoi(n.Value); err == nil {
			if v < min {
				d.errorf(n, "%s must be at least %d, got %d", what, min, v)
			}
			return v
		}
	}
	d.errorf(n, "%s must be an integer, got %s", what, describe(n))
	return 0
}

func (d *decoder) number(n *yaml.Node, what string) float64 {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return v
		}
	}
	d.errorf(n, "%s must be a number, got %s", what, describe(n))
	return 0
}

// regex compiles a pattern. Patterns are case-insensitive, because
// conversation designers write "book" and users type "Book"; a pattern that
// needs case turns it back on with (?-i).
func (d *decoder) regex(n *yaml.Node, what string) *regexp.Regexp {
	s, ok := d.str(n, what)
	if !ok {
		return nil
	}
	re, err := regexp.Compile("(?i)" + s)
	if err != nil {
		// The error of the pattern as written quotes it without our prefix.
		if _, asWritten := regexp.Compile(s); asWritten != nil {
			err = asWritten
		}
		d.errorf(n, "%s %q is not a valid regular expression: %v", what, n.Value, err)
		return nil
	}
	return re
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return "a scalar"
	}
	return "a document"
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return strconv.Quote(n.Value)
	}
	return kindName(n)
}
