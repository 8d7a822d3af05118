package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// A Messaging platform that echoes the connector token it was given
// (raw, in capitals, in base64) in every place a frame can hold text: a
// streamed reply that splits it across chunks, a system message, the
// session's end reason, the conversation an event names, an event's id,
// a member of the wrong type, a frame that is not JSON, a binary frame.
// An answer in two messages that split it (the transcript's messages
// line quotes each), one before the echo of the turn's message, and a
// typing indicator whose state is it, whole or cut to be quoted, do too.
// Neither the console, with the transcripts, nor the reports show it in
// any form. It was so before this test; it pins the masking of each.
func TestMessagingEchoesShowNoToken(t *testing.T) {
	t.Parallel()
	tok := plantedConnectors["restaurant"]
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: plantedBuildKey})
	echoes := []string{tok, strings.ToUpper(tok), base64.StdEncoding.EncodeToString([]byte(tok))}
	typing := platformtest.Event("t2", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)
	m := platformtest.StartMessaging(t, func(n int, ev []byte) []platformtest.Frame {
		var e struct {
			Payload struct{ Text string } `json:"payload"`
		}
		if err := json.Unmarshal(ev, &e); err != nil {
			t.Errorf("the client sent %q", ev)
		}
		if n == 1 {
			return []platformtest.Frame{platformtest.Event("j", "EVENT_TYPE_VENDOR_AGENT_JOINED", "conversation_id", "c-1"),
				platformtest.Event("w", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", "Welcome."), typing}
		}
		switch e.Payload.Text {
		case "chunks":
			return []platformtest.Frame{platformtest.Chunk("c1", "m1", "tok "+tok[:10], false), platformtest.Chunk("c2", "m1", tok[10:]+" end", true), typing}
		case "system":
			return []platformtest.Frame{platformtest.System("s1", "SYSTEM_MESSAGE_LEVEL_ERROR", "bad token "+strings.Join(echoes, " ")), typing}
		case "end":
			return []platformtest.Frame{platformtest.SessionEnd("e1", "token "+echoes[1]+" revoked")}
		case "conv":
			return []platformtest.Frame{platformtest.Event("x1", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "conversation_id", "c-"+tok, "text", "x")}
		case "id":
			return []platformtest.Frame{platformtest.Event(tok, "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", echoes[2]), typing}
		case "wrongtype":
			return []platformtest.Frame{platformtest.Event("x1", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", map[string]any{tok: tok})}
		case "notjson":
			return platformtest.Texts("{" + tok)
		case "binary":
			return []platformtest.Frame{{Data: tok, Binary: true}}
		case "split":
			// One answer of two messages, the typing indicator on
			// between them: the messages line quotes each.
			on := platformtest.Event("t5", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", true)
			return []platformtest.Frame{platformtest.Echo(n, ev), platformtest.Message("p1", "m1", "half "+tok[:10]), on,
				platformtest.Message("p2", "m2", tok[10:]+" rest"), platformtest.TypingStop("t6")}
		case "early":
			// A message before the echo of the turn's own, and the next
			// after it: the line marks the first.
			return []platformtest.Frame{platformtest.Message("q1", "m1", "early "+tok[:10]), platformtest.Echo(n, ev),
				platformtest.Message("q2", "m2", tok[10:]+" late"), platformtest.TypingStop("t7")}
		case "typingstate":
			// A typing indicator whose state says neither on nor off:
			// the error quotes it.
			return []platformtest.Frame{platformtest.Event("t3", "EVENT_TYPE_AGENT_TYPING", "state", tok)}
		case "typingcut":
			// One too long to quote whole: cut within the token.
			return []platformtest.Frame{platformtest.Event("t4", "EVENT_TYPE_AGENT_TYPING", "state", strings.Repeat("x", 54)+tok)}
		}
		return nil
	})
	var suite strings.Builder
	suite.WriteString("agent: restaurant\nvia: messaging\nscenarios:\n")
	for _, k := range []string{"chunks", "system", "end", "conv", "id", "wrongtype", "notjson", "binary", "split", "early", "typingstate", "typingcut"} {
		suite.WriteString("  - {name: " + k + ", turns: [{say: " + k + ", expect: {response: nothing}}]}\n")
	}
	dir := writeTree(t, map[string]string{"s.yaml": suite.String()})
	env := map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": plantedBuildKey,
		"AGENTTEST_MESSAGING_URL": m.URL, "AGENTTEST_MESSAGING_HOST": m.Host, "AGENTTEST_AGENT_ID": "restaurant",
		"AGENTTEST_CONNECTOR_TOKEN": tok}
	c := newCLI(t, dir, env, "run", "-v", "--retries", "0", ".", "--json", "result.json", "--junit", "junit.xml", "--html", "report.html",
		"--cucumber", "cucumber.ndjson", "--github")
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, c.stdout, c.stderr)
	}
	texts := reportTexts(t, c, dir)
	noKeyForm(t, "messaging", texts, append(secret.Forms(tok), echoes...))
	// Nor a piece of it: a token split across two messages is masked
	// whole (maskAcross), where the reply joins them with a space that no
	// form of it holds; one cut to be quoted is masked before the cut.
	for name, text := range texts {
		for _, piece := range []string{tok[:10], tok[10:]} {
			if strings.Contains(text, piece) {
				t.Errorf("%s shows a piece of the token, %q", name, piece)
			}
		}
	}
	// The rows reach the outputs they pin: the messages line of an
	// answer in two messages, one before the echo, and the typing
	// indicator's error quoting its state.
	for _, want := range []string{`messages: "` + secret.Mask + `" → "`, "(before the platform took this turn's message) → ",
		`payload.state is "` + secret.Mask + `"`, `payload.state is "` + strings.Repeat("x", 54) + secret.Mask + `"`} {
		if !strings.Contains(texts["stdout"], want) {
			t.Errorf("the console does not show %q: the rows test nothing\n%s", want, texts["stdout"])
		}
	}
	if n := strings.Count(texts["result.json"], secret.Mask); n < 6 {
		t.Errorf("%d masks in the JSON report: the echoes were not exercised\n%s", n, texts["stdout"])
	}
}
