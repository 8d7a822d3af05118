package main

import (
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/merge"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
)

// selection is what chooses the scenarios of `run` and `list`: --tags,
// --name, --rerun-failed and FILE:LINE arguments, read into the one
// scenario.Selection both commands (and every check before a run) select
// through.
type selection struct {
	// cmd is the command, for messages.
	cmd string
	// flags are the command's, to name the variable that set a filter.
	flags       *flags
	tags, name  string
	rerunFailed string
	// rerunCount is the number of failed and errored cases of the
	// --rerun-failed report, rerunUnrun the number of cases its run
	// left unrun (interrupted or stopped), which run again too.
	rerunCount, rerunUnrun int
	// sel is the parsed selection, complete once load has run.
	sel scenario.Selection
	// notes say what --rerun-failed runs again and what it cannot;
	// printed once the suites are loaded.
	notes []string
	// shardArg is --shard K/N, read into shard by validate (run and list
	// only: registerShard); selected and fingerprint describe the whole
	// selection a shard is dealt from, once plan has run.
	shardArg    string
	shard       scenario.Shard
	selected    int
	fingerprint string
	// leftOut is the number of scenarios of the loaded files that the
	// selection left out, once plan has run.
	leftOut int
	// loaded are the suite paths load loaded, as given (suitePaths):
	// what a run's report records it was given (result.Result.Paths).
	loaded []string
}

// registerShard adds --shard; verb is "run" or "list".
func (s *selection) registerShard(f *flags, verb string) {
	f.stringVar(&s.shardArg, "shard", "AGENTTEST_SHARD", "", verb+" only share `K/N` of the selected scenarios, for splitting a suite across CI machines (dealt round-robin over the selection sorted by file and line; merge the shards' JSON reports with agenttest merge)")
}

// register adds the selection flags; verb is "run" or "list".
func (s *selection) register(f *flags, verb string) {
	s.cmd, s.flags = verb, f
	f.tagsVar(&s.tags, "tags", "AGENTTEST_TAGS", verb+" scenarios whose tags match `EXPR`, e.g. '@smoke && ~@slow' (given again: both must match)")
	f.stringVar(&s.name, "name", "AGENTTEST_NAME", "", verb+" scenarios whose name contains `TEXT` (brackets and dots are literal), or matches /REGEX/ when written between slashes")
	f.fileVar(&s.rerunFailed, "rerun-failed", "AGENTTEST_RERUN_FAILED", verb+" the scenarios that failed or errored in a previous JSON `REPORT` (--json), and those its run left unrun (interrupted, --fail-fast, a platform stop); with no PATH, from the files the report names", "to "+verb+" every selected scenario")
}

// args splits the positional arguments into suite paths and FILE:LINE
// locations (FILE:LINE:COL is read as FILE:LINE): the form printed on
// every result line and in JUnit's file and line. A path that exists as
// written is a path, even if it ends in a colon and digits.
func (s *selection) args(st *State, pos []string) (paths []string, problems []string) {
	for _, a := range pos {
		file, line, ok := splitLine(a)
		if !ok {
			paths = append(paths, a)
			continue
		}
		if _, err := fs.Stat(st.FS, argPath(a)); err == nil {
			paths = append(paths, a)
			continue
		}
		fi, err := fs.Stat(st.FS, argPath(file))
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", a, unwrapPath(err)))
			continue
		case fi.IsDir():
			problems = append(problems, fmt.Sprintf("%s: a line selects a scenario of a file, and %s is a directory", a, file))
			continue
		}
		paths = append(paths, file)
		s.sel.At = append(s.sel.At, diag.Pos{File: argPath(file), Line: line})
	}
	return paths, problems
}

// splitLine reads FILE:LINE or FILE:LINE:COL.
func splitLine(arg string) (file string, line int, ok bool) {
	parts := strings.Split(arg, ":")
	if len(parts) < 2 {
		return "", 0, false
	}
	nums := 1
	if len(parts) >= 3 && allDigits(parts[len(parts)-2]) && allDigits(parts[len(parts)-1]) {
		nums = 2
	}
	last := parts[len(parts)-nums]
	if !allDigits(last) {
		return "", 0, false
	}
	line, err := strconv.Atoi(last)
	if err != nil || line < 1 {
		return "", 0, false
	}
	file = strings.Join(parts[:len(parts)-nums], ":")
	return file, line, file != ""
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// validate parses --tags and --name, returning every problem. A filter
// holding a key the environment's key variables hold is refused before
// it is parsed, whose error would quote it; load refuses one holding a
// key the variables agenttest.yaml names hold.
func (s *selection) validate() []string {
	if problems := s.keysInFilters(knownKeys(s.flags.st, nil)); len(problems) > 0 {
		return problems
	}
	var problems []string
	if s.tags != "" {
		expr, err := scenario.ParseTagExpr(s.tags)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--tags %q: %v", s.tags, err))
		} else {
			s.sel.Tags = &expr
		}
	}
	if s.shardArg != "" {
		sh, err := scenario.ParseShard(s.shardArg)
		if err != nil {
			problems = append(problems, "--shard "+err.Error())
		}
		s.shard = sh
	}
	if s.name != "" {
		re, err := scenario.ParseName(s.name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--name %q: %v", s.name, err))
		} else {
			s.sel.Name = re
		}
	}
	return problems
}

