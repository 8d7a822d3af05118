package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// The page's style and script, inlined into every report. They are
// embedded rather than written as Go strings so that they can be read,
// linted and edited as CSS and JavaScript.
var (
	//go:embed html/report.css
	htmlCSS string
	//go:embed html/report.js
	htmlJS string
	//go:embed html/page.html
	htmlPage string
	//go:embed html/sections.html
	htmlSections string
)

// htmlCSP is the page's Content-Security-Policy: nothing may be fetched
// (no script, style, font, image or connection from anywhere, the file
// itself included) except the one inline style and the one inline script,
// named by their hashes. An agent reply that somehow became markup could
// not run a script or load anything even if the escaping failed.
var htmlCSP = fmt.Sprintf("default-src 'none'; script-src '%s'; style-src '%s'; img-src data:; base-uri 'none'; form-action 'none'",
	cspHash(htmlJS), cspHash(htmlCSS))

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

var htmlTemplate = template.Must(template.Must(template.New("page").Funcs(template.FuncMap{
	"duration": wallTime,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"percent":  func(v float64) string { return fmt.Sprintf("%.0f%%", math.Floor(v)) },
	"untraced": coverage.UntracedText,
	"pos": func(p diag.Pos) string {
		p.Col = 0
		return htmlStyle.flat(p.String())
	},
	"turn": func(i int) string {
		if i == 0 {
			return "greeting"
		}
		return fmt.Sprintf("turn %d", i)
	},
	"ms":      func(v float64) string { return msLabel(v) },
	"side":    compareSide,
	"latency": compareLatency,
	"pairs":   comparePairs,
	// unchecked lists the pairs that check nothing on a side, whatever
	// their class (an unchanged one is listed nowhere else).
	"unchecked": compareUnchecked,
	"diffOf":    diffView,
	"long":      sectionLong,
	// flat is how the sections show a name, a node, a note or a value
	// a server chose: on one line, escape sequences stripped, other
	// controls escaped, as the case list shows them (htmlStyle).
	"flat": htmlStyle.flat,
}).Parse(htmlPage)).Parse(htmlSections))

// HTMLOptions are the optional parts of an HTML report.
type HTMLOptions struct {
	// Title is the page's title; empty gives "agenttest: TARGET".
	Title string
	// Generated is when the report was written, shown in its footer;
	// zero leaves it out (golden files).
	Generated time.Time
	// Coverage is the node coverage of the run; nil leaves the section
	// out.
	Coverage *coverage.Report
	// Compare is a comparison whose candidate is the run reported
	// (agenttest compare --html); nil leaves the section out.
	Compare *compare.Comparison
}

// htmlHead is what the page template renders: everything but the cases,
// which travel as data.
type htmlHead struct {
	Title     string
	CSP       string
	CSS       template.CSS
	Target    []htmlFact
	Status    string
	Why       string
	Summary   Summary
	Filters   []htmlFilter
	Started   time.Time
	Duration  time.Duration
	Generated time.Time
	Stop      string
	Plots     []htmlPlot
	Cases     int
	// Deployments are the agents' deployment ids the run saw.
	Deployments []string
	// Pacing says what rate limits cost the run.
	Pacing string
	// Coverage and Compare are the optional sections.
	Coverage *coverage.Report
	Compare  *compare.Comparison
	// Static are the cases that did not pass, as the page lists them
	// where its script does not run; StaticMore counts those left out.
	Static     []htmlStatic
	StaticMore int
}

// htmlStatic is a case that did not pass as the page shows it without
// its script: its status, title, first failure or error (caseHead) and
// the console's account of it.
type htmlStatic struct{ Status, Title, Head, Body string }

// htmlStaticMax bounds the cases listed without the script: the page of a
// run where everything failed stays the size of its data.
const htmlStaticMax = 100

// staticCases are the failed and errored cases of r (as the counts see
// them: a quarantined one does not gate) for the page without its script.
// Jenkins serves artifacts and published reports with a policy that runs
// no script at all, and the reader there would learn only how many
// failed.
func staticCases(r *result.Result) (out []htmlStatic, more int) {
	for f, c := range r.Cases() {
		if k := caseKind(c); k != "failed" && k != "errored" {
			continue
		}
		if len(out) == htmlStaticMax {
			more++
			continue
		}
		var b strings.Builder
		detail{b: &b, st: htmlStyle}.writeCase(c, "")
		out = append(out, htmlStatic{Status: strings.ToUpper(caseKind(c)), Title: htmlStyle.caseTitle(f, c), Head: caseHead(c), Body: b.String()})
	}
	return out, more
}

type htmlFact struct{ Name, Value string }

type htmlFilter struct {
	Kind  string
	Count int
	// Hidden is a filter the run has no case of: its chip is shown only
	// when the address names it (a link made on another run).
	Hidden bool
}

type htmlPlot struct {
	ID, Title, Caption string
	SVG                template.HTML
}

