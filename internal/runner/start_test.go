package runner

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/steps"
)

// TestStartRequestExpandsEveryParameter: each start parameter of the
// create call is expanded from the scenario's vars, and an unknown
// reference in one of them is an error named after it.
func TestStartRequestExpandsEveryParameter(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		set  func(*scenario.Start, string)
		got  func(platform.ChatStart) string
	}
	run := func(t *testing.T, tc testCase) {
		_, opts, sc, c := fixedSession(t, "Welcome")
		sc.Vars = map[string]string{"x": "v"}
		tc.set(&sc.Start, "${x}-"+tc.name)
		s := newSession(context.Background(), &opts, sc, c)
		defer s.End()
		req, err := s.startRequest()
		if got := tc.got(req); err != nil || got != "v-"+tc.name {
			t.Errorf("%s = %q, %v; want %q", tc.name, got, err, "v-"+tc.name)
		}
		tc.set(&s.params, "${nope}")
		if _, err := s.startRequest(); err == nil || !strings.HasPrefix(err.Error(), tc.name+": ") {
			t.Errorf("an unknown reference in %s: error %v, want one named %s", tc.name, err, tc.name)
		}
	}
	for _, tc := range []testCase{
		{"asr_lang", func(st *scenario.Start, v string) { st.ASRLang = v }, func(r platform.ChatStart) string { return r.ASRLang }},
		{"tts_lang", func(st *scenario.Start, v string) { st.TTSLang = v }, func(r platform.ChatStart) string { return r.TTSLang }},
		{"conversation_id", func(st *scenario.Start, v string) { st.ConversationID = v }, func(r platform.ChatStart) string { return r.ConversationID }},
		{"variant", func(st *scenario.Start, v string) { st.Variant = v }, func(r platform.ChatStart) string { return r.VariantID }},
		{"channel", func(st *scenario.Start, v string) { st.Channel = v }, func(r platform.ChatStart) string { return r.Channel }},
		{"integration_attributes.k", func(st *scenario.Start, v string) { st.IntegrationAttributes = map[string]string{"k": v} },
			func(r platform.ChatStart) string { return fmt.Sprint(r.IntegrationAttributes["k"]) }},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// ctxChannel is a fixedChannel that keeps the context of the last call.
type ctxChannel struct {
	fixedChannel
	last *context.Context
}

func (c ctxChannel) Open(ctx context.Context, agent string, req platform.ChatStart) (Conversation, *platform.Exchange, error) {
	*c.last = ctx
	return c.fixedChannel.Open(ctx, agent, req)
}

// TestEndReleasesTheTurnContext: ending a session cancels the context its
// calls were made in, so that the run's context lets go of it at once
// rather than holding every attempt's until the run ends.
func TestEndReleasesTheTurnContext(t *testing.T) {
	t.Parallel()
	_, opts, sc, c := fixedSession(t, "Welcome")
	var last context.Context
	opts.Channel = ctxChannel{opts.Channel.(fixedChannel), &last}
	ctx, _ := withAccount(context.Background())
	s := newSession(ctx, &opts, sc, c)
	if !s.Exec(sc.Steps[0]) {
		t.Fatalf("open failed: %s", describe(c))
	}
	if last == nil || last.Err() != nil {
		t.Fatalf("the call's context: %v", last)
	}
	s.End()
	if last.Err() == nil {
		t.Error("the call's context is still live after End")
	}
}

// TestSetupStepChangesTheStart: a setup step handed over before the
// conversation opens (godog) changes what it sets, the case's agent and
// environment included, and keeps what it leaves out: the scenario's
// other parameters and integration attributes.
func TestSetupStepChangesTheStart(t *testing.T) {
	t.Parallel()
	_, opts, sc, c := fixedSession(t, "Welcome")
	sc.Start = scenario.Start{Channel: "SMS", Variant: "v0", ASRLang: "en-GB", TTSLang: "en-US",
		IntegrationAttributes: map[string]string{"kept": "1", "changed": "0"}}
	s := newSession(context.Background(), &opts, sc, c)
	defer s.End()
	set := func(p steps.Params) *steps.Step {
		return &steps.Step{Kind: steps.Setup, Pos: pos(4, 5), Setup: func(to *steps.Params, _ steps.Expander) error {
			*to = p
			return nil
		}}
	}
	for _, p := range []steps.Params{
		{Agent: "a2", Env: "live", Variant: "v1", TTSLang: "fr-FR", Attributes: map[string]string{"changed": "2", "added": "3"}},
		{ASRLang: "de-DE"},
	} {
		if !s.Exec(set(p)) {
			t.Fatalf("setup %+v refused: %+v", p, s.a.Error)
		}
	}
	req, err := s.startRequest()
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent != "a2" || c.Env != "live" || req.ClientEnv != "live" {
		t.Errorf("agent %s, env %s, request env %s; want a2 in live", c.Agent, c.Env, req.ClientEnv)
	}
	if got, want := fmt.Sprint(req.Channel, " ", req.VariantID, " ", req.ASRLang, " ", req.TTSLang), "SMS v1 de-DE fr-FR"; got != want {
		t.Errorf("channel, variant, languages %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(req.IntegrationAttributes), "map[added:3 changed:2 kept:1]"; got != want {
		t.Errorf("integration attributes %s, want %s", got, want)
	}
	if sc.Start.IntegrationAttributes["changed"] != "0" {
		t.Errorf("the scenario's attributes changed: %v", sc.Start.IntegrationAttributes)
	}
}

// TestConversationIDsNameOnlyUnnamedConversations: the run's names for
// conversations (Options.ConversationIDs) do not replace one the scenario
// gives.
func TestConversationIDsNameOnlyUnnamedConversations(t *testing.T) {
	t.Parallel()
	for _, given := range []string{"", "mine"} {
		_, opts, sc, c := fixedSession(t, "Welcome")
		opts.ConversationIDs = func(*result.Case, *result.Attempt) string { return "named" }
		sc.Start.ConversationID = given
		s := newSession(context.Background(), &opts, sc, c)
		req, err := s.startRequest()
		s.End()
		if want := cmp.Or(given, "named"); err != nil || req.ConversationID != want {
			t.Errorf("scenario's id %q: sent %q, %v; want %q", given, req.ConversationID, err, want)
		}
	}
}

// TestStartErrorAtTheScenario: a start parameter the run cannot expand,
// set where no position was kept (a scenario built in Go, godog), errors
// the attempt at the scenario, never at no position.
func TestStartErrorAtTheScenario(t *testing.T) {
	t.Parallel()
	_, opts, sc, c := fixedSession(t, "Welcome")
	sc.Start = scenario.Start{Variant: "${nope}"}
	s := newSession(context.Background(), &opts, sc, c)
	defer s.End()
	if s.Exec(sc.Steps[0]) {
		t.Fatal("the conversation opened")
	}
	if e := s.a.Error; e == nil || e.Pos != sc.Pos || e.Kind != result.KindConfig || !strings.HasPrefix(e.Message, "start: variant: ") {
		t.Errorf("error %+v, want a config error at %s", e, sc.Pos)
	}
}
