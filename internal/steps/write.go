package steps

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the vocabulary, grouped, each step with its example (and
// its DocString or table) and what it does. `agenttest steps` is this
// function, so the listing cannot drift from the registered steps.
func (l *Library) Write(w io.Writer) error {
	_, err := l.WriteMatching(w, nil)
	return err
}

// WriteMatching is Write restricted to the steps whose example, argument,
// doc or group heading contains every word, ignoring case (`agenttest
// steps handoff`): the groups without such a step and the tags are left
// out. With no word it is Write. It returns how many steps it printed and
// prints nothing when none matches.
func (l *Library) WriteMatching(w io.Writer, words []string) (int, error) {
	var b strings.Builder
	b.WriteString("Steps of agenttest feature files. And and But continue any step; arguments in\n")
	b.WriteString("quotes may use ${name} (Examples columns, remembered values) and ${env:NAME}.\n")
	n := 0
	for _, g := range Groups {
		heading := false
		for _, d := range l.defs {
			if d.Group != g || !containsAll(strings.Join([]string{g.Title(), d.Example, d.ExampleArg, d.Doc}, "\n"), words) {
				continue
			}
			if !heading {
				fmt.Fprintf(&b, "\n%s\n", g.Title())
				heading = true
			}
			n++
			fmt.Fprintf(&b, "\n  %s\n", d.Example)
			if d.ExampleArg != "" {
				for line := range strings.SplitSeq(d.ExampleArg, "\n") {
					fmt.Fprintf(&b, "      %s\n", line)
				}
			}
			fmt.Fprintf(&b, "      %s\n", d.Doc)
		}
	}
	if n == 0 {
		return 0, nil
	}
	if len(words) == 0 {
		b.WriteString("\nTags on a Feature, Rule, Scenario or Examples: @agent:NAME @env:ENV @via:messaging\n")
		b.WriteString("@streaming:true @retries:N @repeat:N @pass-rate:0.8 @confidence:0.95 @margin:0.1\n")
		b.WriteString("@quarantine:2026-12-31 @timeout:30s @within:2m @skip\n")
	}
	_, err := io.WriteString(w, b.String())
	return n, err
}

// containsAll reports whether text contains every word, ignoring case.
func containsAll(text string, words []string) bool {
	text = strings.ToLower(text)
	for _, w := range words {
		if !strings.Contains(text, strings.ToLower(w)) {
			return false
		}
	}
	return true
}
