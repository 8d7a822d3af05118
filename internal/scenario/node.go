package scenario

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
)

// maxAliases bounds how often one file may make the decoder follow an
// alias. Aliases are pointers in a yaml.Node tree, so a small file of nested
// aliases ("billion laughs") expands exponentially when walked; yaml.v3 only
// guards against that when decoding into Go values, not into nodes. Real
// suites follow a few aliases per scenario (times the examples rows).
const maxAliases = 100_000

// maxVisits bounds the nodes one file may make the decoder look at, a
// backstop far above any real suite (each examples row re-reads its
// scenario, so large tables of long scenarios reach a few hundred thousand).
const maxVisits = 10_000_000

// decoder walks the yaml.Node tree of one file. It owns the diagnostics of
// the file and the set of ${names} known at the point being decoded.
type decoder struct {
	file string
	// src is the file's text and lines its index, made when first
	// needed (scalarAt).
	src     []byte
	lines   *lineIndex
	diags   diag.Diagnostics
	visits  int
	aliases int
	// exhausted is set once maxVisits is reached; every later node reads
	// as null so that decoding ends quickly.
	exhausted bool
	// negated is set while decoding a matcher under an odd number of
	// not:, where a similar: threshold that passes nearly every reply
	// fails nearly every one instead.
	negated bool
	// scope holds the names a ${name} may refer to here: vars, example
	// columns and captures of earlier turns.
	scope map[string]bool
	// turnsNode is the turns: of the scenario being decoded and turn0
	// the index of the turn being decoded (-1: the greeting), so that a
	// ${name} used before the turn that captures it says so. The
	// captures are read from turnsNode only then (captureSites): most
	// scenarios use no name too early.
	turnsNode *yaml.Node
	turn0     int
	// item is the index of the scenarios: item being decoded, and
	// fileCaptures the captures of every item of the file by name
	// (fileCaptureSites), so that a ${name} another scenario captures
	// says so: each scenario is a conversation of its own.
	item         int
	fileCaptures map[string][]fileCapture
	// missingCols maps the examples columns of the scenario being decoded
	// to the lines of the rows that lack them (missingColumns).
	missingCols map[string][]missingColumn
	// read, while a scenario with examples is decoded, gathers the names
	// its ${name} references read (unreadColumns).
	read map[string]bool
	// varsSeen holds the sets of vars varsExpand has expanded.
	varsSeen map[string]bool
	// envRefs are the ${env:NAME} references read so far (Suite.EnvRefs).
	envRefs envRefSet
	// sc collects, while a scenario is decoded, the references its run
	// expands (Scenario.EnvRefs); nil elsewhere. It points to expansions,
	// reset for each scenario.
	sc         *expansions
	expansions expansions
	// messaging is set while decoding a scenario that runs over the
	// Messaging channel: its checks are held to that channel's rules
	// (via.go).
	messaging bool
	// startWarned holds the start: mappings already warned about as not
	// sent over messaging (a suite's start serves many scenarios).
	startWarned map[diag.Pos]bool
	// streamingUses are the streaming: keys read so far and the
	// scenarios each applies to (via.go).
	streamingUses streamingUses
	// strs and refs share the texts of the file (intern, ref): a suite
	// repeats the same says, checks and keys in scenario after scenario.
	strs map[string]string
	refs map[string]*string
	// compiled holds the regular expressions of the file that compiled
	// (regex): a suite repeats its patterns, and compiling one is some
	// 2 KB of garbage each time.
	compiled map[string]bool
}

// intern returns s, or the equal string the file read before: the
// programs of a large suite keep one copy of each text instead of one
// per scalar the YAML parser allocated.
func (d *decoder) intern(s string) string {
	if v, ok := d.strs[s]; ok {
		return v
	}
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	d.strs[s] = s
	return s
}

// ref returns a pointer to s shared by every check of the file that
// holds the same text (assert.Text's matchers are *string, never written
// through).
func (d *decoder) ref(s string) *string {
	if p, ok := d.refs[s]; ok {
		return p
	}
	if d.refs == nil {
		d.refs = map[string]*string{}
	}
	p := &s
	d.refs[s] = p
	return p
}

// pair is one key: value entry of a mapping.
type pair struct {
	Name string
	Key  *yaml.Node
	Val  *yaml.Node
}

func (d *decoder) pos(n *yaml.Node) diag.Pos {
	if n == nil {
		return diag.Pos{File: d.file}
	}
	return diag.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.diags = d.diags.Errorf(d.pos(n), format, args...)
}

