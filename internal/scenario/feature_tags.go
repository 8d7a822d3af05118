package scenario

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/steps"
)

// Tag parameters: @name:value on a Feature, Rule, Scenario or Examples. A
// later tag overrides an earlier one, so a Scenario overrides its Feature.
var tagParams = []string{"agent", "env", "via", "streaming", "retries", "repeat", "pass-rate", "confidence", "margin", "quarantine", "timeout", "within"}

// tagCount reads the count of @repeat:N or @retries:N in the range a
// suite's YAML takes (decoder.integer); tooBig says a whole number past
// it.
func tagCount(value string) (n int, ok, tooBig bool) {
	v, err := strconv.ParseInt(value, 10, 32)
	return int(v), err == nil, errors.Is(err, strconv.ErrRange)
}

// misspeltSkip reports whether a tag is @skip written wrong: in another
// case, with a letter missing, doubled or added, or two letters swapped.
// A letter replaced is left alone: @ship and @slip are words teams tag with.
func misspeltSkip(tag string) bool {
	t := strings.ToLower(tag)
	if t == "skip" {
		return tag != "skip"
	}
	switch len(t) {
	case 3, 5:
		return diag.EditDistance(t, "skip") == 1
	case 4:
		b := []byte(t)
		slices.Sort(b)
		return string(b) == "ikps"
	}
	return false
}

