package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
)

// The outputs of a run beyond the console, JUnit and JSON: node coverage
// (in the JSON report), Cucumber Messages, and GitHub Actions'
// annotations and step summary. `agenttest run` and `agenttest merge`
// write them the same way (writeOutputs).

// outputs are the flags of those outputs, shared by run and merge.
type outputs struct {
	// cucumber is the Cucumber Messages file (--cucumber).
	cucumber string
	// github turns on GitHub Actions' annotations and step summary
	// (--github; on by itself when GITHUB_ACTIONS=true, unless
	// --github=false); githubSet is true when the flag or its variable
	// was given.
	github    bool
	githubSet bool
	// coverageFrom are earlier JSON reports whose nodes complete the
	// universe of node coverage (--coverage-from).
	coverageFrom []string

	// universe is what coverage is measured against, built by the
	// command; docs are the suite files for --cucumber.
	universe coverage.Universe
	docs     []report.CucumberDoc
	// mask is the command's redactor, which the docs are masked with as
	// they are written; nil masks the keys the environment holds.
	mask *secret.Redactor

	// resume ends guardCommands' pause of workflow commands; nil when
	// none is in force.
	resume func()
}

func (o *outputs) register(f *flags, cucumber bool) {
	if cucumber {
		f.fileVar(&o.cucumber, "cucumber", "AGENTTEST_CUCUMBER", "write Cucumber Messages (NDJSON) to `FILE`, for Cucumber's report tools", withoutReport)
	}
	f.boolVar(&o.github, "github", "AGENTTEST_GITHUB", "print failures as GitHub Actions annotations and append a summary to $GITHUB_STEP_SUMMARY (default: when GITHUB_ACTIONS=true; --github=false turns it off)")
	f.listVar(&o.coverageFrom, "coverage-from", "AGENTTEST_COVERAGE_FROM", "complete node coverage with the nodes seen in earlier JSON `REPORTS` (repeat the flag or separate with commas)")
}

// parsed notes what the command line said of the outputs' flags.
func (o *outputs) parsed(f *flags) { o.githubSet = f.isSet("github") }

// githubOn says whether GitHub Actions' outputs are written: as --github
// says when given, else when running in GitHub Actions.
func (o *outputs) githubOn(st *State) bool {
	if o.githubSet {
		return o.github
	}
	return inGitHubActions(st)
}

// workspacePath maps a suite's path to the one an annotation gives in
// GitHub Actions: relative to $GITHUB_WORKSPACE, the repository's
// checkout, which the runner reads a relative path against (a step's
// working-directory: is not), or as it was when it is outside the
// checkout or no workspace is set.
func workspacePath(st *State) func(string) string {
	ws := st.Getenv("GITHUB_WORKSPACE")
	if ws == "" || !filepath.IsAbs(ws) {
		return nil
	}
	return func(p string) string {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(st.Dir, p)
		}
		rel, err := filepath.Rel(ws, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return p
		}
		return filepath.ToSlash(rel)
	}
}

// inGitHubActions says whether the command runs in a GitHub Actions job,
// whose runner reads workflow commands from what it prints.
func inGitHubActions(st *State) bool { return st.Getenv("GITHUB_ACTIONS") == "true" }

// readCoverageFrom reads --coverage-from into the universe: the nodes
// each report's traces name and the nodes its coverage section lists.
// A report that cannot be read is a usage error, found before anything
// runs. The reports are anyone's text: red's keys are masked in what is
// read (node names reach the coverage of every report written); the
// problems, which may quote it, are masked as the command ends
// (maskMessage).
func (o *outputs) readCoverageFrom(st *State, cmd string, red *secret.Redactor) error {
	if o.universe == nil {
		o.universe = coverage.Universe{}
	}
	var problems []string
	for _, name := range o.coverageFrom {
		rep, err := readMaskedReport(st, name, red)
		if err != nil {
			problems = append(problems, "--coverage-from "+inFile(name, err))
			continue
		}
		o.universe.Merge(coverage.Observed(rep.Result))
		o.universe.Merge(coverage.FromReport(rep.Coverage))
	}
	if len(problems) > 0 {
		return usageProblems(cmd, problems...)
	}
	return nil
}