// keysInFilters refuses a --tags or --name that holds a key red masks,
// naming the flag, never the value: a filter is printed as it was given
// (an empty selection's message, a bad expression's error) and recorded
// in the JSON report (filter), which compare and the gate print; masked,
// the gate could not hold it to its own --tags and --name.
func (s *selection) keysInFilters(red *secret.Redactor) []string {
	var problems []string
	for _, f := range []struct{ flag, value string }{{"tags", s.tags}, {"name", s.name}} {
		if red.Contains(f.value) {
			problems = append(problems, fmt.Sprintf("--%s%s holds a key the environment holds: take the key out; a filter is printed as it is, on the console and in the JSON report", f.flag, s.flags.setByNote(f.flag)))
		}
	}
	return problems
}

// load loads the suites under paths (given: named on the command line)
// with the selection's files: those --rerun-failed names when no path was
// given. It prints the diagnostics (exit 2 on errors), refuses a FILE:LINE
// where no scenario is written, and keeps in notes the cases of the
// report that cannot run again.
func (s *selection) load(st *State, cfg *config.File, w io.Writer, paths []string, given bool) ([]*scenario.Suite, []scenario.Skipped, error) {
	if s.rerunFailed != "" {
		files, err := s.rerun(st)
		if err != nil {
			return nil, nil, err
		}
		if !given {
			if len(files) == 0 {
				return nil, nil, nil // nothing to run again
			}
			paths = files
		}
	}
	if problems := s.keysInFilters(knownKeys(st, cfg)); len(problems) > 0 {
		return nil, nil, usageProblems(s.cmd, problems...)
	}
	s.loaded = suitePaths(paths)
	suites, skipped, err := loadSuites(st, cfg, w, s.loaded, false)
	if err != nil {
		return nil, nil, err
	}
	s.oneSpelling(st, suites)
	if s.rerunFailed != "" {
		s.sameFiles(st, suites)
	}
	s.sel = s.sel.Within(suites)
	at, cases := s.sel.Unmatched(suites)
	var problems []string
	for _, p := range at {
		lines := scenario.Lines(suites, p.File)
		where := "the file holds no scenario"
		if len(lines) > 0 {
			where = "scenarios are written at lines " + joinInts(lines)
		}
		problems = append(problems, fmt.Sprintf("%s:%d: no scenario is written at line %d (%s)", p.File, p.Line, p.Line, where))
	}
	if len(problems) > 0 {
		return nil, nil, usageProblems(s.cmd, problems...)
	}
	// A case whose file the paths given do not reach was left out, not
	// renamed: its scenario may well still be there.
	loaded := map[string]bool{}
	for _, su := range suites {
		loaded[argPath(su.Path)] = true
	}
	for _, c := range cases {
		if !loaded[argPath(c.File)] {
			s.notes = append(s.notes, fmt.Sprintf("%s: not under the paths given; %q is not run again", c.File, c.Name))
			continue
		}
		s.notes = append(s.notes, fmt.Sprintf("%s: no scenario named %q (renamed or removed since the report?)", c.File, c.Name))
	}
	return suites, skipped, nil
}

// absArg is the absolute path of a command-line path, for telling
// whether two spellings name one file.
func absArg(st *State, p string) string {
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(st.Dir, p)
	}
	return filepath.Clean(p)
}

// oneSpelling makes a FILE:LINE written with a spelling of its file
// that loading left out (oneFileEach) select in the one kept.
func (s *selection) oneSpelling(st *State, suites []*scenario.Suite) {
	kept := map[string]string{}
	for _, su := range suites {
		kept[absArg(st, su.Path)] = argPath(su.Path)
	}
	for i, p := range s.sel.At {
		if k, ok := kept[absArg(st, p.File)]; ok {
			s.sel.At[i].File = k
		}
	}
}

