package agent

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/examples/agents"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/yamlerr"
)

// Definition is one loaded agent: its identity, language model and dialogue
// graph, compiled. It is immutable after Load and shared by every session
// of the agent, concurrently.
type Definition struct {
	// ID is the agent (project) id used in API paths: a slug such as
	// "restaurant" or the prefixed form PROJECT-XXXXXXXX.
	ID string
	// Name is the display name; it defaults to the ID.
	Name string
	// Description is free text for humans.
	Description string
	// Path is the file the definition came from.
	Path string
	// ASRLang and TTSLang are the language codes a session uses unless its
	// create call names others.
	ASRLang string
	TTSLang string
	// Version labels this version of the agent (`version:`, default
	// DefaultVersion). Versions, AtVersion and Deployed reach the others.
	Version string
	// Digest identifies the content of the file the definition came
	// from, for every version of it: the simulator derives its deployment
	// ids from it, so a simulator started on an edited file serves new
	// deployments, as a platform serves a new deployment of a changed
	// agent, where the same seed alone would repeat the old ids.
	Digest uint64

	idPos     diag.Pos
	numbers   []string
	variants  []variant
	start     *node
	silence   *node
	fallback  *node
	intents   []*intent
	entities  []*entity
	topics    []*topic
	functions map[string]*function
	routes    []*rule
	nodes     map[string]*node
	set       *versionSet
}

// DefaultLang is the ASR and TTS language of a definition that names none.
const DefaultLang = "en-US"

type variant struct{ id, name string }

// node is one dialogue node.
type node struct {
	name string
	pos  diag.Pos
	flow string
	step string

	say        phrasing
	variantSay []phrasing // by definition variant index; empty entry = use say
	reprompt   phrasing
	delay      phrasing
	// latency is the simulated time the agent takes to play this node
	// (latencyMs); the turn's reply waits for the sum over its nodes.
	latency time.Duration
	// pause splits a web chat answer before what this node says
	// (pauseMs): the agent's typing indicator goes off for this long.
	pause time.Duration

	sets     []setAction
	calls    []*call
	metrics  []metricAction
	retrieve bool
	llm      *llmSpec
	handoff  *handoffSpec
	end      bool

	// next is tried on the user's next message while this node is current;
	// then is tried as soon as the node has spoken, within the same turn.
	next []*rule
	then []*rule
}

type setAction struct {
	key string
	val *valueTemplate
}

type metricAction struct {
	name string
	val  *template
}

type llmSpec struct {
	model        string
	promptTokens int
}

type handoffSpec struct {
	destination string
	reason      *template
	sharedID    *template
	data        *valueTemplate
}

// call is one function call of a node.
type call struct {
	fn      *function
	args    *valueTemplate
	saveAs  string
	onError *node
}

// function is a simulated backend function: it returns its result template
// or fails, always or when its arguments equal given values.
type function struct {
	name       string
	result     *valueTemplate
	latencyMS  int
	fails      bool
	failWhen   []keyValue
	failReason *template
}

type keyValue struct {
	key   string
	value string
}

type keyNumber struct {
	key   string
	value float64
}

// rule moves the conversation to a node when its condition holds: to, or
// one of alts drawn by the weights cum.
type rule struct {
	cond cond
	to   *node
	alts []*node
	cum  weights
}

// cond is a conjunction; an empty cond always holds.
type cond struct {
	intents   []string // any of
	entities  []string // all extracted this turn
	set       []string // all present in state
	unset     []string // all absent from state
	equals    []keyValue
	atLeast   []keyNumber
	below     []keyNumber
	match     *regexp.Regexp
	knowledge *bool
}

// idRE accepts the two project id forms of the reference: a slug, or
// PROJECT- followed by 8 characters.
var idRE = regexp.MustCompile(`^(?:[a-z0-9][a-z0-9_-]*|PROJECT-[A-Za-z0-9]{8})$`)

// VariantName returns the name of the variant with the given id.
func (d *Definition) VariantName(id string) (string, bool) {
	for _, v := range d.variants {
		if v.id == id {
			return v.name, true
		}
	}
	return "", false
}