// readMaskedReport reads a JSON report (relative to the working
// directory) with red's keys masked in its values, for a command that
// shows what it read or writes it into outputs of its own (merge,
// compare, coverage, --coverage-from): a report agenttest wrote holds
// no key, but one edited, or written elsewhere or by an older version,
// may, and what the outputs cut short (a GitHub annotation at the runner's 4096
// characters) must be masked before it is cut, or the half of a key left
// is no longer one to find. Problems are told at the file's own line and
// column; a nil red masks nothing.
func readMaskedReport(st *State, name string, red *secret.Redactor) (*report.Report, error) {
	data, err := readArg(st, name)
	if err != nil {
		return nil, err
	}
	rep, err := decodeJSON(data, report.ReadJSON)
	if err != nil {
		return rep, err
	}
	if clean := red.JSON(data); !bytes.Equal(clean, data) {
		if rep, err = decodeJSON(clean, report.ReadJSON); err != nil {
			return rep, err
		}
	}
	maskStreams(rep.Result, red)
	return rep, nil
}

// maskStreams masks a key that the chunks of a turn's stream spell
// between them, none holding it whole, in res, a report read: the reports
// show a stream cut before its end as its chunks joined
// (reply.Messaging.ChunkText), where masking each value found nothing.
// As the client does with a stream it receives (platform's maskSpread),
// the chunks lose their text. A report agenttest wrote has no such
// chunks; one of an older version, or edited, may.
func maskStreams(res *result.Result, red *secret.Redactor) {
	for _, c := range res.Cases() {
		for _, a := range c.Attempts {
			for _, t := range a.Turns {
				if m := t.Messaging; red.Contains(m.ChunkText()) {
					for i := range m.Events {
						if m.Events[i].Kind == reply.KindAgentChunk {
							m.Events[i].Text = secret.Mask
						}
					}
				}
			}
		}
	}
}

// decodeJSON decodes data, a JSON file named on the command line, with
// decode (report.ReadJSON, compare.ReadJSON, ...); a decoding error is
// worded by jsonProblem, at its line and column.
func decodeJSON[T any](data []byte, decode func(io.Reader) (T, error)) (T, error) {
	v, err := decode(bytes.NewReader(data))
	if p := jsonProblem(data, err); p != nil {
		var zero T
		return zero, p
	}
	return v, err
}

// atPos is a problem at a line and column of a file named on the command
// line; inFile puts the file's name before them.
type atPos struct {
	line, col int
	err       error
}

func (e *atPos) Error() string { return fmt.Sprintf("%d:%d: %v", e.line, e.col, e.err) }
func (e *atPos) Unwrap() error { return e.err }

// inFile says err of the file named path: "path:line:col: ..." when err
// has a position, else "path: ...".
func inFile(path string, err error) string {
	if p, ok := errors.AsType[*atPos](err); ok {
		return fmt.Sprintf("%s:%d:%d: %v", path, p.line, p.col, p.err)
	}
	return fmt.Sprintf("%s: %v", path, err)
}

