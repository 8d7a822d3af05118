package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/steps"
)

// recovered says whether a diagnostic is the loaders' last resort: a panic
// turned into "internal error while loading". The loaders recover so a run
// survives one bad file, which would also hide a panic from a fuzz target
// that only watched for crashes.
func recovered(ds diag.Diagnostics) *diag.Diagnostic {
	for i := range ds {
		if strings.Contains(ds[i].Message, "internal error") {
			return &ds[i]
		}
	}
	return nil
}

// FuzzLoadFeature checks the Gherkin loader like FuzzLoadFile checks the
// YAML one: no panic (recovered or not), a suite exactly when there is no
// error, and every diagnostic placed in the file with a line.
func FuzzLoadFeature(f *testing.F) {
	for _, dir := range []string{"../../features", "../../examples/features", "testdata"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.feature"))
		for _, file := range files {
			if src, err := os.ReadFile(file); err == nil {
				f.Add(src)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		s, ds := loadFeature("f.feature", src)
		if d := recovered(ds); d != nil {
			t.Fatalf("loader panicked: %s", d.Message)
		}
		if (s == nil) != ds.HasErrors() {
			t.Fatalf("suite %v with diagnostics:\n%s", s != nil, renderDiags(ds))
		}
		for _, d := range ds {
			if d.Pos.File != "f.feature" || d.Pos.Line < 1 || d.Message == "" {
				t.Fatalf("diagnostic without file:line or message: %#v", d)
			}
		}
	})
}

// matcherSuite puts a matcher, as written in YAML, under each key that
// takes one: the reply, a state value and the node.
func matcherSuite(m string) []byte {
	return []byte("agent: a\nscenarios:\n  - name: m\n    turns:\n      - say: hi\n        expect:\n" +
		"          response: " + m + "\n" +
		"          state: {k: " + m + "}\n" +
		"          node: " + m + "\n")
}

// FuzzMatcher decodes arbitrary matcher text through the suite loader (the
// only way users write one) and, when it loads, checks it against an
// arbitrary reply. Decoding reports bad matchers at file:line:col; a
// matcher that loaded never panics when checked, whatever the reply: a bad
// pattern or reference becomes a failure.
func FuzzMatcher(f *testing.F) {
	for _, m := range []string{
		`"exact text"`, `{contains: how many}`, `{regex: "^Hi (.*)$"}`, `{regex: "("}`, `{not: {contains: x}}`,
		`{any: [{contains: a}, {regex: b+}]}`, `{all: []}`, `{one_of: [a, b]}`, `{similar: hello, min: 0.8}`,
		`{similar: hi, min: 2}`, `{contains: "${name}"}`, `{contains: "${"}`, `{ignore_case: true, equals: HI}`,
		`{present: true}`, `{absent: true}`, `{count: 3}`, `[a, b]`, `{contans: x}`, `~`, `{starts_with: x, ends_with: y}`,
	} {
		f.Add(m, "Hi there, how many guests?")
	}
	f.Fuzz(func(t *testing.T, m, text string) {
		s, ds := LoadFile("m.yaml", matcherSuite(m))
		if d := recovered(ds); d != nil {
			t.Fatalf("loader panicked on %q: %s", m, d.Message)
		}
		for _, d := range ds {
			if d.Pos.File != "m.yaml" || d.Pos.Line < 1 || d.Message == "" {
				t.Fatalf("diagnostic without file:line or message: %#v", d)
			}
		}
		if s == nil || len(s.Scenarios) == 0 {
			return
		}
		exp := expectOf(stepOf(s.Scenarios[0], steps.Check))
		res := (&reply.TurnResult{Response: text}).SetMetadata(reply.Metadata{
			"currentNode": text, "state": map[string]any{"k": text}, "nodeTrace": []any{text},
		})
		expand := func(v string) (string, error) {
			return interp.Interpolate(v, func(string) (string, bool) { return text, true }, func(string) (string, bool) { return "", false })
		}
		for _, fl := range assert.Check(exp, assert.Observation{Result: res}, expand) {
			if fl.Message == "" {
				t.Fatalf("failure without a message: %#v", fl)
			}
		}
	})
}
