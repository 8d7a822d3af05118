package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

func TestZZMessagingEcho(t *testing.T) {
	tok := plantedConnectors["restaurant"]
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: plantedBuildKey})
	forms := []string{tok, strings.ToUpper(tok), base64.StdEncoding.EncodeToString([]byte(tok)), plantedBuildKey}
	m := platformtest.StartMessaging(t, func(n int, ev []byte) []platformtest.Frame {
		var e struct {
			Payload struct{ Text string } `json:"payload"`
		}
		json.Unmarshal(ev, &e)
		if n == 1 {
			return []platformtest.Frame{platformtest.Event("j", "EVENT_TYPE_VENDOR_AGENT_JOINED", "conversation_id", "c-1"),
				platformtest.Event("w", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", "Welcome."),
				platformtest.Event("t", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)}
		}
		switch e.Payload.Text {
		case "chunks":
			return []platformtest.Frame{platformtest.Chunk("c1", "m1", "tok "+tok[:10], false), platformtest.Chunk("c2", "m1", tok[10:]+" end", true),
				platformtest.Event("t2", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)}
		case "system":
			return []platformtest.Frame{platformtest.System("s1", "SYSTEM_MESSAGE_LEVEL_ERROR", "bad token "+forms[1]+" "+forms[2]),
				platformtest.Event("t2", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)}
		case "end":
			return []platformtest.Frame{platformtest.SessionEnd("e1", "token "+tok+" revoked")}
		case "type":
			return []platformtest.Frame{platformtest.Event("x1", "EVENT_TYPE_"+tok, "text", "x")}
		case "conv":
			return []platformtest.Frame{platformtest.Event("x1", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "conversation_id", "c-"+tok, "text", "x")}
		case "id":
			return []platformtest.Frame{platformtest.Event(tok, "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", "x")}
		case "wrongtype":
			return []platformtest.Frame{platformtest.Event("x1", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", map[string]any{tok: tok})}
		case "notjson":
			return platformtest.Texts("{" + tok)
		case "binary":
			return []platformtest.Frame{{Data: tok, Binary: true}}
		case "batch":
			return []platformtest.Frame{platformtest.Batch("b1", platformtest.Event("x1", "EVENT_TYPE_"+tok))}
		}
		return nil
	})
	var suite strings.Builder
	suite.WriteString("agent: restaurant\nvia: messaging\nscenarios:\n")
	for _, k := range []string{"chunks", "system", "end", "type", "conv", "id", "wrongtype", "notjson", "binary", "batch"} {
		suite.WriteString("  - {name: " + k + ", timeout: 2s, turns: [{say: " + k + ", expect: {response: nothing}}]}\n")
	}
	dir := writeTree(t, map[string]string{"s.yaml": suite.String()})
	env := map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": plantedBuildKey,
		"AGENTTEST_MESSAGING_URL": m.URL, "AGENTTEST_MESSAGING_HOST": m.Host, "AGENTTEST_AGENT_ID": "restaurant",
		"AGENTTEST_CONNECTOR_TOKEN": tok}
	c := newCLI(t, dir, env, "run", "-v", "--retries", "0", ".", "--json", "r.json", "--junit", "r.xml", "--github")
	code := c.run(t)
	texts := map[string]string{"out": c.stdout.String() + c.stderr.String()}
	for _, f := range []string{"r.json", "r.xml"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		texts[f] = string(b)
	}
	all := append(secret.Forms(tok), forms...)
	for name, text := range texts {
		if f := keyIn(text, all); f != "" {
			i := strings.Index(text, f)
			t.Errorf("%s holds %q: ...%s...", name, f, text[max(0, i-200):min(len(text), i+100)])
		}
	}
	t.Logf("exit %d\n%s", code, texts["out"])
}
