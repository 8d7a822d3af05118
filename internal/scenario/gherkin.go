package scenario

import (
	"fmt"
	"strings"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/steps"
)

// Gherkin returns a suite file the way Cucumber Messages describe one: its
// GherkinDocument and the pickles of its selected scenarios, with ids from
// newID (shared by every file of one message stream, so ids stay unique).
//
// A feature file is parsed from src exactly as the loader parses it, so
// every location is the file's own. A YAML suite has no Gherkin, so it is
// mapped onto the same shape: a Feature named after the suite, one
// Scenario per selected scenario (each examples row its own, named as its
// case is), and one Step per step of the scenario's program at the
// position of the YAML key it comes from ("When the user says ...",
// "Then the reply meets the expectations of expect:"). Only pickles of
// the scenarios of s are returned (s may be a selection of the file).
// src is the file as read, or its Text.
func Gherkin(s *Suite, src []byte, newID func() string) (*messages.GherkinDocument, []*messages.Pickle, error) {
	if KindOf(s.Path) == Feature {
		doc, pickles, err := parseFeature(s.Path, Text(src), newID)
		if err != nil {
			return nil, nil, fmt.Errorf("parse %s: %w", s.Path, err)
		}
		return doc, selectedPickles(s, doc, pickles), nil
	}
	return yamlGherkin(s, newID)
}

// selectedPickles keeps the pickles of the scenarios of s, matched by the
// line of the scenario (or of its examples row).
func selectedPickles(s *Suite, doc *messages.GherkinDocument, pickles []*messages.Pickle) []*messages.Pickle {
	lines := map[int64]bool{}
	for _, sc := range s.Scenarios {
		lines[int64(sc.Pos.Line)] = true
	}
	locs := Locations(doc)
	var out []*messages.Pickle
	for _, p := range pickles {
		if n := len(p.AstNodeIds); n > 0 && locs[p.AstNodeIds[n-1]] != nil && lines[locs[p.AstNodeIds[n-1]].Line] {
			out = append(out, p)
		}
	}
	return out
}

// Locations indexes the locations of a document's scenarios, steps and
// examples rows by id: pickles name their origin by these ids only.
func Locations(doc *messages.GherkinDocument) map[string]*messages.Location {
	locs := map[string]*messages.Location{}
	if doc == nil || doc.Feature == nil {
		return locs
	}
	stepsOf := func(st []*messages.Step) {
		for _, s := range st {
			locs[s.Id] = s.Location
		}
	}
	scenario := func(sc *messages.Scenario) {
		locs[sc.Id] = sc.Location
		stepsOf(sc.Steps)
		for _, ex := range sc.Examples {
			for _, row := range ex.TableBody {
				locs[row.Id] = row.Location
			}
		}
	}
	for _, c := range doc.Feature.Children {
		switch {
		case c.Background != nil:
			stepsOf(c.Background.Steps)
		case c.Scenario != nil:
			scenario(c.Scenario)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Background != nil {
					stepsOf(rc.Background.Steps)
				}
				if rc.Scenario != nil {
					scenario(rc.Scenario)
				}
			}
		}
	}
	return locs
}

func location(p diag.Pos) *messages.Location {
	return &messages.Location{Line: int64(p.Line), Column: int64(p.Col)}
}

// yamlGherkin maps a YAML suite onto a GherkinDocument and its pickles.
func yamlGherkin(s *Suite, newID func() string) (*messages.GherkinDocument, []*messages.Pickle, error) {
	feature := &messages.Feature{Location: location(s.Pos), Tags: []*messages.Tag{}, Language: "en", Keyword: "Feature",
		Name: s.Name, Children: []*messages.FeatureChild{}}
	if s.Pos.Line == 0 {
		feature.Location = &messages.Location{Line: 1, Column: 1}
	}
	var pickles []*messages.Pickle
	for _, sc := range s.Scenarios {
		if sc == nil {
			continue
		}
		ast := &messages.Scenario{Location: location(sc.Pos), Tags: []*messages.Tag{}, Keyword: "Scenario", Name: sc.Name,
			Steps: []*messages.Step{}, Examples: []*messages.Examples{}, Id: newID()}
		p := &messages.Pickle{Id: newID(), Uri: s.Path, Name: sc.Name, Language: "en", Steps: []*messages.PickleStep{},
			Tags: []*messages.PickleTag{}, AstNodeIds: []string{ast.Id}}
		for _, tag := range sc.Tags {
			t := &messages.Tag{Location: location(sc.Pos), Name: "@" + tag, Id: newID()}
			ast.Tags = append(ast.Tags, t)
			p.Tags = append(p.Tags, &messages.PickleTag{Name: t.Name, AstNodeId: t.Id})
		}
		for _, st := range sc.Steps {
			if st == nil {
				continue
			}
			keyword, kwType, pType := stepKeyword(st.Kind)
			step := &messages.Step{Location: location(st.Pos), Keyword: keyword, KeywordType: kwType, Text: yamlStepText(st), Id: newID()}
			ast.Steps = append(ast.Steps, step)
			p.Steps = append(p.Steps, &messages.PickleStep{AstNodeIds: []string{step.Id}, Id: newID(), Type: pType, Text: step.Text})
		}
		feature.Children = append(feature.Children, &messages.FeatureChild{Scenario: ast})
		pickles = append(pickles, p)
	}
	return &messages.GherkinDocument{Uri: s.Path, Feature: feature, Comments: []*messages.Comment{}}, pickles, nil
}

// stepKeyword is the Gherkin keyword a step of a YAML program reads as:
// what sets the conversation up is Given, a user turn When, a check Then.
func stepKeyword(k steps.Kind) (string, messages.StepKeywordType, messages.PickleStepType) {
	switch k {
	case steps.Setup, steps.Open, steps.Probe:
		return "Given ", messages.StepKeywordType_CONTEXT, messages.PickleStepType_CONTEXT
	case steps.Say:
		return "When ", messages.StepKeywordType_ACTION, messages.PickleStepType_ACTION
	}
	return "Then ", messages.StepKeywordType_OUTCOME, messages.PickleStepType_OUTCOME
}

// StepText is a step of a scenario's program in one line, as Gherkin
// reads it: a feature step as written, a YAML step as its pickle in the
// Cucumber report names it, keyword included ("When the user says
// \"thanks\"", "Then the platform's records meet the expectations of
// confirm:"). Reports name the steps an attempt did not run with it.
func StepText(st *steps.Step) string {
	if st.Text != "" {
		return st.Text
	}
	keyword, _, _ := stepKeyword(st.Kind)
	return keyword + yamlStepText(st)
}

// yamlStepText describes a step of a YAML program in one line.
func yamlStepText(st *steps.Step) string {
	switch st.Kind {
	case steps.Setup:
		return "the session is set up"
	case steps.Open:
		return "a conversation is opened"
	case steps.Say:
		if st.Silent {
			return "the user stays silent"
		}
		return fmt.Sprintf("the user says %q", strings.Join(strings.Fields(st.Say), " "))
	case steps.Check:
		if st.Greeting {
			return "the greeting meets the expectations of greeting:"
		}
		return "the reply meets the expectations of expect:"
	case steps.Capture:
		return fmt.Sprintf("%s of the reply is captured as ${%s}", st.Capture.From, st.Capture.Name)
	case steps.Probe:
		return "a probe starts the conversation"
	case steps.CallStatus:
		return fmt.Sprintf("the call ends with status %s", st.Status.Want)
	case steps.Confirm:
		return "the platform's records meet the expectations of confirm:"
	}
	return st.Kind.String()
}