// WriteHTML writes r as one self-contained HTML page: a header with the
// target, the run's status and counts; plots of turn latency, of the
// cases over the run's time and of the pass rate per suite; and every
// case, with filters by outcome and a search over names and replies. The
// page fetches nothing: its style and script are inline, and a
// Content-Security-Policy forbids loading anything else.
//
// Like the other renderers it prints values as the result holds them: the
// client and the runner mask keys before anything is stored, so a report
// has none to hide. Every text from the run (names, replies, messages) is
// escaped by the page template or set as text by the page's script, never
// parsed as markup.
//
// The cases are embedded as JSON in a <script type="application/json">
// block, which the page renders a page at a time: a report of 20,000
// cases opens at once.
func WriteHTML(w io.Writer, r *result.Result, opt HTMLOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := htmlTemplate.Execute(bw, headOf(r, opt)); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	bw.WriteString(`<script type="application/json" id="agenttest-data">{"files":`)
	// encoding/json escapes <, > and & (and U+2028, U+2029) in strings,
	// so no text can close the block ("</script>") or open a comment.
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(true)
	err := enc.Encode(htmlFiles(r))
	bw.WriteString(`,"cases":[`)
	first := true
	if err == nil {
		err = eachHTMLCase(r, func(c htmlCase) error {
			if !first {
				bw.WriteString(",")
			}
			first = false
			return enc.Encode(c)
		})
	}
	if err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	bw.WriteString("]}")
	bw.WriteString("</script>\n<script>")
	bw.WriteString(htmlJS)
	bw.WriteString("</script>\n</body>\n</html>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

// htmlKinds are the filters, in the order the page offers them.
var htmlKinds = []string{"failed", "errored", "flaky", "quarantined", "inconclusive", "passed", "skipped", "pending"}

func headOf(r *result.Result, opt HTMLOptions) htmlHead {
	s := Summarize(r)
	h := htmlHead{
		Title:     opt.Title,
		CSP:       htmlCSP,
		CSS:       template.CSS(htmlCSS),
		Status:    string(r.RunStatus()),
		Why:       htmlStyle.flat(statusWhy(r, s)),
		Summary:   s,
		Started:   r.Started,
		Duration:  r.Duration,
		Generated: opt.Generated,
		Cases:     s.Total,
	}
	// The target is what a config file or, read back by merge and
	// compare, a report chose: shown as the console shows it.
	if h.Title == "" {
		h.Title = htmlStyle.flat("agenttest: " + describeTarget(r.Target))
	}
	t := r.Target
	for _, f := range []htmlFact{{"target", t.Name}, {"environment", t.Env}, {"build API", t.BuildURL},
		{"runtime API", t.RuntimeURL}, {"account", t.AccountID}} {
		if f.Value != "" {
			f.Value = htmlStyle.flat(f.Value)
			h.Target = append(h.Target, f)
		}
	}
	if t.Embedded {
		h.Target = append(h.Target, htmlFact{"platform", "embedded simulator"})
	}
	if r.Stop != nil {
		h.Stop = htmlStyle.flat(r.Stop.Why())
	}
	h.Pacing = PacingLine(r)
	h.Deployments = deploymentFacts(r.Deployments)
	counts := map[string]int{"failed": s.Failed, "errored": s.Errored, "flaky": s.Flaky, "quarantined": s.Quarantined,
		"inconclusive": s.Inconclusive, "passed": s.Passed, "skipped": s.Skipped, "pending": s.Pending}
	for _, k := range htmlKinds {
		h.Filters = append(h.Filters, htmlFilter{Kind: k, Count: counts[k], Hidden: counts[k] == 0 && k != "failed" && k != "passed"})
	}
	h.Static, h.StaticMore = staticCases(r)
	h.Plots = plotsOf(r)
	h.Coverage, h.Compare = opt.Coverage, opt.Compare
	return h
}

// deploymentFacts are the header's lines about the deployments tested,
// one per agent and environment: the deployment read before the first
// case and what became of it by the last.
func deploymentFacts(ds []*result.Deployment) []string {
	var out []string
	for _, d := range ds {
		if d == nil {
			continue
		}
		line := d.Agent + " in " + d.Env + ": "
		switch {
		case d.ID == "":
			line += "unknown (" + d.Note + ")"
		case d.Changed():
			line = d.ChangeMessage()
		default:
			line += d.ID
			if d.Version != "" {
				line += " (version " + d.Version + ")"
			}
			if d.Verified() {
				line += ", the same after the last case"
			} else if d.Note != "" {
				line += ", not confirmed after the last case: " + d.Note
			}
		}
		out = append(out, htmlStyle.flat(line))
	}
	return out
}

// htmlAssetsSafe reports a problem with the inlined assets: the page
// breaks if the style or the script holds the tag that would end its
// element early. Tests call it; the assets are constants.
func htmlAssetsSafe() error {
	if strings.Contains(strings.ToLower(htmlJS), "</script") {
		return fmt.Errorf("report.js contains </script")
	}
	if strings.Contains(strings.ToLower(htmlCSS), "</style") {
		return fmt.Errorf("report.css contains </style")
	}
	return nil
}
