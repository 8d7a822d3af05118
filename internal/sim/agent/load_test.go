package agent

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/diag"
)

// minimal is the smallest valid definition; cases below break it.
const minimal = `id: demo
start: Hello
nodes:
  Hello:
    say: hi
`

func TestLoadMinimal(t *testing.T) {
	def, diags := Load("demo.yaml", []byte(minimal))
	if diags.HasErrors() {
		t.Fatalf("unexpected diagnostics:\n%v", diags)
	}
	if def.ID != "demo" || def.Name != "demo" || def.ASRLang != DefaultLang || def.TTSLang != DefaultLang || def.Path != "demo.yaml" {
		t.Errorf("defaults not applied: %+v", def)
	}
	if len(def.Numbers()) != 0 {
		t.Errorf("Numbers() = %v, want empty", def.Numbers())
	}
}

func TestLoadErrors(t *testing.T) {
	type testCase struct {
		name string
		src  string
		// want lists "line:col: message substring" per expected diagnostic,
		// in sorted order; hint is checked when not empty.
		want []string
		hint string
	}
	run := func(t *testing.T, tc testCase) {
		def, diags := Load("bad.yaml", []byte(tc.src))
		if def != nil {
			t.Errorf("Load returned a definition despite errors")
		}
		if len(diags) != len(tc.want) {
			t.Fatalf("got %d diagnostics, want %d:\n%v", len(diags), len(tc.want), diags)
		}
		for i, w := range tc.want {
			pos, msg, _ := strings.Cut(w, ": ")
			d := diags[i]
			if got := strings.TrimPrefix(d.Pos.String(), "bad.yaml:"); got != pos {
				t.Errorf("diagnostic %d at %s, want %s (%s)", i, got, pos, d)
			}
			if !strings.Contains(d.Message, msg) {
				t.Errorf("diagnostic %d = %q, want it to contain %q", i, d.Message, msg)
			}
			if d.Pos.Line > 0 && d.Source == "" {
				t.Errorf("diagnostic %d has no source line", i)
			}
			if strings.HasSuffix(d.Source, "\r") {
				t.Errorf("diagnostic %d echoes the line's carriage return: %q", i, d.Source)
			}
			if strings.Contains(d.Message, "yaml: line") {
				t.Errorf("diagnostic %d repeats the line in its message: %q", i, d.Message)
			}
		}
		if tc.hint != "" && !strings.Contains(diags[0].Hint, tc.hint) {
			t.Errorf("hint = %q, want it to contain %q", diags[0].Hint, tc.hint)
		}
	}
	testCases := []testCase{
		{
			name: "unknown top-level key with hint",
			src:  minimal + "intnets: {}\n",
			want: []string{`6:1: unknown key "intnets" in agent definition`},
			hint: `did you mean "intents"?`,
		},
		{
			name: "unknown node key with hint",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    sya: hi\n",
			want: []string{`5:5: unknown key "sya" in node Hello`},
			hint: `did you mean "say"?`,
		},
		{
			// An expression is what a newcomer writes first.
			name: "a condition written as an expression",
			src:  minimal + "    next:\n      - {if: \"intent == order\", goto: Hello}\n",
			want: []string{`7:14: condition must be a mapping, got a scalar`},
			hint: `a condition is a mapping of intent, entities, set, unset, equals, atLeast, below, match, knowledge, for example {intent: book_table} or {equals: {party_size: "4"}}`,
		},
		{
			name: "a condition written as a list",
			src:  minimal + "    next:\n      - if: [{intent: greet}]\n        goto: Hello\n",
			want: []string{`7:13: condition must be a mapping, got a list`},
			hint: `a condition is a mapping of intent, entities`,
		},
		{
			name: "missing required keys",
			src:  "name: x\n",
			want: []string{`1:1: missing required key "id"`, `1:1: missing required key "start"`, `1:1: missing required key "nodes"`},
		},
		{
			name: "bad id",
			src:  strings.Replace(minimal, "id: demo", "id: Demo Agent", 1),
			want: []string{`1:5: id "Demo Agent" must be a slug`},
		},
		{
			name: "bad PROJECT id length",
			src:  strings.Replace(minimal, "id: demo", "id: PROJECT-123", 1),
			want: []string{`1:5: id "PROJECT-123" must be a slug`},
		},
		{
			name: "unknown node reference with hint",
			src:  minimal + "    goto: Helo\n",
			want: []string{`6:11: unknown node "Helo"`},
			hint: `did you mean "Hello"?`,
		},
		{
			name: "bad regex",
			src:  minimal + "intents:\n  greet:\n    patterns: ['(unclosed']\n",
			want: []string{`8:16: pattern "(unclosed" is not a valid regular expression`},
		},
		{
			name: "bad template namespace",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: hi ${sate.name}\n",
			want: []string{`5:10: bad reference ${sate.name}: unknown namespace "sate"`},
		},
		{
			name: "args outside a function",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: hi ${args.name}\n",
			want: []string{`5:10: bad reference ${args.name}: args exist only in a function's result`},
		},
		{
			name: "reference without a key",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: hi ${state}\n",
			want: []string{`5:10: bad reference ${state}: state needs a key`},
		},
		{
			name: "random lengths and now members",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: ${random.code:0}\n    reprompt: ${random.digits:65}\n    delay: ${now.utc}\n",
			want: []string{
				`5:10: bad reference ${random.code:0}: length must be an integer from 1 to 64`,
				`6:15: bad reference ${random.digits:65}: length must be an integer from 1 to 64`,
				`7:12: bad reference ${now.utc}: now has no members`,
			},
		},
		{
			name: "an alias as a value",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: &greeting hi\n    set: {copy: *greeting}\n",
			want: []string{`6:17: value must be a string, a mapping or a list, got an alias`},
		},
		{
			name: "empty phrasing list, weighted goto without weight",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: []\n    goto:\n      - {node: Hello}\n",
			want: []string{`5:10: say needs at least one phrasing`, `7:9: weighted goto is missing required key "weight"`},
		},
		{
			name: "unclosed reference",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: hi ${state.name\n",
			want: []string{`5:10: unclosed reference`},
		},
		{
			name: "yaml syntax error",
			src:  "id: demo\nstart: [\n",
			want: []string{`2: invalid YAML`},
		},
		{
			// Syntax errors are told as a suite's are (yamlerr): at the
			// column written wrong, with the fix.
			name: "tab indentation",
			src:  "id: demo\nstart: Hello\nnodes:\n\tHello:\n",
			want: []string{`4:1: invalid YAML: found character that cannot start any token`},
			hint: "indent with spaces: YAML does not allow tabs in indentation",
		},
		{
			name: "alias",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: &t hi\n  Bye:\n    say: *t\n",
			want: []string{`7:10: say must be a string, got an alias`},
			hint: "agent definitions do not expand YAML aliases or merge keys: write the value out",
		},
		{
			name: "merge key",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello: &h\n    say: hi\n  Bye:\n    <<: *h\n    say: bye\n",
			want: []string{`7:5: unknown key "<<" in node Bye`},
			hint: "agent definitions do not expand YAML aliases or merge keys",
		},
		{
			name: "unquoted colon",
			src:  "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: note: hi\n",
			want: []string{`5:10: invalid YAML: mapping values are not allowed in this context`},
			hint: `a value that contains ": " must be quoted: "note: hi"`,
		},
		{
			name: "empty file",
			src:  "",
			want: []string{`bad.yaml: empty agent definition`},
		},
		{
			name: "wrong kinds",
			src:  "id: [a]\nstart: Hello\nnodes:\n  Hello:\n    say: {a: b}\n    end: maybe\n",
			want: []string{`1:5: id must be a string`, `5:10: say must be a string`, `6:10: end must be true or false, got "maybe"`},
		},
		{
			name: "unknown intent, entity, function, variant",
			src: minimal + `    next:
      - if: {intent: grete, entities: [nme]}
        goto: Hello
    call: lookup
    variants:
      sprig: hello
intents:
  greet: {keywords: [hi]}
entities:
  name: {patterns: 'I am (\w+)'}
functions:
  look_up: {}
variants:
  - {id: spring, name: Spring}
`,
			want: []string{
				`7:22: unknown intent "grete"`,
				`7:40: unknown entity "nme"`,
				`9:11: unknown function "lookup"`,
				`11:7: unknown variant "sprig"`,
			},
		},
		{
			name: "endless goto loop",
			src:  "id: demo\nstart: A\nnodes:\n  A:\n    goto: B\n  B:\n    goto: A\n",
			want: []string{`4:3: node "A" starts an endless goto loop`, `6:3: node "B" starts an endless goto loop`},
		},
		{
			name: "end with goto, step without flow, delay without say",
			src:  "id: demo\nstart: A\nnodes:\n  A:\n    step: one\n    delay: wait\n    end: true\n    goto: A\n",
			want: []string{`5:5: node "A" has a delay but nothing to say`, `5:11: node "A" has a step but no flow`, `7:5: node "A" ends the conversation`},
		},
		{
			name: "unknown entity type with hint",
			src:  minimal + "entities:\n  when: {type: tme}\n",
			want: []string{`7:16: unknown entity type "tme"`},
			hint: `did you mean "time"?`,
		},
		{
			name: "duplicate keys",
			src:  minimal + "start: Hello\n",
			want: []string{`6:1: duplicate key "start"`},
		},
		{
			name: "bad weights",
			src: `id: demo
start: Hello
nodes:
  Hello:
    say:
      - {text: a, weight: 0}
      - {text: b, weight: -1}
      - {text: c, weight: "95%"}
      - {text: d}
      - {text: e, weight: inf}
    reprompt:
      - {text: a, weight: 1}
      - plain
`,
			want: []string{
				`6:27: weight must be a positive number, got "0"`,
				`7:27: weight must be a positive number, got "-1"`,
				`8:27: weight must be a positive number, got "95%"`,
				`9:9: weighted say is missing required key "weight"`,
				`10:27: weight must be a positive number, got "inf"`,
				`13:9: reprompt mixes weighted and unweighted phrasings`,
			},
			hint: "weights are relative",
		},
		{
			name: "bad weighted goto",
			src: `id: demo
start: Hello
nodes:
  Hello:
    goto:
      - {node: Helo, weight: 2}
      - {node: Bye, weight: nan}
      - {node: Bye, weight: 1}
      - Bye
  Bye:
    end: true
    next:
      - goto: []
`,
			want: []string{
				`6:16: unknown node "Helo"`,
				`7:29: weight must be a positive number, got "nan"`,
				`8:16: node "Bye" is listed twice in this goto`,
				`9:9: a weighted goto lists {node: NAME, weight: N} items, got "Bye"`,
				`11:5: node "Bye" ends the conversation`,
				`13:15: goto needs a node name or at least one {node, weight}`,
			},
			hint: `did you mean "Hello"?`,
		},
		{
			name: "bad versions and environments",
			src: minimal + `version: "1 beta"
versions:
  "2":
    id: other
    nodse: {}
  "3": {}
environments:
  sandbox: "2"
  live: "9"
`,
			want: []string{
				`6:10: version "1 beta": use letters, digits`,
				`9:5: a version cannot set id`,
				`10:5: unknown key "nodse" in version 2`,
				`11:8: version "3" changes nothing`,
				`14:9: environment live serves unknown version "9"`,
			},
		},
		{
			name: "a version with the own label, a version with a duplicate node",
			src: minimal + `versions:
  "1": {name: x}
  "2":
    nodes:
      Hello: {say: a}
      Hello: {say: b}
`,
			want: []string{
				`7:3: version "1" is the definition's own version`,
				`11:7: duplicate node "Hello"`,
			},
		},
		{
			name: "a loop a version brings, at the version's line",
			src: minimal + `versions:
  "2":
    nodes:
      Hello: {goto: Hello}
`,
			want: []string{`9:7: version 2: node "Hello" starts an endless goto loop`},
		},
		{
			name: "unknown environment with hint",
			src:  minimal + "environments: {prerelease: \"1\"}\n",
			want: []string{`6:16: unknown environment "prerelease"`},
			hint: `did you mean "pre-release"?`,
		},
		{
			name: "a version's own problems at its own lines",
			src: minimal + `versions:
  "2":
    nodes:
      Hello:
        say: hi ${stat.x}
        goto: Nowhere
`,
			want: []string{
				`10:14: version 2: bad reference ${stat.x}`,
				`11:15: version 2: unknown node "Nowhere"`,
			},
		},
		{
			name: "error on a last line without newline",
			src:  strings.TrimSuffix(minimal, "\n") + "\n    end: maybe",
			want: []string{`6:10: end must be true or false, got "maybe"`},
		},
		{
			name: "CRLF line endings",
			src:  strings.ReplaceAll(minimal+"    end: maybe\n", "\n", "\r\n"),
			want: []string{`6:10: end must be true or false, got "maybe"`},
		},
		{
			name: "duplicate key's value is not decoded",
			src:  minimal + "start: [Hello]\n",
			want: []string{`6:1: duplicate key "start"`},
		},
		{
			name: "not mappings",
			src:  minimal + "language: en-GB\nintents: [greet]\n",
			want: []string{`6:11: language must be a mapping, got a scalar`, `7:10: intent must be a mapping, got a list`},
		},
		{
			name: "duplicate node names",
			src:  minimal + "  Hello:\n    say: again\n",
			want: []string{`6:3: duplicate node "Hello"`},
		},
		{
			name: "null where a string is needed",
			src:  minimal + "name:\n",
			want: []string{`6:6: name must be a string, got nothing`},
		},
		{
			name: "numbers as a mapping",
			src:  minimal + "numbers: {a: b}\n",
			want: []string{`6:10: numbers must be a string or a list of strings, got a mapping`},
		},
		{
			name: "negative latency, bad bound",
			src:  minimal + "    latencyMs: -1\n    next:\n      - if: {atLeast: {n: many}}\n        goto: Hello\n",
			want: []string{`6:16: latencyMs must be at least 0, got -1`, `8:27: atLeast value must be a number, got "many"`},
		},
		{
			name: "pause past an hour, negative pause",
			src:  minimal + "    pauseMs: 3600001\n  Other:\n    pauseMs: -5\n  Hour:\n    pauseMs: 3600000\n",
			want: []string{`6:14: pauseMs must be at most 3600000 (an hour), got 3600001`, `8:14: pauseMs must be at least 0, got -5`},
		},
		{
			name: "intent both as shorthand and in the condition",
			src:  minimal + "    next:\n      - if: {intent: greet}\n        intent: bye\n        goto: Hello\nintents:\n  greet: {keywords: [hi]}\n  bye: {keywords: [bye]}\n",
			want: []string{`8:9: a rule's intent is shorthand for if: {intent: ...}, and this rule's if names intents too: write them in one list (any of them holds)`},
		},
		{
			name: "latency past an hour",
			src:  minimal + "    latencyMs: 10000000000000\n",
			want: []string{`6:16: latencyMs must be at most 3600000 (an hour), got 10000000000000`},
		},
		{
			name: "variants",
			src:  minimal + "variants:\n  - {id: a, name: A}\n  - {id: a, name: B}\nnodes2: x\n",
			want: []string{`8:10: duplicate variant id "a"`, `9:1: unknown key "nodes2"`},
		},
		{
			name: "variants not a list",
			src:  minimal + "variants: {id: a, name: A}\n",
			want: []string{`6:11: variants must be a list of {id, name}, got a mapping`},
		},
		{
			name: "empty keyword, string entity without patterns, topic without answer",
			src:  minimal + "intents:\n  greet: {keywords: [\"\", hi]}\nentities:\n  name: {}\nknowledge:\n  hours: {keywords: [open]}\n",
			want: []string{`7:22: empty keyword`, `9:3: entity "name" of type string needs patterns`, `11:10: knowledge topic hours is missing required key "answer"`},
		},
		{
			// A newcomer's unclosed group: the pattern is written, so
			// neither "needs patterns" nor "unknown entity" at its uses.
			name: "entity pattern that does not compile, or of an unknown type, told once",
			src:  minimal + "    next:\n      - if: {entities: [rx, code]}\n        goto: Hello\nentities:\n  rx: {patterns: ['(RX\\d+']}\n  code: {type: nmuber}\n",
			want: []string{`10:19: pattern "(RX\\d+" is not a valid regular expression: error parsing regexp: missing closing ): ` + "`(RX\\d+`", `11:16: unknown entity type "nmuber"`},
		},
		{
			name: "end with then",
			src:  minimal + "    end: true\n    then:\n      - goto: Hello\n",
			want: []string{`6:5: node "Hello" ends the conversation`},
		},
		{
			name: "node parts missing their required keys",
			src: minimal + `    llm: {promptTokens: 3}
    handoff: {reason: x, data: [a]}
    call: [{args: {a: b}}, {function: f, args: [a]}]
    next: {goto: Hello}
    then:
      - intent: greet
functions:
  f: {}
`,
			want: []string{
				`6:10: llm is missing required key "model"`,
				`7:14: handoff is missing required key "destination"`,
				`7:32: handoff.data must be a mapping, got a list`,
				`8:12: call is missing required key "function"`,
				`8:48: call args must be a mapping, got a list`,
				`9:11: next must be a list of rules`,
				`11:9: rule is missing required key "goto"`,
				`11:17: unknown intent "greet"`,
			},
		},
		{
			name: "names in lists at their own items, a bad kind once",
			src: minimal + `    next:
      - intent: [greet, grete]
        goto: Hello
      - if: {intent: {a: b}, entities: [x, nme]}
        goto: Hello
intents:
  greet: {keywords: [hi]}
`,
			want: []string{
				`7:25: unknown intent "grete"`,
				`9:22: intent must be a string or a list of strings, got a mapping`,
				`9:41: unknown entity "x"`,
				`9:44: unknown entity "nme"`,
			},
			hint: `did you mean "greet"?`,
		},
		{
			name: "a loop waits for the other problems",
			src:  "id: demo\nstart: A\nnodes:\n  A:\n    goto: B\n    sya: x\n  B:\n    goto: A\n",
			want: []string{`6:5: unknown key "sya" in node A`},
		},
		{
			name: "function fail needs error",
			src:  minimal + "functions:\n  f:\n    fail: {when: {a: b}}\n",
			want: []string{`8:11: fail is missing required key "error"`},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// Files that look close to a load error but are legal.
func TestLoadAccepts(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"zero latency", minimal + "    latencyMs: 0\n"},
		{"a loop through a delayed node waits for the user", "id: demo\nstart: A\nnodes:\n  A:\n    say: x\n    delay: wait\n    goto: B\n  B:\n    goto: A\n"},
		{"a loop on a match condition", "id: demo\nstart: A\nnodes:\n  A:\n    then:\n      - if: {match: again}\n        goto: A\n"},
	} {
		if _, diags := Load("ok.yaml", []byte(tc.src)); len(diags) > 0 {
			t.Errorf("%s: unexpected diagnostics:\n%v", tc.name, diags)
		}
	}
}

func TestLoadAcceptsProjectID(t *testing.T) {
	src := strings.Replace(minimal, "id: demo", "id: PROJECT-ab12CD34", 1)
	def, diags := Load("p.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("unexpected diagnostics:\n%v", diags)
	}
	if def.ID != "PROJECT-ab12CD34" {
		t.Errorf("ID = %q", def.ID)
	}
}

func TestLoadPath(t *testing.T) {
	fsys := fstest.MapFS{
		"agents/b.yaml":     {Data: []byte(strings.Replace(minimal, "demo", "zeta", 1))},
		"agents/a.yml":      {Data: []byte(minimal)},
		"agents/dup.yaml":   {Data: []byte(minimal)},
		"agents/notes.txt":  {Data: []byte("ignored")},
		"agents/broken.yml": {Data: []byte("id: broken\nstart: X\nnodes: {}\n")},
		// A directory is skipped, whatever its name.
		"agents/old.yaml/c.yaml": {Data: []byte(minimal)},
		"agents/locked.yaml":     {Data: []byte(minimal)},
	}
	defs, diags := LoadPath(unreadable{fsys, "agents/locked.yaml"}, "agents")
	var ids []string
	for _, d := range defs {
		ids = append(ids, d.ID)
	}
	if got := strings.Join(ids, ","); got != "demo,zeta" {
		t.Errorf("ids = %s, want demo,zeta (sorted, duplicate and broken dropped)", got)
	}
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`agents/broken.yml:2:8: unknown node "X"`,
		`agents/dup.yaml:1:5: duplicate agent id "demo", already defined at agents/a.yml:1:5`,
		`agents/locked.yaml: read agent definition: permission denied`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	if len(diags) != 3 {
		t.Errorf("got %d diagnostics, want 3:\n%s", len(diags), all)
	}
	if _, diags := LoadPath(fsys, "missing"); !diags.HasErrors() {
		t.Error("LoadPath on a missing directory reported no error")
	}
	// One file named is loaded alone, whatever its name.
	if defs, diags := LoadPath(fsys, "agents/b.yaml"); diags.HasErrors() || len(defs) != 1 || defs[0].ID != "zeta" {
		t.Errorf("LoadPath of one file: %d definitions, %v", len(defs), diags)
	}
	if _, diags := LoadPath(fsys, "agents/notes.txt"); !diags.HasErrors() {
		t.Error("LoadPath of a file that is no definition reported no error")
	}
}

// unreadable is a file system on which one file is listed but cannot be
// read.
type unreadable struct {
	fstest.MapFS
	name string
}

func (u unreadable) ReadFile(name string) ([]byte, error) {
	if name == u.name {
		return nil, fs.ErrPermission
	}
	return u.MapFS.ReadFile(name)
}

func TestBuiltin(t *testing.T) {
	defs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"clinic", "restaurant", "utility-billing"}
	if len(defs) != len(want) {
		t.Fatalf("got %d built-in agents, want %d", len(defs), len(want))
	}
	for i, d := range defs {
		if d.ID != want[i] {
			t.Errorf("agent %d = %s, want %s", i, d.ID, want[i])
		}
		if d.Name == d.ID {
			t.Errorf("%s has no display name", d.ID)
		}
	}
	if name, ok := defs[1].VariantName("spring"); !ok || name != "Spring menu" {
		t.Errorf("VariantName(spring) = %q, %v", name, ok)
	}
	if _, ok := defs[1].VariantName("winter"); ok {
		t.Error("VariantName(winter) found a variant")
	}
	if nums := defs[2].Numbers(); len(nums) != 2 || nums[0] != "+442071230002" {
		t.Errorf("utility-billing numbers = %v", nums)
	}
}

// Diagnostics must survive as an error through code that only knows errors.
func TestLoadDiagnosticsAsError(t *testing.T) {
	_, diags := Load("x.yaml", []byte("id: x\n"))
	err := diags.Err()
	if err == nil {
		t.Fatal("no error")
	}
	if ds, ok := diag.AsDiagnostics(err); !ok || len(ds) != 2 {
		t.Errorf("AsDiagnostics = %v, %v", ds, ok)
	}
}