func (d *decoder) errorHint(n *yaml.Node, hint, format string, args ...any) {
	d.diags = d.diags.Append(diag.Diagnostic{
		Severity: diag.Error,
		Pos:      d.pos(n),
		Message:  fmt.Sprintf(format, args...),
		Hint:     hint,
	})
}

func (d *decoder) warnf(n *yaml.Node, format string, args ...any) {
	d.diags = d.diags.Warnf(d.pos(n), format, args...)
}

// resolve follows aliases and counts the visit. It returns nil once a
// budget is spent.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	if d.exhausted {
		return nil
	}
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 100 {
			return nil
		}
		d.aliases++
		n = n.Alias
	}
	if n == nil {
		return nil
	}
	d.visits++
	switch {
	case d.aliases > maxAliases:
		d.exhausted = true
		d.errorf(n, "file is too complex to load: more than %d alias expansions", maxAliases)
		return nil
	case d.visits > maxVisits:
		d.exhausted = true
		d.errorf(n, "file is too complex to load: more than %d values to read", maxVisits)
		return nil
	}
	return n
}

// maxDepth bounds how deeply the values of a file nest, aliases
// followed. The decoder walks them recursively and each level adds to
// the text of its messages, so a chain of anchors each nesting the one
// before (`&a2 {not: *a1}`), which yaml.v3's own bound on written
// nesting does not see, would take minutes and gigabytes. Real suites
// nest a few levels.
const maxDepth = 1000

// nestCheck finds, in one walk of a document that does not follow
// aliases, an alias written inside the value it names (`&a {<<: *a}`,
// `&a {not: *a}`: followed, it never ends; yaml.v3 refuses one only when
// decoding into Go values) and a value nested more than maxDepth levels
// deep. An alias names a value whose anchor comes before it: either one
// the walk has entered and not left (a loop) or one it has measured.
type nestCheck struct {
	open   map[*yaml.Node]bool
	height map[*yaml.Node]int
}

// walk returns how many levels n nests, or the node at fault and
// whether it is an alias inside its own value.
func (c *nestCheck) walk(n *yaml.Node) (height int, bad *yaml.Node, loop bool) {
	if n.Kind == yaml.AliasNode {
		if c.open[n.Alias] {
			return 0, n, true
		}
		return c.height[n.Alias], nil, false
	}
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	for _, child := range n.Content {
		h, bad, loop := c.walk(child)
		if bad != nil {
			return 0, bad, loop
		}
		height = max(height, h)
	}
	height++
	if height > maxDepth {
		return 0, n, false
	}
	if n.Anchor != "" {
		c.height[n] = height
	}
	return height, nil, false
}

// nesting reports an alias inside its own value or a value nested too
// deeply (nestCheck), and says whether there is one.
func (d *decoder) nesting(root *yaml.Node) bool {
	c := nestCheck{open: map[*yaml.Node]bool{}, height: map[*yaml.Node]int{}}
	_, bad, loop := c.walk(root)
	switch {
	case bad == nil:
		return false
	case loop:
		d.errorHint(bad, "an alias cannot stand inside the value it names; copy what it should repeat",
			"alias *%s is inside the value of its anchor &%s: it would repeat that value inside itself without end", bad.Value, bad.Value)
	default:
		d.errorf(bad, "file is too complex to load: values nested more than %d levels deep, aliases followed", maxDepth)
	}
	return true
}

// kindName describes a node for "must be X, not Y" messages.
func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "an unknown node"
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// pairs returns the entries of a mapping, with YAML merge keys (`<<: *x`)
// applied: keys written in the mapping override merged ones. Duplicate keys
// are reported. A non-mapping is reported as "what must be a mapping".
func (d *decoder) pairs(n *yaml.Node, what string) ([]pair, bool) {
	n = d.resolve(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, not %s", what, kindName(n))
		return nil, false
	}
	var own, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "%s: keys must be plain names, not %s", what, kindName(k))
			continue
		}
		if k.Tag == "!!merge" {
			merged = append(merged, d.mergePairs(v, what)...)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.dupKey(what, k, first)
			continue
		}
		seen[k.Value] = k
		own = append(own, pair{Name: d.intern(k.Value), Key: k, Val: v})
	}
	if len(merged) == 0 {
		return own, true
	}
	out := make([]pair, 0, len(merged)+len(own))
	for _, p := range merged {
		if _, overridden := seen[p.Name]; overridden {
			continue
		}
		seen[p.Name] = p.Key
		out = append(out, p)
	}
	return append(out, own...), true
}

