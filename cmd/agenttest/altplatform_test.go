package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// altForms are the choices another implementation of the platform,
// written from the same reference, may make where the reference leaves
// them open or where the simulator picked one of several plausible
// forms. altProxy answers with them in front of the simulator.
type altForms struct {
	// stamps rewrites every ISO 8601 date-time of a body into another
	// offset and precision (Python's isoformat: microseconds, +01:00).
	stamps bool
	// extra adds members the reference does not name to every body's
	// top level and to each conversation summary and turn.
	extra bool
	// nulls writes the optional members of a conversation summary the
	// simulator leaves out as null.
	nulls bool
	// charset sends Content-Type with a charset parameter.
	charset bool
	// created answers 201 where the simulator answers a POST with 200.
	created bool
	// chunked sends every body without a Content-Length.
	chunked bool
	// strict validates requests as a typed web framework does (pydantic,
	// the most common in Python): a date-time with more than 6 digits of
	// fraction is refused with 422.
	strict bool
	// bare answers the outbound calling and SMS calls with only what the
	// reference shows of them: a call's sid and status, nothing of an
	// SMS.
	bare bool
	// full writes every metadata member of a debug-chat turn the
	// simulator leaves out, empty ("", [] or {}), as a serializer of a
	// typed struct does; fullNull writes them null.
	full, fullNull bool
	// plain sends JSON bodies as text/plain, as a server that sets no
	// Content-Type gets from Go's sniffing.
	plain bool
	// tail ends a conversations list with a cursor that holds its place,
	// as a stream's position does, rather than null: the page it asks
	// for is empty and gives the same cursor back.
	tail bool
	// slots writes the state keys the simulator leaves out that the
	// suites check are not set (built-in keys of a call, the agents'
	// variables) as null, as a platform that declares every variable of
	// the agent does until it is filled.
	slots bool
	// floats writes every whole number with a fraction (3.0), as a
	// platform that keeps its counts in floats does.
	floats bool
	// nilSlices writes every empty list as null, as Go's encoding/json
	// does of a nil slice.
	nilSlices bool
	// storage, when set, is where a recording is: the audio call is
	// answered with a 302 to it, as a platform that keeps recordings in
	// an object store answers with a signed URL of another host.
	storage string
	// unlisted answers the webhook calls the reference does not show
	// (the endpoints list, read and delete) 404, as a platform that
	// implements only the registration and the update does.
	unlisted bool
	// enveloped answers the Messaging access-token and session steps in
	// camelCase inside {"data": ...}, as a JavaScript implementation
	// that wraps every answer does.
	enveloped bool
	// brand is the platform's word for Vendor (sim.Options.Brand), the
	// target's brand:.
	brand string
}

// tailCursor is the cursor of tail's end of a list.
const tailCursor = "eyJwb3MiOiJ0YWlsIn0"

// metadataEmpty are the debug-chat metadata members of the reference,
// each with its empty value.
var metadataEmpty = map[string]func() any{
	"asrLangCode": str, "ttsLangCode": str, "agentResponseAudioUrl": str, "currentNode": str,
	"handoffDestination": str, "citedTopic": str, "inFlow": str, "inStep": str,
	"nodeTrace": list, "retrievedTopics": list, "retrievedSources": list, "functionEvents": list, "llmRequests": list,
	"state": obj, "metrics": obj,
}

func str() any  { return "" }
func list() any { return []any{} }
func obj() any  { return map[string]any{} }

// pydanticStamp is what pydantic's datetime accepts of RFC 3339.
var pydanticStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:?\d\d)$`)

// refuse answers a request f's strict form refuses, or says there is none.
func (f altForms) refuse(w http.ResponseWriter, r *http.Request) bool {
	if f.unlisted && (r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet ||
		strings.HasPrefix(r.URL.Path, "/v1/webhook-endpoints/") && r.Method != http.MethodPatch) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Not Found"}`)
		return true
	}
	if f.tail && r.URL.Query().Get("cursor") == tailCursor {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"conversations":[],"cursor":%q}`, tailCursor)
		return true
	}
	if !f.strict {
		return false
	}
	for _, k := range []string{"start_time", "end_time"} {
		if v := r.URL.Query().Get(k); v != "" && !pydanticStamp.MatchString(v) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"detail":[{"type":"datetime_parsing","loc":["query",%q],"msg":"Input should be a valid datetime, second fraction value is more than 6 digits long","input":%q}]}`, k, v)
			return true
		}
	}
	return false
}

