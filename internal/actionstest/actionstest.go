// Package actionstest reads a step's output as the GitHub Actions runner
// does, for the tests that check which workflow commands it would obey
// in what agenttest prints:
//
//	for _, cmd := range actionstest.Obeyed(stdout) {
//		if !strings.HasPrefix(cmd, "::stop-commands::agenttest-") { ... }
//	}
package actionstest

import (
	"slices"
	"strings"
)

// Obeyed reads a step's output as the Actions runner does
// (actions/runner ActionCommand.TryParseV2 and TryParse, and
// ActionCommandManager's stop-commands): a line whose text, after
// leading blanks, is ::name ...::, or which holds ##[name ...] anywhere,
// is a command unless commands are stopped, when only ::TOKEN:: (the
// stop's token) is. It returns the commands obeyed, as written.
func Obeyed(out string) []string {
	registered := []string{"error", "warning", "notice", "debug", "add-mask", "stop-commands", "group", "endgroup", "echo",
		"set-output", "save-state", "add-matcher", "remove-matcher", "set-env", "add-path"}
	name := func(line string) string {
		l := strings.TrimLeft(line, " \t")
		if rest, ok := strings.CutPrefix(l, "::"); ok {
			if info, _, ok := strings.Cut(rest, "::"); ok {
				n, _, _ := strings.Cut(info, " ")
				return n
			}
		}
		if _, rest, ok := strings.Cut(line, "##["); ok {
			if info, _, ok := strings.Cut(rest, "]"); ok {
				n, _, _ := strings.Cut(info, " ")
				n, _, _ = strings.Cut(n, ";")
				return n
			}
		}
		return ""
	}
	var obeyed []string
	stopToken := ""
	for line := range strings.SplitSeq(out, "\n") {
		n := name(line)
		switch {
		case n == "":
		case stopToken != "":
			if n == stopToken {
				stopToken = ""
			}
		case slices.Contains(registered, n):
			obeyed = append(obeyed, line)
			if n == "stop-commands" {
				_, stopToken, _ = strings.Cut(strings.TrimLeft(line, " \t"), "::stop-commands::")
			}
		}
	}
	return obeyed
}
