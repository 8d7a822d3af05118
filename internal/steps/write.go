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
	var b strings.Builder
	b.WriteString("Steps of agenttest feature files. And and But continue any step; arguments in\n")
	b.WriteString("quotes may use ${name} (Examples columns, remembered values) and ${env:NAME}.\n")
	for _, g := range Groups {
		fmt.Fprintf(&b, "\n%s\n", g.Title())
		for _, d := range l.defs {
			if d.Group != g {
				continue
			}
			fmt.Fprintf(&b, "\n  %s\n", d.Example)
			if d.ExampleArg != "" {
				for line := range strings.SplitSeq(d.ExampleArg, "\n") {
					fmt.Fprintf(&b, "      %s\n", line)
				}
			}
			fmt.Fprintf(&b, "      %s\n", d.Doc)
		}
	}
	b.WriteString("\nTags on a Feature, Rule, Scenario or Examples: @agent:NAME @env:ENV @via:messaging\n")
	b.WriteString("@streaming:true @retries:N @repeat:N @pass-rate:0.8 @confidence:0.95 @margin:0.1\n")
	b.WriteString("@quarantine:2026-12-31 @timeout:30s @within:2m @skip\n")
	_, err := io.WriteString(w, b.String())
	return err
}