// jsonProblem words err, the error of a reader decoding the JSON report
// data, for whoever named the file: where it went wrong, in JSON's terms
// ("run is a string, where an agenttest report has an object"), not Go's
// ("cannot unmarshal string into Go struct field jsonDoc.run of type
// report.jsonRun"), and an empty or truncated file as such; a value no
// report holds (jsonkind.ValueError) at its line and column too. It is nil
// when err is not a decoding error (a wrong schema says so already).
func jsonProblem(data []byte, err error) error {
	if err == nil {
		return nil
	}
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	var val *jsonkind.ValueError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return errors.New("not a JSON report: the file is empty")
	case errors.As(err, &typ):
		line, col := lineCol(data, valueStart(data, typ.Offset))
		msg := fmt.Sprintf("the file holds %s, where an agenttest report is an object", jsonValue(typ.Value))
		if field := jsonField(typ.Field); field != "" {
			msg = fmt.Sprintf("%s is %s, where an agenttest report has %s", field, jsonValue(typ.Value), jsonkind.Of(typ.Type))
		}
		return &atPos{line, col, errors.New("not a JSON report: " + msg)}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &syn) && syn.Error() == "unexpected end of JSON input":
		line, col := lineCol(data, int64(len(data)))
		return &atPos{line, col, errors.New("not a JSON report: the file ends inside a JSON value (cut short?)")}
	case errors.As(err, &syn) && strings.HasSuffix(syn.Error(), " after top-level value"):
		// More follows the first value. When that is a report, it is
		// whole and something was joined to it; else (another tool's JSON
		// lines) it is no report to begin with.
		var head struct {
			Schema string `json:"schema"`
		}
		line, col := lineCol(data, syn.Offset-1)
		if json.NewDecoder(bytes.NewReader(data)).Decode(&head) != nil {
			return &atPos{line, col, errors.New("not a JSON report: " + syn.Error())}
		}
		if err := report.CheckSchema(head.Schema); err != nil && head.Schema != compare.SchemaV1 {
			return err
		}
		return &atPos{line, col, errors.New("not a JSON report: more follows the end of the report (two files joined?)")}
	case errors.As(err, &syn) && bytes.HasPrefix(bytes.TrimSpace(data), []byte("<")):
		// The other reports of a run sit beside its JSON one, and a
		// glob of the artifacts (reports/*) or the wrong one picked
		// gives a reader the JUnit or the HTML report.
		line, col := lineCol(data, syn.Offset-1)
		return &atPos{line, col, errors.New("not a JSON report: the file is XML or HTML (the JUnit or the HTML report?); give the report of --json")}
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset-1)
		return &atPos{line, col, errors.New("not a JSON report: " + syn.Error())}
	case errors.As(err, &val):
		line, col := lineCol(data, val.Offset)
		return &atPos{line, col, errors.New("not a JSON report: " + val.Error())}
	}
	return nil
}

// valueStart is the offset of the first byte of the value an
// UnmarshalTypeError found, given its Offset: just past the opening [ or
// { of an array or object, just past the end of a string, number,
// boolean or null.
func valueStart(data []byte, off int64) int64 {
	off = max(0, min(off, int64(len(data))))
	if off == 0 {
		return 0
	}
	end := off - 1
	switch data[end] {
	case '[', '{':
		return end
	case '"':
		for i := end - 1; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			n := 0 // backslashes before it: an even number leaves it unescaped
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				n++
			}
			if n%2 == 0 {
				return i
			}
		}
		return end
	}
	i := end
	for i > 0 && !strings.ContainsRune(" \t\r\n:,[", rune(data[i-1])) {
		i--
	}
	return i
}

// jsonField is the dotted path of the member an UnmarshalTypeError names,
// without the names of Go types encoding/json puts in it for embedded
// structs ("files.cases.jsonCase.status"): every member of a report is
// lower case.
func jsonField(f string) string {
	var out []string
	for part := range strings.SplitSeq(f, ".") {
		if part != "" && strings.ToLower(part) == part {
			out = append(out, part)
		}
	}
	return strings.Join(out, ".")
}

// lineCol is the line and column (in characters) of byte offset off of
// data, both from 1.
func lineCol(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[start:]) + 1
}

