package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/scenario"
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
