package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/history"
)

const historyUsage = `Usage: agenttest history [flags] REPORT.json...

Reads JSON reports of earlier runs (agenttest run --json FILE), in the
order their runs started whatever the order given (in the order given,
and says so, when a report records no start), and prints each report's
status, the environments it tested, its cases by verdict and why it
could not judge every case (a platform that could not be used, a
deployment that changed during the run, an interruption); then per
scenario: its runs (passed + failed, errored runs beside them), its pass
rate with a 95% interval, its verdict in each report (~ where it passed
only on a retry after failing), how often the verdict flipped between
passing and failing; and at the end the scenarios whose runs both passed
and failed within one report (the agent's answers vary; how many runs
failed in each such report), the scenarios still not failing last that
did worse in the newer half of the reports than in the older (a larger
share of their verdicts failed, or passed only on a retry: the middle
report of an odd number in neither half), the similar matchers closer
to their threshold in the newer half than in the older while still
passing (the median of their scores moved toward it by more than 0.05,
or to within 0.05 of it), the reports the platform, the
network or the run kept from a verdict on the agent, the scenarios the
newest report no longer holds that the latest earlier report with any
case held (removed, renamed or no longer selected: a green night that
tested less), with those only the newest holds, and the scenarios that went
from passing to failing, each with the deployment of its agent in the
report it last passed in and in the one it failed in (the same id: the
agent was not redeployed between them). Scenarios are matched by file
and name, not by line. Reports may be anywhere (relative, ../ or
absolute) and are named as given. A run given twice (the same report
under two names, such as a latest.json copy beside the dated reports) is
counted once, with a note on stderr naming the files. Reports of more
than one target (another target name, workspace, environment or platform
URL, as merge tells shards apart) are said to be under the reports, each
target with its reports: every scenario's record folds them together.

Each similar matcher's score is listed report by report (a repeated
case's median over its runs, a retried case's deciding attempt's; · in
a report that did not score it, such as one written before scores were
kept); the table shows the newest 10 reports and says so ("reports
21–30 of 30"), the drift is computed over them all and --json holds
every score. A matcher is its scenario, what it checks and the text it
compares with, not its line: moved by an edit above it, it keeps its
record; its text edited, it starts a new one.

A report that cannot be read (cut short, not a JSON report) is named on
stderr with its file:line:col and left out: the history of the others
is printed all the same, and the exit code is 2.

Exit codes: 0 printed, 2 bad usage or a file that is not a JSON report
(the history of the others printed).
`

// historyFlags registers history's flags on a new flag set, parsing
// nothing (see commandFlags).
func historyFlags(st *State, asJSON *bool) *flags {
	f := newFlags(st, "history", historyUsage)
	f.boolVar(asJSON, "json", "", "print the history as JSON (schema "+history.SchemaV1+")")
	return f
}

func cmdHistory(_ context.Context, st *State, args []string) error {
	var asJSON bool
	f := historyFlags(st, &asJSON)
	paths, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	usage := append([]string(nil), f.problems...)
	if len(paths) == 0 {
		usage = append(usage, "name at least one JSON report")
	}
	// A report that cannot be read (cut short, not a report) is left out
	// of the history of the others, which is printed all the same: one
	// bad file among a month of nights must not hide the month. The exit
	// code is still 2, naming every such file.
	var problems []string
	var reports []*history.Report
	// A report agenttest wrote holds no key, but one edited (or written
	// by hand, or by another tool) may, in any value history prints: a
	// deployment's id or version, a name, a reason. The keys the
	// workspace holds (workspaceKeys) are masked in what is read, and
	// in the problems that quote it as the command ends (maskMessage).
	red := workspaceKeys(st, "")
	for _, p := range paths {
		data, err := readArg(st, p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		r, err := history.Read(p, data)
		if jp := jsonProblem(data, err); jp != nil {
			// history.Read names the file itself, but in Go's terms.
			problems = append(problems, inFile(p, jp))
			continue
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if clean := red.JSON(data); !bytes.Equal(clean, data) {
			// Read again, masked: positions of problems are the
			// file's, so only a report that reads is.
			if r, err = history.Read(p, clean); err != nil {
				problems = append(problems, err.Error())
				continue
			}
		}
		reports = append(reports, r)
	}
	// A problem may quote what the file holds (a schema it cannot read).
	for i := range problems {
		problems[i] = red.String(problems[i])
	}
	if len(usage) > 0 {
		return usageProblems("history", append(usage, problems...)...)
	}
	if len(reports) == 0 {
		return fileProblems("history", problems...)
	}
	h := history.Build(reports)
	if len(problems) > 0 {
		// The reports the history holds: a run given twice counts once.
		n, read := len(problems), len(h.Reports)
		problems = append(problems, fmt.Sprintf("%d %s left out: the history printed is of the other %d %s", n, plural(n, "file", "files"),
			read, plural(read, "report", "reports")))
	}
	for _, same := range h.Same {
		// Paths and starts are anyone's text: escaped as history's
		// output is.
		var others []string
		for _, r := range same[1:] {
			others = append(others, escape.Line(r.Path))
		}
		verb, when := "is", ""
		if len(others) > 1 {
			verb = "are"
		}
		if same[0].Started != "" {
			when = " (started " + escape.Line(same[0].Started) + ")"
		}
		fmt.Fprintf(st.Stderr, "agenttest: history: %s %s the same run as %s%s: counted once\n",
			strings.Join(others, " and "), verb, escape.Line(same[0].Path), when)
	}
	write := history.WriteText
	if asJSON {
		write = history.WriteJSON
	}
	// The history quotes the reports (names, reasons, deployments the
	// platform named): in GitHub Actions the runner would obey a `##[`
	// or `::` command among them. A reader of the console that went away
	// (agenttest history ... | head) has read what it wanted: no failure
	// of the command.
	var out bytes.Buffer
	if err := write(&out, h); err != nil {
		return err
	}
	if err := consoleErr(writeGuarded(st, st.Stdout, out.Bytes())); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fileProblems("history", problems...)
	}
	return nil
}