// jsonValue names the JSON value an UnmarshalTypeError found ("string",
// "number -1", "array").
func jsonValue(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// readArg reads a JSON report named on the command line (gate, merge,
// compare, history, coverage, --rerun-failed, --coverage-from): as given,
// anywhere (pathFS), its error without the path the caller prints anyway.
// Its text is read as a suite's is (scenario.Text): a report saved with a
// byte order mark (Notepad), or as UTF-16 (PowerShell's > and Out-File),
// reads as the report it holds, at the same lines and columns, where
// encoding/json refused it at 1:1 ("invalid character 'ï'"). Every
// reader of reports, and the positions of their problems, work from that
// text.
func readArg(st *State, name string) ([]byte, error) {
	data, err := fs.ReadFile(st.FS, argPath(name))
	if err != nil {
		if fi, serr := fs.Stat(st.FS, argPath(name)); serr == nil && fi.IsDir() {
			return nil, dirNotReport(st, name)
		}
		return nil, unwrapPath(err)
	}
	return scenario.Text(data), nil
}

// dirNotReport says that dir, named where a JSON report was wanted (the
// directory a CI job downloaded its reports to), is a directory, and
// names the JSON files it holds, as they would be named instead.
func dirNotReport(st *State, dir string) error {
	entries, _ := fs.ReadDir(st.FS, argPath(dir))
	var reports []string
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".json") {
			reports = append(reports, filepath.Join(dir, e.Name()))
		}
	}
	switch {
	case len(reports) == 0:
		return errors.New("it is a directory, not a JSON report, and holds no .json file")
	case len(reports) > 4:
		reports = append(reports[:4], fmt.Sprintf("and %d more", len(reports)-4))
	}
	return fmt.Errorf("it is a directory, not a JSON report; it holds %s", strings.Join(reports, ", "))
}

// addDefinitions adds the nodes of the simulator's agents to the
// universe: for each agent a run talked to, the nodes of the version each
// of its environments served.
func (o *outputs) addDefinitions(served servedDefinitions, plan []*scenario.Suite) {
	if o.universe == nil {
		o.universe = coverage.Universe{}
	}
	for _, s := range plan {
		for _, sc := range s.Scenarios {
			if id, d := served.of(sc); d != nil {
				o.universe.Add(id, coverage.SourceDefinition, d.NodeNames()...)
			}
		}
	}
}

// readDocs reads the suite files of the plan as Cucumber documents, for
// --cucumber.
func (o *outputs) readDocs(st *State, plan []*scenario.Suite) error {
	if o.cucumber == "" {
		return nil
	}
	newID := (&messages.Incrementing{}).NewId
	for _, s := range plan {
		src, err := fs.ReadFile(st.FS, s.Path)
		if err != nil {
			return fmt.Errorf("--cucumber: read %s: %w", s.Path, unwrapPath(err))
		}
		src = scenario.Text(src)
		doc, pickles, err := scenario.Gherkin(s, src, newID)
		if err != nil {
			return fmt.Errorf("--cucumber: %w", err)
		}
		d := report.CucumberDoc{Document: doc, Pickles: pickles, Locations: scenario.Locations(doc)}
		if scenario.KindOf(s.Path) == scenario.Feature {
			d.Source = &messages.Source{Uri: s.Path, Data: string(src), MediaType: messages.SourceMediaType_TEXT_X_CUCUMBER_GHERKIN_PLAIN}
		}
		o.docs = append(o.docs, d)
	}
	return nil
}

