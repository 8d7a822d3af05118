package scenario

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
)

// Selection chooses the scenarios of a run. The zero Selection selects
// every scenario. `agenttest run`, `list`, `lint` and the checks made
// before a run (live safety, the webhook receiver's events) all select
// through Select with one Selection, so they always agree on what runs.
// A scenario is selected when every filter that is set keeps it.
type Selection struct {
	// Tags keeps the scenarios whose tags match; nil keeps all.
	Tags *TagExpr
	// Name keeps the scenarios whose name it matches; nil keeps all.
	// ParseName reads the --name forms (literal text, or /regex/).
	Name *regexp.Regexp
	// At keeps, in each file it names, only the scenarios written at its
	// lines (`agenttest run FILE:LINE`, the form every result line and
	// JUnit file/line print): a scenario's line selects it, every row of
	// an outline included; an examples row's line selects that row.
	// Within moves a line inside a scenario (a turn's, a step's: where a
	// failure points) to the scenario's line. Files that At does not name
	// are not restricted. Only File and Line count; the files are paths as
	// given to Load.
	At []diag.Pos
	// Cases, when not nil, keeps only the scenarios it holds, by file and
	// name (--rerun-failed: the cases a previous report lists as failed
	// or errored).
	Cases map[CaseRef]bool
}

// CaseRef names a scenario (or an examples row) across runs: its file,
// as given to Load, and its name, examples row included.
type CaseRef struct {
	File string
	Name string
}

// ParseName reads the value of --name: a literal text a scenario's name
// must contain (brackets and dots included, so a printed name such as
// `books a table [day=friday]` selects exactly that row), or a regular
// expression (RE2) when written between slashes: /^books .* friday/.
func ParseName(s string) (*regexp.Regexp, error) {
	if len(s) >= 2 && strings.HasPrefix(s, "/") && strings.HasSuffix(s, "/") {
		re, err := regexp.Compile(s[1 : len(s)-1])
		if err != nil {
			return nil, fmt.Errorf("not a regular expression: %w", err)
		}
		return re, nil
	}
	return regexp.MustCompile(regexp.QuoteMeta(s)), nil
}

// Match reports whether the selection keeps the scenario.
func (sel Selection) Match(sc *Scenario) bool {
	if sel.Tags != nil && !sel.Tags.Match(sc.Tags) {
		return false
	}
	if sel.Name != nil && !sel.Name.MatchString(sc.Name) {
		return false
	}
	if len(sel.At) > 0 && !sel.atMatch(sc) {
		return false
	}
	if sel.Cases != nil && !sel.Cases[CaseRef{File: cleanPath(sc.Pos.File), Name: sc.Name}] {
		return false
	}
	return true
}

// atMatch applies At to a scenario.
func (sel Selection) atMatch(sc *Scenario) bool {
	file := cleanPath(sc.Pos.File)
	named := false
	for _, at := range sel.At {
		if cleanPath(at.File) != file {
			continue
		}
		named = true
		if at.Line == sc.Pos.Line || (sc.Outline.Line != 0 && at.Line == sc.Outline.Line) {
			return true
		}
	}
	return !named
}

// Select returns the suites with only their selected scenarios, in file
// and scenario order, leaving out suites with none. The suites given are
// not modified: a suite that loses scenarios is a copy.
func Select(suites []*Suite, sel Selection) []*Suite {
	return filter(suites, sel.Match)
}

