package agent

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Probabilistic behaviour. An LLM agent does not answer the same way every
// time; a definition says how often it does what with weights on the
// phrasings of an utterance (say, reprompt, delay, variant wording) and on
// the targets of a move (goto). Draws come from the session's Rand, which
// the simulator seeds from its seed and the conversation id, so a
// conversation replays exactly under the same seed.

// weights are the cumulative weights of a weighted choice, normalised so
// the last is 1. Nil means a uniform choice.
type weights []float64

// newWeights normalises raw positive weights into cumulative ones.
func newWeights(raw []float64) weights {
	// Dividing by the largest weight first keeps the sum finite: two
	// weights near MaxFloat64 would add up to +Inf and the first would
	// never be drawn.
	top := slices.Max(raw)
	total := 0.0
	for _, w := range raw {
		total += w / top
	}
	cum := make(weights, len(raw))
	acc := 0.0
	for i, w := range raw {
		acc += w / top
		cum[i] = acc / total
	}
	cum[len(cum)-1] = 1 // no rounding gap at the top
	return cum
}

// pick draws the index of one of n alternatives.
func (w weights) pick(r *rand.Rand, n int) int {
	switch {
	case n <= 1:
		return 0
	case w == nil:
		return r.IntN(n)
	}
	x := r.Float64()
	for i, c := range w {
		if x < c {
			return i
		}
	}
	return n - 1
}

// phrasing is the set of alternative wordings of one utterance; a session
// picks one with its Rand: uniformly, or by the weights when they are set.
type phrasing struct {
	alts []*template
	cum  weights
}

func (p phrasing) empty() bool { return len(p.alts) == 0 }

// weight decodes the weight of an alternative: a positive, finite number.
// Weights are relative: 95 and 5 mean the same as 0.95 and 0.05.
func (l *loader) weight(v *yaml.Node) float64 {
	const hint = "weights are relative and need not add up to anything: 95 and 5 mean 95% and 5%"
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		if w, err := strconv.ParseFloat(v.Value, 64); err == nil {
			if w > 0 && !math.IsInf(w, 0) {
				return w
			}
		}
	}
	l.hintf(v, hint, "weight must be a positive number, got %s", describe(v))
	return 0
}

// phrasing decodes a string, a list of strings (picked uniformly) or a list
// of {text, weight} items (picked by weight). Mixing the two forms in one list is
// an error: an unweighted item among weighted ones has no obvious weight.
func (l *loader) phrasing(v *yaml.Node, what string) phrasing {
	var out phrasing
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
		if len(items) == 0 {
			l.errorf(v, "%s needs at least one phrasing", what)
		}
	}
	var raw []float64
	var bare *yaml.Node // first unweighted item
	for _, it := range items {
		// A weighted phrasing is a list item; a lone mapping is a mistake
		// that str reports.
		if it.Kind != yaml.MappingNode || it == v {
			if bare == nil {
				bare = it
			}
			if s, ok := l.str(it, what); ok {
				out.alts = append(out.alts, l.compileTemplate(it, s, scopeNode))
			}
			continue
		}
		var t *template
		w := 0.0
		l.mapping(it, "weighted "+what, []field{
			{"text", func(k, v *yaml.Node) {
				if s, ok := l.str(v, what+" text"); ok {
					t = l.compileTemplate(v, s, scopeNode)
				}
			}},
			{"weight", func(k, v *yaml.Node) { w = l.weight(v) }},
		}, "text", "weight")
		if t != nil {
			out.alts = append(out.alts, t)
			raw = append(raw, w)
		}
	}
	if raw != nil && bare != nil {
		l.errorf(bare, "%s mixes weighted and unweighted phrasings: give every phrasing a weight ({text: ..., weight: N}), or none", what)
		return out
	}
	if raw != nil && len(raw) == len(out.alts) && positive(raw) {
		out.cum = newWeights(raw)
	}
	return out
}

// target decodes the goto of a rule: a node name, or a list of
// {node, weight} from which the session draws one each time the rule fires.
func (l *loader) target(v *yaml.Node, r *rule) {
	if v.Kind != yaml.SequenceNode {
		l.nodeRef(v, "goto", func(n *node) { r.to = n })
		return
	}
	if len(v.Content) == 0 {
		l.errorf(v, "goto needs a node name or at least one {node, weight}")
		return
	}
	raw := make([]float64, len(v.Content))
	r.alts = make([]*node, len(v.Content))
	seen := map[string]bool{}
	for i, it := range v.Content {
		if it.Kind != yaml.MappingNode {
			l.errorf(it, "a weighted goto lists {node: NAME, weight: N} items, got %s", describe(it))
			continue
		}
		l.mapping(it, "weighted goto", []field{
			{"node", func(k, v *yaml.Node) {
				if s, ok := l.str(v, "goto node"); ok && seen[s] {
					l.errorf(v, "node %q is listed twice in this goto: add up its weights instead", s)
				} else if ok {
					seen[s] = true
				}
				l.nodeRef(v, "goto node", func(n *node) { r.alts[i] = n })
			}},
			{"weight", func(k, v *yaml.Node) { raw[i] = l.weight(v) }},
		}, "node", "weight")
	}
	if positive(raw) {
		r.cum = newWeights(raw)
	}
}

func positive(ws []float64) bool {
	for _, w := range ws {
		if !(w > 0) || math.IsInf(w, 0) {
			return false
		}
	}
	return len(ws) > 0
}

// targets lists where a rule may lead: its one node, or every weighted
// alternative.
func (r *rule) targets() []*node {
	if r.alts != nil {
		return r.alts
	}
	return []*node{r.to}
}