// readDocsOf reads, for --cucumber, the suite files of a result that
// ran elsewhere (merge): the files it names, from the working directory
// as the run read them, with the scenarios it holds a case of (by file
// and name, as --rerun-failed selects). Each case's scenario must be
// where the report says: a file edited, moved or gone since the run
// would pair a case with another scenario's steps, so that is a usage
// error, found before anything is written.
func (o *outputs) readDocsOf(st *State, res *result.Result, cmd string) error {
	if o.cucumber == "" {
		return nil
	}
	var paths []string
	keep := map[scenario.CaseRef]bool{}
	for f, c := range res.Scenarios() {
		if len(paths) == 0 || paths[len(paths)-1] != argPath(f.Path) {
			paths = append(paths, argPath(f.Path))
		}
		keep[scenario.CaseRef{File: argPath(cmp.Or(c.Pos.File, f.Path)), Name: c.Name}] = true
	}
	if len(paths) == 0 {
		return nil
	}
	suites, _, err := loadSuites(st, nil, st.Stderr, paths, false)
	if err != nil {
		return err
	}
	plan := scenario.Select(suites, scenario.Selection{Cases: keep})
	at := map[scenario.CaseRef]diag.Pos{}
	for _, s := range plan {
		for _, sc := range s.Scenarios {
			at[scenario.CaseRef{File: argPath(sc.Pos.File), Name: sc.Name}] = sc.Pos
		}
	}
	var problems []string
	for f, c := range res.Scenarios() {
		file := argPath(cmp.Or(c.Pos.File, f.Path))
		switch p, ok := at[scenario.CaseRef{File: file, Name: c.Name}]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("--cucumber: %s: scenario %q is not in %s any more", c.Pos, c.Name, file))
		case p.Line != c.Pos.Line:
			problems = append(problems, fmt.Sprintf("--cucumber: %s: scenario %q is at line %d of %s now", c.Pos, c.Name, p.Line, file))
		}
	}
	if len(problems) > 0 {
		problems = append(problems, "the suite files changed since the run: write --cucumber from the files it ran, or run again")
		return usageProblems(cmd, problems...)
	}
	return o.readDocs(st, plan)
}

// guardCommands pauses the Actions runner's workflow commands for what
// the command prints from now on, when GitHub's outputs are on or the
// command runs in GitHub Actions (--github=false turns off the
// annotations and the summary, as the shard jobs of a sharded run do,
// not the runner's reading of the log), and returns what resumes them (a
// no-op once write has). The runner obeys a
// line of a step's output that starts, after blanks, with `::` (and, in
// the older syntax, one holding `##[` anywhere): a reply, a node name or
// an error body in a failure's diff or a -v transcript could otherwise
// raise annotations of its own, mask words of the log (`::add-mask::`),
// or switch off the run's own annotations (`::stop-commands::`). The
// runner's own remedy is used: `::stop-commands::TOKEN` before, `::TOKEN::`
// after, with a token nobody could know when the text was written.
func (o *outputs) guardCommands(st *State) (resume func()) {
	if !o.githubOn(st) && !inGitHubActions(st) {
		return func() {}
	}
	o.resume = stopCommands(st)
	return func() {
		if o.resume != nil {
			o.resume()
			o.resume = nil
		}
	}
}

// stopCommands writes the stop of the runner's workflow commands and
// returns what resumes them.
func stopCommands(st *State) (resume func()) {
	g := report.NewCommandGuard()
	fmt.Fprintln(st.Stdout, g.Stop)
	return func() { fmt.Fprintln(st.Stdout, g.Resume) }
}

// guardMessage prints the message of the error a command ends with, in
// GitHub Actions, between a stop of the runner's workflow commands and
// its resumption, all on stderr where the message goes (one stream keeps
// their order), when the message could hold a command: it quotes what
// the platform sent (an error body, a malformed header), which the
// runner would obey in the older `##[` syntax anywhere in a line, and
// it comes after the command's own guard has resumed. It returns the
// error with its message printed (reported), or err as it was.
func guardMessage(st *State, err error) error {
	if err == nil || !inGitHubActions(st) {
		return err
	}
	var msg bytes.Buffer
	code := exitCode(err, &msg)
	if !report.MayHoldCommand(msg.String()) {
		return err
	}
	_, _ = writeGuarded(st, st.Stderr, msg.Bytes())
	return reported(code)
}

// writeGuarded writes text to w, in GitHub Actions between a stop of the
// runner's workflow commands and their resumption when it could hold one
// (report.MayHoldCommand): for a command that prints text of reports or of the
// platform in one write at its end (history, the closing message), and
// whose output a job may keep in a file, which a guard it did not need
// would clutter.
func writeGuarded(st *State, w io.Writer, text []byte) (int, error) {
	if !inGitHubActions(st) || !report.MayHoldCommand(string(text)) {
		return w.Write(text)
	}
	g := report.NewCommandGuard()
	nl := ""
	if len(text) > 0 && text[len(text)-1] != '\n' {
		nl = "\n"
	}
	return fmt.Fprintf(w, "%s\n%s%s%s\n", g.Stop, text, nl, g.Resume)
}

