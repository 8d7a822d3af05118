package agent

import (
	"reflect"
	"testing"
)

func TestSessionAccessorsAndClearing(t *testing.T) {
	src := `id: acc
start: A
variants: [{id: v1, name: First variant}]
intents:
  clear: {keywords: [clear]}
routes:
  - if: {intent: clear, equals: {obj.k: "1"}}
    goto: Clear
nodes:
  A:
    set:
      obj: {k: "1", list: [a, "${conv.variant_name}"]}
      flag: "yes"
    metrics: {M: "${conv.variant_id}"}
    say: ${state.obj.list}
  Clear:
    set: {flag: ""}
    metrics: {M: again}
    say: cleared
`
	def, diags := Load("acc.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%v", diags)
	}
	s := def.NewSession(SessionOptions{ConversationID: "x", VariantID: "v1"})
	g := s.Start()
	want := map[string]any{"k": "1", "list": []any{"a", "First variant"}}
	if !reflect.DeepEqual(s.State()["obj"], want) || s.CurrentNode() != "A" {
		t.Errorf("state obj = %#v, node %s", s.State()["obj"], s.CurrentNode())
	}
	if g.Response != "[a First variant]" {
		t.Errorf("response = %q", g.Response)
	}
	r := s.Turn("clear it", nil)
	if _, ok := s.State()["flag"]; ok || r.Response != "cleared" {
		t.Errorf("flag not cleared: %v %q", s.State(), r.Response)
	}
	if g.Metadata.State["flag"] != "yes" {
		t.Errorf("greeting snapshot changed: %v", g.Metadata.State)
	}
	if got := s.Metrics()["M"]; !reflect.DeepEqual(got, []string{"v1", "again"}) {
		t.Errorf("metrics = %#v", got)
	}
	s.Turn("clear", nil)
	if got := s.Metrics()["M"]; !reflect.DeepEqual(got, []string{"v1", "again", "again"}) {
		t.Errorf("metrics after third write = %#v", got)
	}
	if got := r.Metadata.Metrics["M"]; !reflect.DeepEqual(got, []string{"v1", "again"}) {
		t.Errorf("earlier metrics snapshot changed: %#v", got)
	}
}

func TestNodeNames(t *testing.T) {
	src := `id: nn
start: B
silence: S
nodes:
  B: {say: hi, goto: A}
  A: {say: a}
  S: {say: silence}
`
	def, diags := Load("nn.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%v", diags)
	}
	if got, want := def.NodeNames(), []string{"A", "B", "S"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NodeNames() = %v, want %v", got, want)
	}
}
