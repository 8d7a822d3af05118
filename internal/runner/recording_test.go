package runner

import (
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestConfirmRecording: confirm: recording: over real HTTP against the
// simulator, whose voice conversations (a debug chat on VOICE-SIP, an
// outbound call) have a WAV recording and whose chats answer 404. A chat
// expected to have one fails at its first read, naming its channel,
// rather than poll the bound out for a recording no chat ever gets.
func TestConfirmRecording(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	type testCase struct {
		name, scenario string
		want           result.Status
		// line is what the recording's confirmation line must hold;
		// fail, the failure's message, when the case fails.
		line, fail string
	}
	chat := func(channel, want string) string {
		start := ""
		if channel != "" {
			start = "    start: {channel: " + channel + "}\n"
		}
		return start + "    turns:\n      - say: I have chest pain\n    confirm: {recording: " + want + "}\n"
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		src := "suite: s\nagent: " + e.clinic + "\nscenarios:\n  - name: rec\n" + tc.scenario
		res, err := Run(t.Context(), loadYAML(t, src), e.opts())
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		a := c.Last()
		if c.Status != tc.want {
			t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
		}
		var rec *result.Confirmation
		for _, cf := range a.Confirmations {
			if cf.Kind == result.ConfirmRecording {
				rec = cf
			}
		}
		if rec == nil || rec.Reads != 1 || !strings.Contains(rec.Summary, tc.line) {
			t.Fatalf("recording line %+v, want one read saying %q%s", rec, tc.line, describe(c))
		}
		// Its mark is the check's: none, as expected, is a ✓.
		if rec.Held != (tc.want == result.Passed) {
			t.Fatalf("recording line held %v, want %v", rec.Held, tc.want == result.Passed)
		}
		if tc.fail != "" && (len(a.Failures) != 1 || a.Failures[0].Key != "confirm.recording" || !strings.Contains(a.Failures[0].Message, tc.fail)) {
			t.Fatalf("failures %+v, want confirm.recording %q", a.Failures, tc.fail)
		}
	}
	for _, tc := range []testCase{
		{name: "a voice chat has one", scenario: chat("VOICE-SIP", "true"), want: result.Passed, line: "bytes of audio/wav"},
		{name: "a web chat has none", scenario: chat("", "false"), want: result.Passed, line: "none, as expected (the audio endpoint answered 404)"},
		{name: "a call has one", scenario: `    probe: {outbound_call: {to: "+447700900123"}, within: 1m}` + "\n    confirm: {recording: true}\n",
			want: result.Passed, line: "bytes of audio/wav"},
		// On the platform's default channel (WEBCHAT on the simulator):
		// one written WEBCHAT is refused when the file loads.
		{name: "a web chat expected recorded", scenario: chat("", "true"), want: result.Failed, line: "none (the audio endpoint answered 404)",
			fail: "has no recording (the audio endpoint answered 404): only voice conversations (VOICE-SIP) have recordings, and its channel is WEBCHAT"},
		{name: "a voice chat expected unrecorded", scenario: chat("VOICE-SIP", "false"), want: result.Failed, line: "bytes of audio/wav",
			fail: "has a recording"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestConfirmRecordingHostile: what a platform written by someone else
// answers for a call's recording, on the runner's fake clock. A
// recording stored late is read again until it comes; one that never
// comes fails at the bound; a recording of no bytes is none; an error
// of the audio endpoint is the platform's, not the agent's.
func TestConfirmRecordingHostile(t *testing.T) {
	t.Parallel()
	callRec := record("conv-1", "+447700900002", "VOICE-SIP", fakeclock.Start, false, false, `"call_sid":"OUT-1"`)
	type testCase struct {
		name  string
		audio func(n int) (int, string)
		want  result.Status
		// reads is the least number of reads of the recording; fail or
		// kind is what the case fails or errors with.
		reads      int
		fail, kind string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		h := &hostileRuntime{list: func(int) []string { return nil }, get: func(string) *string { return &callRec },
			status: func(int) string { return `{"call_sid":"OUT-1","status":"success","conversation_id":"conv-1"}` },
			audio:  tc.audio}
		c := runHostile(t, h, "suite: s\nagent: p1\nscenarios:\n  - name: call\n"+
			`    probe: {outbound_call: {to: "+447700900002"}, within: 2m}`+"\n    confirm: {recording: true}\n")
		a := c.Last()
		switch {
		case c.Status != tc.want:
			t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
		case h.audioReads < tc.reads:
			t.Fatalf("%d reads of the recording, want at least %d", h.audioReads, tc.reads)
		case tc.fail != "" && (len(a.Failures) != 1 || !strings.Contains(a.Failures[0].Message, tc.fail)):
			t.Fatalf("failures %+v, want %q", a.Failures, tc.fail)
		case tc.kind != "" && (a.Error == nil || a.Error.Kind != tc.kind || !strings.Contains(a.Error.Message, "confirm: read the recording of conversation conv-1")):
			t.Fatalf("error %+v, want a %s error reading the recording", a.Error, tc.kind)
		}
	}
	notFound := `{"error_message":"no recording"}`
	for _, tc := range []testCase{
		{name: "stored late", want: result.Passed, reads: 3, audio: func(n int) (int, string) {
			if n < 3 {
				return http.StatusNotFound, notFound
			}
			return http.StatusOK, "RIFF....WAVE"
		}},
		{name: "never stored", want: result.Failed, reads: 2, fail: "conversation conv-1 has no recording (the audio endpoint answered 404)",
			audio: func(int) (int, string) { return http.StatusNotFound, notFound }},
		{name: "empty", want: result.Failed, reads: 2, fail: "has an empty recording",
			audio: func(int) (int, string) { return http.StatusOK, "" }},
		{name: "the platform fails", want: result.Errored, reads: 1, kind: result.KindHTTP,
			audio: func(int) (int, string) { return http.StatusInternalServerError, `{"error_message":"storage down"}` }},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestConfirmRecordingKeepsNoBytes: a recording is confirmed by its
// length and type alone, so a large one costs no memory: the bytes are
// counted as they arrive, not kept. Before, the runner read the whole
// recording (up to the 256 MiB limit for recordings) into a buffer and
// copied it, to take its length. Its content type, server text that
// reports print, is cut to one line with its controls escaped, as an
// error body's message is; before, a header of any length went into
// the confirmation line and the summary whole.
// Not parallel: it measures the process's allocations.
func TestConfirmRecordingKeepsNoBytes(t *testing.T) {
	const size = 96 << 20
	callRec := record("conv-1", "+447700900002", "VOICE-SIP", fakeclock.Start, false, false, `"call_sid":"OUT-1"`)
	ctype := "audio/wav; note=\u202e" + strings.Repeat("a", 4000)
	chunk := bytes.Repeat([]byte("RIFF....WAVE"), 64<<10/12)
	h := &hostileRuntime{list: func(int) []string { return nil }, get: func(string) *string { return &callRec },
		status: func(int) string { return `{"call_sid":"OUT-1","status":"success","conversation_id":"conv-1"}` },
		audioStream: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Content-Length", strconv.Itoa(size))
			for left := size; left > 0; {
				n, err := w.Write(chunk[:min(left, len(chunk))])
				if err != nil {
					return
				}
				left -= n
			}
		}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := runHostile(t, h, "suite: s\nagent: p1\nscenarios:\n  - name: call\n"+
		`    probe: {outbound_call: {to: "+447700900002"}, within: 2m}`+"\n    confirm: {recording: false}\n")
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > size/4 {
		t.Errorf("confirming a recording of %d MiB allocated %d MiB", size>>20, got>>20)
	}
	a := c.Last()
	if c.Status != result.Failed || len(a.Failures) != 1 || a.Failures[0].Key != "confirm.recording" {
		t.Fatalf("%s, want failed on the recording%s", c.Status, describe(c))
	}
	var rec *result.Confirmation
	for _, cf := range a.Confirmations {
		if cf.Kind == result.ConfirmRecording {
			rec = cf
		}
	}
	for what, text := range map[string]string{"the line": rec.Summary, "the failure": a.Failures[0].Actual} {
		if !strings.HasPrefix(text, strconv.Itoa(size)+` bytes of audio/wav; note=\u202eaaa`) || len(text) > 400 || strings.Contains(text, "\u202e") {
			t.Errorf("%s says %q (%d bytes), want the size and the type cut to a line, its bidi override escaped", what, text[:min(len(text), 120)], len(text))
		}
	}
}
