package history

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
)

// marks are the verdicts in the text view's strip.
var marks = map[Verdict]string{
	VerdictPassed: "✓", VerdictFlaky: "✓", VerdictFailed: "✗", VerdictInconclusive: "?", VerdictErrored: "E", VerdictNone: "·",
}

// retriedMark is the strip's mark of a pass that came only after a
// failed attempt (Scenario.Retried): it passed the run, and it is not a
// clean pass.
const retriedMark = "~"

// summary is what a report line says after the status: the environments
// tested, the cases by verdict, and why the run could not judge every
// case, when it could not. Empty for a report written before these
// were recorded.
func (r *Report) summary() string {
	var parts []string
	c := r.Counts
	for _, n := range []struct {
		n    int
		what string
	}{{c.Passed, "passed"}, {c.Flaky, "flaky"}, {c.Failed, "failed"}, {c.Errored, "errored"}, {c.NotRun, "not run"}, {c.Skipped, "skipped"}, {c.Quarantined, "quarantined"}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.what))
		}
	}
	var out string
	if len(r.Envs) > 0 {
		out = "  in " + strings.Join(r.Envs, ", ")
		if len(parts) > 0 {
			out += ":"
		}
	}
	if len(parts) > 0 {
		if out == "" {
			out = " "
		}
		out += " " + strings.Join(parts, ", ")
	}
	if len(r.Causes) > 0 {
		out += " (" + strings.Join(r.Causes, "; ") + ")"
	}
	return out
}

// targetLabel names the target the report tested, in the words gate
// uses: its name, workspace, environment and platform (or the embedded
// simulator).
func (r *Report) targetLabel() string {
	t := r.Target
	parts := []string{fmt.Sprintf("target %q", t.Name)}
	if t.AccountID != "" {
		parts = append(parts, "workspace "+t.AccountID)
	}
	if t.Env != "" {
		parts = append(parts, "env "+t.Env)
	}
	switch {
	case t.Embedded:
		parts = append(parts, "the embedded simulator")
	case t.BuildURL != "":
		parts = append(parts, "the platform at "+t.BuildURL)
	}
	if t.RuntimeURL != "" && !t.Embedded {
		parts = append(parts, "runtime at "+t.RuntimeURL)
	}
	return strings.Join(parts, ", ")
}