// dupKey reports key k of a mapping, written before at first: yaml.v3
// does not when it decodes into nodes, and the later value would
// silently replace the earlier.
func (d *decoder) dupKey(what string, k, first *yaml.Node) {
	d.errorf(k, "%s: key %q is already defined at line %d", what, k.Value, first.Line)
}

// mergePairs reads the value of a `<<` key: a mapping or a list of them.
func (d *decoder) mergePairs(v *yaml.Node, what string) []pair {
	v = d.resolve(v)
	if v == nil {
		return nil
	}
	if v.Kind == yaml.SequenceNode {
		var out []pair
		for _, item := range v.Content {
			ps, _ := d.pairs(item, what+" merge")
			out = append(out, ps...)
		}
		return out
	}
	ps, _ := d.pairs(v, what+" merge")
	return ps
}

// keySet is an allow-list of the keys of one level, with hints for keys
// that belong to another level.
type keySet struct {
	what  string
	keys  []string
	moved map[string]string // misplaced key -> hint
	// means are the words people write for one of keys (user: for say:):
	// the key an unknown word is taken for, as a near spelling is.
	means map[string]string
	// extensions lets keys starting with "x-" through unread: a place to
	// define YAML anchors shared by several scenarios.
	extensions bool
}

// object reads a mapping against an allow-list. Unknown keys are reported
// with a "did you mean" hint and left out of the result.
func (d *decoder) object(n *yaml.Node, ks keySet) (map[string]pair, []pair, bool) {
	ps, ok := d.pairs(n, ks.what)
	if !ok {
		return nil, nil, false
	}
	known := make(map[string]pair, len(ps))
	var order []pair
	for _, p := range ps {
		if ks.extensions && strings.HasPrefix(p.Name, "x-") {
			continue
		}
		if !slices.Contains(ks.keys, p.Name) {
			hint := ks.moved[p.Name]
			if k := ks.meant(p.Name); hint == "" && k != "" {
				hint = fmt.Sprintf("did you mean %q?", k)
			}
			if m := ks.moved[diag.Synonym(p.Name)]; hint == "" && m != "" {
				// A check's synonym beside say: (expect_text:): where
				// the check goes, as for the check's own key.
				hint = fmt.Sprintf("did you mean %q? %s", diag.Synonym(p.Name), m)
			}
			if hint == "" {
				hint = commaSplit(n, p.Key)
			}
			if hint == "" {
				hint = "known keys: " + strings.Join(ks.keys, ", ")
			}
			d.errorHint(p.Key, hint, "unknown key %q in %s", p.Name, ks.what)
			continue
		}
		known[p.Name] = p
		order = append(order, p)
	}
	return known, order, true
}

// commaSplit is the hint of an unknown key, written without a value in a
// mapping in braces, that a comma split off the plain value before it:
// `{excludes: Handoff, Goodbye}` is the key excludes with the value
// Handoff, then a key Goodbye; the list meant is `excludes: [Handoff,
// Goodbye]`. "" when key is not such a key.
func commaSplit(m, key *yaml.Node) string {
	if m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle == 0 {
		return ""
	}
	c := m.Content
	i := slices.Index(c, key)
	if i < 0 || i%2 != 0 || !isNull(c[i+1]) {
		return ""
	}
	// Back to the pair whose value the comma ended, over the keys split
	// off it before this one.
	j := i - 2
	for j >= 0 && isNull(c[j+1]) {
		j -= 2
	}
	if j < 0 || c[j+1].Kind != yaml.ScalarNode || c[j+1].Style != 0 {
		return ""
	}
	items := []string{c[j+1].Value}
	for k := j + 2; k+1 < len(c) && isNull(c[k+1]); k += 2 {
		items = append(items, c[k].Value)
	}
	return fmt.Sprintf("a comma ends a value inside {...}: for a list, write %s: [%s]", c[j].Value, strings.Join(items, ", "))
}

// meant is the key an unknown key is taken for: one whose word it is, or
// the one it is a near spelling of; "" when none.
func (ks keySet) meant(name string) string {
	if k, ok := ks.means[name]; ok {
		return k
	}
	if _, ok := ks.moved[name]; ok {
		// Written at the wrong level, not misspelt.
		return ""
	}
	return diag.Suggest(name, ks.keys)
}

