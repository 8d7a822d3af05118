package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/result"
)

// The plots of the HTML report are SVG drawn here, so the page needs no
// charting library and shows them before its script runs. Coordinates
// are in a fixed viewBox that the page scales to its width; colours come
// from the page's style sheet through class names, so they follow its
// light and dark themes. Every text drawn is escaped (svgText).

// plotsOf draws the plots r has data for.
func plotsOf(r *result.Result) []htmlPlot {
	var out []htmlPlot
	if p, ok := latencyPlot(r); ok {
		out = append(out, p)
	}
	if p, ok := timelinePlot(r); ok {
		out = append(out, p)
	}
	if p, ok := suitePlot(r); ok {
		out = append(out, p)
	}
	return out
}

// svg accumulates the elements of one plot.
type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, label string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" role="img" aria-label="%s" preserveAspectRatio="xMinYMin meet">`, w, h, svgText(label))
	return s
}

// svgText escapes text for SVG content and attribute values.
func svgText(s string) string { return template.HTMLEscapeString(htmlStyle.flat(s)) }

func (s *svg) rect(class string, x, y, w, h float64, title string) {
	if w <= 0 || h <= 0 {
		return
	}
	fmt.Fprintf(&s.b, `<rect class="%s" x="%.1f" y="%.1f" width="%.2f" height="%.2f">`, class, x, y, w, h)
	if title != "" {
		fmt.Fprintf(&s.b, `<title>%s</title>`, svgText(title))
	}
	s.b.WriteString(`</rect>`)
}

func (s *svg) line(class string, x1, y1, x2, y2 float64) {
	fmt.Fprintf(&s.b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, class, x1, y1, x2, y2)
}

