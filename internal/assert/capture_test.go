package assert

import (
	"errors"
	"strings"
	"testing"
)

func TestCapture(t *testing.T) {
	type testCase struct {
		name    string
		from    string
		pattern string
		want    string
		wantErr string
	}
	res := decodeReply(t, replyJSON)
	res.Response = "Booked! Your reference is AB12CD. See you at 7pm."
	run := func(t *testing.T, tc testCase) {
		got, err := Capture(res, tc.from, tc.pattern, vars(map[string]string{"prefix": "reference is", "dot": "."}))
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got != tc.want {
			t.Errorf("Capture = %q, want %q", got, tc.want)
		}
	}
	cases := []testCase{
		{name: "first group", from: "response", pattern: `reference is ([A-Z0-9]{6})`, want: "AB12CD"},
		{name: "whole match without group", from: "response", pattern: `\d+pm`, want: "7pm"},
		{name: "empty pattern takes the field", from: "node", want: "CollectTime"},
		{name: "expanded pattern", from: "response", pattern: `${prefix} (\w+)${dot}`, want: "AB12CD"},
		{name: "expanded value is literal", from: "response", pattern: `AB12CD${dot}`, want: "AB12CD."},
		{name: "expanded value alone is literal", from: "response", pattern: `${dot}`, want: "."},
		{name: "node", from: "node", pattern: `Collect(\w+)`, want: "Time"},
		{name: "flow", from: "flow", pattern: ``, want: "Booking"},
		{name: "step", from: "step", pattern: `Ask(.*)`, want: "Time"},
		{name: "state number", from: "state.party_size", pattern: `\d+`, want: "4"},
		{name: "nested state", from: "state.booking.code", pattern: `^..`, want: "AB"},
		{name: "metadata path", from: "metadata.llmRequests.0.model", pattern: `m-(\w+)`, want: "small"},
		{name: "metadata object as json", from: "metadata.state.booking", want: `{"code":"AB12CD"}`},
		{name: "no match", from: "response", pattern: `ref ([0-9]+)`,
			wantErr: `capture from response: pattern does not match`},
		{name: "missing state key", from: "state.time", pattern: `.*`, wantErr: `capture from state.time: state has no key "time"`},
		{name: "misspelt state key", from: "state.party_sise", pattern: `.*`, wantErr: `capture from state.party_sise: state has no key "party_sise" (did you mean "party_size"?)`},
		{name: "missing metadata", from: "metadata.citedTopic.x", wantErr: `capture from metadata.citedTopic.x: metadata has no citedTopic.x`},
		{name: "bad pattern", from: "response", pattern: `(`, wantErr: "capture from response: invalid pattern /(/: error parsing regexp: missing closing ): `(`"},
		{name: "unknown reference", from: "response", pattern: `${nope}`, wantErr: `capture from response: unknown variable "nope"`},
		{name: "unknown field", from: "reply", pattern: `x`, wantErr: `cannot capture from "reply": use response, node, flow, step, state.KEY or metadata.PATH`},
		{name: "bare state", from: "state.", wantErr: `cannot capture from "state.": use response, node, flow, step, state.KEY or metadata.PATH`},
		{name: "bare metadata", from: "metadata.", wantErr: `cannot capture from "metadata.": use response, node, flow, step, state.KEY or metadata.PATH`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestCaptureMissingFields(t *testing.T) {
	res := decodeReply(t, handoffJSON)
	if _, err := Capture(res, "node", "", nil); err == nil || err.Error() != "capture from node: reply has no current node" {
		t.Errorf("node: %v", err)
	}
	if _, err := Capture(nil, "response", "", nil); err == nil || err.Error() != "no reply to capture from" {
		t.Errorf("nil reply: %v", err)
	}
	// A miss carries what was looked for and the whole value found, for
	// the failure's expected and actual lines.
	res.Response = strings.Repeat("a", 300)
	_, err := Capture(res, "response", "x", nil)
	var miss *CaptureMiss
	if !errors.As(err, &miss) || miss.Expected != "matches /x/" || miss.Actual != res.Response {
		t.Errorf("no match: %#v", err)
	}
	if _, err := Capture(res, "state.time", "", nil); !errors.As(err, &miss) || miss.Expected != "present" || miss.Actual != "absent" {
		t.Errorf("missing state key: %#v", err)
	}
}
