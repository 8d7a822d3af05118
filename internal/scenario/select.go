package scenario

import "regexp"

// Selection chooses the scenarios of a run. The zero Selection selects
// every scenario. `agenttest run`, `list`, `lint` and the checks made
// before a run (live safety, the webhook receiver's events) all select
// through Select with one Selection, so they always agree on what runs.
type Selection struct {
	// Tags keeps the scenarios whose tags match; nil keeps all.
	Tags *TagExpr
	// Name keeps the scenarios whose name it matches; nil keeps all.
	Name *regexp.Regexp
}

// Match reports whether the selection keeps the scenario.
func (sel Selection) Match(sc *Scenario) bool {
	if sel.Tags != nil && !sel.Tags.Match(sc.Tags) {
		return false
	}
	if sel.Name != nil && !sel.Name.MatchString(sc.Name) {
		return false
	}
	return true
}

// Select returns the suites with only their selected scenarios, in file
// and scenario order, leaving out suites with none. The suites given are
// not modified: a suite that loses scenarios is a copy.
func Select(suites []*Suite, sel Selection) []*Suite {
	out := make([]*Suite, 0, len(suites))
	for _, s := range suites {
		if s == nil {
			continue
		}
		var kept []*Scenario
		all := true
		for _, sc := range s.Scenarios {
			if sc != nil && sel.Match(sc) {
				kept = append(kept, sc)
			} else {
				all = false
			}
		}
		switch {
		case len(kept) == 0:
		case all:
			out = append(out, s)
		default:
			cp := *s
			cp.Scenarios = kept
			out = append(out, &cp)
		}
	}
	return out
}