// Variant is a variant of an agent: the id a debug-chat session selects it
// by (variantId) and the name conversations report (variant_name).
type Variant struct {
	ID   string
	Name string
}

// Variants returns the agent's variants in file order. The slice is a copy.
func (d *Definition) Variants() []Variant {
	out := make([]Variant, len(d.variants))
	for i, v := range d.variants {
		out[i] = Variant{ID: v.id, Name: v.name}
	}
	return out
}

// Numbers returns the phone numbers provisioned for the agent, in file
// order. The slice is a copy.
func (d *Definition) Numbers() []string {
	return append([]string(nil), d.numbers...)
}

// NodeNames returns the names of every node of the definition, sorted:
// the universe a node-coverage report measures a run against.
func (d *Definition) NodeNames() []string {
	names := make([]string, 0, len(d.nodes))
	for name := range d.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Builtin returns the example agents embedded from examples/agents. They
// are parsed once per process: a loaded definition is read only, shared
// by every session of a simulator already, and a process may start
// several simulators (compare starts two; the tests, hundreds: 17 ms of
// parsing each under -race). The slice is the caller's own.
func Builtin() ([]*Definition, error) {
	defs, err := loadBuiltin()
	return slices.Clone(defs), err
}

var loadBuiltin = sync.OnceValues(func() ([]*Definition, error) {
	defs, diags := LoadPath(agents.FS, ".")
	if err := diags.Err(); err != nil {
		return nil, fmt.Errorf("load built-in agents: %w", err)
	}
	return defs, nil
})

// LoadPath loads the agent definitions of p: every *.yaml and *.yml file
// when p is a directory, else the one file p names, whatever its name. It
// returns the definitions sorted by ID and the problems of every file; a
// duplicate ID is an error at the second file's id.
func LoadPath(fsys fs.FS, p string) ([]*Definition, diag.Diagnostics) {
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, diag.Diagnostics{}.Errorf(diag.Pos{File: p}, "read agent definitions: %v", err)
	}
	files := []string{p}
	if info.IsDir() {
		if files, err = definitionFiles(fsys, p); err != nil {
			return nil, diag.Diagnostics{}.Errorf(diag.Pos{File: p}, "read agent directory: %v", err)
		}
	}
	var (
		defs  []*Definition
		diags diag.Diagnostics
	)
	byID := map[string]*Definition{}
	for _, p := range files {
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			diags = diags.Errorf(diag.Pos{File: p}, "read agent definition: %v", err)
			continue
		}
		def, ds := Load(p, src)
		diags = append(diags, ds...)
		if def == nil {
			continue
		}
		if prev, ok := byID[def.ID]; ok {
			diags = diags.Append(diag.Diagnostic{
				Severity: diag.Error,
				Pos:      def.idPos,
				Message:  fmt.Sprintf("duplicate agent id %q, already defined at %s", def.ID, prev.idPos),
			})
			continue
		}
		byID[def.ID] = def
		defs = append(defs, def)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].ID < defs[j].ID })
	return defs, diags
}

// definitionFiles lists the *.yaml and *.yml files of dir, not its
// subdirectories, whatever their names.
func definitionFiles(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			files = append(files, path.Join(dir, name))
		}
	}
	return files, nil
}

// Load decodes and compiles one agent definition. Every problem of the file
// is reported, each at its file:line:col; the definition is nil when any of
// them is an error.
func Load(file string, src []byte) (*Definition, diag.Diagnostics) {
	d := newDecoder(file, src)
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		// Told as a suite's are: at the line and column written wrong, with
		// the fix for the common mistakes.
		dg := yamlerr.Diagnostic(file, src, err)
		dg.Source = d.source(dg.Pos)
		d.diags = d.diags.Append(dg)
		return nil, d.diags
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, d.diags.Errorf(diag.Pos{File: file}, "empty agent definition: it needs at least id, start and nodes")
	}
	root := doc.Content[0]
	def, l := d.definition(root)
	if !d.diags.HasErrors() && len(l.versionSpecs) > 0 {
		l.compileVersions(root)
	}
	if d.diags.HasErrors() {
		d.diags.Sort()
		return nil, d.diags
	}
	h := fnv.New64a()
	h.Write(src)
	def.Digest = h.Sum64()
	for _, label := range def.Versions() {
		v, _ := def.AtVersion(label)
		v.Path, v.Digest = file, def.Digest
	}
	return def, d.diags
}