func (fl *featureLoader) tags(sc *Scenario, tags []*messages.PickleTag) {
	fl.within, fl.withinAt, fl.streamingTag, fl.bareStreaming = 0, diag.Pos{}, "", diag.Pos{}
	seen := map[string]bool{}
	// statAt is where each statistical setting was last written, for the
	// problems of the design; statsBad when one did not parse.
	statAt := map[string]diag.Pos{}
	statsBad := false
	// set is the parameter each element sets, by its key, for the
	// contradiction of two on one element (a YAML key given twice is an
	// error too); an element overrides the one it is inside, as before.
	type setting struct {
		owner int
		tag   string
		at    diag.Pos
	}
	set := map[string]setting{}
	for _, pt := range tags {
		name := strings.TrimPrefix(pt.Name, "@")
		t, _ := fl.nodes[pt.AstNodeId].(*messages.Tag)
		var at diag.Pos
		if t != nil {
			at = fl.pos(t.Location)
		} else {
			at = sc.Pos
		}
		if !validTag(name) {
			// As in a suite: no tag filter could select the scenario by
			// it, and "@smoke,@fast" is the tag "smoke," (the parser
			// splits at each @), which --tags @smoke leaves out in
			// silence.
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at,
				Message: fmt.Sprintf("invalid tag %q", pt.Name), Hint: hintTag})
			continue
		}
		if !seen[name] {
			seen[name] = true
			sc.Tags = append(sc.Tags, name)
		}
		if name == "skip" {
			sc.Skip = "skipped (@skip)"
			continue
		}
		key, value, ok := strings.Cut(name, ":")
		if !ok {
			// A misspelt @skip is a filter tag like any other, and the
			// scenario it was to hold back runs: say so.
			if misspeltSkip(name) {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: at,
					Message: fmt.Sprintf("tag @%s is not @skip: the scenario runs", name), Hint: "did you mean @skip?"})
			}
			if strings.EqualFold(name, "streaming") {
				fl.bareStreaming = at
			}
			continue
		}
		bad := func(format string, args ...any) {
			fl.diags = fl.diags.Errorf(at, "tag @%s: %s", name, fmt.Sprintf(format, args...))
		}
		before := len(fl.diags)
		switch key {
		case "agent":
			if value == "" {
				bad("agent must not be empty")
			}
			if msg, hint := fixedBeforeRun("agent", value); msg != "" {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Message: fmt.Sprintf("tag @%s: %s", name, msg), Hint: hint})
				continue
			}
			sc.Agent, sc.AgentPos = value, at
		case "env":
			if !reply.ValidEnv(value) {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Hint: envHint(value),
					Message: fmt.Sprintf("tag @%s: env %q is not a platform environment", name, value)})
				continue
			}
			sc.Env = value
		case "via":
			if !slices.Contains(steps.Vias, value) {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Hint: viaHint(value),
					Message: fmt.Sprintf("tag @%s: via must be one of %s", name, strings.Join(steps.Vias, ", "))})
				continue
			}
			sc.Start.Via, sc.Start.ViaPos = value, at
		case "streaming":
			if value != "true" && value != "false" {
				bad("streaming must be true or false")
				continue
			}
			sc.Start.Streaming, sc.Start.StreamingPos = value == "true", at
			fl.streamingTag = "tag @" + name
		case "retries":
			n, ok, tooBig := tagCount(value)
			switch {
			case tooBig:
				bad("%s is out of range (at most %d)", value, math.MaxInt32)
			case !ok || n < 0:
				bad("retries must be a whole number, 0 or more")
			default:
				sc.Retries = &n
			}
		case "repeat":
			n, ok, tooBig := tagCount(value)
			switch {
			case tooBig:
				bad("%s is out of range (at most %d)", value, math.MaxInt32)
				statsBad = true
			case !ok || n < 1:
				bad("repeat must be a whole number, 1 or more")
				statsBad = true
			default:
				sc.Stats.Repeat, statAt[TagNames.Repeat] = n, at
			}
		case "pass-rate", "pass_rate", "confidence", "margin":
			v, err := parseShare(value, shareExample[strings.ReplaceAll(key, "_", "-")])
			if err == nil && key != "confidence" && key != "margin" && v > 1 {
				err = fmt.Errorf("pass rate must be above 0 and at most 1 (0.8 or 80%%), not %q", value)
			}
			if err != nil {
				bad("%v", err)
				statsBad = true
				continue
			}
			switch key {
			case "confidence":
				sc.Stats.Confidence, statAt[TagNames.Confidence] = v, at
			case "margin":
				sc.Stats.Margin, statAt[TagNames.Margin] = v, at
			default:
				sc.Stats.PassRate, statAt[TagNames.PassRate] = v, at
			}
		case "quarantine":
			until, err := parseUntil(value)
			if err != nil {
				bad("%v", err)
				continue
			}
			sc.Quarantine = &Quarantine{Pos: at, Until: until}
		case "timeout":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				bad("timeout must be a duration above 0 such as 30s or 2m")
				continue
			}
			sc.Timeout = d
		case "within":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				bad("within must be a duration above 0 such as 30s or 2m")
				continue
			}
			fl.within, fl.withinAt = d, at
		default:
			if s := diag.Suggest(key, tagParams); s != "" {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: at,
					Message: fmt.Sprintf("tag @%s is not a parameter", name), Hint: fmt.Sprintf("did you mean @%s:%s?", s, value)})
			}
		}
		// A value the switch refused is its own problem, said once; a
		// valid one that another of the same element contradicts took the
		// last in silence ("@repeat:2 @repeat:3" ran three times).
		param := strings.ReplaceAll(key, "_", "-")
		owner, known := fl.tagOwner[pt.AstNodeId]
		if len(fl.diags) != before || !known || !slices.Contains(tagParams, param) {
			continue
		}
		if prev, ok := set[param]; ok && prev.owner == owner && prev.tag != name {
			fl.diags = fl.diags.Errorf(at, "tag @%s: @%s is already set on this element by @%s at %s: the two contradict each other", name, param, prev.tag, prev.at)
			statsBad = statsBad || slices.Contains([]string{"repeat", "pass-rate", "confidence", "margin"}, param)
			continue
		}
		set[param] = setting{owner: owner, tag: name, at: at}
	}
	if statsBad {
		return
	}
	for _, pr := range sc.Stats.Check(TagNames) {
		at, ok := statAt[pr.Setting]
		if !ok {
			at = sc.Pos
		}
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: pr.Severity, Pos: at, Message: pr.Message, Hint: pr.Hint})
	}
}

// parseShare reads a rate or a probability: 0.8 or 80%, above 0. example
// is a value of the kind the tag takes, for the message.
func parseShare(s, example string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err == nil && strings.HasSuffix(s, "%") {
		v /= 100
	}
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be a number above 0 such as %s, not %q", example, s)
	}
	return v, nil
}

// shareExample is a typical value of each tag parameter parseShare reads.
var shareExample = map[string]string{"pass-rate": "0.8 or 80%", "confidence": "0.95 or 95%", "margin": "0.05 or 5%"}
