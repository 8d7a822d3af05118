package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// TestSweepEndsAtTheIdleLimit pins the janitor's round, run here by hand
// so that no background timing enters: a session exactly at the idle
// limit has not exceeded it, one past it ends as timed out (a late turn
// gets CHAT_TIMEOUT), and its conversation ends when the limit passed,
// not when the janitor noticed.
func TestSweepEndsAtTheIdleLimit(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, err := New(Options{Now: clk.Now, ChatIdleTimeout: time.Minute, JanitorInterval: time.Hour, TickInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	post := func(path string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+path, strings.NewReader(`{"clientEnv":"live","message":"hello"}`))
		req.Header.Set("x-api-key", DefaultBuildKey)
		return do(t, req)
	}
	base := "/v1/agents/" + s.agentIDs[0] + "/debug-chat"
	st, m := post(base)
	if st != 200 {
		t.Fatalf("create: %d %v", st, m)
	}
	id := m["conversationId"].(string)

	clk.Advance(time.Minute)
	s.sweep()
	if n := s.LiveSessions(); n != 1 {
		t.Fatalf("%d live sessions exactly at the idle limit, want 1", n)
	}
	clk.Advance(4 * time.Minute)
	s.sweep()
	if n := s.LiveSessions(); n != 0 {
		t.Fatalf("%d live sessions past the idle limit, want 0", n)
	}
	if st, m := post(base + "/" + id); st != 408 || m["error_code"] != CodeChatTimeout {
		t.Errorf("turn after the sweep: %d %v", st, m)
	}
	req, _ := http.NewRequest("GET", hs.URL+"/v3/"+DefaultAccountID+"/"+s.agentIDs[0]+"/conversations/"+id, nil)
	req.Header.Set("x-api-key", DefaultRuntimeKey)
	if st, m := do(t, req); st != 200 || m["in_progress"] != false || m["total_duration"] != 60.0 {
		t.Errorf("the swept conversation: %d in_progress=%v total_duration=%v, want ended after 60s", st, m["in_progress"], m["total_duration"])
	}
}

func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return resp.StatusCode, m
}