// stateSlots are the state keys the suites check are not set.
var stateSlots = []string{"call_sid", "variant_id", "party_size", "time", "availability", "booking_ref", "tier", "postcode",
	"bill", "payment_plan", "account_number"}

var simStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)

// rewrite applies f to one decoded JSON value; parent is the member that
// holds it.
func (f altForms) rewrite(v any, parent string, top bool) any {
	switch x := v.(type) {
	case json.Number:
		if f.floats && !strings.ContainsAny(string(x), ".eE") {
			return json.Number(string(x) + ".0")
		}
		return x
	case string:
		if f.stamps && simStamp.MatchString(x) {
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return t.In(time.FixedZone("", 3600)).Format("2006-01-02T15:04:05.000000-07:00")
			}
		}
		return x
	case []any:
		if f.nilSlices && len(x) == 0 {
			return nil
		}
		for i := range x {
			x[i] = f.rewrite(x[i], parent, false)
		}
		return x
	case map[string]any:
		if f.slots && parent == "state" {
			for _, k := range stateSlots {
				if _, ok := x[k]; !ok {
					x[k] = nil
				}
			}
			return x
		}
		if c, ok := x["cursor"]; f.tail && top && x["conversations"] != nil && (!ok || c == nil) {
			x["cursor"] = tailCursor
		}
		switch parent {
		case "state", "metrics", "data", "integrationAttributes", "custom", "headers":
			// Values the agent wrote: not forms of the platform.
			return x
		}
		for k, e := range x {
			x[k] = f.rewrite(e, k, false)
		}
		if parent == "metadata" && top == false && (f.full || f.fullNull) {
			for k, empty := range metadataEmpty {
				if _, ok := x[k]; !ok {
					x[k] = nil
					if f.full {
						x[k] = empty()
					}
				}
			}
		}
		summary := x["started_at"] != nil && x["project_id"] != nil
		if f.extra && (top || summary || parent == "turns") {
			x["x_trace_id"] = "trace-0001"
			x["_links"] = map[string]any{"self": "/somewhere"}
		}
		if f.nulls && summary {
			for _, k := range []string{"variant_id", "variant_name", "from_number", "to_number", "handoff_reason", "handoff_destination"} {
				if _, ok := x[k]; !ok {
					x[k] = nil
				}
			}
		}
		return x
	}
	return v
}