// guardInGitHubActions pauses the runner's workflow commands for the
// commands that print the platform's text but write no annotations
// (compare's replies and error bodies, gate's reads of the deployments,
// the events webhooks listen receives), when they run in GitHub Actions;
// it returns what resumes them. See guardCommands.
func guardInGitHubActions(st *State) (resume func()) {
	if !inGitHubActions(st) {
		return func() {}
	}
	return stopCommands(st)
}

// write writes the Cucumber file and GitHub's outputs of a concluded run.
// Annotations go to stdout, where the Actions runner reads them; the
// summary is appended to $GITHUB_STEP_SUMMARY when it is set.
func (o *outputs) write(st *State, res *result.Result) []error {
	var errs []error
	if o.cucumber != "" {
		errs = append(errs, writeReport(st, o.cucumber, func(w io.Writer) error {
			red := o.mask
			if red == nil {
				red = workspaceKeys(st, "") // merge: no target, the workspace's keys
			}
			docs, err := maskDocs(red, o.docs)
			if err != nil {
				return err
			}
			return report.WriteCucumber(w, res, report.CucumberOptions{Docs: docs, Version: version()})
		}))
	}
	if !o.githubOn(st) {
		return errs
	}
	// The annotations are the run's own commands: the runner obeys them.
	if o.resume != nil {
		o.resume()
		o.resume = nil
	}
	if err := report.WriteGitHubAnnotationsWith(st.Stdout, res, report.GitHubOptions{File: workspacePath(st)}); err != nil {
		errs = append(errs, err)
	}
	if name := strings.TrimSpace(st.Getenv("GITHUB_STEP_SUMMARY")); name != "" && st.AppendFile != nil {
		var b bytes.Buffer
		if err := report.WriteGitHubSummary(&b, res); err != nil {
			return append(errs, err)
		}
		f, err := st.AppendFile(name)
		if err == nil {
			_, err = f.Write(b.Bytes())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			errs = append(errs, outputErrorf("append the step summary to %s (GITHUB_STEP_SUMMARY): %w", name, unwrapPath(err)))
		}
	}
	return errs
}

// coverageOf is the node coverage of a run against the universe.
func (o *outputs) coverageOf(res *result.Result) *coverage.Report {
	return coverage.Compute(res, o.universe)
}

// maskDocs masks the keys in the suite files Cucumber Messages carry: a
// feature's source, its document and pickles quote every step, table
// cell and Examples row as written, and a key pasted there would be in
// the report as it is in the file (a result's values are masked as they
// are stored; these are the files themselves). Only strings change, so
// the locations that pair cases with pickles hold.
func maskDocs(red *secret.Redactor, docs []report.CucumberDoc) ([]report.CucumberDoc, error) {
	out := make([]report.CucumberDoc, len(docs))
	for i, d := range docs {
		out[i] = d
		if d.Source != nil {
			src := *d.Source
			src.Data = red.String(src.Data)
			out[i].Source = &src
		}
		var err error
		if out[i].Document, err = maskJSON(red, d.Document); err != nil {
			return nil, err
		}
		if out[i].Pickles, err = maskJSON(red, d.Pickles); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maskJSON is v with red applied to its JSON encoding, which masking
// keeps valid.
func maskJSON[T any](red *secret.Redactor, v T) (T, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return v, fmt.Errorf("mask the suite files' messages: %w", err)
	}
	clean := red.JSON(b)
	if &clean[0] == &b[0] && len(clean) == len(b) {
		return v, nil // nothing masked
	}
	var out T
	if err := json.Unmarshal(clean, &out); err != nil {
		return v, fmt.Errorf("mask the suite files' messages: %w", err)
	}
	return out, nil
}
