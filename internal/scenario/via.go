package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/steps"
)

// The channel a scenario runs over (`via:` in YAML, @via: and "Given the
// conversation is over ..." in features) decides which checks can work:
// a Messaging turn carries events but none of the debug-chat metadata,
// and a debug-chat reply carries no events. Both loaders report a check
// the channel cannot support here, at the check, before anything runs.

// Hints of the channel rules, shared by both formats.
const (
	hintConfirm = "check what the platform recorded with confirm: {conversation: {...}} after the session (state, metrics, handoff), or test this in a scenario over debug_chat"
	hintVia     = "add via: messaging to the scenario or the suite; in a feature: Given the conversation is over messaging, or @via:messaging"
	hintDelayed = "test the delayed reply in a scenario over debug_chat; " + delayedShown
	// The same two in a feature's words.
	hintConfirmFeature = "check what the platform recorded with Then the conversation record shows: (state, metrics, handoff), or test this in a scenario over debug chat (@via:debug_chat)"
	hintDelayedFeature = "test the delayed reply in a scenario over debug chat (@via:debug_chat); " + delayedShown
	// delayedShown is what a delayed reply looks like over messaging.
	delayedShown = "over messaging, the transcript shows \"delayed response\" on a turn whose message the platform flags (delayed: true in its payload, as the simulator does)"
	hintJoined   = "the agent joins when the conversation opens, before the first turn: check the joined event under greeting: {events: ...}, or with Then the greeting events include ..."
)

// via reads `via:`.
func (d *decoder) via(p pair) (string, diag.Pos) {
	v, ok := d.scalar(p.Val, "via")
	if !ok {
		return "", diag.Pos{}
	}
	v = strings.TrimSpace(v)
	if !slices.Contains(steps.Vias, v) {
		hint := viaHint(v)
		if hint == "" {
			hint = "one of " + strings.Join(steps.Vias, ", ")
		}
		d.errorHint(p.Val, hint, "via %q is not a channel", v)
		return "", diag.Pos{}
	}
	return v, d.pos(p.Val)
}

// viaHint is the channel a via that is none likely means: a near miss,
// or messaging for the names of what it serves (the docs and the platform
// call it web chat, its socket a WebSocket); "" when nothing is near.
func viaHint(v string) string {
	if h := diag.DidYouMean(strings.ReplaceAll(v, "-", "_"), steps.Vias); h != "" {
		return h
	}
	switch strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(v)) {
	case "webchat", "web", "chat", "websocket", "ws", "widget":
		return fmt.Sprintf("did you mean %q? web chat runs over the Messaging API", steps.ViaMessaging)
	}
	return ""
}

// Hints of the streaming rule: it applies to conversations over messaging.
const (
	hintStreamingYAML    = "add via: messaging to the scenario or the suite, or remove streaming:"
	hintStreamingFeature = "add @via:messaging or Given the conversation is over messaging, or remove it"
)

// streaming reads `streaming:`; the position is zero when the value is
// not true or false (reported).
func (d *decoder) streaming(p pair) (bool, diag.Pos) {
	on, ok := d.boolean(p.Val, "streaming")
	if !ok {
		return false, diag.Pos{}
	}
	return on, d.pos(p.Val)
}

// streamingUses are the streaming settings of a file (streaming:, a
// @streaming: tag, "Given the replies are streamed") and the scenarios
// each applies to. A setting applies to conversations over messaging:
// one that no scenario over messaging uses is an error, at the setting.
// One that a suite, Feature, Rule or Background gives several scenarios
// is the default of those over messaging, as a suite's start: is, and a
// scenario of them back on debug chat is no error.
type streamingUses struct {
	order []diag.Pos
	by    map[diag.Pos]*streamingUse
}

type streamingUse struct {
	// what is the setting as the message names it, hint how to fix it.
	what, hint string
	// scenarios counts the scenarios it applies to, messaging those over
	// messaging; first names the first.
	scenarios, messaging int
	first                string
}

