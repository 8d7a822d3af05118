package sim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/sim"
)

// benchClient is a keep-alive client sized for parallel benchmarks.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
}

func post(b *testing.B, c *http.Client, url, key, body string) []byte {
	out, status := postStatus(b, c, url, key, body)
	if status != 200 {
		b.Fatalf("%s: %d %s", url, status, out)
	}
	return out
}

func postStatus(b *testing.B, c *http.Client, url, key, body string) ([]byte, int) {
	req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return out, resp.StatusCode
}

// BenchmarkDebugChatTurn measures debug-chat turns over real loopback HTTP
// against the in-process server, with parallel keep-alive clients. Each
// client rotates to a fresh session every 50 turns, ending the old one, as
// a test suite would.
func BenchmarkDebugChatTurn(b *testing.B) {
	s, _ := startHelpdesk(b, sim.Options{StoreCap: 2000})
	client := benchClient()
	base := s.BuildURL + "/v1/agents/helpdesk/debug-chat"
	newSession := func() string {
		var r struct{ ConversationID string }
		if err := json.Unmarshal(post(b, client, base, s.BuildKey, `{"clientEnv":"live"}`), &r); err != nil {
			b.Fatal(err)
		}
		return r.ConversationID
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		id, n := newSession(), 0
		for pb.Next() {
			if n == 50 {
				post(b, client, base+"/"+id, s.BuildKey, `{"clientEnv":"live","message":"bye"}`)
				id, n = newSession(), 0
			}
			post(b, client, base+"/"+id, s.BuildKey, `{"clientEnv":"live","message":"what can you do"}`)
			n++
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkMemoryBounded runs many short sessions, half abandoned mid-way,
// and reports the live heap afterwards: the store cap and the idle janitor
// keep it flat however many turns ran.
func BenchmarkMemoryBounded(b *testing.B) {
	s, _ := startHelpdesk(b, sim.Options{StoreCap: 1000, ChatIdleTimeout: 50 * time.Millisecond, JanitorInterval: 10 * time.Millisecond})
	client := benchClient()
	base := s.BuildURL + "/v1/agents/helpdesk/debug-chat"
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id, n := "", 0
		for pb.Next() {
			if id == "" || n == 10 {
				if id != "" && seq.Add(1)%2 == 0 {
					postStatus(b, client, base+"/"+id, s.BuildKey, `{"clientEnv":"live","message":"bye"}`)
				} // else abandoned: the janitor ends it
				var r struct{ ConversationID string }
				_ = json.Unmarshal(post(b, client, base, s.BuildKey, `{"clientEnv":"live"}`), &r)
				id, n = r.ConversationID, 0
			}
			// Under load a session may idle out between turns (CHAT_TIMEOUT):
			// that is the janitor at work, so start a fresh one.
			if _, st := postStatus(b, client, base+"/"+id, s.BuildKey, `{"clientEnv":"live","message":"ping me"}`); st == http.StatusRequestTimeout {
				n = 10
				id = "x"
				continue
			}
			n++
		}
	})
	b.StopTimer()
	time.Sleep(100 * time.Millisecond) // let the janitor sweep the abandoned sessions
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
	b.ReportMetric(float64(s.Server.Store().Len()), "stored")
	b.ReportMetric(float64(s.Server.LiveSessions()), "live-sessions")
	if s.Server.Store().Len() > 1000+s.Server.LiveSessions() {
		b.Fatalf("store holds %d conversations over its cap", s.Server.Store().Len())
	}
}