// altProxy serves target in f's forms.
func altProxy(t *testing.T, target string, f altForms) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.ModifyResponse = func(res *http.Response) error {
		if res.StatusCode == http.StatusSwitchingProtocols {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		if f.storage != "" && res.StatusCode == http.StatusOK && strings.HasSuffix(res.Request.URL.Path, "/audio") {
			res.Body.Close()
			res.StatusCode, res.Status = http.StatusFound, "302 Found"
			res.Header = http.Header{"Location": {f.storage + "/recordings/rec.wav?X-Amz-Signature=0123abcd"}}
			res.Body, res.ContentLength = http.NoBody, 0
			return nil
		}
		if f.bare && res.StatusCode < 300 {
			switch path := res.Request.URL.Path; {
			case path == "/v1/outbound-sms":
				body = []byte("{}")
			case strings.HasPrefix(path, "/v1/outbound-calling"):
				var m map[string]any
				if json.Unmarshal(body, &m) == nil {
					body, _ = json.Marshal(map[string]any{"call_sid": m["call_sid"], "status": m["status"]})
				}
			}
		}
		if path := res.Request.URL.Path; f.enveloped && res.StatusCode < 300 && (path == "/api/v1/access-token" || path == "/api/v1/sessions") {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				names := map[string]string{"access_token": "accessToken", "session_id": "sessionId", "expires_in": "expiresIn",
					"token_type": "tokenType", "streaming_enabled": "streamingEnabled"}
				camel := map[string]any{}
				for k, v := range m {
					camel[cmp.Or(names[k], k)] = v
				}
				body, _ = json.Marshal(map[string]any{"success": true, "data": camel})
			}
		}
		if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") && len(body) > 0 {
			d := json.NewDecoder(bytes.NewReader(body))
			d.UseNumber()
			var v any
			if d.Decode(&v) == nil {
				var b bytes.Buffer
				e := json.NewEncoder(&b)
				e.SetEscapeHTML(false)
				if e.Encode(f.rewrite(v, "", true)) == nil {
					body = b.Bytes()
				}
			}
			if f.charset {
				res.Header.Set("Content-Type", "application/json; charset=utf-8")
			}
			if f.plain {
				res.Header.Set("Content-Type", "text/plain; charset=utf-8")
			}
		}
		if f.created && res.Request.Method == http.MethodPost && res.StatusCode == http.StatusOK {
			res.StatusCode, res.Status = http.StatusCreated, "201 Created"
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		res.Header.Del("Content-Length")
		res.ContentLength = -1
		if !f.chunked {
			res.ContentLength = int64(len(body))
			res.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		return nil
	}
	p.ErrorLog = log.New(io.Discard, "", 0)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.refuse(w, r) {
			p.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// altTree is examples/suites and examples/features with a config file
// whose one target is s behind altProxy (s itself for no form), and its
// environment.
func altTree(t *testing.T, s *simtest.Sim, f altForms, listen string) (string, map[string]string) {
	t.Helper()
	files := map[string]string{}
	for _, glob := range []string{"examples/suites/*.yaml", "examples/features/*.feature", "examples-failing/*.yaml",
		"suites/*.yaml", "features/*.feature"} {
		paths, err := filepath.Glob(filepath.Join(repoRoot, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(repoRoot, p)
			files[rel] = string(b)
		}
	}
	info := s.Server.Info()
	env := map[string]string{
		"ALT_BUILD": s.BuildURL, "ALT_RUNTIME": s.RuntimeURL, "ALT_MESSAGING": s.MessagingURL,
		"K_BUILD": s.BuildKey, "K_RUNTIME": s.RuntimeKey,
		"SMS": info.ConnectorIDs["clinic"]["sandbox"],
	}
	if f != (altForms{}) {
		// No form is the simulator's own: spoken to directly, rather
		// than through a proxy that decodes and writes again every body
		// (a seventh of a run's CPU under -race), and which would hide a
		// reliance of the client on how the simulator writes JSON (the
		// order of its members, its escapes) from the comparison.
		for _, v := range []string{"ALT_BUILD", "ALT_RUNTIME", "ALT_MESSAGING"} {
			env[v] = altProxy(t, env[v], f)
		}
	}
	var conns strings.Builder
	for _, a := range slices.Sorted(maps.Keys(info.MessagingConnectors)) {
		v := "C_" + strings.ToUpper(strings.ReplaceAll(a, "-", "_"))
		env[v] = info.MessagingConnectors[a]["sandbox"]
		fmt.Fprintf(&conns, "      %s: ${env:%s}\n", a, v)
	}
	files["agenttest.yaml"] = fmt.Sprintf(`default_target: alt
targets:
  alt:
    build_url: ${env:ALT_BUILD}
    runtime_url: ${env:ALT_RUNTIME}
    messaging_url: ${env:ALT_MESSAGING}
    messaging_host: %s
    brand: %s
    account_id: %s
    agent_id: clinic
    env: sandbox
    build_key: ${env:K_BUILD}
    runtime_key: ${env:K_RUNTIME}
    sms_connector_id: ${env:SMS}
    probe_numbers: ["+447700900001", "+447700900002", "+447700900123", "+15555550199"]
    webhook_listen: %s
    webhook_url: http://%s
    connectors:
%s`, info.MessagingHost, cmp.Or(f.brand, "Vendor"), s.AccountID, listen, listen, conns.String())
	return writeTree(t, files), env
}

// altRun runs dirs against s in f's forms and returns the verdicts and
// the output.
func altRun(t *testing.T, f altForms, dirs ...string) (map[string]string, string) {
	s := simtest.Start(t, sim.Options{Seed: 1, Brand: f.brand, Webhooks: sim.WebhookOptions{AllowInsecure: true},
		Outbound: sim.OutboundOptions{Queued: 10 * time.Millisecond, Calling: 10 * time.Millisecond}})
	dir, env := altTree(t, s, f, platformtest.FreeAddr(t))
	env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	c := newCLI(t, dir, env, append([]string{"run", "--allow-live", "--json", "r.json", "--seed", "1"}, dirs...)...)
	if code := c.run(t); code != exitOK && code != exitFailed {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	return verdicts(readDoc(t, filepath.Join(dir, "r.json"))), c.stdout.String() + c.stderr.String()
}

// TestAltPlatformExamples runs the repository's suites, the examples and
// the suites that fail on purpose against the simulator answering in
// another implementation's forms: each case must get the verdict it gets
// in the simulator's own.
//
// Each implementation runs the trees that reach every line of the client
// it reaches with all of them (the statement coverage of
// internal/platform, and of internal/... but for a few blocks that follow
// the scheduler, is the same): a form is met by the first body of its
// kind, and the Gherkin trees hold the scenarios of the YAML ones, over
// the same client. The typed implementation needs the three trees at once
// (a chunked body read while the body budget is held by others); the
// feature trees run against the simulator in TestRunMixedFilesOneJUnit
// and the fault drill.
func TestAltPlatformExamples(t *testing.T) {
	t.Parallel()
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			if k != "Accept" && k != "User-Agent" && k != "Accept-Encoding" {
				t.Errorf("the recording's store got header %s", k)
			}
		}
		w.Header().Set("Content-Type", "audio/wav")
		io.WriteString(w, "RIFF\x24\x00\x00\x00WAVEfmt ")
	}))
	t.Cleanup(storage.Close)
	impls := map[string]struct {
		forms altForms
		dirs  []string
	}{
		// Forms that go together in one implementation.
		"typed": {altForms{stamps: true, extra: true, nulls: true, charset: true, created: true, chunked: true, full: true, floats: true},
			[]string{"examples/suites", "suites", "examples-failing"}},
		"nulls": {altForms{fullNull: true, plain: true, slots: true, nilSlices: true, storage: storage.URL},
			[]string{"suites", "examples-failing"}},
		"strict": {altForms{bare: true, strict: true, tail: true, brand: "Acme", unlisted: true, enveloped: true},
			[]string{"examples/suites", "examples-failing"}},
	}
	var dirs []string
	for _, impl := range impls {
		for _, d := range impl.dirs {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	want, wantOut := altRun(t, altForms{}, dirs...)
	if len(want) < 60 {
		t.Fatalf("%d cases, want the examples and the suites:\n%s", len(want), wantOut)
	}
	for name, impl := range impls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, out := altRun(t, impl.forms, impl.dirs...)
			n := 0
			for _, k := range slices.Sorted(maps.Keys(want)) {
				if !slices.ContainsFunc(impl.dirs, func(d string) bool { return strings.HasPrefix(k, d+"/") }) {
					continue
				}
				n++
				if got[k] != want[k] {
					t.Errorf("%s: %s, want %s", k, got[k], want[k])
				}
			}
			if len(got) != n {
				t.Errorf("%d cases, want %d", len(got), n)
			}
			if t.Failed() {
				t.Logf("simulator's forms:\n%s\n\nthese:\n%s", wantOut, out)
			}
		})
	}
}

