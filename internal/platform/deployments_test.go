package platform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestActiveDeploymentShapes reads every reply shape the client accepts
// from a server that is not the simulator, and refuses the ones that
// carry no id or name another environment.
func TestActiveDeploymentShapes(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		env  string
		body string
		// want is the id; wantErr a part of the error instead.
		want, wantVersion, wantErr string
		// wantCreated is the creation time read, when the case says.
		wantCreated *time.Time
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var query string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/agents/restaurant/deployments/active" {
				http.NotFound(w, r)
				return
			}
			query = r.URL.RawQuery
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(tc.body))
		}))
		defer srv.Close()
		c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		d, err := c.ActiveDeployment(context.Background(), "restaurant", tc.env)
		if erredAsWanted(t, err, tc.wantErr) {
			return
		}
		if d.ID != tc.want || d.Version != tc.wantVersion {
			t.Errorf("deployment %+v, want id %q version %q", d, tc.want, tc.wantVersion)
		}
		if tc.wantCreated != nil && !d.CreatedAt.Equal(*tc.wantCreated) {
			t.Errorf("created at %v, want %v", d.CreatedAt, *tc.wantCreated)
		}
		wantEnv := tc.env
		if wantEnv == "" {
			wantEnv = "sandbox"
		}
		if d.Environment != wantEnv {
			t.Errorf("environment %q, want %q", d.Environment, wantEnv)
		}
		// Sandbox is asked for exactly as the reference describes the
		// call: no query.
		if wantQuery := map[bool]string{true: "", false: "environment=" + wantEnv}[wantEnv == "sandbox"]; query != wantQuery {
			t.Errorf("query %q, want %q", query, wantQuery)
		}
	}
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []testCase{
		{name: "top-level id", body: `{"id":"dep-1","version":"1.2","status":"active"}`, want: "dep-1", wantVersion: "1.2"},
		{name: "deployment_id", body: `{"deployment_id":"dep-2"}`, want: "dep-2"},
		{name: "deploymentId", body: `{"deploymentId":"dep-3","createdAt":"2026-03-01T12:00:00Z"}`, want: "dep-3"},
		{name: "numeric id", body: `{"id":42}`, want: "42"},
		{name: "under deployment", body: `{"deployment":{"id":"dep-4","version":"1.1"}}`, want: "dep-4", wantVersion: "1.1"},
		{name: "under data", env: "live", body: `{"success":true,"data":{"deploymentId":"dep-5","environment":"live"}}`, want: "dep-5"},
		{name: "env spelling", env: "pre-release", body: `{"id":"dep-6","env":"pre-release"}`, want: "dep-6"},
		// The reference shows no creation time: ISO 8601 in its forms,
		// Unix seconds and milliseconds are read, and a form not
		// understood leaves it unread rather than failing the call
		// (the deployment id is what matters).
		{name: "created_at seconds", body: `{"id":"dep-8","created_at":1772366400}`, want: "dep-8", wantCreated: &created},
		{name: "created_at milliseconds", body: `{"id":"dep-8","createdAt":1772366400000}`, want: "dep-8", wantCreated: &created},
		{name: "created_at hour offset", body: `{"id":"dep-8","created_at":"2026-03-01 13:00:00.000+01"}`, want: "dep-8", wantCreated: &created},
		{name: "created_at unreadable", body: `{"id":"dep-8","created_at":"Sun, 01 Mar 2026 12:00:00 GMT"}`, want: "dep-8", wantCreated: &time.Time{}},
		{name: "created_at object", body: `{"id":"dep-8","created_at":{"seconds":1772366400}}`, want: "dep-8", wantCreated: &time.Time{}},
		{name: "no id", body: `{"version":"1.2"}`, wantErr: `no deployment id`},
		{name: "null", body: `null`, wantErr: `no deployment id`},
		{name: "array", body: `[{"id":"dep-1"}]`, wantErr: `deployments/active: 200: malformed response: expected an object, got array`},
		{name: "id of the wrong type", body: `{"id":{"v":1}}`, wantErr: `deployments/active: 200: malformed response: field "id": expected a string, got object`},
		// A member sent twice with different values names two
		// deployments; the same value twice, in any white space, one.
		{name: "two ids", body: `{"id":"dep-1","id":"dep-2"}`, wantErr: `malformed response: field "id" is sent twice, with different values`},
		{name: "two deployment_ids", body: `{"deployment_id":"dep-1","deployment_id":"dep-2"}`, wantErr: `field "deployment_id" is sent twice`},
		{name: "two deploymentIds", body: `{"deploymentId":"dep-1","DeploymentID":"dep-2"}`, wantErr: `field "deploymentId" is sent twice`},
		{name: "two versions", body: `{"id":"dep-1","version":"1.2","version":"1.3"}`, wantErr: `field "version" is sent twice`},
		{name: "two environments", body: `{"id":"dep-1","environment":"sandbox","Environment":"live"}`, wantErr: `field "environment" is sent twice`},
		{name: "two envs", body: `{"id":"dep-1","env":"sandbox","ENV":"live"}`, wantErr: `field "env" is sent twice`},
		{name: "two ids under data", body: `{"data":{"id":"dep-1","id":"dep-2"}}`, wantErr: `malformed response: data: field "id" is sent twice`},
		{name: "the same id twice", body: `{"id":"dep-1","version":1.2,"version":1.2,"id": "dep-1"}`, want: "dep-1", wantVersion: "1.2"},
		// An id is printed on the console and in every report: one
		// that could drive a terminal or flood the output is refused.
		{name: "id with an escape sequence", body: `{"id":"dep-\u001b[31mred\u001b]0;title\u0007"}`,
			wantErr: `deployments/active: 200: malformed response: deployment id "dep-\x1b[31mred\x1b]0;title\a" refused: it holds control characters`},
		{name: "id with a line break", body: `{"deployment":{"id":"dep-1\r\nPASS everything"}}`, wantErr: `deployment id "dep-1\r\nPASS everything" refused: it holds control characters`},
		{name: "id of a megabyte", body: `{"id":"` + strings.Repeat("d", 1<<20) + `"}`,
			wantErr: `deployment id "dddddddddddddddddddddddddddddddddddddddd"... refused: it is 1048576 bytes long, and no id is longer than 256`},
		// The first spelling that holds an id wins, the top level
		// over the nests, "deployment" over "data".
		{name: "id over deployment_id", body: `{"id":"dep-1","deployment_id":"dep-2"}`, want: "dep-1"},
		{name: "empty id", body: `{"id":"","deployment_id":"dep-2"}`, want: "dep-2"},
		{name: "top level over nested", body: `{"id":"dep-1","data":{"id":"dep-2"}}`, want: "dep-1"},
		{name: "deployment over data", body: `{"deployment":{"id":"dep-4"},"data":{"id":"dep-9"}}`, want: "dep-4"},
		{name: "deployment as a name", body: `{"deployment":"spring menu","data":{"id":"dep-5"}}`, want: "dep-5"},
		{name: "nested id of the wrong type", body: `{"deployment":{"id":["dep-4"]},"data":{"id":"dep-9"}}`,
			wantErr: `deployments/active: 200: malformed response: deployment: field "id": expected a string, got array`},
		{name: "id of 256 bytes", body: `{"id":"` + strings.Repeat("d", 256) + `"}`, want: strings.Repeat("d", 256)},
		{name: "id of 257 bytes", body: `{"id":"` + strings.Repeat("d", 257) + `"}`, wantErr: `refused: it is 257 bytes long, and no id is longer than 256`},
		// The id is quoted up to 40 characters, and "..." says when
		// there were more.
		{name: "id of 41 characters with a line break", body: `{"id":"dep-\n` + strings.Repeat("x", 36) + `"}`,
			wantErr: `deployment id "dep-\n` + strings.Repeat("x", 35) + `"... refused: it holds control characters`},
		{name: "id of 40 characters with a line break", body: `{"id":"` + strings.Repeat("é", 39) + `\n"}`,
			wantErr: `deployment id "` + strings.Repeat("é", 39) + `\n" refused: it holds control characters`},
		// The version is printed beside the id, and bounded alike.
		{name: "version of 256 bytes", body: `{"id":"dep-1","version":"` + strings.Repeat("v", 256) + `"}`, want: "dep-1", wantVersion: strings.Repeat("v", 256)},
		{name: "version of a megabyte", body: `{"id":"dep-1","version":"` + strings.Repeat("v", 1<<20) + `"}`,
			wantErr: `deployments/active: 200: malformed response: deployment version "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"... refused: it is 1048576 bytes long, and no version is longer than 256`},
		{name: "version with an escape sequence", body: `{"deployment":{"id":"dep-1","version":"1.2\u001b[2J"}}`,
			wantErr: `deployments/active: 200: malformed response: deployment version "1.2\x1b[2J" refused: it holds control characters`},
		{name: "parameter ignored, env spelling", env: "live", body: `{"id":"dep-7","env":"sandbox"}`, wantErr: "asked for the active live deployment, the platform answered with its sandbox deployment dep-7"},
		{name: "another environment of two lines", env: "live", body: `{"id":"dep-7","environment":"sandbox\nPASS"}`,
			wantErr: "the platform answered with its sandbox PASS deployment dep-7"},
		{name: "parameter ignored", env: "live", body: `{"id":"dep-7","environment":"sandbox"}`, wantErr: "asked for the active live deployment, the platform answered with its sandbox deployment dep-7"},
		// The reference shows no deployment record: an environment named
		// in another letter case or with another separator (an enum's
		// PRE_RELEASE) is the one asked for, in the reference's spelling.
		{name: "environment in capitals", body: `{"id":"dep-8","environment":"SANDBOX"}`, want: "dep-8"},
		{name: "environment as an enum", env: "pre-release", body: `{"id":"dep-8","environment":"PRE_RELEASE"}`, want: "dep-8"},
		{name: "environment in one word", env: "pre-release", body: `{"id":"dep-8","env":"preRelease"}`, want: "dep-8"},
		{name: "environment capitalised", env: "live", body: `{"id":"dep-8","environment":"Live"}`, want: "dep-8"},
		{name: "another environment in capitals", env: "live", body: `{"id":"dep-7","environment":"SANDBOX"}`,
			wantErr: "asked for the active live deployment, the platform answered with its SANDBOX deployment dep-7"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestActiveDeploymentAgainstSim follows a publish and a promotion of the
// simulator through the client, per environment.
func TestActiveDeploymentAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2, Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }})
	c := simClient(t, s, RetryPolicy{})
	ctx := context.Background()
	read := func(env string) *Deployment {
		t.Helper()
		d, err := c.ActiveDeployment(ctx, "restaurant", env)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	sandbox, live := read("sandbox"), read("live")
	if sandbox.Version != "1.2" || live.Version != "1.0" || sandbox.ID == live.ID || live.Environment != "live" {
		t.Fatalf("sandbox %+v live %+v", sandbox, live)
	}
	pub, err := s.Server.Publish("restaurant", "")
	if err != nil {
		t.Fatal(err)
	}
	if now := read(""); now.ID != pub.ID || now.ID == sandbox.ID {
		t.Errorf("after a publish: %+v, want %s", now, pub.ID)
	}
	if now := read("live"); now.ID != live.ID {
		t.Errorf("a publish changed live: %+v", now)
	}
	_, err = c.ActiveDeployment(ctx, "no-such-agent", "")
	if !IsNotFound(err) {
		t.Errorf("unknown agent: %v, want a not-found", err)
	}
	if _, ok := errors.AsType[*EnvironmentMismatchError](err); ok {
		t.Errorf("unknown agent read as a mismatch: %v", err)
	}
}