// note records the scenario's streaming setting, written as what; the
// scenario's channel is final.
func (u *streamingUses) note(sc *Scenario, what, hint string) {
	at := sc.Start.StreamingPos
	if at.IsZero() {
		return
	}
	use := u.by[at]
	if use == nil {
		if u.by == nil {
			u.by = map[diag.Pos]*streamingUse{}
		}
		use = &streamingUse{what: what, hint: hint, first: sc.Name}
		u.by[at] = use
		u.order = append(u.order, at)
	}
	use.scenarios++
	if sc.Messaging() {
		use.messaging++
	}
}

// unused reports, in file order, the settings no scenario over messaging
// uses.
func (u *streamingUses) unused() []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, at := range u.order {
		use := u.by[at]
		if use.messaging > 0 {
			continue
		}
		msg := fmt.Sprintf("%s applies to conversations over messaging, and scenario %q runs over debug chat", use.what, use.first)
		if use.scenarios > 1 {
			msg = fmt.Sprintf("%s applies to conversations over messaging, and none of the %d scenarios it applies to runs over messaging", use.what, use.scenarios)
		}
		out = append(out, diag.Diagnostic{Severity: diag.Error, Pos: at, Message: msg, Hint: use.hint})
	}
	return out
}

// startOverMessaging warns, once per start: mapping, about the session
// parameters that only debug chat's create call sends: over messaging
// they would be dropped without a word (docs/writing-scenarios.md, "The
// session parameters"). via is where the scenario chose messaging.
func (d *decoder) startOverMessaging(st Start, via diag.Pos) {
	keys := st.chatOnly()
	if len(keys) == 0 || d.startWarned[st.Pos] {
		return
	}
	if d.startWarned == nil {
		d.startWarned = map[diag.Pos]bool{}
	}
	d.startWarned[st.Pos] = true
	verb := "is"
	if len(keys) > 1 {
		verb = "are"
	}
	d.diags = d.diags.Warnf(st.Pos, "start: %s %s not sent over messaging (via: messaging at %s): only debug chat's create call takes them",
		strings.Join(keys, ", "), verb, via)
}

// chatOnly names the session parameters st sets that only debug chat's
// create call sends, by their YAML keys.
func (st Start) chatOnly() []string {
	var keys []string
	for _, k := range []struct{ name, v string }{{"channel", st.Channel}, {"variant", st.Variant}, {"asr_lang", st.ASRLang},
		{"tts_lang", st.TTSLang}, {"conversation_id", st.ConversationID}} {
		if k.v != "" {
			keys = append(keys, k.name)
		}
	}
	return keys
}

// setupOverMessaging warns about the setup steps of a feature scenario
// over messaging that set a parameter only debug chat sends (the channel,
// variant and languages), at the first of them: as start: in YAML, they
// would be dropped without a word.
func setupOverMessaging(sc *Scenario, at diag.Pos) []diag.Diagnostic {
	if !sc.Messaging() || at.IsZero() {
		return nil
	}
	words := map[string]string{"channel": "the channel", "variant": "the variant", "asr_lang": "the ASR language", "tts_lang": "the TTS language",
		"conversation_id": "the conversation id"}
	var names []string
	for _, k := range sc.Start.chatOnly() {
		names = append(names, words[k])
	}
	if len(names) == 0 {
		return nil
	}
	verb := "is"
	if len(names) > 1 {
		verb = "are"
	}
	return []diag.Diagnostic{{Severity: diag.Warning, Pos: at,
		Message: fmt.Sprintf("%s %s not sent over messaging (over messaging at %s): only debug chat's create call takes them", strings.Join(names, ", "), verb, sc.Start.ViaPos)}}
}