// pending is a by-name reference resolved once every node is known.
type pending struct {
	n    *yaml.Node
	name string
	set  func(*node)
}

// loader holds what the definition's parts refer to by name until the whole
// file is read, since YAML keys may come in any order.
type loader struct {
	*decoder
	def        *Definition
	nodeRefs   []pending
	fnRefs     []func()
	intentRefs []*yaml.Node
	entityRefs []*yaml.Node
	variantSay map[*node][]variantPhrasing
	start      *yaml.Node

	// topKeys are the keys of the definition's top level, in the order of
	// its fields; versionsNode, envNode and what checkVersions makes of
	// them describe the file's other versions.
	topKeys      []string
	versionsNode *yaml.Node
	envNode      *yaml.Node
	versionSpecs []versionSpec
	deployed     map[string]string
}

type variantPhrasing struct {
	key *yaml.Node
	say phrasing
}

// definition compiles the mapping at root. Its loader keeps what the
// caller needs to compile the file's other versions.
func (d *decoder) definition(root *yaml.Node) (*Definition, *loader) {
	def := &Definition{functions: map[string]*function{}, nodes: map[string]*node{}}
	l := &loader{decoder: d, def: def, variantSay: map[*node][]variantPhrasing{}}
	var nodesNode *yaml.Node
	fields := []field{
		{"id", func(k, v *yaml.Node) {
			if s, ok := d.str(v, "id"); ok {
				def.ID, def.idPos = s, d.pos(v)
				if !idRE.MatchString(s) {
					d.errorf(v, "id %q must be a slug (lower-case letters, digits, - and _) or PROJECT- followed by 8 letters or digits", s)
				}
			}
		}},
		{"name", func(k, v *yaml.Node) { def.Name, _ = d.str(v, "name") }},
		{"description", func(k, v *yaml.Node) { def.Description, _ = d.str(v, "description") }},
		{"language", func(k, v *yaml.Node) {
			d.mapping(v, "language", []field{
				{"asr", func(k, v *yaml.Node) { def.ASRLang, _ = d.str(v, "language.asr") }},
				{"tts", func(k, v *yaml.Node) { def.TTSLang, _ = d.str(v, "language.tts") }},
			})
		}},
		{"numbers", func(k, v *yaml.Node) { def.numbers = d.strs(v, "numbers") }},
		{"variants", func(k, v *yaml.Node) { l.variants(v) }},
		{"start", func(k, v *yaml.Node) { l.start = v; l.nodeRef(v, "start", func(n *node) { def.start = n }) }},
		{"silence", func(k, v *yaml.Node) { l.nodeRef(v, "silence", func(n *node) { def.silence = n }) }},
		{"fallback", func(k, v *yaml.Node) { l.nodeRef(v, "fallback", func(n *node) { def.fallback = n }) }},
		{"intents", func(k, v *yaml.Node) { l.intents(v) }},
		{"entities", func(k, v *yaml.Node) { l.entities(v) }},
		{"knowledge", func(k, v *yaml.Node) { l.knowledge(v) }},
		{"functions", func(k, v *yaml.Node) { l.functions(v) }},
		{"routes", func(k, v *yaml.Node) { def.routes = l.rules(v, "routes") }},
		{"nodes", func(k, v *yaml.Node) { nodesNode = v }},
		{"version", func(k, v *yaml.Node) { def.Version, _ = l.label(v, "version") }},
		{"versions", func(k, v *yaml.Node) { l.versionsNode = v }},
		{"environments", func(k, v *yaml.Node) { l.envNode = v }},
	}
	for _, f := range fields {
		l.topKeys = append(l.topKeys, f.key)
	}
	if !d.mapping(root, "agent definition", fields, "id", "start", "nodes") {
		return def, l
	}
	if def.Version == "" {
		def.Version = DefaultVersion
	}
	// Nodes are read last so their references to intents, entities,
	// functions and variants can be checked whatever the key order.
	if nodesNode != nil {
		d.pairs(nodesNode, "node", func(k, v *yaml.Node) {
			n := &node{name: k.Value, pos: d.pos(k)}
			def.nodes[k.Value] = n
			l.node(n, v)
		})
	}
	l.resolve()
	if def.Name == "" {
		def.Name = def.ID
	}
	if def.ASRLang == "" {
		def.ASRLang = DefaultLang
	}
	if def.TTSLang == "" {
		def.TTSLang = DefaultLang
	}
	l.checkVersions()
	return def, l
}

