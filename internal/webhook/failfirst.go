package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// FailFirst wraps a receiver so that it answers 503 to the first n
// deliveries of every event before passing one on: a receiver that fails
// first, for the fault drills (docs/reliability.md). The platform must
// retry each event with backoff until it gets through, and confirmations
// must still see it, verified, once. Deliveries are told apart by the
// event's "id" (the same across retries), else by their body.
//
// It is a drill aid, not a production setting: agenttest run uses it only
// when AGENTTEST_WEBHOOK_FAIL_FIRST is set.
func FailFirst(next http.Handler, n int) http.Handler {
	if n <= 0 {
		return next
	}
	f := &failFirst{next: next, n: n, seen: map[string]int{}}
	return f
}

type failFirst struct {
	next http.Handler
	n    int
	mu   sync.Mutex
	seen map[string]int
}

func (f *failFirst) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, DefaultMaxBody+1))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	key := string(body)
	var ev struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &ev) == nil && ev.ID != "" {
		key = ev.ID
	}
	f.mu.Lock()
	f.seen[key]++
	fail := f.seen[key] <= f.n
	f.mu.Unlock()
	if fail {
		http.Error(w, "failing on purpose (fault drill)", http.StatusServiceUnavailable)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	f.next.ServeHTTP(w, req)
}
