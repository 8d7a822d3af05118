package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

const benchMessage = "what are your opening hours"

// sessionTurns is how many turns a benchmark sends per session before it
// starts a new one, so the simulator's per-session cost stays the same
// whatever b.N is.
const sessionTurns = 20

// BenchmarkSendTurn measures the client's turns/s against the in-process
// simulator; compare with BenchmarkBareHTTPTurn, the same requests sent by
// a bare net/http loop, to see the client's overhead.
func BenchmarkSendTurn(b *testing.B) {
	s := simtest.Start(b, sim.Options{Seed: 1})
	c := simClient(b, s, RetryPolicy{})
	ctx := context.Background()
	id := benchSession(b, c)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%sessionTurns == sessionTurns-1 {
			b.StopTimer()
			id = benchSession(b, c)
			b.StartTimer()
		}
		if _, err := c.SendTurn(ctx, "restaurant", id, ChatTurn{ClientEnv: "sandbox", Message: benchMessage}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkSendTurnParallel is the parallel-suite case: many sessions at
// once through one Client.
func BenchmarkSendTurnParallel(b *testing.B) {
	s := simtest.Start(b, sim.Options{Seed: 1})
	c := simClient(b, s, RetryPolicy{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := benchSession(b, c)
		for n := 1; pb.Next(); n++ {
			if n%sessionTurns == 0 {
				id = benchSession(b, c)
			}
			if _, err := c.SendTurn(ctx, "restaurant", id, ChatTurn{ClientEnv: "sandbox", Message: benchMessage}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkBareHTTPTurn is the baseline: a plain net/http loop sending the
// same turn and decoding the reply into a map, with no retry policy,
// semaphore, redaction or typed decoding.
func BenchmarkBareHTTPTurn(b *testing.B) {
	s := simtest.Start(b, sim.Options{Seed: 1})
	c := simClient(b, s, RetryPolicy{})
	id := benchSession(b, c)
	hc := &http.Client{Transport: NewTransport(DefaultMaxPerHost)}
	url := s.BuildURL + "/v1/agents/restaurant/debug-chat/" + id
	body, _ := json.Marshal(ChatTurn{ClientEnv: "sandbox", Message: benchMessage})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%sessionTurns == sessionTurns-1 {
			b.StopTimer()
			url = s.BuildURL + "/v1/agents/restaurant/debug-chat/" + benchSession(b, c)
			b.StartTimer()
		}
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", s.BuildKey)
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%d %v", res.StatusCode, err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

func benchSession(b *testing.B, c *Client) string {
	b.Helper()
	ex, err := c.StartChat(context.Background(), "restaurant", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		b.Fatal(err)
	}
	return ex.Result.ConversationID
}

// BenchmarkDecodeTurn isolates the decoding of one debug-chat answer, the
// client's main CPU cost per turn.
func BenchmarkDecodeTurn(b *testing.B) {
	s := simtest.Start(b, sim.Options{Seed: 1})
	c := simClient(b, s, RetryPolicy{})
	ex, err := c.SendTurn(context.Background(), "restaurant", benchSession(b, c), ChatTurn{ClientEnv: "sandbox", Message: benchMessage})
	if err != nil {
		b.Fatal(err)
	}
	rq := &call{ep: epChatTurn, path: "/x"}
	b.SetBytes(int64(len(ex.Response)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.decodeTurn(rq, 200, ex.Response, 1); err != nil {
			b.Fatal(err)
		}
	}
}
