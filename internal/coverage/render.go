package coverage

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agenttest/agenttest/internal/escape"
)

// SchemaV1 names the JSON form `agenttest coverage --json` prints: the
// Report as it stands, under a schema member.
const SchemaV1 = "agenttest/coverage/v1"

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	doc := struct {
		Schema string `json:"schema"`
		*Report
	}{SchemaV1, r}
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write coverage: %w", err)
	}
	return nil
}

// WriteText writes the report as tables, one block per agent: the share
// of nodes visited and where the list of nodes comes from, the nodes never
// visited, every node with the turns that reached it and the first of
// them, and the transitions taken. Node and case names are escaped: a
// hostile platform chooses them.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	if r == nil || len(r.Agents) == 0 {
		b.WriteString("no agent: the reports hold no case that talked to an agent\n")
	}
	for i, a := range r.Agents {
		if i > 0 {
			b.WriteString("\n")
		}
		from := "nodes of its definition"
		if a.Source == SourceObserved {
			from = "nodes seen in these reports (a real platform does not list an agent's nodes)"
		}
		transitions := "transitions"
		if len(a.Transitions) == 1 {
			transitions = "transition"
		}
		fmt.Fprintf(&b, "%s: %d of %d nodes visited (%.0f%%), %d %s taken; %s\n",
			escape.Line(a.Agent), a.NodesVisited, a.NodesTotal, a.Percent, len(a.Transitions), transitions, from)
		if a.Untraced > 0 {
			fmt.Fprintf(&b, "%s not counted: web chat carries no node trace\n", UntracedText(a.Untraced))
		}
		if len(a.Unvisited) > 0 {
			names := make([]string, len(a.Unvisited))
			for i, n := range a.Unvisited {
				names[i] = escape.Line(n)
			}
			fmt.Fprintf(&b, "never visited: %s\n", strings.Join(names, ", "))
		}
		tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tTURNS\tCASES\tFIRST REACHED BY")
		for _, n := range a.Nodes {
			first := "-"
			if len(n.Reached) > 0 {
				first = reachText(n.Reached[0])
			}
			name := escape.Line(n.Name)
			if n.Undefined {
				name += " (not in the definition)"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", name, n.Turns, n.Cases, first)
		}
		fmt.Fprintln(tw, "  TRANSITION\tTURNS\tCASES\tFIRST TAKEN BY")
		for _, t := range a.Transitions {
			first := "-"
			if len(t.Reached) > 0 {
				first = reachText(t.Reached[0])
			}
			fmt.Fprintf(tw, "  %s → %s\t%d\t%d\t%s\n", escape.Line(t.From), escape.Line(t.To), t.Turns, t.Cases, first)
		}
		tw.Flush()
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write coverage: %w", err)
	}
	return nil
}

// UntracedText counts the cases over messaging of an agent: "1 case over
// messaging", "3 cases over messaging".
func UntracedText(n int) string {
	if n == 1 {
		return "1 case over messaging"
	}
	return fmt.Sprintf("%d cases over messaging", n)
}

// reachText names a reach the way result lines name cases:
// "suites/booking.yaml:14 books a table (turn 2)".
func reachText(r Reach) string {
	pos := r.Pos
	pos.Col = 0
	turn := fmt.Sprintf("turn %d", r.Turn)
	if r.Turn == 0 {
		turn = "greeting"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s (%s)", escape.Line(pos.String()), escape.Line(r.Case), turn))
}