// tookFor says whether the mapping m holds an unknown key that object
// reported as a misspelling of key: key's absence is then the same
// mistake, which a second message would only repeat.
func (ks keySet) tookFor(m *yaml.Node, key string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if ks.extensions && strings.HasPrefix(k, "x-") {
			continue
		}
		if !slices.Contains(ks.keys, k) && ks.meant(k) == key {
			return true
		}
	}
	return false
}

// scalar returns the text of a scalar as written, with booleans normalised
// to true/false because the platform's JSON renders them that way. Null and
// non-scalars are reported.
func (d *decoder) scalar(n *yaml.Node, what string) (string, bool) {
	n = d.resolve(n)
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s must be a single value, not %s", what, kindName(n))
		return "", false
	}
	switch n.Tag {
	case "!!null":
		d.errorHint(n, `write "" for an empty text, or quote "null" to mean the word`, "%s has no value", what)
		return "", false
	case "!!bool":
		return strings.ToLower(n.Value), true
	}
	d.envRefs.note(n.Value, d.scalarAt(n))
	return d.intern(n.Value), true
}

// str is scalar plus a check of the ${...} references in the value.
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	s, ok := d.scalar(n, what)
	if ok {
		d.checkRefs(d.resolve(n), s)
		if d.sc != nil {
			// Where a reference is written is worked out only for a
			// value that has one: most have none.
			var at func(int) diag.Pos
			if strings.Contains(s, "${") {
				at = d.scalarAt(d.resolve(n))
			}
			d.sc.read(s, at)
		}
	}
	return s, ok
}

// strList reads a list of strings; a single value is a list of one.
func (d *decoder) strList(n *yaml.Node, what string, allowEmpty bool) ([]string, bool) {
	n = d.resolve(n)
	if n == nil {
		return nil, false
	}
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		s, ok := d.str(n, what)
		if !ok {
			return nil, false
		}
		d.commaList(n, what, s)
		return []string{s}, true
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list of values, not %s", what, kindName(n))
		return nil, false
	}
	if len(n.Content) == 0 && !allowEmpty {
		d.errorf(n, "%s must not be empty", what)
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for _, item := range n.Content {
		s, itemOK := d.str(item, what+" item")
		ok = ok && itemOK
		out = append(out, s)
	}
	return out, ok
}

// commaList warns of a list's value written as one plain scalar with
// commas (`excludes: Handoff, Goodbye`): YAML reads it as one name, so
// an exclusion of it passes whatever the agent does and an inclusion
// fails whatever it does. A quoted value keeps its commas unwarned.
func (d *decoder) commaList(n *yaml.Node, what, s string) {
	if n.Style != 0 || !strings.Contains(s, ",") {
		return
	}
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	if len(items) < 2 {
		return
	}
	d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: d.pos(n),
		Message: fmt.Sprintf("%s is one value, %q, not a list of %d", what, s, len(items)),
		Hint:    fmt.Sprintf("write [%s] for a list; quote the value to keep it one", strings.Join(items, ", "))})
}

// boolean reads true or false; YAML 1.1 words like yes/no are refused
// because yaml.v3 reads them as strings elsewhere.
func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	n = d.resolve(n)
	if n == nil {
		return false, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		return strings.EqualFold(n.Value, "true"), true
	}
	hint := ""
	if b, ok := yaml11Bool(n.Value); ok && n.Kind == yaml.ScalarNode {
		hint = fmt.Sprintf("write %t", b)
	}
	d.errorHint(n, hint, "%s must be true or false, not %s", what, kindName(n))
	return false, false
}

// integer reads a whole number.
func (d *decoder) integer(n *yaml.Node, what string) (int, bool) {
	n = d.resolve(n)
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var v int64
		if err := n.Decode(&v); err == nil && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
		d.errorf(n, "%s: %s is out of range", what, n.Value)
		return 0, false
	}
	got := kindName(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		got = n.Value
	}
	d.errorf(n, "%s must be a whole number, not %s", what, got)
	return 0, false
}

// number reads a decimal; a string ending in % is read as a share.
func (d *decoder) number(n *yaml.Node, what string) (float64, bool) {
	n = d.resolve(n)
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!int", "!!float":
			var v float64
			if err := n.Decode(&v); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v, true
			}
		case "!!str":
			if pct, ok := strings.CutSuffix(strings.TrimSpace(n.Value), "%"); ok {
				if v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
					return v / 100, true
				}
			}
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		// .nan, .inf: numbers to YAML, but no rate or bound.
		d.errorf(n, "%s must be a finite number, not %s", what, n.Value)
		return 0, false
	}
	d.errorf(n, "%s must be a number, not %s", what, kindName(n))
	return 0, false
}