func (l *loader) nodeRef(v *yaml.Node, what string, set func(*node)) {
	if s, ok := l.str(v, what); ok {
		l.nodeRefs = append(l.nodeRefs, pending{n: v, name: s, set: set})
	}
}

func (l *loader) variants(v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		l.errorf(v, "variants must be a list of {id, name}, got %s", kindName(v))
		return
	}
	seen := map[string]bool{}
	for _, item := range v.Content {
		var vr variant
		l.mapping(item, "variant", []field{
			{"id", func(k, v *yaml.Node) {
				vr.id, _ = l.str(v, "variant id")
				if seen[vr.id] {
					l.errorf(v, "duplicate variant id %q", vr.id)
				}
				seen[vr.id] = true
			}},
			{"name", func(k, v *yaml.Node) { vr.name, _ = l.str(v, "variant name") }},
		}, "id", "name")
		l.def.variants = append(l.def.variants, vr)
	}
}

func (l *loader) matcherFields(m *matcher) []field {
	return []field{
		{"patterns", func(k, v *yaml.Node) {
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, it := range items {
				if re := l.regex(it, "pattern"); re != nil {
					m.patterns = append(m.patterns, newPattern(re))
				}
			}
		}},
		{"keywords", func(k, v *yaml.Node) {
			for _, it := range l.strItems(v, "keywords") {
				kw := strings.ToLower(strings.TrimSpace(it.Value))
				if kw == "" {
					l.errorf(it, "empty keyword")
					continue
				}
				m.keywords = append(m.keywords, kw)
			}
		}},
	}
}

func (l *loader) intents(v *yaml.Node) {
	l.pairs(v, "intent", func(k, v *yaml.Node) {
		in := &intent{name: k.Value}
		before := len(l.diags)
		l.mapping(v, "intent "+k.Value, l.matcherFields(&in.matcher))
		if in.empty() && len(l.diags) == before {
			l.errorf(k, "intent %q has no patterns or keywords", k.Value)
		}
		l.def.intents = append(l.def.intents, in)
	})
}

func (l *loader) entities(v *yaml.Node) {
	l.pairs(v, "entity", func(k, v *yaml.Node) {
		e := &entity{name: k.Value, stateKey: k.Value}
		// Listed whatever its problems, so the rules that use it are not
		// told it is unknown: the file is refused at its own error anyway.
		l.def.entities = append(l.def.entities, e)
		before := len(l.diags)
		typeName := "string"
		var typeNode *yaml.Node
		l.mapping(v, "entity "+k.Value, []field{
			{"type", func(k, v *yaml.Node) { typeName, _ = l.str(v, "entity type"); typeNode = v }},
			{"patterns", func(k, v *yaml.Node) {
				items := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					items = v.Content
				}
				for _, it := range items {
					if re := l.regex(it, "pattern"); re != nil {
						e.patterns = append(e.patterns, newPattern(re))
					}
				}
			}},
			{"stateKey", func(k, v *yaml.Node) { e.stateKey, _ = l.str(v, "stateKey") }},
			{"case", func(k, v *yaml.Node) {
				e.caseFold, _ = l.str(v, "case")
				if e.caseFold != "upper" && e.caseFold != "lower" {
					l.errorf(v, "case must be upper or lower, got %q", e.caseFold)
				}
			}},
		})
		t, ok := builtinEntityType(typeName)
		if !ok {
			l.hintf(typeNode, diag.DidYouMean(typeName, entityTypeNames), "unknown entity type %q; types are %s", typeName, strings.Join(entityTypeNames, ", "))
			return
		}
		e.typ = t
		if len(e.patterns) == 0 {
			// Patterns that did not compile were written: their own error says it.
			if t.pattern == nil && len(l.diags) == before {
				l.errorf(k, "entity %q of type string needs patterns", k.Value)
			}
			if t.pattern != nil {
				e.patterns = []*pattern{newPattern(t.pattern)}
				e.wholeMatch = t.name == "time"
			}
		}
	})
}