// sameFiles names the report's cases by the paths their files were
// loaded under, where the two name one file differently: a report of
// "agenttest run suites" names suites/a.yaml, which "agenttest run
// $PWD/suites" or "../repo/suites" loads under another name.
func (s *selection) sameFiles(st *State, suites []*scenario.Suite) {
	loaded := map[string]string{}
	for _, su := range suites {
		loaded[absArg(st, su.Path)] = argPath(su.Path)
	}
	for _, ref := range slices.Collect(maps.Keys(s.sel.Cases)) {
		if as, ok := loaded[absArg(st, ref.File)]; ok && as != argPath(ref.File) {
			delete(s.sel.Cases, ref)
			s.sel.Cases[scenario.CaseRef{File: as, Name: ref.Name}] = true
		}
	}
}

// rerun reads --rerun-failed into the selection's Cases and returns the
// files of the report that still exist, sorted. Cases of files that are
// gone are noted.
func (s *selection) rerun(st *State) ([]string, error) {
	data, err := readArg(st, s.rerunFailed)
	if err != nil {
		return nil, usageErrorf("%s: --rerun-failed %s: %v", s.cmd, s.rerunFailed, err)
	}
	var stop *result.Stop
	again, err := decodeJSON(data, func(r io.Reader) (again []report.RerunCase, err error) {
		again, stop, err = report.ReadRerun(r)
		return again, err
	})
	if err != nil {
		return nil, usageErrorf("%s: --rerun-failed %s", s.cmd, inFile(s.rerunFailed, err))
	}
	if err := s.suiteFiles(data, again); err != nil {
		return nil, err
	}
	if stop != nil && stop.Kind == merge.StopMissingShards {
		// Their cases are not in the report: nothing names them to run.
		// printNotes names the report before each note.
		s.notes = append(s.notes, fmt.Sprintf("the report was merged without every shard, and the cases of the missing ones are not in it (%s): run them with --shard K/N",
			strings.TrimPrefix(stop.Reason, "not run: ")))
	}
	s.sel.Cases = map[scenario.CaseRef]bool{}
	s.rerunCount, s.rerunUnrun = 0, 0
	var reasons []string
	for _, c := range again {
		if !c.Unrun {
			s.rerunCount++
			continue
		}
		s.rerunUnrun++
		if r := strings.TrimPrefix(c.Reason, "not run: "); !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	verb := map[string]string{"list": "listing", "compare": "comparing again"}[s.cmd]
	s.notes = append(s.notes, rerunning(cmp.Or(verb, "rerunning"), s.rerunCount, s.rerunUnrun, reasons))
	exists := map[string]bool{}
	for _, c := range again {
		file := argPath(c.File)
		ok, seen := exists[file]
		if !seen {
			_, err := fs.Stat(st.FS, file)
			ok = err == nil
			exists[file] = ok
		}
		if !ok {
			s.notes = append(s.notes, fmt.Sprintf("%s: the file is gone; %q cannot run again", c.File, c.Name))
			continue
		}
		s.sel.Cases[scenario.CaseRef{File: file, Name: c.Name}] = true
	}
	var files []string
	for file, ok := range exists {
		if ok {
			files = append(files, file)
		}
	}
	sort.Strings(files)
	return files, nil
}

// suiteFiles refuses a report, data, whose cases to run again name a
// file that is not a suite (scenario.KindOf): no run writes one, and its
// path would be loaded as if given on the command line ("find suites in
// /etc/hostname: not a suite file", which did not say that the report
// named it) or, for a directory such as /etc or "", walked. Each such
// file is named once, at the first case entry that names it.
func (s *selection) suiteFiles(data []byte, again []report.RerunCase) error {
	var lines []string
	seen := map[string]bool{}
	for _, c := range again {
		if scenario.KindOf(c.File) != scenario.NotSuite || seen[c.File] {
			continue
		}
		seen[c.File] = true
		line, col := lineCol(data, jsonkind.Offset(data, c.From))
		lines = append(lines, fmt.Sprintf("%s: --rerun-failed %s:%d:%d: %s: %q, the file of the case %q, is not a suite file (want .yaml, .yml or .feature)",
			s.cmd, s.rerunFailed, line, col, jsonkind.PathString(c.From), c.File, c.Name))
	}
	if len(lines) > 0 {
		return usageErrorf("%s", strings.Join(lines, "\n"))
	}
	return nil
}

// rerunning says what --rerun-failed runs (verb) again: the report's
// failed and errored cases, and the cases its run left unrun, for the
// reasons given ("run interrupted", "--fail-fast", "platform
// unreachable", ...).
func rerunning(verb string, failed, unrun int, reasons []string) string {
	switch {
	case failed == 0 && unrun == 0:
		return "the report lists no failed or errored case, and its run left none unrun: nothing to run again"
	case unrun == 0:
		return fmt.Sprintf("%s %d failed or errored %s", verb, failed, plural(failed, "case", "cases"))
	}
	why := " (" + strings.Join(reasons, ", ") + ")"
	if failed == 0 {
		return fmt.Sprintf("%s %d %s its run left unrun%s", verb, unrun, plural(unrun, "case", "cases"), why)
	}
	return fmt.Sprintf("%s %d failed or errored %s and %d %s its run left unrun%s",
		verb, failed, plural(failed, "case", "cases"), unrun, plural(unrun, "case", "cases"), why)
}

// plan loads the suites under paths (load), says what --rerun-failed
// cannot run again, refuses suites that read a key variable, and returns
// the suites with the plan: the selected scenarios, what a run (or each
// side of a comparison) executes.
func (s *selection) plan(st *State, cfg *config.File, paths []string, given bool) (suites, plan []*scenario.Suite, err error) {
	suites, _, err = s.load(st, cfg, st.Stderr, paths, given)
	if err != nil {
		return nil, nil, err
	}
	s.printNotes(st.Stderr)
	if d := keyReferences(suites, cfg); d.HasErrors() {
		sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		return nil, nil, reported(exitUsage)
	}
	selected := scenario.Select(suites, s.sel)
	s.leftOut = scenario.Count(suites) - scenario.Count(selected)
	return suites, s.deal(selected), nil
}

// deal returns the share of the selected suites that --shard asks for,
// noting the size and fingerprint of the whole selection; without
// --shard, the selection.
func (s *selection) deal(selected []*scenario.Suite) []*scenario.Suite {
	if s.shard.IsZero() {
		return selected
	}
	s.selected = scenario.Count(selected)
	s.fingerprint = scenario.Fingerprint(selected)
	return s.shard.Apply(selected)
}

// emptyShard says that the shard is empty though the selection is not:
// the other shards have it all, which is no error.
func (s *selection) emptyShard() string {
	return fmt.Sprintf("shard %s has no scenario: the selection has %d, dealt over %d shards", s.shard, s.selected, s.shard.Total)
}

// rerunResult is what a run's result records of --rerun-failed, nil
// without it.
func (s *selection) rerunResult() *result.Rerun {
	if s.rerunFailed == "" {
		return nil
	}
	return &result.Rerun{Of: s.rerunFailed, Failed: s.rerunCount, Unrun: s.rerunUnrun}
}

// filterResult is what a run's result records of --tags, --name and
// FILE:LINE arguments, nil without them: the gate refuses a run of a
// subset the pipeline did not state.
func (s *selection) filterResult() *result.Filter {
	if s.tags == "" && s.name == "" && len(s.sel.At) == 0 {
		return nil
	}
	f := &result.Filter{Tags: s.tags, Name: s.name, LeftOut: s.leftOut}
	for _, at := range s.sel.At {
		f.At = append(f.At, fmt.Sprintf("%s:%d", at.File, at.Line))
	}
	return f
}

// shardResult is what a run's result records of --shard, nil without it.
func (s *selection) shardResult() *result.Shard {
	if s.shard.IsZero() {
		return nil
	}
	return &result.Shard{Index: s.shard.Index, Total: s.shard.Total, Selection: s.fingerprint, Selected: s.selected}
}

// printNotes says, once, what --rerun-failed runs again and what it
// could not. A note quotes the report (its files' paths, a stop's
// reason): escaped, as errors are, so that a report cannot drive the
// terminal or forge a line.
func (s *selection) printNotes(w io.Writer) {
	var b strings.Builder
	for _, n := range s.notes {
		b.WriteString(escape.Line("agenttest: --rerun-failed "+s.rerunFailed+": "+n) + "\n")
	}
	io.WriteString(w, b.String())
}

// filters describes the filters in use, for the message of an empty
// selection.
func (s *selection) filters() []string {
	var out []string
	add := func(name, filter string) {
		out = append(out, filter+s.flags.setByNote(name))
	}
	if s.tags != "" {
		add("tags", fmt.Sprintf("--tags %q", s.tags))
	}
	if s.name != "" {
		add("name", fmt.Sprintf("--name %q", s.name))
	}
	if s.rerunFailed != "" {
		add("rerun-failed", "--rerun-failed "+s.rerunFailed)
	}
	return out
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