// text draws a label; anchor is start, middle or end.
func (s *svg) text(class string, x, y float64, anchor, text string) {
	fmt.Fprintf(&s.b, `<text class="%s" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, class, x, y, anchor, svgText(text))
}

func (s *svg) path(class, d, title string) {
	fmt.Fprintf(&s.b, `<path class="%s" d="%s">`, class, d)
	if title != "" {
		fmt.Fprintf(&s.b, `<title>%s</title>`, svgText(title))
	}
	s.b.WriteString(`</path>`)
}

func (s *svg) done() template.HTML {
	s.b.WriteString(`</svg>`)
	// Every value above is a number, a constant or escaped by svgText.
	return template.HTML(s.b.String()) //nolint:gosec // see above
}

// Plot geometry: a plot area inset by margins for the axes' labels.
const (
	plotW      = 720
	plotH      = 220
	plotLeft   = 48
	plotRight  = 16
	plotTop    = 24
	plotBottom = 36
)

// msLabel renders milliseconds for an axis or a marker.
func msLabel(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms >= 10000:
		return fmt.Sprintf("%.0fs", ms/1000)
	case ms >= 1000:
		return fmt.Sprintf("%.1fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	default:
		return fmt.Sprintf("%.1fms", ms)
	}
}

// quantile is the nearest-rank quantile q of sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// turnLatencies are the latencies, in milliseconds, of every turn of
// every attempt that got a reply, the greeting included: users wait for
// it too.
func turnLatencies(r *result.Result) []float64 {
	var out []float64
	for _, c := range allCases(r) {
		for _, a := range c.Attempts {
			if a == nil {
				continue
			}
			for _, t := range a.Turns {
				if t != nil && t.Result != nil {
					out = append(out, millis(t.Latency))
				}
			}
		}
	}
	return out
}

// latencyBins is the number of bars of the latency histogram.
const latencyBins = 40

// latencyPlot is a histogram of turn latencies with p50, p95 and p99
// marked. Its range ends a little past p99, so one slow outlier does not
// squeeze every other bar into the first; the last bar holds the rest.
func latencyPlot(r *result.Result) (htmlPlot, bool) {
	lat := turnLatencies(r)
	if len(lat) == 0 {
		return htmlPlot{}, false
	}
	sort.Float64s(lat)
	p50, p95, p99 := quantile(lat, 0.50), quantile(lat, 0.95), quantile(lat, 0.99)
	top := lat[len(lat)-1]
	hi := math.Min(top, p99*1.25)
	if hi <= 0 {
		hi = 1
	}
	width := hi / latencyBins
	bins := make([]int, latencyBins)
	for _, v := range lat {
		bins[min(int(v/width), latencyBins-1)]++
	}
	peak := 0
	for _, n := range bins {
		peak = max(peak, n)
	}
	s := newSVG(plotW, plotH, "histogram of turn latencies")
	aw, ah := float64(plotW-plotLeft-plotRight), float64(plotH-plotTop-plotBottom)
	base := float64(plotTop) + ah
	bw := aw / latencyBins
	for i, n := range bins {
		h := ah * float64(n) / float64(peak)
		lo := float64(i) * width
		label := fmt.Sprintf("%s–%s: %d %s", msLabel(lo), msLabel(lo+width), n, plural(n, "turn", "turns"))
		if i == latencyBins-1 && top > hi {
			label = fmt.Sprintf("≥ %s: %d %s (slowest %s)", msLabel(lo), n, plural(n, "turn", "turns"), msLabel(top))
		}
		s.rect("bar", plotLeft+float64(i)*bw+0.5, base-h, bw-1, h, label)
	}
	s.line("axis", plotLeft, base, plotLeft+aw, base)
	for i := 0; i <= 4; i++ {
		x := plotLeft + aw*float64(i)/4
		s.text("tick", x, base+16, "middle", msLabel(hi*float64(i)/4))
	}
	s.text("tick", plotLeft-6, float64(plotTop)+8, "end", fmt.Sprint(peak))
	s.text("tick", plotLeft-6, base, "end", "0")
	for i, m := range []struct {
		name string
		v    float64
	}{{"p50", p50}, {"p95", p95}, {"p99", p99}} {
		x := plotLeft + aw*math.Min(m.v, hi)/hi
		s.line("marker m-"+m.name, x, float64(plotTop)-4, x, base)
		// Labels right of their line, or left of it near the right edge.
		lx, anchor := x+3, "start"
		if x > plotLeft+aw*0.75 {
			lx, anchor = x-3, "end"
		}
		s.text("marker-label", lx, float64(plotTop)+6+float64(i)*12, anchor, m.name+" "+msLabel(m.v))
	}
	s.text("axis-label", plotLeft+aw/2, float64(plotH)-4, "middle", "turn latency")
	return htmlPlot{
		ID:    "plot-latency",
		Title: "Turn latency",
		Caption: fmt.Sprintf("%d turns: p50 %s, p95 %s, p99 %s, slowest %s", len(lat),
			msLabel(p50), msLabel(p95), msLabel(p99), msLabel(top)),
		SVG: s.done(),
	}, true
}

// span is one attempt on the run's time line.
type span struct {
	start, end time.Duration
	// wait is the part of the case's rate-limit wait that falls in this
	// attempt (the runner records it per case, not when it happened).
	wait   time.Duration
	status result.Status
	label  string
}

// spansOf lists the attempts of r on its time line, from the run's start
// (or the first attempt's, when the run's is unknown), and the time line's
// length.
func spansOf(r *result.Result) ([]span, time.Duration) {
	origin := r.Started
	for _, c := range allCases(r) {
		for _, a := range c.Attempts {
			if a != nil && !a.Started.IsZero() && (origin.IsZero() || a.Started.Before(origin)) {
				origin = a.Started
			}
		}
	}
	var list []span
	end := r.Duration
	for f, c := range r.Scenarios() {
		var total time.Duration
		for _, a := range c.Attempts {
			if a != nil {
				total += a.Duration
			}
		}
		for _, a := range c.Attempts {
			if a == nil || a.Started.IsZero() {
				continue
			}
			sp := span{status: a.Status, label: casePos(f, c) + " " + c.Name}
			sp.start = a.Started.Sub(origin)
			sp.end = sp.start + a.Duration
			if total > 0 {
				sp.wait = time.Duration(float64(c.RateWaited) * float64(a.Duration) / float64(total))
			}
			end = max(end, sp.end)
			list = append(list, sp)
		}
	}
	return list, end
}

// laneLimit is the most attempts the timeline draws one bar each for;
// above it, it draws how many ran (and waited) at each moment.
const laneLimit = 400

// timelinePlot shows the cases over the run's time: one bar per attempt
// in as many lanes as ran at once (the run's parallelism), rate-limit
// waits shaded; for large runs, the number of attempts running and
// waiting over time.
func timelinePlot(r *result.Result) (htmlPlot, bool) {
	spans, end := spansOf(r)
	if len(spans) == 0 || end <= 0 {
		return htmlPlot{}, false
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var waited time.Duration
	for _, sp := range spans {
		waited += sp.wait
	}
	aw := float64(plotW - plotLeft - plotRight)
	x := func(d time.Duration) float64 { return plotLeft + aw*float64(d)/float64(end) }
	var s *svg
	var caption string
	peak := 0
	if len(spans) <= laneLimit {
		// Interval partitioning: each attempt takes the lowest lane free
		// when it starts, so the lanes used are the peak parallelism.
		var laneEnd []time.Duration
		lanes := make([]int, len(spans))
		for i, sp := range spans {
			l := 0
			for l < len(laneEnd) && laneEnd[l] > sp.start {
				l++
			}
			if l == len(laneEnd) {
				laneEnd = append(laneEnd, 0)
			}
			laneEnd[l] = sp.end
			lanes[i] = l
		}
		peak = len(laneEnd)
		laneH := math.Max(3, math.Min(18, 160/float64(peak)))
		h := float64(plotTop) + laneH*float64(peak) + plotBottom
		s = newSVG(plotW, h, "timeline of the cases over the run")
		for i, sp := range spans {
			y := float64(plotTop) + laneH*float64(lanes[i])
			x0, x1 := x(sp.start), math.Max(x(sp.end), x(sp.start)+1)
			title := fmt.Sprintf("%s: %s, %s from %s", sp.label, sp.status, msLabel(millis(sp.end-sp.start)), msLabel(millis(sp.start)))
			if sp.wait > 0 {
				title += fmt.Sprintf(", waited %s on rate limits", msLabel(millis(sp.wait)))
			}
			s.rect("span s-"+sp.status.String(), x0, y+0.5, x1-x0, laneH-1, title)
			if sp.wait > 0 {
				s.rect("wait", x0, y+0.5, math.Min(x1-x0, aw*float64(sp.wait)/float64(end)), laneH-1, "")
			}
		}
		s.line("axis", plotLeft, h-plotBottom, plotLeft+aw, h-plotBottom)
		timeTicks(s, end, h-plotBottom+16)
		caption = fmt.Sprintf("%d attempts in %d %s: at most %d ran at once", len(spans), peak, plural(peak, "lane", "lanes"), peak)
	} else {
		const buckets = 120
		run := make([]float64, buckets)
		wait := make([]float64, buckets)
		bw := float64(end) / buckets
		for _, sp := range spans {
			d := float64(sp.end - sp.start)
			for b := int(float64(sp.start) / bw); b < buckets && float64(b)*bw < float64(sp.end); b++ {
				lo, hi := math.Max(float64(sp.start), float64(b)*bw), math.Min(float64(sp.end), float64(b+1)*bw)
				if hi <= lo {
					continue
				}
				share := (hi - lo) / bw
				run[b] += share
				if d > 0 {
					wait[b] += share * float64(sp.wait) / d
				}
			}
		}
		top := 1.0
		for _, v := range run {
			top = math.Max(top, v)
		}
		peak = int(math.Ceil(top))
		ah := float64(plotH - plotTop - plotBottom)
		base := float64(plotTop) + ah
		s = newSVG(plotW, plotH, "attempts running over the run")
		area := func(vals []float64) string {
			var d strings.Builder
			fmt.Fprintf(&d, "M%.1f %.1f", x(0), base)
			for b, v := range vals {
				y := base - ah*v/top
				fmt.Fprintf(&d, "L%.1f %.1fL%.1f %.1f", plotLeft+aw*float64(b)/buckets, y, plotLeft+aw*float64(b+1)/buckets, y)
			}
			fmt.Fprintf(&d, "L%.1f %.1fZ", plotLeft+aw, base)
			return d.String()
		}
		s.path("area-run", area(run), "attempts running")
		if waited > 0 {
			s.path("area-wait", area(wait), "of which waiting on rate limits")
		}
		s.line("axis", plotLeft, base, plotLeft+aw, base)
		s.text("tick", plotLeft-6, float64(plotTop)+8, "end", fmt.Sprintf("%.0f", top))
		s.text("tick", plotLeft-6, base, "end", "0")
		timeTicks(s, end, base+16)
		caption = fmt.Sprintf("%d attempts; on average at most %.0f running at once", len(spans), top)
	}
	if waited > 0 {
		caption += fmt.Sprintf("; %s waited on rate limits in all (shaded)", msLabel(millis(waited)))
	}
	if p := r.Pacing; p != nil && p.Limited > 0 {
		caption += fmt.Sprintf("; the platform answered %d %s with 429", p.Limited, plural(p.Limited, "call", "calls"))
	}
	return htmlPlot{ID: "plot-timeline", Title: "Cases over the run", Caption: caption, SVG: s.done()}, true
}

// timeTicks labels the time axis of the timeline at y.
func timeTicks(s *svg, end time.Duration, y float64) {
	aw := float64(plotW - plotLeft - plotRight)
	for i := 0; i <= 4; i++ {
		s.text("tick", plotLeft+aw*float64(i)/4, y, "middle", msLabel(millis(end)*float64(i)/4))
	}
}

// suiteLimit is the most suites the pass-rate plot draws; above it, the
// ones with the lowest pass rate.
const suiteLimit = 40

// suitePlot draws each suite's cases as one bar split by outcome, with
// its pass rate: passed (flaky included) of the cases that gate and ran.
func suitePlot(r *result.Result) (htmlPlot, bool) {
	type row struct {
		name string
		s    Summary
		rate float64
		ran  int
	}
	var rows []row
	for _, f := range r.Files {
		if f == nil || len(f.Cases) == 0 {
			continue
		}
		var fs Summary
		for _, c := range f.Cases {
			if c != nil {
				fs.add(c)
			}
		}
		rw := row{name: f.Suite, s: fs, ran: fs.Passed + fs.Flaky + fs.Failed + fs.Errored}
		if rw.name == "" {
			rw.name = f.Path
		}
		if rw.ran > 0 {
			rw.rate = float64(fs.Passed+fs.Flaky) / float64(rw.ran)
		}
		rows = append(rows, rw)
	}
	if len(rows) == 0 {
		return htmlPlot{}, false
	}
	caption := fmt.Sprintf("%d %s; pass rate is passed (flaky included) of the cases that ran and gate", len(rows), plural(len(rows), "suite", "suites"))
	if len(rows) > suiteLimit {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].rate < rows[j].rate })
		caption = fmt.Sprintf("the %d suites with the lowest pass rate of %d; pass rate is passed (flaky included) of the cases that ran and gate", suiteLimit, len(rows))
		rows = rows[:suiteLimit]
	}
	const rowH, labelW, rateW = 22.0, 220.0, 64.0
	h := plotTop + rowH*float64(len(rows)) + 8
	s := newSVG(plotW, h, "pass rate per suite")
	barW := plotW - labelW - rateW - plotRight
	for i, rw := range rows {
		y := plotTop + rowH*float64(i)
		name := rw.name
		if n := []rune(name); len(n) > 32 {
			name = string(n[:31]) + "…"
		}
		s.text("suite-label", labelW-8, y+rowH/2+4, "end", name)
		x := labelW
		for _, part := range []struct {
			class string
			n     int
		}{{"s-passed", rw.s.Passed}, {"s-flaky", rw.s.Flaky}, {"s-failed", rw.s.Failed}, {"s-errored", rw.s.Errored},
			{"s-quarantined", rw.s.Quarantined}, {"s-skipped", rw.s.Skipped}, {"s-pending", rw.s.Pending}} {
			if part.n == 0 {
				continue
			}
			w := barW * float64(part.n) / float64(rw.s.Total)
			s.rect("span "+part.class, x, y+3, w, rowH-6, fmt.Sprintf("%s: %d %s", rw.name, part.n, strings.TrimPrefix(part.class, "s-")))
			x += w
		}
		rate := "—"
		if rw.ran > 0 {
			rate = fmt.Sprintf("%.0f%%", math.Floor(rw.rate*100))
		}
		s.text("rate", plotW-plotRight, y+rowH/2+4, "end", rate)
	}
	return htmlPlot{ID: "plot-suites", Title: "Pass rate per suite", Caption: caption, SVG: s.done()}, true
}
