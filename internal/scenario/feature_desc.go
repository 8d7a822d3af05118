package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/steps"
)

// languageLine is a `# language: xx` line, read before the parser runs
// (to word the hints of its errors in the file's language).
var languageLine = regexp.MustCompile(`^\s*#\s*language\s*:\s*([a-zA-Z-]+)\s*$`)

// stepKeywords are the step keywords of a dialect ("When", "Quand"),
// without their trailing space and without "*"; English when the
// language is unknown.
func stepKeywords(lang string) []string {
	d := dialect(lang)
	var out []string
	for _, k := range d.StepKeywords() {
		if k = strings.TrimSpace(k); k != "*" && k != "" {
			out = append(out, k)
		}
	}
	return out
}

// dialect is the Gherkin dialect of lang, English when it is unknown.
func dialect(lang string) *gherkin.Dialect {
	if d := gherkin.DialectsBuiltin().GetDialect(lang); d != nil {
		return d
	}
	return gherkin.DialectsBuiltin().GetDialect(gherkin.DefaultDialect)
}

// How a line that is not a step is one: the hint readsAsStep's caller
// gives depends on it.
const (
	// asWrittenStep is a step written right, where Gherkin takes no step
	// (the description of a Feature, a Rule or an Examples block).
	asWrittenStep = iota + 1
	// keywordCase is a keyword in another case, or with no space after it.
	keywordCase
	// noKeyword is a step with no keyword at all.
	noKeyword
	// otherKeyword is a step whose first word is no keyword of the
	// file's language: misspelt ("Wehn"), or of another language
	// ("Quand" in a file with no # language: fr).
	otherKeyword
)

// readsAsStep returns the step a line meant to be, and how it is not one
// (0 when it is not a defined step): a defined step written with its
// keyword in another case or not followed by a space ("when the user says
// ...", "Thenthe agent says ..."), with no keyword at all, after a word
// that is no keyword ("Wehn the user says ..."), or as written.
// Prose that merely starts with "when" is left alone: what follows must
// be a defined step.
func readsAsStep(line string, keywords []string, d *gherkin.Dialect) (step string, how int) {
	for _, kw := range keywords {
		n := utf8.RuneCountInString(kw)
		r := []rune(line)
		if len(r) <= n || !strings.EqualFold(string(r[:n]), kw) {
			continue
		}
		rest := strings.TrimLeft(string(r[n:]), " ")
		if len(library.Match(rest)) == 1 {
			if string(r[:n+1]) == kw+" " {
				return line, asWrittenStep
			}
			return kw + " " + rest, keywordCase
		}
	}
	if idx := library.Match(line); len(idx) == 1 {
		return localKeyword(idx[0], d) + " " + line, noKeyword
	}
	if word, rest, ok := strings.Cut(line, " "); ok && word != "" {
		rest = strings.TrimLeft(rest, " ")
		if idx := library.Match(rest); len(idx) == 1 {
			return localKeyword(idx[0], d) + " " + rest, otherKeyword
		}
	}
	return "", 0
}

// localKeyword is the keyword of step definition i's example in the
// dialect d.
func localKeyword(i int, d *gherkin.Dialect) string {
	kw, _, _ := strings.Cut(library.Defs()[i].Example, " ")
	return steps.LocalKeyword(kw, d.Keywords)
}

// stepHint is the hint of a line that readsAsStep.
func stepHint(step string, how int, keywords []string) string {
	switch how {
	case asWrittenStep:
		return "steps belong under Scenario: or Background:, and in a Scenario Outline above its Examples"
	case keywordCase:
		return fmt.Sprintf("did you mean %s? keywords are case-sensitive and followed by a space", step)
	case otherKeyword:
		return fmt.Sprintf("did you mean %s? a step starts with a keyword of the file's language (%s); a file written in another language says so on its first line: # language: fr",
			step, strings.Join(keywords, ", "))
	}
	return fmt.Sprintf("did you mean %s? a step starts with a keyword (%s)", step, strings.Join(keywords, ", "))
}