func (l *loader) knowledge(v *yaml.Node) {
	l.pairs(v, "knowledge topic", func(k, v *yaml.Node) {
		t := &topic{name: k.Value}
		fields := append(l.matcherFields(&t.matcher),
			field{"sources", func(k, v *yaml.Node) { t.sources = l.strs(v, "sources") }},
			field{"answer", func(k, v *yaml.Node) { t.answer, _ = l.str(v, "answer") }},
		)
		before := len(l.diags)
		l.mapping(v, "knowledge topic "+k.Value, fields, "answer")
		if t.matcher.empty() && len(l.diags) == before {
			l.errorf(k, "knowledge topic %q has no patterns or keywords", k.Value)
		}
		l.def.topics = append(l.def.topics, t)
	})
}

func (l *loader) functions(v *yaml.Node) {
	l.pairs(v, "function", func(k, v *yaml.Node) {
		f := &function{name: k.Value, latencyMS: defaultLatencyMS}
		l.mapping(v, "function "+k.Value, []field{
			{"result", func(k, v *yaml.Node) { f.result = l.compileValue(v, scopeFunction) }},
			{"latencyMs", func(k, v *yaml.Node) { f.latencyMS = l.integer(v, "latencyMs", 0) }},
			{"fail", func(k, v *yaml.Node) {
				f.fails = true
				l.mapping(v, "fail", []field{
					{"when", func(k, v *yaml.Node) {
						l.pairs(v, "argument", func(k, v *yaml.Node) {
							if s, ok := l.str(v, "fail.when value"); ok {
								f.failWhen = append(f.failWhen, keyValue{k.Value, s})
							}
						})
					}},
					{"error", func(k, v *yaml.Node) {
						if s, ok := l.str(v, "fail.error"); ok {
							f.failReason = l.compileTemplate(v, s, scopeFunction)
						}
					}},
				}, "error")
			}},
		})
		l.def.functions[k.Value] = f
	})
}

// nodeTime reads a node's time in milliseconds (latencyMs, pauseMs), of
// at most maxNodeLatencyMS. Beyond it the sum of a turn's nodes would
// overflow a duration; no client waits an hour anyway. (A definition
// with an error is not served: the value past it is never used.)
func (l *loader) nodeTime(v *yaml.Node, key string) time.Duration {
	ms := l.integer(v, key, 0)
	if ms > maxNodeLatencyMS {
		l.errorf(v, "%s must be at most %d (an hour), got %d", key, maxNodeLatencyMS, ms)
	}
	return time.Duration(ms) * time.Millisecond
}

// maxNodeLatencyMS bounds a node's latencyMs and pauseMs: an hour.
const maxNodeLatencyMS = 3_600_000

// defaultLatencyMS is the latency a function event reports when the
// definition gives none. The reference does not show function events; the
// value only has to be plausible.
const defaultLatencyMS = 50

