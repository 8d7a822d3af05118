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
		}
		return nil
	})
	var suite strings.Builder
	suite.WriteString("agent: restaurant\nvia: messaging\nscenarios:\n")
	for _, k := range []string{"chunks", "system", "end", "conv", "id", "wrongtype", "notjson", "binary"} {
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
	if n := strings.Count(texts["result.json"], secret.Mask); n < 6 {
		t.Errorf("%d masks in the JSON report: the echoes were not exercised\n%s", n, texts["stdout"])
	}
}
