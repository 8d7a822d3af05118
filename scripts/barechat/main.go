// Command barechat sends the conversations of the Botium comparison
// (BENCHMARKS.md, "agenttest vs Botium"; scripts/bench.sh botium) one
// after another over plain net/http, checking nothing but the status of
// each call: the floor any client meets against the same simulator, which
// bounds how much faster than Botium a client can be at one conversation
// at a time.
//
//	AGENTTEST_BUILD_URL=… AGENTTEST_BUILD_KEY=… go run ./scripts/barechat -n 2000
//
// Each conversation is the greeting (a create call, whose conversationId
// it decodes) and the four turns of gen_suite in scripts/bench.sh, sent
// with one keep-alive connection, as agenttest at --parallel 1 does. It
// prints "N conversations, C calls answered 200" and exits 1 at the first
// call answered otherwise.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// says are gen_suite's user turns.
var says = []string{"I'd like to book a table", "4 people at 7pm", "what was my reference?", "thanks, bye"}

func main() {
	n := flag.Int("n", 500, "conversations")
	agent := flag.String("agent", "restaurant", "agent id")
	flag.Parse()
	base, key := os.Getenv("AGENTTEST_BUILD_URL"), os.Getenv("AGENTTEST_BUILD_KEY")
	if base == "" || key == "" {
		fmt.Fprintln(os.Stderr, "barechat: set AGENTTEST_BUILD_URL and AGENTTEST_BUILD_KEY (agenttest sim --print-env)")
		os.Exit(2)
	}
	url := base + "/v1/agents/" + *agent + "/debug-chat"
	start, err := json.Marshal(map[string]string{"clientEnv": "sandbox"})
	if err != nil {
		panic(err)
	}
	turns := make([][]byte, len(says))
	for i, say := range says {
		if turns[i], err = json.Marshal(map[string]string{"clientEnv": "sandbox", "message": say}); err != nil {
			panic(err)
		}
	}
	c := &client{hc: &http.Client{Timeout: 30 * time.Second}, key: key}
	t0 := time.Now()
	calls := 0
	for range *n {
		var created struct {
			ConversationID string `json:"conversationId"`
		}
		if err := json.Unmarshal(c.post(url, start), &created); err != nil || created.ConversationID == "" {
			fail("POST %s: no conversationId (%v)", url, err)
		}
		calls++
		for _, body := range turns {
			c.post(url+"/"+created.ConversationID, body)
			calls++
		}
	}
	fmt.Printf("%d conversations, %d calls answered 200 in %s\n", *n, calls, time.Since(t0).Round(time.Millisecond))
}

type client struct {
	hc  *http.Client
	key string
}

// post sends body and returns the reply's body; any status but 200 ends
// the program.
func (c *client) post(url string, body []byte) []byte {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		fail("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", c.key)
	res, err := c.hc.Do(req)
	if err != nil {
		fail("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		fail("POST %s: reading the reply: %v", url, err)
	}
	if res.StatusCode != http.StatusOK {
		fail("POST %s: %s", url, res.Status)
	}
	return out
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "barechat: "+format+"\n", args...)
	os.Exit(1)
}