// WriteText writes the history for people: the reports, one line per
// scenario, then the scenarios that went from passing to failing. What
// the report files hold (paths, statuses, case names) is escaped: the
// files are anyone's.
func WriteText(w io.Writer, h *History) error {
	var b strings.Builder
	order := "oldest first"
	if h.Undated != nil && len(h.Reports) > 1 {
		order = "in the order given (" + escape.Line(h.Undated.Path) + " records no start)"
	}
	fmt.Fprintf(&b, "%d %s, %s:\n", len(h.Reports), plural(len(h.Reports), "report", "reports"), order)
	for i, r := range h.Reports {
		fmt.Fprintf(&b, "  %d  %s  %s  %s%s\n", i+1, escape.Line(r.Path), escape.Line(orDash(r.Started)), escape.Line(orDash(r.Status)), escape.Line(r.summary()))
	}
	if groups := h.Targets(); len(groups) > 1 {
		fmt.Fprintf(&b, "more than one target: the reports tested %d, which every scenario's record below folds together:\n", len(groups))
		for _, g := range groups {
			fmt.Fprintf(&b, "  %s %s: %s\n", plural(len(g), "report", "reports"), numbers(g), escape.Line(h.Reports[g[0]].targetLabel()))
		}
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "runs\tpass rate\t%.0f%% interval\tverdicts\tflips\tscenario\n", Level*100)
	for _, s := range h.Scenarios {
		rate, interval := "-", "-"
		if v, ok := s.Rate(); ok {
			rate = fmt.Sprintf("%.2f", v)
			// Rounded outwards: the printed interval is never narrower.
			interval = fmt.Sprintf("%.2f–%.2f", stats.RoundDown(s.Lower, 2), stats.RoundUp(s.Upper, 2))
		}
		runs := fmt.Sprint(s.Passed + s.Failed)
		if s.Errored > 0 {
			runs += fmt.Sprintf(" +%dE", s.Errored)
		}
		var strip strings.Builder
		quarantined := 0
		for i, v := range s.Verdicts {
			if s.Retried[i] {
				strip.WriteString(retriedMark)
			} else {
				strip.WriteString(marks[v])
			}
			if s.Quarantined[i] {
				quarantined++
			}
		}
		name := escape.Line(s.File + ": " + s.Name)
		if quarantined > 0 {
			name += fmt.Sprintf(" (quarantined in %d)", quarantined)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", runs, rate, interval, strip.String(), s.Flips, name)
	}
	tw.Flush()
	b.WriteString("\nruns: passed + failed (+ errored, not counted); verdicts: ✓ passed, " + retriedMark + " passed on a retry after failing, ✗ failed, ? inconclusive, E errored, · not run\n")
	writeScores(&b, h)
	if un := h.Unsteady(); len(un) > 0 {
		fmt.Fprintf(&b, "passed and failed in one run: the agent's answers vary (%d):\n", len(un))
		for _, s := range un {
			// How much it varied in each such report, beside the
			// total: a night at 8 of 27 failed reads apart from a month
			// of passes that pools it away.
			var in, each []string
			for i, m := range s.Mixed {
				if m {
					t := s.ByReport[i]
					in = append(in, fmt.Sprint(i+1))
					each = append(each, fmt.Sprintf("%d of %d in report %d", t.Failed, t.Passed+t.Failed, i+1))
				}
			}
			fmt.Fprintf(&b, "  %s: in %s %s; failed %d of %d runs in all: %s\n", escape.Line(s.File+": "+s.Name),
				plural(len(in), "report", "reports"), strings.Join(in, ", "), s.Failed, s.Passed+s.Failed, strings.Join(each, ", "))
		}
	}
	var worse []*Scenario
	for _, s := range h.Worse() {
		// One that went from passing to failing is listed there.
		if !s.Regressed {
			worse = append(worse, s)
		}
	}
	if len(worse) > 0 {
		// Before it fails: a scenario passing, but more and more often
		// only on a retry, or failing more often than it did.
		older, newer := h.Halves()
		fmt.Fprintf(&b, "worse in the newer reports (%s) than in the older (%s): a larger share failed, or passed only on a retry (%d):\n",
			span(newer), span(older), len(worse))
		for _, s := range worse {
			fmt.Fprintf(&b, "  %s: older %s; newer %s\n", escape.Line(s.File+": "+s.Name), s.Older, s.Newer)
		}
	}
	writeDrifting(&b, h)
	if kept := h.Kept(); len(kept) > 0 {
		fmt.Fprintf(&b, "kept from a verdict on the agent (the platform, the network or the run, not the agent): %d of %d %s: %s\n",
			len(kept), len(h.Reports), plural(len(h.Reports), "report", "reports"), numbers(kept))
	}
	if since, dropped, added := h.Unlisted(); len(dropped) > 0 {
		// Green can hide what stopped being tested: the newest night
		// passed on fewer scenarios than the one before it.
		newest := len(h.Reports)
		fmt.Fprintf(&b, "not in the newest report (%d), though in report %d: removed, renamed or no longer selected, so not tested (%d):\n", newest, since+1, len(dropped))
		for _, s := range dropped {
			fmt.Fprintf(&b, "  %s\n", escape.Line(s.File+": "+s.Name))
		}
		if len(added) > 0 {
			fmt.Fprintf(&b, "in the newest report (%d), not in report %d: new, or a new name of one above (%d):\n", newest, since+1, len(added))
			for _, s := range added {
				fmt.Fprintf(&b, "  %s\n", escape.Line(s.File+": "+s.Name))
			}
		}
	}
	reg := h.Regressions()
	if len(reg) == 0 {
		b.WriteString("no scenario went from passing to failing\n")
	} else {
		fmt.Fprintf(&b, "went from passing to failing (%d):\n", len(reg))
		for _, s := range reg {
			fmt.Fprintf(&b, "  %s: %s in report %d, %s in report %d%s\n", escape.Line(s.File+": "+s.Name),
				escape.Line(string(s.Verdicts[s.PassedIn])), s.PassedIn+1, escape.Line(string(s.Verdicts[s.FailedIn])), s.FailedIn+1, redeployed(s))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String says the counts as the text view does: "3 passed, 1 on a
// retry, 0 failed".
func (t Trend) String() string {
	return fmt.Sprintf("%d passed, %d on a retry, %d failed", t.Passed, t.Retried, t.Failed)
}

// span names a run of report indexes as the text view numbers the
// reports, from 1: "1–3", or "2" alone.
func span(idx []int) string {
	first, last := idx[0]+1, idx[len(idx)-1]+1
	if first == last {
		return fmt.Sprint(first)
	}
	return fmt.Sprintf("%d–%d", first, last)
}

// redeployed says whether the agent of a scenario that regressed was
// redeployed between the report it last passed in and the one it failed
// in, the first question of whoever reads a nightly history: a new
// version, or the same one answering otherwise. Empty when either report
// records no deployment of it.
func redeployed(s *Scenario) string {
	a, b := s.PassedOn, s.FailedOn
	if a == nil || b == nil || a.Agent != b.Agent || a.Env != b.Env {
		return ""
	}
	what := "; deployment of " + escape.Line(a.Agent) + " in " + escape.Line(a.Env) + " "
	if a.ID == b.ID {
		return what + escape.Line(a.ID) + " in both (not redeployed)"
	}
	return what + escape.Line(deploymentLabel(a)) + " → " + escape.Line(deploymentLabel(b)) + " (redeployed)"
}

// deploymentLabel is a deployment's id and, when known, its version.
func deploymentLabel(d *Deployment) string {
	if d.Version == "" {
		return d.ID
	}
	return d.ID + " (version " + d.Version + ")"
}

// SchemaV1 names the layout WriteJSON produces:
//
//	schema     "agenttest/history/v1"
//	reports    [{path, started, status, envs, counts: {passed, flaky,
//	             failed, inconclusive, errored, not_run, skipped,
//	             quarantined}, causes}] (oldest
//	             first; as given when one has no started)
//	scenarios  [{file, name, runs, passed, failed, errored, pass_rate,
//	             interval: {lower, upper, level}, verdicts, quarantined,
//	             retried, mixed, runs_by_report: [{passed, failed,
//	             errored}], flips, regressed, unsteady,
//	             older: {passed, retried, failed}, newer: {...}, worse,
//	             scores: [{key, to, not, n, pos, min, scores_by_report,
//	             older, newer, near, drifting}]}]
//	drifting   [{file, name, key, to, not, n}]
//	regressed  [{file, name, passed_in, failed_in,        (report indexes, 0-based)
//	             passed_on, failed_on}]                   ({agent, env, id, version} or null)
//	targets    [{reports, target: {name, build_url, runtime_url,
//	             account_id, env, embedded}}]              (History.Targets)
//
// verdicts has one entry per report: passed, flaky, failed, inconclusive,
// errored, or null where the scenario did not run; quarantined likewise,
// true where a quarantine held. pass_rate is null without runs that are
// evidence. retried has one entry per report, true where it passed only
// after a failed attempt; mixed likewise, true where its runs both passed
// and failed; runs_by_report likewise, its runs in that report (null where
// it is not in the report); unsteady is true when mixed is anywhere. A report's envs are the environments its cases ran in, and its
// causes why the run could not judge every case (a stop, a deployment
// that changed, an interruption); kept lists the reports whose status is
// errored or interrupted (indexes, 0-based). targets has one entry per
// target the reports tested (reports: their indexes, 0-based): more than
// one is a history that folds several targets together. A regressed
// scenario's passed_on and failed_on are the deployments it was tested on
// in those two reports (null where a report records none): one id in both
// says the agent was not redeployed between them. A scenario's older and
// newer count its verdicts in the older and the newer half of the reports
// (of an odd number, the middle one in neither; errored verdicts and
// reports of a changed deployment aside): passed clean, passed only on a
// retry after failing, failed (inconclusive too); worse is true when a
// larger share of the newer half's failed, or as large a share failed and
// a larger one passed only on a retry. A scenario's scores are its
// similar matchers (key, to, not and n, the matcher's place among the
// scenario's matchers of that key and text, identify one across reports;
// pos and min are the newest report's): scores_by_report has one entry
// per report, the score (a repeated case's median over its runs), or null
// where it was not scored; older and newer are the medians of each half
// (null where the half scored it in no report); near is true when
// newer is passing within 0.05 of min; drifting when newer moved toward
// min by more than 0.05, or at all while near, and the newest score
// still passes. drifting lists those matchers, in order.
const SchemaV1 = "agenttest/history/v1"

type jsonHistory struct {
	Schema    string          `json:"schema"`
	Reports   []jsonReportRef `json:"reports"`
	Scenarios []jsonScenario  `json:"scenarios"`
	Regressed []jsonRegressed `json:"regressed"`
	Drifting  []jsonDrifting  `json:"drifting"`
	Kept      []int           `json:"kept"`
	Targets   []jsonTarget    `json:"targets"`
	// Unlisted is History.Unlisted: since -1 when the newest report
	// was compared with none.
	Unlisted jsonUnlisted `json:"unlisted"`
}

type jsonUnlisted struct {
	Since   int       `json:"since"`
	Dropped []jsonKey `json:"dropped"`
	Added   []jsonKey `json:"added"`
}

type jsonKey struct {
	File string `json:"file"`
	Name string `json:"name"`
}

type jsonTarget struct {
	Reports []int         `json:"reports"`
	Target  result.Target `json:"target"`
}

type jsonReportRef struct {
	Path    string     `json:"path"`
	Started string     `json:"started,omitempty"`
	Status  string     `json:"status,omitempty"`
	Envs    []string   `json:"envs"`
	Counts  jsonCounts `json:"counts"`
	Causes  []string   `json:"causes"`
}

type jsonCounts struct {
	Passed       int `json:"passed"`
	Flaky        int `json:"flaky"`
	Failed       int `json:"failed"`
	Inconclusive int `json:"inconclusive"`
	Errored      int `json:"errored"`
	NotRun       int `json:"not_run"`
	Skipped      int `json:"skipped"`
	Quarantined  int `json:"quarantined"`
}

type jsonScenario struct {
	File        string        `json:"file"`
	Name        string        `json:"name"`
	Runs        int           `json:"runs"`
	Passed      int           `json:"passed"`
	Failed      int           `json:"failed"`
	Errored     int           `json:"errored"`
	PassRate    *float64      `json:"pass_rate"`
	Interval    jsonInterval  `json:"interval"`
	Verdicts    []*string     `json:"verdicts"`
	Quarantined []bool        `json:"quarantined"`
	Retried     []bool        `json:"retried"`
	Mixed       []bool        `json:"mixed"`
	ByReport    []*jsonTally  `json:"runs_by_report"`
	Flips       int           `json:"flips"`
	Regressed   bool          `json:"regressed"`
	Unsteady    bool          `json:"unsteady"`
	Older       jsonTrend     `json:"older"`
	Newer       jsonTrend     `json:"newer"`
	Worse       bool          `json:"worse"`
	Scores      []jsonMatcher `json:"scores"`
}

type jsonTrend struct {
	Passed  int `json:"passed"`
	Retried int `json:"retried"`
	Failed  int `json:"failed"`
}

type jsonTally struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
}

type jsonInterval struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	Level float64 `json:"level"`
}

type jsonRegressed struct {
	File     string          `json:"file"`
	Name     string          `json:"name"`
	PassedIn int             `json:"passed_in"`
	FailedIn int             `json:"failed_in"`
	PassedOn *jsonDeployment `json:"passed_on"`
	FailedOn *jsonDeployment `json:"failed_on"`
}

type jsonDeployment struct {
	Agent   string `json:"agent"`
	Env     string `json:"env"`
	ID      string `json:"id"`
	Version string `json:"version,omitempty"`
}

// deploymentJSON is d in the JSON history, nil for none.
func deploymentJSON(d *Deployment) *jsonDeployment {
	if d == nil {
		return nil
	}
	return &jsonDeployment{Agent: d.Agent, Env: d.Env, ID: d.ID, Version: d.Version}
}

// WriteJSON writes the history as one JSON document (SchemaV1).
func WriteJSON(w io.Writer, h *History) error {
	doc := jsonHistory{Schema: SchemaV1, Reports: []jsonReportRef{}, Scenarios: []jsonScenario{}, Regressed: []jsonRegressed{}, Kept: h.Kept(), Targets: []jsonTarget{}, Drifting: []jsonDrifting{}}
	if doc.Kept == nil {
		doc.Kept = []int{}
	}
	for _, r := range h.Reports {
		c := r.Counts
		doc.Reports = append(doc.Reports, jsonReportRef{Path: r.Path, Started: r.Started, Status: r.Status,
			Envs: orEmpty(r.Envs), Causes: orEmpty(r.Causes),
			Counts: jsonCounts{Passed: c.Passed, Flaky: c.Flaky, Failed: c.Failed, Inconclusive: c.Inconclusive, Errored: c.Errored, NotRun: c.NotRun, Skipped: c.Skipped, Quarantined: c.Quarantined}})
	}
	for _, g := range h.Targets() {
		doc.Targets = append(doc.Targets, jsonTarget{Reports: g, Target: h.Reports[g[0]].Target})
	}
	for _, s := range h.Scenarios {
		js := jsonScenario{File: s.File, Name: s.Name, Runs: s.Runs(), Passed: s.Passed, Failed: s.Failed, Errored: s.Errored,
			Interval: jsonInterval{Lower: s.Lower, Upper: s.Upper, Level: Level}, Quarantined: s.Quarantined, Retried: s.Retried, Mixed: s.Mixed,
			Flips: s.Flips, Regressed: s.Regressed, Unsteady: s.Unsteady(),
			Older: jsonTrend(s.Older), Newer: jsonTrend(s.Newer), Worse: s.Worse}
		if v, ok := s.Rate(); ok {
			js.PassRate = &v
		}
		js.Scores = matchersJSON(s)
		for _, t := range s.ByReport {
			var jt *jsonTally
			if t != nil {
				jt = &jsonTally{Passed: t.Passed, Failed: t.Failed, Errored: t.Errored}
			}
			js.ByReport = append(js.ByReport, jt)
		}
		for _, v := range s.Verdicts {
			if v == VerdictNone {
				js.Verdicts = append(js.Verdicts, nil)
				continue
			}
			name := string(v)
			js.Verdicts = append(js.Verdicts, &name)
		}
		doc.Scenarios = append(doc.Scenarios, js)
		if s.Regressed {
			doc.Regressed = append(doc.Regressed, jsonRegressed{File: s.File, Name: s.Name, PassedIn: s.PassedIn, FailedIn: s.FailedIn,
				PassedOn: deploymentJSON(s.PassedOn), FailedOn: deploymentJSON(s.FailedOn)})
		}
	}
	since, dropped, added := h.Unlisted()
	doc.Unlisted = jsonUnlisted{Since: since, Dropped: []jsonKey{}, Added: []jsonKey{}}
	for _, s := range dropped {
		doc.Unlisted.Dropped = append(doc.Unlisted.Dropped, jsonKey(s.Key))
	}
	for _, s := range added {
		doc.Unlisted.Added = append(doc.Unlisted.Added, jsonKey(s.Key))
	}
	for _, d := range h.Drifting() {
		m := d.Matcher
		doc.Drifting = append(doc.Drifting, jsonDrifting{File: d.Scenario.File, Name: d.Scenario.Name, Key: m.Key, To: m.To, Not: m.Not, N: m.N})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// numbers lists report indexes as the text view numbers the reports,
// from 1: "1, 3".
func numbers(idx []int) string {
	ns := make([]string, len(idx))
	for j, i := range idx {
		ns[j] = fmt.Sprint(i + 1)
	}
	return strings.Join(ns, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