func (l *loader) node(n *node, v *yaml.Node) {
	var stepNode, endNode, moveNode *yaml.Node
	var gotoRule *rule
	l.mapping(v, "node "+n.name, []field{
		{"flow", func(k, v *yaml.Node) { n.flow, _ = l.str(v, "flow") }},
		{"step", func(k, v *yaml.Node) { n.step, _ = l.str(v, "step"); stepNode = v }},
		{"say", func(k, v *yaml.Node) { n.say = l.phrasing(v, "say") }},
		{"variants", func(k, v *yaml.Node) {
			l.pairs(v, "variant", func(k, v *yaml.Node) {
				l.variantSay[n] = append(l.variantSay[n], variantPhrasing{key: k, say: l.phrasing(v, "variant say")})
			})
		}},
		{"reprompt", func(k, v *yaml.Node) { n.reprompt = l.phrasing(v, "reprompt") }},
		{"delay", func(k, v *yaml.Node) { n.delay = l.phrasing(v, "delay") }},
		{"latencyMs", func(k, v *yaml.Node) { n.latency = l.nodeTime(v, "latencyMs") }},
		{"pauseMs", func(k, v *yaml.Node) { n.pause = l.nodeTime(v, "pauseMs") }},
		{"set", func(k, v *yaml.Node) {
			l.pairs(v, "state key", func(k, v *yaml.Node) {
				n.sets = append(n.sets, setAction{key: k.Value, val: l.compileValue(v, scopeNode)})
			})
		}},
		{"call", func(k, v *yaml.Node) {
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, it := range items {
				n.calls = append(n.calls, l.call(it))
			}
		}},
		{"metrics", func(k, v *yaml.Node) {
			l.pairs(v, "metric", func(k, v *yaml.Node) {
				if s, ok := l.str(v, "metric value"); ok {
					n.metrics = append(n.metrics, metricAction{name: k.Value, val: l.compileTemplate(v, s, scopeNode)})
				}
			})
		}},
		{"retrieve", func(k, v *yaml.Node) { n.retrieve = l.boolean(v, "retrieve") }},
		{"llm", func(k, v *yaml.Node) {
			n.llm = &llmSpec{}
			l.mapping(v, "llm", []field{
				{"model", func(k, v *yaml.Node) { n.llm.model, _ = l.str(v, "llm.model") }},
				{"promptTokens", func(k, v *yaml.Node) { n.llm.promptTokens = l.integer(v, "llm.promptTokens", 0) }},
			}, "model")
		}},
		{"handoff", func(k, v *yaml.Node) {
			h := &handoffSpec{}
			l.mapping(v, "handoff", []field{
				{"destination", func(k, v *yaml.Node) { h.destination, _ = l.str(v, "handoff.destination") }},
				{"reason", func(k, v *yaml.Node) {
					if s, ok := l.str(v, "handoff.reason"); ok {
						h.reason = l.compileTemplate(v, s, scopeNode)
					}
				}},
				{"sharedId", func(k, v *yaml.Node) {
					if s, ok := l.str(v, "handoff.sharedId"); ok {
						h.sharedID = l.compileTemplate(v, s, scopeNode)
					}
				}},
				{"data", func(k, v *yaml.Node) {
					if v.Kind != yaml.MappingNode {
						l.errorf(v, "handoff.data must be a mapping, got %s", kindName(v))
						return
					}
					h.data = l.compileValue(v, scopeNode)
				}},
			}, "destination")
			n.handoff = h
		}},
		{"end", func(k, v *yaml.Node) { n.end = l.boolean(v, "end"); endNode = k }},
		{"next", func(k, v *yaml.Node) { n.next = l.rules(v, "next") }},
		{"then", func(k, v *yaml.Node) { n.then = append(n.then, l.rules(v, "then")...); moveNode = k }},
		{"goto", func(k, v *yaml.Node) {
			gotoRule = &rule{}
			l.target(v, gotoRule)
			moveNode = k
		}},
	})
	// goto is the unconditional last resort after the then rules, whatever
	// the key order in the file.
	if gotoRule != nil {
		n.then = append(n.then, gotoRule)
	}
	if n.step != "" && n.flow == "" {
		l.errorf(stepNode, "node %q has a step but no flow", n.name)
	}
	if n.end && (moveNode != nil || len(n.next) > 0) {
		l.errorf(endNode, "node %q ends the conversation, so it cannot also have next, then or goto", n.name)
	}
	if !n.delay.empty() && n.say.empty() {
		l.errorf(v, "node %q has a delay but nothing to say after it", n.name)
	}
}

