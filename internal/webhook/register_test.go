package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
)

// flakyRegistry is an in-process platform of webhook endpoints whose
// registration fails with 500 a number of times; when half is set a
// failing registration still creates the endpoint, as a platform that
// fails after its write does.
type flakyRegistry struct {
	mu        sync.Mutex
	fails     int
	half      bool
	posts     int
	deleted   []string
	endpoints map[string]map[string]any
	next      int
}

func (f *flakyRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/webhooks/endpoints":
		list := []map[string]any{}
		for _, ep := range f.endpoints {
			list = append(list, ep)
		}
		json.NewEncoder(w).Encode(map[string]any{"endpoints": list})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/webhooks/endpoints":
		f.posts++
		var reg struct {
			URL    string   `json:"url"`
			Events []string `json:"events"`
		}
		json.NewDecoder(r.Body).Decode(&reg)
		f.next++
		id := fmt.Sprintf("whe_%d", f.next)
		ep := map[string]any{"id": id, "url": reg.URL, "events": reg.Events, "enabled": true}
		failing := f.posts <= f.fails
		if !failing || f.half {
			f.endpoints[id] = ep
		}
		if failing {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message": "internal error"}`))
			return
		}
		out := map[string]any{"signing_secret": "whsec_" + id}
		for k, v := range ep {
			out[k] = v
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/webhook-endpoints/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/webhook-endpoints/")
		delete(f.endpoints, id)
		f.deleted = append(f.deleted, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// TestRegisterRetriesPlatformFailures: the client does not re-send a
// registration POST after a 500 (it may have created the endpoint), so
// Register retries the whole registration with the client's retry
// policy: it lists again, deletes what a failed POST left (its secret was
// never seen, even when the caller knows the secret of an earlier
// endpoint), and registers once more. A failure that outlasts the policy
// is the platform's error, with the attempts counted.
func TestRegisterRetriesPlatformFailures(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fails       int
		half        bool
		knownSecret string
		wantErr     string
		wantPosts   int
		wantDeleted int
	}{
		{name: "a 500 then success", fails: 1, wantPosts: 2},
		{name: "a 500 that created the endpoint", fails: 2, half: true, wantPosts: 3, wantDeleted: 2},
		{name: "a known secret is not reused after a failed POST", fails: 1, half: true, knownSecret: "whsec_old", wantPosts: 2, wantDeleted: 1},
		{name: "500s outlast the policy", fails: 100, wantErr: "500", wantPosts: platform.DefaultMaxAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := &flakyRegistry{fails: tc.fails, half: tc.half, endpoints: map[string]map[string]any{}}
			srv := httptest.NewServer(reg)
			t.Cleanup(srv.Close)
			clock := fakeclock.New()
			c, err := platform.New(platform.Config{BuildURL: srv.URL, BuildKey: "build-key-0123456789",
				Retry: platform.RetryPolicy{Sleep: clock.Sleep, Rand: func() float64 { return 0.5 }}})
			if err != nil {
				t.Fatal(err)
			}
			const url = "https://hooks.example.com/agenttest"
			ep, secret, err := Register(context.Background(), c, url, nil, tc.knownSecret)
			reg.mu.Lock()
			defer reg.mu.Unlock()
			if reg.posts != tc.wantPosts || len(reg.deleted) != tc.wantDeleted {
				t.Errorf("%d registrations and %d deletions, want %d and %d", reg.posts, len(reg.deleted), tc.wantPosts, tc.wantDeleted)
			}
			if tc.wantErr != "" {
				var ae *platform.APIError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), fmt.Sprintf("gave up after %d registrations", tc.wantPosts)) || !errors.As(err, &ae) {
					t.Fatalf("err = %v, want the platform's %s after %d registrations", err, tc.wantErr, tc.wantPosts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// One endpoint is left, the one whose secret the run holds.
			if len(reg.endpoints) != 1 || reg.endpoints[ep.ID] == nil || secret != "whsec_"+ep.ID {
				t.Errorf("endpoints %v, registered %s with secret %s", reg.endpoints, ep.ID, secret)
			}
			if clock.Now().Equal(fakeclock.Start) {
				t.Error("no backoff between registrations")
			}
		})
	}
}