// viaRules reports the keys of an expect: (or greeting:) that the
// scenario's channel cannot check, at each key.
func (d *decoder) viaRules(order []pair, what string) {
	for _, f := range order {
		switch {
		case d.messaging && slices.Contains(assert.DebugChatKeys, f.Name):
			d.errorHint(f.Key, hintNotOverMessaging(f.Name, false), "%s: %s", what, assert.NotOverMessaging(f.Name))
		case !d.messaging && slices.Contains(assert.MessagingKeys, f.Name):
			d.errorHint(f.Key, hintVia, "%s: %s checks Messaging events, and this scenario runs over debug chat", what, f.Name)
		}
	}
}

// hintNotOverMessaging is the hint of a debug-chat key under messaging:
// the record holds what the platform kept of the metadata, and nothing of
// a delayed reply. A feature's hint names its steps and tags.
func hintNotOverMessaging(key string, feature bool) string {
	switch {
	case key == "delayed" && feature:
		return hintDelayedFeature
	case key == "delayed":
		return hintDelayed
	case feature:
		return hintConfirmFeature
	}
	return hintConfirm
}

// joinedOnTurn warns about an events check of a user turn that expects
// the agent's joined event, which only the opening receives.
func (d *decoder) joinedOnTurn(e *assert.Expect, at diag.Pos) {
	if t := joinedExpected(e.Events); t != "" {
		d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: at,
			Message: fmt.Sprintf("events: %s arrives with the greeting, never on a user turn", t), Hint: hintJoined})
	}
}

// joinedExpected is the agent's joined event that an events check wants
// (in includes or in sequence), or "": on a user turn the check can only
// fail. Both loaders warn about it.
func joinedExpected(ev *assert.Events) string {
	if ev == nil {
		return ""
	}
	for _, list := range [][]string{ev.Includes, ev.Sequence} {
		for _, t := range list {
			if reply.IsAgentJoined(t) {
				return t
			}
		}
	}
	return ""
}

// captureNeedsChat reports whether a capture field reads debug-chat
// metadata.
func captureNeedsChat(from string) bool { return from != "response" }

// viaStep checks one compiled feature step against the scenario's
// channel: the debug-chat keys of a check, a capture from metadata, or a
// probe under messaging; a Messaging check under debug chat.
func viaStep(st *steps.Step, messaging bool) []diag.Diagnostic {
	bad := func(msg, hint string) []diag.Diagnostic {
		return []diag.Diagnostic{{Severity: diag.Error, Pos: st.Pos, Message: fmt.Sprintf("step %q: %s", st.Text, msg), Hint: hint}}
	}
	switch st.Kind {
	case steps.Check:
		exp, err := st.Expect(keepRefs)
		if err != nil {
			return nil // reported when the step was compiled
		}
		if keys := exp.DebugChatOnly(); messaging && len(keys) > 0 {
			return bad(assert.NotOverMessaging(keys[0].Key), hintNotOverMessaging(keys[0].Key, true))
		}
		if keys := exp.MessagingOnly(); !messaging && len(keys) > 0 {
			return bad(keys[0].Key+" checks Messaging events, and this scenario runs over debug chat", hintVia)
		}
		if t := joinedExpected(exp.Events); messaging && !st.Greeting && t != "" {
			return []diag.Diagnostic{{Severity: diag.Warning, Pos: st.Pos,
				Message: fmt.Sprintf("step %q: %s arrives with the greeting, never on a user turn", st.Text, t), Hint: hintJoined}}
		}
	case steps.Capture:
		if messaging && captureNeedsChat(st.Capture.From) {
			return bad("remembering a value of the "+strings.SplitN(st.Capture.From, ".", 2)[0]+" needs debug-chat metadata, which a conversation over messaging does not have", hintConfirmFeature)
		}
	case steps.Probe:
		if messaging {
			return bad("a probe starts the conversation by call or SMS, so it cannot run over messaging", "write the probe in a scenario over debug chat")
		}
	}
	return nil
}