func (l *loader) call(v *yaml.Node) *call {
	c := &call{}
	name := func(v *yaml.Node) {
		s, ok := l.str(v, "function name")
		if !ok {
			return
		}
		l.fnRefs = append(l.fnRefs, func() {
			f, ok := l.def.functions[s]
			if !ok {
				names := make([]string, 0, len(l.def.functions))
				for n := range l.def.functions {
					names = append(names, n)
				}
				l.hintf(v, diag.DidYouMean(s, names), "unknown function %q", s)
				return
			}
			c.fn = f
		})
	}
	if v.Kind == yaml.ScalarNode {
		name(v)
		return c
	}
	l.mapping(v, "call", []field{
		{"function", func(k, v *yaml.Node) { name(v) }},
		{"args", func(k, v *yaml.Node) {
			if v.Kind != yaml.MappingNode {
				l.errorf(v, "call args must be a mapping, got %s", kindName(v))
				return
			}
			c.args = l.compileValue(v, scopeNode)
		}},
		{"saveAs", func(k, v *yaml.Node) { c.saveAs, _ = l.str(v, "saveAs") }},
		{"onError", func(k, v *yaml.Node) { l.nodeRef(v, "onError", func(n *node) { c.onError = n }) }},
	}, "function")
	return c
}

func (l *loader) rules(v *yaml.Node, what string) []*rule {
	if v.Kind != yaml.SequenceNode {
		l.errorf(v, "%s must be a list of rules ({if, intent, goto}), got %s", what, kindName(v))
		return nil
	}
	var out []*rule
	for _, item := range v.Content {
		r := &rule{}
		// The rule's intent is shorthand for its condition's: a rule
		// writing both would read as "both intents" to its designer
		// while the names would join into one any-of list.
		var short *yaml.Node
		fromIf := 0
		l.mapping(item, "rule", []field{
			{"if", func(k, v *yaml.Node) {
				n := len(r.cond.intents)
				l.cond(v, &r.cond)
				fromIf = len(r.cond.intents) - n
			}},
			{"intent", func(k, v *yaml.Node) {
				short = k
				r.cond.intents = append(r.cond.intents, l.intentRef(v)...)
			}},
			{"goto", func(k, v *yaml.Node) { l.target(v, r) }},
		}, "goto")
		if short != nil && fromIf > 0 {
			l.errorf(short, "a rule's intent is shorthand for if: {intent: ...}, and this rule's if names intents too: write them in one list (any of them holds)")
		}
		out = append(out, r)
	}
	return out
}

// intentRef decodes the intent names of a rule or condition and keeps
// their nodes for resolve.
func (l *loader) intentRef(v *yaml.Node) []string {
	items := l.strItems(v, "intent")
	l.intentRefs = append(l.intentRefs, items...)
	return values(items)
}

func (l *loader) cond(v *yaml.Node, c *cond) {
	numbers := func(v *yaml.Node, what string) []keyNumber {
		var out []keyNumber
		l.pairs(v, "state key", func(k, v *yaml.Node) {
			out = append(out, keyNumber{k.Value, l.number(v, what)})
		})
		return out
	}
	fields := []field{
		{"intent", func(k, v *yaml.Node) { c.intents = append(c.intents, l.intentRef(v)...) }},
		{"entities", func(k, v *yaml.Node) {
			items := l.strItems(v, "entities")
			c.entities = values(items)
			l.entityRefs = append(l.entityRefs, items...)
		}},
		{"set", func(k, v *yaml.Node) { c.set = l.strs(v, "set") }},
		{"unset", func(k, v *yaml.Node) { c.unset = l.strs(v, "unset") }},
		{"equals", func(k, v *yaml.Node) {
			l.pairs(v, "state key", func(k, v *yaml.Node) {
				if s, ok := l.str(v, "equals value"); ok {
					c.equals = append(c.equals, keyValue{k.Value, s})
				}
			})
		}},
		{"atLeast", func(k, v *yaml.Node) { c.atLeast = numbers(v, "atLeast value") }},
		{"below", func(k, v *yaml.Node) { c.below = numbers(v, "below value") }},
		{"match", func(k, v *yaml.Node) { c.match = l.regex(v, "match") }},
		{"knowledge", func(k, v *yaml.Node) { b := l.boolean(v, "knowledge"); c.knowledge = &b }},
	}
	if v.Kind == yaml.ScalarNode || v.Kind == yaml.SequenceNode {
		// An expression ("intent == order") is what a newcomer writes
		// first, or a list of conditions: say which keys a condition is
		// made of. An alias keeps the hint that it is not expanded.
		keys := make([]string, len(fields))
		for i, f := range fields {
			keys[i] = f.key
		}
		l.hintf(v, "a condition is a mapping of "+strings.Join(keys, ", ")+`, for example {intent: book_table} or {equals: {party_size: "4"}}`,
			"condition must be a mapping, got %s", kindName(v))
		return
	}
	l.mapping(v, "condition", fields)
}

