package result

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

func TestTurnRelease(t *testing.T) {
	t.Parallel()
	const meta = `{"currentNode":"Greeting","nodeTrace":["Greeting"]}`
	// decoded is a turn as the client decodes it; plain says the body was
	// in the reference's own shape (reply.TurnResult.Plain).
	decoded := func(body, raw string, plain bool) *Turn {
		var md reply.Metadata
		if err := json.Unmarshal([]byte(raw), &md); err != nil {
			t.Fatal(err)
		}
		return &Turn{Response: []byte(body), Result: (&reply.TurnResult{
			ConversationID: "c1", Response: "Hello", RawMetadata: []byte(raw), Plain: plain,
		}).SetMetadata(md)}
	}
	type testCase struct {
		name     string
		turn     *Turn
		released bool
	}
	run := func(t *testing.T, tc testCase) {
		tc.turn.Release()
		if got := tc.turn.Released(); got != tc.released {
			t.Fatalf("Released() = %v, want %v", got, tc.released)
		}
		r := tc.turn.Reply()
		if r == nil || r.ConversationID != "c1" || r.Response != "Hello" || r.Meta().CurrentNode() != "Greeting" || string(r.RawMetadata) != meta {
			t.Errorf("Reply() after Release = %+v", r)
		}
		if !tc.released && tc.turn.Result.Meta() != nil {
			t.Error("the decoded metadata was kept")
		}
	}
	for _, tc := range []testCase{
		{"reference shape", decoded(`{"conversationId":"c1","userInput":"","response":"Hello","metadata":`+meta+`,"conversationEnded":false,"delayedResponse":false}`, meta, true), true},
		// The client tolerated these shapes; the body alone would not
		// give the reply back, so only the decoded metadata goes.
		{"envelope", decoded(`{"success":true,"data":{"conversationId":"c1","userInput":"","response":"Hello","metadata":`+meta+`,"conversationEnded":false,"delayedResponse":false}}`, meta, false), false},
		{"member missing", decoded(`{"conversationId":"c1","response":"Hello","metadata":`+meta+`}`, meta, false), false},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
	failed := &Turn{Response: []byte(`{"error":"x"}`)}
	failed.Release()
	if failed.Reply() != nil || failed.Released() {
		t.Error("a failed call has a reply after Release")
	}
}

// TestCountEnvs: the environments of a run's cases, the most first, ties
// by name; a case without one is not counted.
func TestCountEnvs(t *testing.T) {
	t.Parallel()
	var cs []*Case
	for _, env := range []string{"sandbox", "live", "live", "", "sandbox", "live", "pre-release"} {
		cs = append(cs, &Case{Env: env})
	}
	got := CountEnvs(cs)
	want := []EnvCount{{"live", 3}, {"sandbox", 2}, {"pre-release", 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CountEnvs = %v, want %v", got, want)
	}
	if got := CountEnvs(nil); len(got) != 0 {
		t.Errorf("CountEnvs(nil) = %v", got)
	}
}

// TestStatusText: each status reads back from its name; a value that is
// no status says so, rather than panicking or passing for one.
func TestStatusText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Status
		want string
	}{
		{Pending, "pending"}, {Skipped, "skipped"}, {Passed, "passed"}, {Flaky, "flaky"}, {Failed, "failed"}, {Errored, "errored"},
		{Errored + 1, "Status(6)"}, {-1, "Status(-1)"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("Status(%d).String() = %q, want %q", int(tc.s), got, tc.want)
		}
		var back Status
		err := back.UnmarshalText([]byte(tc.want))
		if valid := tc.s >= Pending && tc.s <= Errored; valid && (err != nil || back != tc.s) || !valid && err == nil {
			t.Errorf("UnmarshalText(%q) = %d, %v", tc.want, back, err)
		}
	}
}

// TestFileStatus: a file's status folds its cases' as they gate the run;
// a file with no case is pending, not skipped, and so is one whose cases
// an interrupted run never started, even beside a skipped one: the file
// says it was not reached, not that it was skipped on purpose.
func TestFileStatus(t *testing.T) {
	t.Parallel()
	quarantined := &Quarantine{Reason: "flaky upstream", Until: "2099-01-01"}
	for _, tc := range []struct {
		name  string
		cases []*Case
		want  Status
	}{
		{"no case", nil, Pending},
		{"skipped", []*Case{{Status: Skipped}, {Status: Skipped}}, Skipped},
		{"never started", []*Case{{Status: Pending}, {Status: Pending}}, Pending},
		{"skipped, the rest never started", []*Case{{Status: Skipped}, {Status: Pending}}, Pending},
		{"passed, the rest never started", []*Case{{Status: Passed}, {Status: Pending}}, Passed},
		{"passed and flaky", []*Case{{Status: Passed}, {Status: Flaky}, {Status: Skipped}}, Flaky},
		{"a failure", []*Case{{Status: Failed}, {Status: Passed}}, Failed},
		{"an error after a failure", []*Case{{Status: Failed}, {Status: Errored}}, Errored},
		{"a quarantined failure", []*Case{{Status: Failed, Quarantine: quarantined}, {Status: Passed}}, Passed},
	} {
		if got := (&File{Cases: tc.cases}).Status(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestConfirmationSaw: the platform saying the same again right after (a
// status read again) is one entry counting its reads, from the first
// read to the last; what was sent, and the turns of a record, are never
// merged: an agent may say the same twice.
func TestConfirmationSaw(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var c Confirmation
	c.Saw(at(0), SeenSent, "call")
	c.Saw(at(1), SeenSent, "call")
	c.Saw(at(2), SeenPlatform, "status queued")
	c.Saw(at(3), SeenPlatform, "status queued")
	c.Saw(at(4), SeenPlatform, "status queued")
	c.Saw(at(5), SeenPlatform, "status success")
	c.Saw(at(6), SeenAgent, "ok")
	c.Saw(at(7), SeenAgent, "ok")
	want := []Seen{
		{At: at(0), Who: SeenSent, Text: "call"},
		{At: at(1), Who: SeenSent, Text: "call"},
		{At: at(2), Who: SeenPlatform, Text: "status queued", Reads: 3, Until: at(4)},
		{At: at(5), Who: SeenPlatform, Text: "status success"},
		{At: at(6), Who: SeenAgent, Text: "ok"},
		{At: at(7), Who: SeenAgent, Text: "ok"},
	}
	if !reflect.DeepEqual(c.Seen, want) {
		t.Errorf("seen %+v\nwant %+v", c.Seen, want)
	}
}

// TestFilterSame: two filters narrow alike only with the same tags, name
// and lines; no filter is none of them.
func TestFilterSame(t *testing.T) {
	f := &Filter{Tags: "@smoke", Name: "books", At: []string{"a.yaml:3"}, LeftOut: 4}
	for _, tc := range []struct {
		g    *Filter
		want bool
	}{
		{&Filter{Tags: "@smoke", Name: "books", At: []string{"a.yaml:3"}}, true},
		{nil, false},
		{&Filter{Name: "books", At: []string{"a.yaml:3"}}, false},
		{&Filter{Tags: "@smoke", At: []string{"a.yaml:3"}}, false},
		{&Filter{Tags: "@smoke", Name: "books"}, false},
	} {
		if got := f.Same(tc.g); got != tc.want {
			t.Errorf("Same(%+v) = %v, want %v", tc.g, got, tc.want)
		}
	}
	if got, want := f.String(), `--tags "@smoke" --name "books" a.yaml:3`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