// filter returns the suites with only the scenarios keep keeps, in order,
// leaving out suites with none; a suite that loses scenarios is a copy.
func filter(suites []*Suite, keep func(*Scenario) bool) []*Suite {
	out := make([]*Suite, 0, len(suites))
	for _, s := range suites {
		if s == nil {
			continue
		}
		var kept []*Scenario
		all := true
		for _, sc := range s.Scenarios {
			if sc != nil && keep(sc) {
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

// Within returns sel with each line of At that is written inside a
// scenario, but is not the line of one or of an examples row, moved to
// the line of the scenario (of the outline, for its rows): the line of a
// turn, a check or a step, which a failure prints as file:line:col,
// selects the scenario it belongs to, as Cucumber's and RSpec's lines do.
// A scenario runs from its line to the line before the next scenario's
// (the file's last line, for the last one). A line before the first
// scenario, or past the file's end, stays: Unmatched reports it.
func (sel Selection) Within(suites []*Suite) Selection {
	if len(sel.At) == 0 {
		return sel
	}
	type file struct {
		starts  []int // the lines scenarios and outlines start at, in order
		exact   map[int]bool
		lines   int
		regions []Region
	}
	files := map[string]*file{}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			name := cleanPath(sc.Pos.File)
			f := files[name]
			if f == nil {
				f = &file{exact: map[int]bool{}, lines: s.Lines, regions: s.Regions}
				files[name] = f
			}
			start := cmp.Or(sc.Outline.Line, sc.Pos.Line)
			f.starts = append(f.starts, start)
			f.exact[sc.Pos.Line], f.exact[start] = true, true
		}
	}
	for _, f := range files {
		slices.Sort(f.starts)
		f.starts = slices.Compact(f.starts)
	}
	var at []diag.Pos
	for _, p := range sel.At {
		f := files[cleanPath(p.File)]
		if f == nil || f.exact[p.Line] || p.Line > f.lines {
			at = append(at, p)
			continue
		}
		if i := slices.IndexFunc(f.regions, func(r Region) bool { return r.From <= p.Line && p.Line <= r.To }); i >= 0 {
			// A Background, a Rule's header or a scenario's tags: the
			// scenario written above them is not theirs.
			n := len(at)
			for _, l := range f.regions[i].Starts {
				if f.exact[l] {
					at = append(at, diag.Pos{File: p.File, Line: l})
				}
			}
			if len(at) == n {
				at = append(at, p)
			}
			continue
		}
		if j, _ := slices.BinarySearch(f.starts, p.Line+1); j > 0 {
			p.Line = f.starts[j-1]
		}
		at = append(at, p)
	}
	sel.At = at
	return sel
}

// Unmatched returns the entries of At and Cases that name no scenario of
// suites, whatever the other filters: a FILE:LINE where no scenario is
// written, a case of a previous report that is gone or was renamed. The
// caller says so instead of running less than was asked in silence.
func (sel Selection) Unmatched(suites []*Suite) (at []diag.Pos, cases []CaseRef) {
	type fileLine struct {
		file string
		line int
	}
	lines := map[fileLine]bool{}
	names := map[CaseRef]bool{}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			file := cleanPath(sc.Pos.File)
			lines[fileLine{file, sc.Pos.Line}] = true
			if sc.Outline.Line != 0 {
				lines[fileLine{file, sc.Outline.Line}] = true
			}
			names[CaseRef{file, sc.Name}] = true
		}
	}
	for _, p := range sel.At {
		if !lines[fileLine{cleanPath(p.File), p.Line}] {
			at = append(at, p)
		}
	}
	for ref := range sel.Cases {
		if !names[CaseRef{cleanPath(ref.File), ref.Name}] {
			cases = append(cases, ref)
		}
	}
	slices.SortFunc(cases, func(a, b CaseRef) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return at, cases
}

// Lines lists the lines of file at which a scenario or an outline is
// written, in order, for the message of a FILE:LINE that selects nothing.
func Lines(suites []*Suite, file string) []int {
	file = cleanPath(file)
	var out []int
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if cleanPath(sc.Pos.File) != file {
				continue
			}
			for _, l := range []int{sc.Outline.Line, sc.Pos.Line} {
				if l != 0 && !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Count is the number of scenarios of suites.
func Count(suites []*Suite) int {
	n := 0
	for _, s := range suites {
		n += len(s.Scenarios)
	}
	return n
}