// resolve checks every by-name reference now that the whole file is read.
func (l *loader) resolve() {
	def := l.def
	nodeNames := make([]string, 0, len(def.nodes))
	for n := range def.nodes {
		nodeNames = append(nodeNames, n)
	}
	for _, p := range l.nodeRefs {
		n, ok := def.nodes[p.name]
		if !ok {
			l.hintf(p.n, diag.DidYouMean(p.name, nodeNames), "unknown node %q", p.name)
			continue
		}
		p.set(n)
	}
	for _, f := range l.fnRefs {
		f()
	}
	intentNames := make([]string, len(def.intents))
	for i, in := range def.intents {
		intentNames[i] = in.name
	}
	for _, v := range l.intentRefs {
		if !slices.Contains(intentNames, v.Value) {
			l.hintf(v, diag.DidYouMean(v.Value, intentNames), "unknown intent %q", v.Value)
		}
	}
	entityNames := make([]string, len(def.entities))
	for i, e := range def.entities {
		entityNames[i] = e.name
	}
	for _, v := range l.entityRefs {
		if !slices.Contains(entityNames, v.Value) {
			l.hintf(v, diag.DidYouMean(v.Value, entityNames), "unknown entity %q", v.Value)
		}
	}
	variantIDs := make([]string, len(def.variants))
	for i, v := range def.variants {
		variantIDs[i] = v.id
	}
	for n, vps := range l.variantSay {
		n.variantSay = make([]phrasing, len(def.variants))
		for _, vp := range vps {
			i := indexOf(variantIDs, vp.key.Value)
			if i < 0 {
				l.hintf(vp.key, diag.DidYouMean(vp.key.Value, variantIDs), "unknown variant %q", vp.key.Value)
				continue
			}
			n.variantSay[i] = vp.say
		}
	}
	if len(l.diags) == 0 {
		l.checkLoops()
	}
}

// checkLoops rejects chains of unconditional moves that come back to where
// they started: such a turn would never end. A weighted goto traps the turn
// only when every one of its targets does; one way out ends the turn with
// probability 1, and maxHops bounds it at run time. Conditional loops are
// legal (state changes between visits) and are bounded the same way.
func (l *loader) checkLoops() {
	names := make([]string, 0, len(l.def.nodes))
	for name := range l.def.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	// A node is trapped when it moves on unconditionally and every target
	// of that move is trapped; compute the greatest such set.
	move := func(n *node) *rule {
		if n == nil || !n.delay.empty() || n.end {
			return nil
		}
		for _, r := range n.then {
			if r.cond.always() {
				return r
			}
		}
		return nil
	}
	trapped := map[*node]bool{}
	for _, n := range l.def.nodes {
		trapped[n] = move(n) != nil
	}
	for changed := true; changed; {
		changed = false
		for n, tr := range trapped {
			if !tr {
				continue
			}
			for _, t := range move(n).targets() {
				if !trapped[t] {
					trapped[n], changed = false, true
					break
				}
			}
		}
	}
	for _, name := range names {
		start := l.def.nodes[name]
		if !trapped[start] {
			continue
		}
		// Inside the trapped set every target is trapped: follow the first
		// to name the node where the chain comes back.
		seen := map[*node]bool{}
		n := start
		for !seen[n] {
			seen[n] = true
			n = move(n).targets()[0]
		}
		l.errorAt(start.pos, "", "node %q starts an endless goto loop through %q", start.name, n.name)
	}
}

func (c *cond) always() bool {
	return len(c.intents) == 0 && len(c.entities) == 0 && len(c.set) == 0 && len(c.unset) == 0 &&
		len(c.equals) == 0 && len(c.atLeast) == 0 && len(c.below) == 0 && c.match == nil && c.knowledge == nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
