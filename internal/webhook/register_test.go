package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	// strict makes updates take only the reference's event_types
	// (alerts.triggered, alerts.resolved), refusing others with 422.
	strict  bool
	patches int
	// listStatus, patchStatus and deleteStatus, when set, are the
	// answers of those calls; failStatus and retryAfter those of a
	// failing registration (default 500, no Retry-After).
	listStatus, patchStatus, deleteStatus, failStatus int
	retryAfter                                        string
}

// answer writes status with a platform error body unless status is 0,
// and reports whether it did.
func answer(w http.ResponseWriter, status int) bool {
	if status == 0 {
		return false
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message": "answered %d on purpose"}`, status)
	return true
}

func (f *flakyRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/webhooks/endpoints":
		if answer(w, f.listStatus) {
			return
		}
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
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			answer(w, cmp.Or(f.failStatus, http.StatusInternalServerError))
			return
		}
		out := map[string]any{"signing_secret": "whsec_" + id}
		maps.Copy(out, ep)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/v1/webhook-endpoints/"):
		f.patches++
		if answer(w, f.patchStatus) {
			return
		}
		ep := f.endpoints[strings.TrimPrefix(r.URL.Path, "/v1/webhook-endpoints/")]
		var up struct {
			EventTypes []string `json:"event_types"`
			Enabled    *bool    `json:"enabled"`
		}
		json.NewDecoder(r.Body).Decode(&up)
		for _, e := range up.EventTypes {
			if f.strict && e != "alerts.triggered" && e != "alerts.resolved" {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprintf(w, `{"message": "invalid event type %s"}`, e)
				return
			}
		}
		if ep == nil {
			http.NotFound(w, r)
			return
		}
		if up.EventTypes != nil {
			ep["events"] = up.EventTypes
		}
		if up.Enabled != nil {
			ep["enabled"] = *up.Enabled
		}
		json.NewEncoder(w).Encode(ep)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/webhook-endpoints/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/webhook-endpoints/")
		if answer(w, f.deleteStatus) {
			return
		}
		delete(f.endpoints, id)
		f.deleted = append(f.deleted, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// registryClient returns a client of reg, served over HTTP, whose retries
// wait on clock with a fixed jitter.
func registryClient(t *testing.T, reg *flakyRegistry, clock *fakeclock.Clock) *platform.Client {
	t.Helper()
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	c, err := platform.New(platform.Config{BuildURL: srv.URL, BuildKey: "build-key-0123456789",
		Retry: platform.RetryPolicy{Sleep: clock.Sleep, Rand: func() float64 { return 0.5 }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
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
			clock := fakeclock.New()
			c := registryClient(t, reg, clock)
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

// TestRegisterReusesAKnownEndpoint: an endpoint of the receiver's URL
// whose secret the caller knows is kept: as it is when it is enabled with
// the events wanted, else updated; a platform that refuses the update,
// as one holding to the reference's alert-only event_types does, gets it
// replaced, and the run holds the new secret.
func TestRegisterReusesAKnownEndpoint(t *testing.T) {
	t.Parallel()
	const url = "https://hooks.example.com/agenttest"
	for _, tc := range []struct {
		name    string
		events  []string
		enabled bool
		strict  bool
		// wantPatches, wantPosts and wantDeleted count the calls;
		// wantSecret is the secret Register returns.
		wantPatches, wantPosts, wantDeleted int
		wantSecret                          string
	}{
		{name: "enabled with the events", events: DefaultEvents, enabled: true, wantSecret: "whsec_known"},
		{name: "missing an event", events: DefaultEvents[:1], enabled: true, wantPatches: 1, wantSecret: "whsec_known"},
		{name: "disabled", events: DefaultEvents, wantPatches: 1, wantSecret: "whsec_known"},
		{name: "update refused", events: DefaultEvents[:1], enabled: true, strict: true, wantPatches: 1, wantPosts: 1, wantDeleted: 1, wantSecret: "whsec_whe_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := &flakyRegistry{strict: tc.strict, endpoints: map[string]map[string]any{
				"whe_known": {"id": "whe_known", "url": url, "events": tc.events, "enabled": tc.enabled},
			}}
			srv := httptest.NewServer(reg)
			t.Cleanup(srv.Close)
			c, err := platform.New(platform.Config{BuildURL: srv.URL, BuildKey: "build-key-0123456789",
				Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep}})
			if err != nil {
				t.Fatal(err)
			}
			ep, secret, err := Register(context.Background(), c, url, nil, "whsec_known")
			if err != nil {
				t.Fatal(err)
			}
			reg.mu.Lock()
			defer reg.mu.Unlock()
			if reg.patches != tc.wantPatches || reg.posts != tc.wantPosts || len(reg.deleted) != tc.wantDeleted {
				t.Errorf("%d updates, %d registrations, %d deletions; want %d, %d, %d",
					reg.patches, reg.posts, len(reg.deleted), tc.wantPatches, tc.wantPosts, tc.wantDeleted)
			}
			if secret != tc.wantSecret || len(reg.endpoints) != 1 || reg.endpoints[ep.ID] == nil {
				t.Errorf("secret %q, endpoints %v, returned %s; want secret %q and one endpoint", secret, reg.endpoints, ep.ID, tc.wantSecret)
			}
			if !ep.Enabled || !slices.Equal(ep.Events, DefaultEvents) {
				t.Errorf("endpoint %+v, want it enabled with %v", ep, DefaultEvents)
			}
		})
	}
}

// TestRegisterPlatformAnswers: what Register does with each answer of the
// platform. A platform without a list operation (404, 405) gets a new
// endpoint; an update refused for what it asked (400, 422) gets the
// endpoint replaced, while one that failed (500) is an error and leaves
// the endpoint alone; an endpoint already gone when it is replaced is no
// error; a registration refused (400) is not retried, and a failed one
// waits the Retry-After the platform asks for, or, when that is longer
// than the policy honours, is not retried either.
func TestRegisterPlatformAnswers(t *testing.T) {
	t.Parallel()
	const url = "https://hooks.example.com/agenttest"
	for _, tc := range []struct {
		name        string
		reg         *flakyRegistry
		knownSecret string
		wantErr     string
		// wantPosts and wantDeleted count the calls; the clock moved
		// by at least minWait and less than maxWait (when set).
		wantPosts, wantDeleted int
		minWait, maxWait       time.Duration
	}{
		{name: "no list operation (404)", reg: &flakyRegistry{listStatus: 404}, wantPosts: 1},
		{name: "no list operation (405)", reg: &flakyRegistry{listStatus: 405}, wantPosts: 1},
		{name: "list fails", reg: &flakyRegistry{listStatus: 403}, wantErr: "list webhook endpoints: "},
		{name: "update refused (400)", reg: &flakyRegistry{patchStatus: 400}, knownSecret: "whsec_known", wantPosts: 1, wantDeleted: 1},
		{name: "update fails (500)", reg: &flakyRegistry{patchStatus: 500}, knownSecret: "whsec_known", wantErr: "reuse webhook endpoint whe_known: "},
		{name: "replaced endpoint already gone", reg: &flakyRegistry{deleteStatus: 404}, wantPosts: 1},
		{name: "replaced endpoint not deleted", reg: &flakyRegistry{deleteStatus: 403}, wantErr: "replace webhook endpoint whe_known (its signing secret is unknown): "},
		{name: "registration refused (400)", reg: &flakyRegistry{fails: 100, failStatus: 400}, wantErr: "400", wantPosts: 1, wantDeleted: 1},
		{name: "Retry-After honoured", reg: &flakyRegistry{fails: 1, failStatus: 503, retryAfter: "30"}, wantPosts: 2, wantDeleted: 1, minWait: 30 * time.Second},
		// As the client's own retries end: a registration sooner than
		// asked would be refused again.
		{name: "Retry-After over the cap", reg: &flakyRegistry{fails: 1, failStatus: 503, retryAfter: "3600"}, wantErr: "503", wantPosts: 1, wantDeleted: 1, maxWait: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := tc.reg
			// A disabled endpoint of the URL: one that must be updated
			// when its secret is known, replaced when not.
			reg.endpoints = map[string]map[string]any{"whe_known": {"id": "whe_known", "url": url, "events": DefaultEvents, "enabled": false}}
			clock := fakeclock.New()
			c := registryClient(t, reg, clock)
			_, _, err := Register(context.Background(), c, url, nil, tc.knownSecret)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
			reg.mu.Lock()
			defer reg.mu.Unlock()
			if reg.posts != tc.wantPosts || len(reg.deleted) != tc.wantDeleted {
				t.Errorf("%d registrations and %d deletions, want %d and %d", reg.posts, len(reg.deleted), tc.wantPosts, tc.wantDeleted)
			}
			waited := clock.Now().Sub(fakeclock.Start)
			if waited < tc.minWait || tc.maxWait > 0 && waited >= tc.maxWait {
				t.Errorf("waited %s, want at least %s and less than %s", waited, tc.minWait, tc.maxWait)
			}
		})
	}
}

// refusingTransport refuses every connection of a POST, as a platform
// that is down does, and counts them.
type refusingTransport struct {
	mu    sync.Mutex
	posts int
}

func (rt *refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost {
		return http.DefaultTransport.RoundTrip(r)
	}
	rt.mu.Lock()
	rt.posts++
	rt.mu.Unlock()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

// TestRegisterLeavesUnsentRetriesToTheClient: a registration whose
// connection was never made is retried by the client already; Register
// retrying it again would multiply the attempts.
func TestRegisterLeavesUnsentRetriesToTheClient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&flakyRegistry{endpoints: map[string]map[string]any{}})
	t.Cleanup(srv.Close)
	rt := &refusingTransport{}
	c, err := platform.New(platform.Config{BuildURL: srv.URL, BuildKey: "build-key-0123456789", HTTPClient: &http.Client{Transport: rt},
		Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Register(context.Background(), c, "https://hooks.example.com/agenttest", nil, "")
	var ne *platform.NetworkError
	if !errors.As(err, &ne) || ne.Sent {
		t.Fatalf("err = %v, want the connection never made", err)
	}
	if rt.posts != platform.DefaultMaxAttempts {
		t.Errorf("%d registrations tried, want the client's %d", rt.posts, platform.DefaultMaxAttempts)
	}
}

// TestRegisterCutInBackoff: a registration retry cut short in its backoff
// ends with the platform's failure, which says what went wrong, not with
// the bare cancellation.
func TestRegisterCutInBackoff(t *testing.T) {
	t.Parallel()
	reg := &flakyRegistry{fails: 100, endpoints: map[string]map[string]any{}}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := platform.New(platform.Config{BuildURL: srv.URL, BuildKey: "build-key-0123456789",
		Retry: platform.RetryPolicy{Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Register(ctx, c, "https://hooks.example.com/agenttest", nil, "")
	var ae *platform.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError {
		t.Fatalf("err = %v, want the platform's 500", err)
	}
	if reg.posts != 1 {
		t.Errorf("%d registrations, want 1", reg.posts)
	}
}