// blockKeyword returns the keyword of a Feature, Rule, Background,
// Scenario, Scenario Outline or Examples line that line misspells
// ("Exmaples:", "examples:", "Scenaro:"), "" when it reads as none: the
// words before its colon are the dialect's keyword but for a typo or
// their case.
func blockKeyword(line string, d *gherkin.Dialect) string {
	name, _, ok := strings.Cut(strings.TrimSpace(line), ":")
	if !ok || name == "" {
		return ""
	}
	var kws []string
	for _, ks := range [][]string{d.FeatureKeywords(), d.RuleKeywords(), d.BackgroundKeywords(),
		d.ScenarioKeywords(), d.ScenarioOutlineKeywords(), d.ExamplesKeywords()} {
		kws = append(kws, ks...)
	}
	if slices.Contains(kws, name) {
		return ""
	}
	return diag.Suggest(name, kws)
}

// blockKeywordHint is the hint of a line that blockKeyword reads.
func blockKeywordHint(kw string) string {
	return fmt.Sprintf("did you mean %s:? a keyword is written as it is, capital letter and all, then a colon", kw)
}

// descriptionSteps warns about the description lines (the free text under
// Feature:, Rule:, Background:, Scenario: or Examples:) that are steps
// written wrong: Gherkin takes them as text, and the scenario runs without
// them, the turn never sent or the check never made.
func (fl *featureLoader) descriptionSteps(f *messages.Feature, src []byte) {
	// The file's lines and the dialect's keywords, read at the first
	// description: most features have none.
	var lines, keywords []string
	var d *gherkin.Dialect
	check := func(at *messages.Location, desc, what string) {
		if at == nil || strings.TrimSpace(desc) == "" {
			return
		}
		if lines == nil {
			lines, keywords, d = strings.Split(string(src), "\n"), stepKeywords(f.Language), dialect(f.Language)
		}
		i := int(at.Line) // the header's index + 1: the line after it
		for dl := range strings.SplitSeq(desc, "\n") {
			text := strings.TrimSpace(dl)
			if text == "" {
				continue
			}
			for i < len(lines) && strings.TrimSpace(lines[i]) != text {
				i++
			}
			if i >= len(lines) {
				return
			}
			if kw := blockKeyword(text, d); kw != "" {
				col := utf8.RuneCountInString(lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]) + 1
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: diag.Pos{File: fl.file, Line: i + 1, Col: col},
					Message: fmt.Sprintf("%q is not a %s line: Gherkin reads it as the description of %s", text, kw, what), Hint: blockKeywordHint(kw)})
			} else if step, how := readsAsStep(text, keywords, d); how != 0 {
				hint := stepHint(step, how, keywords)
				col := utf8.RuneCountInString(lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]) + 1
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: diag.Pos{File: fl.file, Line: i + 1, Col: col},
					Message: fmt.Sprintf("%q is not a step: Gherkin reads it as the description of %s", text, what), Hint: hint})
			}
			i++
		}
	}
	scenario := func(sc *messages.Scenario) {
		check(sc.Location, sc.Description, fmt.Sprintf("scenario %q", strings.TrimSpace(sc.Name)))
		for _, ex := range sc.Examples {
			check(ex.Location, ex.Description, fmt.Sprintf("the Examples of %q", strings.TrimSpace(sc.Name)))
		}
	}
	check(f.Location, f.Description, fmt.Sprintf("feature %q", strings.TrimSpace(f.Name)))
	for _, ch := range f.Children {
		switch {
		case ch.Background != nil:
			check(ch.Background.Location, ch.Background.Description, "the Background")
		case ch.Scenario != nil:
			scenario(ch.Scenario)
		case ch.Rule != nil:
			check(ch.Rule.Location, ch.Rule.Description, fmt.Sprintf("rule %q", strings.TrimSpace(ch.Rule.Name)))
			for _, rc := range ch.Rule.Children {
				switch {
				case rc.Background != nil:
					check(rc.Background.Location, rc.Background.Description, "the Background")
				case rc.Scenario != nil:
					scenario(rc.Scenario)
				}
			}
		}
	}
}