// regex checks that an RE2 expression compiles, as it will at run time:
// its ${...} references stand for literal text (assert.CheckPattern), so
// a pattern broken around one is refused here, not at run time, where it
// would fail the scenario as if the agent were at fault.
func (d *decoder) regex(n *yaml.Node, pattern, what string) {
	if d.compiled[pattern] {
		return
	}
	if err := assert.CheckPattern(pattern); err != nil {
		d.errorHint(n, assert.RE2Hint, "%s: %v", what, err)
		return
	}
	if d.compiled == nil {
		d.compiled = map[string]bool{}
	}
	d.compiled[pattern] = true
}

// scalarAt returns where each byte offset of the value of scalar n is
// written: at its own line and column when the source shows the value as
// it is (a plain or quoted scalar on one line with no escape before the
// offset, each line of a literal block scalar), else at the scalar. A
// feature's DocString reports its references the same way (stepTexts).
func (d *decoder) scalarAt(n *yaml.Node) func(off int) diag.Pos {
	at := d.pos(n)
	whole := func(int) diag.Pos { return at }
	if n == nil || len(d.src) == 0 {
		return whole
	}
	if d.lines == nil {
		ix := newLineIndex(d.src)
		d.lines = &ix
	}
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		return func(off int) diag.Pos {
			before := n.Value[:off]
			k := strings.Count(before, "\n")
			start := strings.LastIndexByte(before, '\n') + 1
			end := strings.IndexByte(n.Value[start:], '\n')
			if end < 0 {
				end = len(n.Value) - start
			}
			text := n.Value[start : start+end]
			line, ok := d.lines.line(n.Line + 1 + k)
			if !ok || !strings.HasSuffix(line, text) {
				return at
			}
			indent := utf8.RuneCountInString(line) - utf8.RuneCountInString(text)
			return diag.Pos{File: d.file, Line: n.Line + 1 + k, Col: indent + 1 + utf8.RuneCountInString(n.Value[start:off])}
		}
	case n.Style&(yaml.FoldedStyle|yaml.TaggedStyle|yaml.FlowStyle) == 0:
		line, ok := d.lines.line(n.Line)
		quote := 0
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			quote = 1
		}
		if !ok {
			return whole
		}
		rest := []rune(line)
		if n.Column-1+quote > len(rest) {
			return whole
		}
		src := string(rest[n.Column-1+quote:])
		return func(off int) diag.Pos {
			// The source shows the value up to its reference unchanged:
			// no escape, quote or fold before it.
			if !strings.HasPrefix(src, n.Value[:off]) || strings.ContainsAny(n.Value[:off], "\\'\n") {
				return at
			}
			p := at
			p.Col += quote + utf8.RuneCountInString(n.Value[:off])
			return p
		}
	}
	return whole
}

// checkRefs reports ${name} references that are malformed or name nothing
// in scope, each where scalarAt says it is written. ${env:NAME} is left to
// run time.
func (d *decoder) checkRefs(n *yaml.Node, s string) {
	if d.scope == nil || !strings.Contains(s, "$") {
		return
	}
	at := d.scalarAt(n)
	refs, err := interp.Scan(s)
	if err != nil {
		d.diags = d.diags.Errorf(at(interp.Offset(err)), "%v", err)
		return
	}
	for _, r := range refs {
		if d.read != nil && !r.Env {
			d.read[r.Name] = true
		}
		if r.Env || d.scope[r.Name] {
			continue
		}
		names := make([]string, 0, len(d.scope))
		for k := range d.scope {
			names = append(names, k)
		}
		sort.Strings(names) // ties in suggest must not depend on map order
		hint := d.missingColumnHint(r.Name)
		if hint == "" {
			hint = d.capturedLater(r.Name)
		}
		if hint == "" {
			hint = d.capturedElsewhere(r.Name)
		}
		if s := diag.Suggest(r.Name, names); hint == "" && s != "" {
			hint = fmt.Sprintf("did you mean ${%s}?", s)
		}
		if hint == "" {
			// Nothing near: say how a variable comes to be.
			hint = fmt.Sprintf("define it under vars: of the suite or the scenario: vars: {%s: ...}", r.Name)
		}
		d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at(r.Off), Hint: hint,
			Message: fmt.Sprintf("unknown variable ${%s}: not a var, an example column or a capture of an earlier turn", r.Name)})
	}
}