// The embedded simulator of another brand (AGENTTEST_SIM_FLAGS=--brand)
// is spoken to in its brand: its probes, webhook deliveries and web
// chats, and the events checks written with the reference's VENDOR.
func TestEmbeddedSimulatorBrand(t *testing.T) {
	t.Parallel()
	env := examplesEnv()
	env[simFlagsEnv] = "--brand Acme --call-queued 10ms --call-calling 10ms"
	c := newCLI(t, repoRoot, env, "run", "examples/suites/confirmations.yaml", "examples/suites/restaurant.yaml")
	c.expect(t, exitOK, "status: passed")
}

// A target that leaves out the brand of a platform whose brand word is
// another: its web chats error (the platform's side) saying that the join
// went in the reference's word, and to set brand:.
func TestWebChatOfAnotherBrand(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, Brand: "Acme"})
	info := s.Server.Info()
	suite, err := os.ReadFile(filepath.Join(repoRoot, "examples/suites/restaurant.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeTree(t, map[string]string{"restaurant.yaml": string(suite), "agenttest.yaml": fmt.Sprintf(`targets:
  t:
    build_url: %s
    runtime_url: %s
    messaging_url: %s
    messaging_host: %s
    account_id: %s
    agent_id: restaurant
    build_key: ${env:K}
    runtime_key: ${env:R}
    connector_token: ${env:C}
`, s.BuildURL, s.RuntimeURL, s.MessagingURL, info.MessagingHost, s.AccountID)})
	env := map[string]string{"K": s.BuildKey, "R": s.RuntimeKey, "C": info.MessagingConnectors["restaurant"]["sandbox"]}
	newCLI(t, dir, env, "run", "--target", "t", "restaurant.yaml").expect(t, exitErrored,
		`the platform answered with an error system message: "Unknown event type or invalid message format" (the join request went as EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN: a platform whose brand word is not VENDOR refuses it; set the target's brand:)`)
	env["AGENTTEST_BRAND"] = "Acme"
	newCLI(t, dir, env, "run", "--target", "t", "restaurant.yaml").expect(t, exitOK, "status: passed")
}
